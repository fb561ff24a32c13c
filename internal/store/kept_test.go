package store_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/internal/store"
)

// TestKeptTasksSaysWhetherItsDirectoryIsThere: KeptTasks lists nothing both when nothing was
// ever kept and when all that was kept is recorded, and says which (nil: no directory), so
// that the hooks, which look at every start and turn's end, remove the directory only when it
// is there.
func TestKeptTasksSaysWhetherItsDirectoryIsThere(t *testing.T) {
	for _, tc := range []struct {
		name    string
		dir     bool
		wantNil bool
	}{
		{"no directory", false, true},
		{"an empty directory", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, dir := newStore(t)
			if tc.dir {
				if err := os.Mkdir(filepath.Join(dir, store.KeptTasksDir), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			names, err := s.KeptTasks()
			if err != nil || len(names) != 0 || (names == nil) != tc.wantNil {
				t.Errorf("KeptTasks = %#v, %v; want none, nil slice %t", names, err, tc.wantNil)
			}
		})
	}
}
