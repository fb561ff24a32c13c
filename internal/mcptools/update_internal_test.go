package mcptools

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// updateCheck follows the plugin's checksums as they change under the server, step by step: a
// rewrite with the same text is no update, other checksums are, and the same again (a pull
// undone) is not any more; a binary outside a stamped set is never checked.
func TestUpdateCheckFollowsThePluginsChecksums(t *testing.T) {
	root, bin := t.TempDir(), t.TempDir()
	sums := filepath.Join(root, "release", "checksums.txt")
	write := func(path, text string, at time.Time) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		tmp := path + ".new"
		if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(tmp, at, at); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	if newUpdateCheck(root, bin) != nil {
		t.Fatal("a set without .checksums is checked")
	}
	t0 := time.Now().Add(-time.Hour)
	write(sums, "aaaa  cairn_1.0.0_linux_amd64.tar.gz\n", t0)
	write(filepath.Join(bin, ".checksums"), "aaaa  cairn_1.0.0_linux_amd64.tar.gz\n", t0)
	u := newUpdateCheck(root, bin)
	for i, step := range []struct {
		text    string // "" removes the file
		updated bool
	}{
		{"aaaa  cairn_1.0.0_linux_amd64.tar.gz\n", false},
		{"aaaa  cairn_1.0.0_linux_amd64.tar.gz", false}, // no last newline: the same, as the launcher reads it
		{"bbbb  cairn_1.0.1_linux_amd64.tar.gz\n", true},
		{"bbbb  cairn_1.0.1_linux_amd64.tar.gz\n", true},
		{"", true},
		{"aaaa  cairn_1.0.0_linux_amd64.tar.gz\n", false},
	} {
		if step.text == "" {
			if err := os.Remove(sums); err != nil {
				t.Fatal(err)
			}
		} else {
			write(sums, step.text, t0.Add(time.Duration(i+1)*time.Minute))
		}
		if got := u.updated(); got != step.updated {
			t.Errorf("step %d (%q): updated = %v, want %v", i, step.text, got, step.updated)
		}
	}
	// The set's own stamp rewritten (make build after git pull) does not make this process new.
	write(sums, "cccc  cairn_2.0.0_linux_amd64.tar.gz\n", t0.Add(time.Hour))
	write(filepath.Join(bin, ".checksums"), "cccc  cairn_2.0.0_linux_amd64.tar.gz\n", t0.Add(time.Hour))
	if !u.updated() {
		t.Error("after make build replaced the set, the running server is not told it is old")
	}
	var none *updateCheck
	if none.updated() {
		t.Error("no check says updated")
	}
}
