package release

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The archives are byte for byte the same for the same files, whatever the map's order, and
// hold the files at the top level, executable, with the fixed time.
func TestArchivesAreReproducible(t *testing.T) {
	files := map[string][]byte{"cairn": []byte("one"), "cairn-mcp": []byte("two"), "cairn-stop": bytes.Repeat([]byte("x"), 70000)}
	for _, tc := range []struct {
		name string
		make func(map[string][]byte) ([]byte, error)
		list func(t *testing.T, data []byte) map[string]string
	}{
		{"tar.gz", TarGz, listTarGz},
		{"zip", Zip, listZip},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := tc.make(files)
			if err != nil {
				t.Fatal(err)
			}
			for range 5 {
				b, err := tc.make(files)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(a, b) {
					t.Fatal("two archives of the same files differ")
				}
			}
			got := tc.list(t, a)
			for name, data := range files {
				if got[name] != string(data) {
					t.Errorf("%s: %d bytes in the archive, want %d", name, len(got[name]), len(data))
				}
			}
			if len(got) != len(files) {
				t.Errorf("the archive holds %d entries, want %d", len(got), len(files))
			}
		})
	}
}

func listTarGz(t *testing.T, data []byte) map[string]string {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if !zr.ModTime.IsZero() || zr.Name != "" {
		t.Errorf("the gzip header carries a time %v or a name %q", zr.ModTime, zr.Name)
	}
	tr := tar.NewReader(zr)
	out := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Mode != 0o755 || !h.ModTime.Equal(entryTime) || h.Uid != 0 || h.Uname != "" {
			t.Errorf("%s: mode %o, time %v, owner %d/%q; want 755, the fixed time, root with no name", h.Name, h.Mode, h.ModTime, h.Uid, h.Uname)
		}
		b, _ := io.ReadAll(tr)
		out[h.Name] = string(b)
	}
}

func listZip(t *testing.T, data []byte) map[string]string {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range zr.File {
		if f.Mode().Perm() != 0o755 || !f.Modified.Equal(entryTime) {
			t.Errorf("%s: mode %v, time %v; want 755 and the fixed time", f.Name, f.Mode(), f.Modified)
		}
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r)
		r.Close()
		out[f.Name] = string(b)
	}
	return out
}

func TestArchiveNames(t *testing.T) {
	for _, tc := range []struct {
		p    Platform
		want string
	}{
		{Platform{"linux", "amd64"}, "cairn_1.2.3_linux_amd64.tar.gz"},
		{Platform{"darwin", "arm64"}, "cairn_1.2.3_darwin_arm64.tar.gz"},
		{Platform{"windows", "amd64"}, "cairn_1.2.3_windows_amd64.zip"},
	} {
		if got := ArchiveName("1.2.3", tc.p); got != tc.want {
			t.Errorf("ArchiveName(%s) = %q, want %q", tc.p, got, tc.want)
		}
	}
	if len(Platforms) != 5 {
		t.Errorf("a release is built for %v, want linux and darwin (amd64, arm64) and windows/amd64", Platforms)
	}
}

// Dist builds the module at root alone: a go.work above it (one in the home directory, say)
// that does not list it failed every build, and one that does could swap in other sources
// than the checksums describe.
func TestDistIgnoresAWorkspaceAbove(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	home := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(home, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.work", "go 1.22\n\nuse ./elsewhere\n")
	write("elsewhere/go.mod", "module example.com/elsewhere\n\ngo 1.22\n")
	write("cairn/go.mod", "module example.com/cairn\n\ngo 1.22\n")
	for _, b := range Binaries {
		write("cairn/"+b.Pkg+"/main.go", "package main\n\nfunc main() {}\n")
	}
	out := filepath.Join(t.TempDir(), "dist")
	p := Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}
	sums, err := Dist(goBin, filepath.Join(home, "cairn"), out, "0.0.1", []Platform{p})
	if err != nil || !strings.HasSuffix(sums, "  "+ArchiveName("0.0.1", p)+"\n") {
		t.Fatalf("Dist under a go.work = %q, %v; want the archive built and listed", sums, err)
	}
}

// A GOFIPS140 in the caller's environment (a FIPS shop sets it for every build) selects another
// Go cryptographic module and changes the binaries' bytes: make checksums wrote sums no other
// machine reproduces, and make dist-check failed there. Dist fixes it, as it fixes GOAMD64.
func TestDistIgnoresTheCallersFIPSSetting(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	root := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/cairn\n\ngo 1.24\n")
	for _, b := range Binaries {
		write(b.Pkg+"/main.go", "package main\n\nimport \"crypto/sha256\"\n\nfunc main() { println(sha256.Sum256(nil)[0]) }\n")
	}
	p := []Platform{{OS: runtime.GOOS, Arch: runtime.GOARCH}}
	var sums []string
	for _, fips := range []string{"", "latest"} {
		t.Setenv("GOFIPS140", fips)
		s, err := Dist(goBin, root, filepath.Join(t.TempDir(), "dist"), "0.0.1", p)
		if err != nil {
			t.Fatalf("GOFIPS140=%q: %v", fips, err)
		}
		sums = append(sums, s)
	}
	if sums[0] != sums[1] {
		t.Errorf("GOFIPS140=latest changed the release:\n%s\nwant, as without it:\n%s", sums[1], sums[0])
	}
}

