package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLinkNamedForItsSystem: on Windows, cairn doctor --link made ~/.local/bin/cairn, a link
// with no .exe: cmd, PowerShell and Go's LookPath find programs by PATHEXT, so `cairn` was not
// found, and doctor went on offering --link; uninstall did not remove it either. The link is
// now cairn.exe there, as the binary it names is, and uninstall finds it.
func TestLinkNamedForItsSystem(t *testing.T) {
	for _, tc := range []struct{ goos, name string }{{"linux", "cairn"}, {"darwin", "cairn"}, {"windows", "cairn.exe"}} {
		t.Run(tc.goos, func(t *testing.T) {
			home := t.TempDir()
			set := filepath.Join(home, "data", "bin-1.0.0")
			exe := filepath.Join(set, tc.name)
			writeTestFile(t, exe, "binary")
			writeTestFile(t, filepath.Join(set, strings.Replace(tc.name, "cairn", "cairn-mcp", 1)), "binary")
			var stdout, stderr bytes.Buffer
			a := &app{stdout: &stdout, stderr: &stderr, getenv: func(k string) string { return map[string]string{"HOME": home}[k] },
				executable: func() (string, error) { return exe, nil }}
			c := a.linkCheck(true, tc.goos)
			want := filepath.Join(home, ".local", "bin", tc.name)
			if got, err := os.Readlink(want); !c.OK || err != nil || got != exe || !strings.HasPrefix(c.Detail, want+" -> ") {
				t.Fatalf("doctor --link for %s: %+v, %s links to %q (%v); want %s -> %s", tc.goos, c, want, got, err, want, exe)
			}
			if got := cairnLinks(home, exe, tc.goos); len(got) != 1 || got[0] != want {
				t.Errorf("uninstall's links for %s: %q, want [%s]", tc.goos, got, want)
			}
		})
	}
}

// TestLinkStepNamedForItsSystem: doctor's step named ~/.local/bin/cairn on Windows too, where
// doctor --link makes cairn.exe: a user looking there for what it made found no such file.
func TestLinkStepNamedForItsSystem(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, tc := range []struct{ goos, want string }{{"linux", "~/.local/bin/cairn to this one"}, {"windows", "~/.local/bin/cairn.exe to this one"}} {
		t.Run(tc.goos, func(t *testing.T) {
			home := t.TempDir()
			exe := filepath.Join(home, "data", "bin-1.0.0", "cairn")
			a := &app{getenv: func(k string) string { return map[string]string{"HOME": home}[k] },
				executable: func() (string, error) { return exe, nil }}
			if c := a.linkCheck(false, tc.goos); !strings.Contains(c.Detail, tc.want) {
				t.Errorf("doctor on %s: %+v, want a step naming %q", tc.goos, c, tc.want)
			}
		})
	}
}
