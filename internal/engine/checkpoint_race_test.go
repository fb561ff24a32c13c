package engine

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// TestSaveCheckpointChangedUnderRace: two clients saving their own bytes to one checkpoint
// each report changed exactly when the checkpoint held the other's bytes (or none) just
// before their save. In any order of whole saves the runs of one client's saves alternate
// with the other's, and each run begins with the one changed save, so the two counts differ
// by at most one. A save that read the previous bytes before the other client's save landed
// reported changed: false for a save that did change the checkpoint.
func TestSaveCheckpointChangedUnderRace(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	project, home := filepath.Join(base, "proj"), filepath.Join(base, "home")
	os.MkdirAll(filepath.Join(project, ".git"), 0o755)
	os.MkdirAll(home, 0o755)
	env := map[string]string{"HOME": home, "CLAUDE_PROJECT_DIR": project}
	const saves = 60
	var changed [2]int
	var wg sync.WaitGroup
	for w := range 2 {
		en, err := Open(Config{Getenv: func(k string) string { return env[k] }, WorkDir: project, YAML: yamldoc.Codec{}, Actor: "test"})
		if err != nil {
			t.Fatal(err)
		}
		defer en.Close()
		data := []byte(`{"writer":` + string(rune('0'+w)) + `}`)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range saves {
				res, err := en.SaveCheckpoint("cp", data)
				if err != nil {
					t.Error(err)
					return
				}
				if res.Changed {
					changed[w]++
				}
			}
		}()
	}
	wg.Wait()
	if d := changed[0] - changed[1]; d > 1 || d < -1 {
		t.Fatalf("changed reported %d and %d times: some save that replaced the other client's bytes said nothing changed", changed[0], changed[1])
	}
}