// A GOEXPERIMENT the caller set with go env -w (in the go env file, which go reads for a
// variable the environment leaves empty) is written into every binary's build settings and
// changed the release's bytes, as a GOFIPS140 would: Dist's GOEXPERIMENT= did not override it.
// The file's other settings (a GOPROXY, say) still apply.
func TestDistIgnoresTheCallersGoEnvFileExperiment(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/cairn\n\ngo 1.24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, b := range Binaries {
		if err := os.MkdirAll(filepath.Join(root, b.Pkg), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, b.Pkg, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// An experiment this Go has on already: only the build settings say it was asked for.
	const exp = "greenteagc"
	goenv := filepath.Join(t.TempDir(), "go-env")
	p := []Platform{{OS: runtime.GOOS, Arch: runtime.GOARCH}}
	var sums []string
	for _, file := range []string{"", "GOEXPERIMENT=" + exp + "\n"} {
		if err := os.WriteFile(goenv, []byte(file), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Setenv("GOENV", goenv)
		t.Setenv("GOEXPERIMENT", "")
		if out, err := exec.Command(goBin, "env", "GOEXPERIMENT").Output(); err != nil || strings.TrimSpace(string(out)) != strings.TrimSpace(strings.TrimPrefix(file, "GOEXPERIMENT=")) {
			t.Skipf("this go does not take GOEXPERIMENT=%s from its go env file: %q, %v", exp, out, err)
		}
		s, err := Dist(goBin, root, filepath.Join(t.TempDir(), "dist"), "0.0.1", p)
		if err != nil {
			t.Fatalf("go env file %q: %v", file, err)
		}
		sums = append(sums, s)
	}
	if sums[0] != sums[1] {
		t.Errorf("GOEXPERIMENT=%s in the go env file changed the release:\n%s\nwant, as without it:\n%s", exp, sums[1], sums[0])
	}
}

// Dist empties its output directory first, so an output directory that is or holds the
// sources (dist -out ., a typo'd -out ..) or files dist did not write (-out ~/Downloads) is
// refused before anything is removed. One holding only an earlier dist's output is not.
func TestDistRefusesAnOutputItDidNotWrite(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	parent := t.TempDir()
	root := filepath.Join(parent, "cairn")
	mine := filepath.Join(root, "go.mod")
	foreign := t.TempDir()
	notes := filepath.Join(foreign, "notes.txt")
	for _, f := range []string{mine, notes} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("module example.com/cairn\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := []Platform{{OS: runtime.GOOS, Arch: runtime.GOARCH}}
	for _, out := range []string{root, parent, foreign, filepath.Join(root, ".")} {
		if _, err := Dist(goBin, root, out, "0.0.1", p); err == nil || !strings.Contains(err.Error(), "refusing") {
			t.Errorf("Dist into %s = %v, want it refused", out, err)
		}
	}
	for _, f := range []string{mine, notes} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("Dist removed %s: %v", f, err)
		}
	}

	earlier := filepath.Join(t.TempDir(), "dist")
	for _, name := range []string{ChecksumsName("0.0.1"), ArchiveName("0.0.1", p[0]), ArchiveName("0.0.0", Platform{OS: "windows", Arch: "arm64"}), ".build/x/cairn"} {
		f := filepath.Join(earlier, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := checkOut(root, earlier); err != nil {
		t.Errorf("an earlier dist's output was refused: %v", err)
	}
	if err := checkOut(root, filepath.Join(t.TempDir(), "new")); err != nil {
		t.Errorf("a new output directory was refused: %v", err)
	}
}

// The refusal's step is the one that loses nothing: another -out. "or remove it" steered
// toward deleting a file of the user's, and the refusal of the sources' directory gave none.
func TestDistRefusalSaysAnotherOut(t *testing.T) {
	root := t.TempDir()
	foreign := t.TempDir()
	if err := os.WriteFile(filepath.Join(foreign, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{root, foreign} {
		err := checkOut(root, out)
		if err == nil || !strings.HasSuffix(err.Error(), "; choose another -out") || strings.Contains(err.Error(), "remove") {
			t.Errorf("checkOut(%s) = %v, want a refusal ending in the step \"choose another -out\"", out, err)
		}
	}
}
