package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/cli"
)

// A checkpoint saved before the active workflow started may be another workflow's result:
// load_checkpoint says so beside the data, and cairn checkpoint load now says it on stderr,
// where a script reading stdout (the JSON as saved) is not disturbed. One saved since is
// loaded with nothing said.
func TestCheckpointLoadSaysSavedBeforeTheWorkflow(t *testing.T) {
	p := newCLIProject(t)
	mustRun(t, p, "", "checkpoint", "save", "old-plan", `{"step":1}`)
	hourAgo := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(p.root, ".claude", "cairn", "checkpoints", "old-plan.json"), hourAgo, hourAgo); err != nil {
		t.Fatal(err)
	}
	mustRun(t, p, "", "start", "apex", "second")
	mustRun(t, p, "", "checkpoint", "save", "new-plan", `{"step":2}`)
	for _, tc := range []struct{ name, stdout, stderr string }{
		{"old-plan", `{"step":1}` + "\n", "before this workflow started"},
		{"new-plan", `{"step":2}` + "\n", ""},
	} {
		var stdout, stderr bytes.Buffer
		if code := cli.Main([]string{"checkpoint", "load", tc.name}, strings.NewReader(""), &stdout, &stderr, p.getenv); code != cli.ExitOK {
			t.Fatalf("cairn checkpoint load %s: exit %d: %s", tc.name, code, stderr.String())
		}
		if stdout.String() != tc.stdout {
			t.Errorf("cairn checkpoint load %s: stdout %q, want %q", tc.name, stdout.String(), tc.stdout)
		}
		if said := stderr.String(); tc.stderr == "" && said != "" || !strings.Contains(said, tc.stderr) || strings.Count(said, "\n") > 1 {
			t.Errorf("cairn checkpoint load %s: stderr %q, want one line saying %q", tc.name, said, tc.stderr)
		}
	}
}
