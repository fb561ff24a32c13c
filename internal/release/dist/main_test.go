package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/release"
)

// -write with some platforms rewrote release/checksums.txt with their lines alone, dropping
// the others' (whose installs then found no checksum for their archive), and -check with some
// failed saying the sources or the Go had changed. Both are refused before anything is built,
// and the committed file is left as it was.
func TestWriteAndCheckNeedEveryPlatform(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	const sums = "committed\n"
	for name, text := range map[string]string{"go.mod": "module example.com/m\n", committed: sums} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Every platform, in any order, is what -write and -check take.
	all := slices.Clone(release.Platforms)
	slices.Reverse(all)
	if !everyPlatform(all) {
		t.Errorf("everyPlatform(%v) = false, want true", all)
	}
	for _, tc := range []struct {
		platforms    string
		write, check bool
	}{
		{"host", true, false},
		{"linux/amd64", false, true},
		{"darwin/amd64,darwin/arm64,linux/amd64,linux/arm64,windows/amd64,linux/amd64", true, false},
	} {
		err := run(filepath.Join(dir, "out"), tc.platforms, tc.write, tc.check)
		if err == nil || !strings.Contains(err.Error(), "every platform") {
			t.Errorf("-platforms %s (write %v, check %v): %v, want a refusal saying it needs every platform", tc.platforms, tc.write, tc.check, err)
		}
		if b, _ := os.ReadFile(committed); string(b) != sums {
			t.Errorf("-platforms %s: %s = %q, want it unchanged", tc.platforms, committed, b)
		}
		if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
			t.Errorf("-platforms %s: out/ was made: the refusal came after the build", tc.platforms)
		}
	}
}
