package e2e

// What the model and the person read of state Cairn did not write as it now is: text of a
// secret's shape kept in the record or in memory (stored before a rule found it, or written by
// hand), read in the real client.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/e2e/mockapi"
	"github.com/cairn-dev/cairn/internal/memory"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
)

// hiddenSecret is what every surface of the resume answer says in place of such text.
const hiddenSecret = "(not shown: it has a secret's shape)"

// shape is secrettest's shape of that name.
func shape(t *testing.T, name string) secrettest.Shape {
	t.Helper()
	for _, s := range secrettest.Shapes() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("secrettest has no shape %q", name)
	return secrettest.Shape{}
}

// A record's context, or memory's last line with no workflow on record, of a secret's shape:
// the session's report and the resume_check result each say it is not shown, and no request
// the model gets (its whole body) nor any hook's output holds it.
func TestCairnStoredSecretNotRepeated(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, shape string
		plant       func(t *testing.T, w *World, text string)
	}{
		{"record's context", "github-classic", func(t *testing.T, w *World, text string) {
			w.cairn(t, "start", "apex", "placeholder-context")
			snap := filepath.Join(w.stateDir(), "workflow-state.json")
			doc := readFile(t, snap)
			if !strings.Contains(doc, `"placeholder-context"`) {
				t.Fatalf("the record has no context to plant in:\n%s", doc)
			}
			q, _ := json.Marshal(text)
			if err := os.WriteFile(snap, []byte(strings.Replace(doc, `"placeholder-context"`, string(q), 1)), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"memory's line", "aws-access-key-id", func(t *testing.T, w *World, text string) {
			if err := os.MkdirAll(w.MemoryDir(), 0o700); err != nil {
				t.Fatal(err)
			}
			line := "- 2026-11-22T09:00:00Z Active APEX for x: " + text + "\n"
			if err := os.WriteFile(filepath.Join(w.MemoryDir(), memory.TopicFile), []byte(line), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, cairnPlugin)
			s := shape(t, c.shape)
			c.plant(t, w, s.Text)
			w.Mock.Script(inTurn("SECRET-PROMPT", "done", 1, func(int) (string, mockapi.Reply) {
				return "resume_check", mockapi.ToolUse(cairnTool("resume_check"), map[string]any{})
			})...)
			r := w.runScript(t, RunOptions{Prompt: "SECRET-PROMPT: where are we?"})
			if report := cairnReport(t, r.FirstMain(t)); !strings.Contains(report, hiddenSecret) {
				t.Errorf("the report does not say the text is not shown:\n%s", report)
			}
			if tr := requireToolResultsOK(t, r, 1)[0]; !strings.Contains(tr.Text, hiddenSecret) {
				t.Errorf("resume_check's result does not say the text is not shown:\n%s", tr.Text)
			}
			for i, q := range r.Requests {
				if strings.Contains(string(q.Body), s.Core) {
					t.Errorf("request %d (%s) holds the secret", i+1, q.Path)
				}
			}
			for _, ev := range []string{"SessionStart", "Stop"} {
				for _, h := range requireHooksOK(t, r, ev) {
					if strings.Contains(h.Stdout, s.Core) || strings.Contains(h.Stderr, s.Core) {
						t.Errorf("the %s hook's output holds the secret: %s", ev, h.Stdout)
					}
				}
			}
		})
	}
}
