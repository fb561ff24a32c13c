//go:build unix

package store_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeleteCheckpointLeavesWhatIsNotOne: a symlink or FIFO in a checkpoint's place, which
// load and save refuse as not a file Cairn wrote (it may be someone's), and list leaves out,
// was removed by checkpoint delete, which said it deleted the checkpoint. As with a
// directory there, the delete is refused, says what is in its place and the one step, and
// leaves it.
func TestDeleteCheckpointLeavesWhatIsNotOne(t *testing.T) {
	for _, tc := range []struct {
		kind  string
		plant func(t *testing.T, p string) error
	}{
		{"a symlink", func(t *testing.T, p string) error {
			target := filepath.Join(t.TempDir(), "plan.json")
			if err := os.WriteFile(target, []byte(`{"a":1}`), 0o600); err != nil {
				return err
			}
			return os.Symlink(target, p)
		}},
		{"a FIFO", func(t *testing.T, p string) error { return mkfifo(p) }},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			s, dir := newStore(t)
			place := filepath.Join(dir, "checkpoints", "plan.json")
			if err := os.MkdirAll(filepath.Dir(place), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := tc.plant(t, place); err != nil {
				t.Fatal(err)
			}
			err := s.DeleteCheckpoint("plan")
			for _, want := range []string{tc.kind + " is in its place", "nothing was changed", "move " + place + " out of the state directory"} {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("delete: %v, want it to say %q", err, want)
				}
			}
			if _, err := os.Lstat(place); err != nil {
				t.Errorf("%s was removed: %v", tc.kind, err)
			}
		})
	}
}
