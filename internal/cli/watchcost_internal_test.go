package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/alloctest"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// TestWatchNamesWhoChangedAtTheCostOfTheChange: cairn watch names who made each change it
// prints from the journal's lines after the revision it printed last, read from the journal's
// end: a long workflow's journal (hundreds of changes before, sealed segments) is not read
// again for every change.
func TestWatchNamesWhoChangedAtTheCostOfTheChange(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	dir := filepath.Join(work, "project")
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": filepath.Join(work, "home"), "CLAUDE_PROJECT_DIR": dir, "CAIRN_MEMORY_DIR": filepath.Join(work, "memory")}
	open := func(session string) *engine.Engine {
		getenv := func(k string) string {
			if k == "CLAUDE_CODE_SESSION_ID" {
				return session
			}
			return env[k]
		}
		e, err := engine.Open(engine.Config{Getenv: getenv, Actor: "cli", SessionID: session, YAML: yamldoc.Codec{}})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	e := open("s-1")
	if _, err := e.Start(engine.StartRequest{Type: "apex", Context: "long", WorkflowID: "apex-long"}); err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if _, err := e.SetVars(map[string]string{"WF_STEP": fmt.Sprintf("%d %s", i, strings.Repeat("v", 1000))}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := open("s-2").SetVars(map[string]string{"WF_STEP": "last"})
	if err != nil {
		t.Fatal(err)
	}
	rev := res.Revision
	journal, err := os.Stat(filepath.Join(e.StateDir(), "journal", "apex-long.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var by string
	n := alloctest.Bytes(func() { by = new(app).changedBy(e, "apex-long", rev-1) })
	if by != "cli in session s-2" {
		t.Fatalf("changed by %q, want cli in session s-2", by)
	}
	// The journal's last 64 KiB window holds the change: a small part of the journal's bytes.
	if budget := uint64(128 << 10); n > budget || journal.Size() < 2*int64(budget) {
		t.Errorf("naming who made the last change of a %d-byte journal allocated %d bytes, want at most %d", journal.Size(), n, budget)
	}
	t.Logf("naming who made the last change of a %d-byte journal allocated %d bytes", journal.Size(), n)
}
