// Package release is Cairn's release configuration and the reproducible build behind it: every
// binary for every platform below, one archive per platform, and a checksums file, written
// exactly as they would be published (`make dist`). Two builds of the same sources with the
// same Go give the same bytes, so the checksums are committed (release/checksums.txt) and the
// launcher (hooks/install) checks every downloaded archive against them.
//
// What the binaries embed: the version from .claude-plugin/plugin.json (package cairn) and no
// commit (-buildvcs=false), because the commit that holds the checksums cannot be known to the
// binaries they describe. Paths are trimmed, the build id is empty, cgo is off, and archive
// entries carry a fixed time, owner and mode.
package release

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Binary is one Cairn executable and the package it is built from.
type Binary struct{ Name, Pkg string }

// Binaries are every executable a release holds (hooks/install and the Makefile build the same).
var Binaries = []Binary{
	{"cairn-mcp", "./mcpserver"},
	{"cairn-session-start", "./hooks/sessionstart"},
	{"cairn-stop", "./hooks/stop"},
	{"cairn-event", "./hooks/event"},
	{"cairn", "./cmd/cairn"},
}

// Platform is a GOOS/GOARCH pair.
type Platform struct{ OS, Arch string }

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// Platforms are the ones a release is built for.
var Platforms = []Platform{
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"linux", "amd64"}, {"linux", "arm64"},
	{"windows", "amd64"},
}

// ArchiveName is the file name of version's archive for p, the name hooks/install downloads.
func ArchiveName(version string, p Platform) string {
	ext := "tar.gz"
	if p.OS == "windows" {
		ext = "zip"
	}
	return fmt.Sprintf("cairn_%s_%s_%s.%s", version, p.OS, p.Arch, ext)
}

// ChecksumsName is the file name of version's checksums file in dist/.
func ChecksumsName(version string) string { return "cairn_" + version + "_checksums.txt" }

// entryTime is every archive entry's modification time: a fixed one, for reproducibility.
var entryTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Dist builds every binary for each platform from the module at root with the go at goBin,
// writes each platform's archive into out and the checksums file listing them, and returns
// the checksums file's text. out is emptied first: it holds exactly what would be published;
// so an out that is or holds root, or holds what Dist does not write, is refused.
func Dist(goBin, root, out, version string, platforms []Platform) (string, error) {
	if err := checkOut(root, out); err != nil {
		return "", err
	}
	if err := os.RemoveAll(out); err != nil {
		return "", err
	}
	work := filepath.Join(out, ".build")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	goenv, err := goEnvFile(goBin, work)
	if err != nil {
		return "", err
	}
	var sums []string
	for _, p := range platforms {
		files := make(map[string][]byte, len(Binaries))
		for _, b := range Binaries {
			name := b.Name
			if p.OS == "windows" {
				name += ".exe"
			}
			exe := filepath.Join(work, p.OS+"_"+p.Arch, name)
			cmd := exec.Command(goBin, "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid=", "-o", exe, b.Pkg)
			cmd.Dir = root
			// Everything that changes the bytes is fixed here, whatever the caller's environment.
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch, "GOFLAGS=-mod=readonly",
				"GOWORK=off", "GOAMD64=v1", "GOARM64=v8.0", "GOEXPERIMENT=", "GOFIPS140=off", "GOENV="+goenv)
			if msg, err := cmd.CombinedOutput(); err != nil {
				return "", fmt.Errorf("go build %s for %s: %v\n%s", b.Pkg, p, err, msg)
			}
			data, err := os.ReadFile(exe)
			if err != nil {
				return "", err
			}
			files[name] = data
		}
		pack := TarGz
		if p.OS == "windows" {
			pack = Zip
		}
		archive, err := pack(files)
		if err != nil {
			return "", err
		}
		name := ArchiveName(version, p)
		if err := os.WriteFile(filepath.Join(out, name), archive, 0o644); err != nil {
			return "", err
		}
		sum := sha256.Sum256(archive)
		sums = append(sums, hex.EncodeToString(sum[:])+"  "+name+"\n")
	}
	slices.SortFunc(sums, func(a, b string) int { return strings.Compare(a[66:], b[66:]) }) // by name
	text := strings.Join(sums, "")
	if err := os.WriteFile(filepath.Join(out, ChecksumsName(version)), []byte(text), 0o644); err != nil {
		return "", err
	}
	return text, nil
}

// goEnvFile is the caller's go env file (what go env -w wrote) less its GOEXPERIMENT, copied
// into dir, or "off" when there is none: go takes a variable the environment leaves empty, as
// Dist's GOEXPERIMENT= does, from that file, and writes the experiments asked for into every
// binary. Its other settings (GOPROXY, GOTOOLCHAIN, ...) still apply to the build.
func goEnvFile(goBin, dir string) (string, error) {
	out, err := exec.Command(goBin, "env", "GOENV").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOENV: %w", err)
	}
	path := strings.TrimSpace(string(out))
	if path == "" || path == "off" {
		return "off", nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "off", nil
	} else if err != nil {
		return "", err
	}
	var keep strings.Builder
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if !strings.HasPrefix(line, "GOEXPERIMENT=") {
			keep.WriteString(line)
		}
	}
	file := filepath.Join(dir, "go.env")
	return file, os.WriteFile(file, []byte(keep.String()), 0o644)
}

// checkOut refuses an output directory that Dist may not empty: one that is or holds the
// sources at root, or that holds anything but an earlier Dist's archives, checksums and .build.
func checkOut(root, out string) error {
	absRoot, err := realPath(root)
	if err != nil {
		return err
	}
	absOut, err := realPath(out)
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(absOut, absRoot); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("refusing to empty %s: it holds the sources (%s); choose another -out", out, root)
	}
	entries, err := os.ReadDir(out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		ours := name == ".build" && e.IsDir() ||
			e.Type().IsRegular() && strings.HasPrefix(name, "cairn_") &&
				(strings.HasSuffix(name, "_checksums.txt") || strings.HasSuffix(name, ".tar.gz") || strings.HasSuffix(name, ".zip"))
		if !ours {
			return fmt.Errorf("refusing to empty %s: it holds %s, which dist did not write; choose another -out", out, name)
		}
	}
	return nil
}

// realPath is path made absolute, with the symbolic links of its longest existing part
// resolved: the same directory reached two ways gives the same answer.
func realPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	rest := ""
	for {
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			return filepath.Join(real, rest), nil
		}
		parent := filepath.Dir(abs)
		if parent == abs {
			return filepath.Join(abs, rest), nil
		}
		rest = filepath.Join(filepath.Base(abs), rest)
		abs = parent
	}
}

// TarGz is a gzipped tar of files (name -> content), executables at the top level, in name
// order, with a fixed time, owner and mode.
func TarGz(files map[string][]byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // fails only for an invalid level
	tw := tar.NewWriter(zw)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		hdr := &tar.Header{Name: name, Mode: 0o755, Size: int64(len(files[name])), ModTime: entryTime, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(files[name]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Zip is the same for Windows, where unzip (Git Bash's, see hooks/install), tar.exe and Explorer
// read zip.
func Zip(files map[string][]byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		hdr := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: entryTime}
		hdr.SetMode(0o755)
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(files[name]); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
