// Command dist builds Cairn's release into dist/ (make dist): an archive per platform and the
// checksums file, exactly what would be published. Run it from the repository's root.
//
//	dist [-out DIR] [-platforms all|host|OS/ARCH,...] [-write | -check]
//
// -write copies the checksums into release/checksums.txt (make checksums), which the launcher
// verifies downloads against; -check fails when they differ from that file (CI). Both take every
// platform: with -platforms other than all they are refused.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/release"
)

// committed is where the checksums of the current sources live in the repository.
const committed = "release/checksums.txt"

func main() {
	out := flag.String("out", "dist", "the directory to write (emptied first)")
	which := flag.String("platforms", "all", "all, host, or a comma-separated list of OS/ARCH")
	write := flag.Bool("write", false, "write the checksums into "+committed)
	check := flag.Bool("check", false, "fail when the checksums differ from "+committed)
	flag.Parse()
	if err := run(*out, *which, *write, *check); err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
}

func run(out, which string, write, check bool) error {
	if _, err := os.Stat("go.mod"); err != nil {
		return fmt.Errorf("run me from the repository's root: %w", err)
	}
	platforms, err := parsePlatforms(which)
	if err != nil {
		return err
	}
	// The committed file lists every platform's archive: written from some, it would lose the
	// others' lines; compared with some, it differs whatever the sources.
	if (write || check) && !everyPlatform(platforms) {
		opt := "-write"
		if check {
			opt = "-check"
		}
		return fmt.Errorf("%s needs every platform (%s lists them all): leave out -platforms", opt, committed)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return err
	}
	sums, err := release.Dist(goBin, ".", out, cairn.Version(), platforms)
	if err != nil {
		return err
	}
	fmt.Printf("wrote %d archives and %s into %s/\n", len(platforms), release.ChecksumsName(cairn.Version()), out)
	switch {
	case write:
		return os.WriteFile(committed, []byte(sums), 0o644)
	case check:
		old, err := os.ReadFile(committed)
		if err != nil {
			return err
		}
		if !bytes.Equal(old, []byte(sums)) {
			return fmt.Errorf("the build does not reproduce %s: the sources changed since it was written (run make checksums and commit it), or this Go differs from the release's (make dist pins it)\nbuilt:\n%s", committed, sums)
		}
		fmt.Printf("the build reproduces %s\n", committed)
	}
	return nil
}

// everyPlatform: ps are release.Platforms, each once, in any order.
func everyPlatform(ps []release.Platform) bool {
	seen := map[release.Platform]bool{}
	for _, p := range ps {
		seen[p] = true
	}
	if len(ps) != len(release.Platforms) || len(seen) != len(ps) {
		return false
	}
	for _, p := range release.Platforms {
		if !seen[p] {
			return false
		}
	}
	return true
}

func parsePlatforms(which string) ([]release.Platform, error) {
	switch which {
	case "all":
		return release.Platforms, nil
	case "host":
		return []release.Platform{{OS: runtime.GOOS, Arch: runtime.GOARCH}}, nil
	}
	var ps []release.Platform
	for _, s := range strings.Split(which, ",") {
		goos, arch, ok := strings.Cut(s, "/")
		if !ok || goos == "" || arch == "" {
			return nil, fmt.Errorf("-platforms: want OS/ARCH, e.g. linux/amd64")
		}
		ps = append(ps, release.Platform{OS: goos, Arch: arch})
	}
	return ps, nil
}
