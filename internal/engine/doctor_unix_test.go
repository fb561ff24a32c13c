//go:build !windows

package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// TestDoctorStaleTempsStayInTheStateDirectory: a state subdirectory that is a symlink (a
// repository that commits one) leads out of the state directory, and the temp-named files
// where it points are not Cairn's: doctor neither lists them nor puts them in its rm.
func TestDoctorStaleTempsStayInTheStateDirectory(t *testing.T) {
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "temps"}))(t)
	elsewhere := t.TempDir()
	theirs := filepath.Join(elsewhere, ".tmp-notes.txt")
	noErr(t, os.WriteFile(theirs, []byte("someone's notes"), 0o600))
	old := e.clock.Now().Add(-time.Hour)
	noErr(t, os.Chtimes(theirs, old, old))
	for _, sub := range []string{engine.KeptTasksDir, "logs"} {
		p := filepath.Join(en.StateDir(), sub)
		noErr(t, os.RemoveAll(p))
		noErr(t, os.Symlink(elsewhere, p))
	}
	if c := doctorCheck(en, engine.DoctorOptions{}, "stale temp files"); c == nil || !c.OK || strings.Contains(c.Fix+c.Detail, ".tmp-notes") {
		t.Errorf("doctor says %+v, want no temp file where a link points", c)
	}
}
