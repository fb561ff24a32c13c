package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// TestUnusableStatusFileSaidOnce: a directory where WORKFLOW-STATUS.yaml belongs was said to be
// "left untouched); it was left as it is", and a set_status that changed nothing (a retry)
// said nothing of it at all. Both answers say once that the file was not used, and why.
func TestUnusableStatusFileSaidOnce(t *testing.T) {
	e := newEnv(t)
	eng := e.openYAML(yamldoc.Codec{})
	must(eng.Initiative(engine.InitiativeRequest{Action: "create", Title: "T"}))(t)
	status := filepath.Join(e.project, ".claude", "WORKFLOW-STATUS.yaml")
	if err := os.Remove(status); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(status, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{"in_progress", "in_progress"} {
		res := must(eng.Initiative(engine.InitiativeRequest{Action: "set_status", Status: st}))(t)
		w := strings.Join(res.Warnings, "\n")
		if !strings.Contains(w, "WORKFLOW-STATUS.yaml") || !strings.Contains(w, "not a regular file") {
			t.Errorf("set_status %s (changed %t): warnings %q do not say the file was not used", st, res.Changed, res.Warnings)
		}
		if strings.Count(w, "left untouched")+strings.Count(w, "left as it is") > 1 || strings.Count(w, "not a regular file") > 1 {
			t.Errorf("set_status %s: warnings %q say it twice", st, res.Warnings)
		}
	}
}
