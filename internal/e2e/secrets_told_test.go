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

// A record's context, variable and checkpoint, or memory's last line with no workflow on
// record, of a secret's shape: the session's report and the resume_check result each say it
// is not shown, get_vars and load_checkpoint refuse naming where it is, and no request the
// model gets (its whole body) nor any hook's output holds it. An initiative.json's title of
// that shape: initiative's answer (its structured content, which the model reads) leaves out
// the document and says so; it gave the document whole.
func TestCairnStoredSecretNotRepeated(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, shape string
		plant       func(t *testing.T, w *World, text string)
		refused     map[string]string // a tool called after resume_check, and what its refusal names
	}{
		{"record", "github-classic", func(t *testing.T, w *World, text string) {
			w.cairn(t, "start", "apex", "placeholder-context")
			w.cairn(t, "vars", "set", "PLAN_NOTE", "placeholder-value")
			w.cairn(t, "checkpoint", "save", "plan", `{"note":"placeholder-note"}`)
			q, _ := json.Marshal(text)
			for file, placeholders := range map[string][]string{"workflow-state.json": {"placeholder-context", "placeholder-value"}, "checkpoints/plan.json": {"placeholder-note"}} {
				path := filepath.Join(w.stateDir(), file)
				doc := readFile(t, path)
				for _, p := range placeholders {
					if !strings.Contains(doc, `"`+p+`"`) {
						t.Fatalf("%s has no %s to plant in:\n%s", file, p, doc)
					}
					doc = strings.Replace(doc, `"`+p+`"`, string(q), 1)
				}
				if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}, map[string]string{"get_vars": "PLAN_NOTE", "load_checkpoint": "$.note"}},
		{"memory's line", "aws-access-key-id", func(t *testing.T, w *World, text string) {
			if err := os.MkdirAll(w.MemoryDir(), 0o700); err != nil {
				t.Fatal(err)
			}
			line := "- 2026-11-22T09:00:00Z Active APEX for x: " + text + "\n"
			if err := os.WriteFile(filepath.Join(w.MemoryDir(), memory.TopicFile), []byte(line), 0o600); err != nil {
				t.Fatal(err)
			}
		}, nil},
		// initiative answers with its document, left out (and said so) when it holds one.
		{"initiative", "github-classic", func(t *testing.T, w *World, text string) {
			q, _ := json.Marshal(text)
			doc := `{"version":"2.0","id":"initiative-20261122T090000Z-1a2b","title":` + string(q) +
				`,"status":"created","milestones":[{"id":"m1","title":"first","status":"pending","tasks_done":0}],"current_milestone":"m1","progress":0,` +
				`"created_at":"2026-11-22T09:00:00Z","updated_at":"2026-11-22T09:00:00Z"}`
			if err := os.MkdirAll(w.stateDir(), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(w.stateDir(), "initiative.json"), []byte(doc), 0o600); err != nil {
				t.Fatal(err)
			}
		}, map[string]string{"initiative": "the initiative's document is not shown"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, cairnPlugin)
			s := shape(t, c.shape)
			c.plant(t, w, s.Text)
			calls := []string{"resume_check"}
			// get_vars asked for the variable by name refuses it (with no keys it gives the others and
			// names the one left out: TestCairnGetVarsLeavesOutOneSecret).
			args := map[string]map[string]any{"resume_check": {}, "get_vars": {"keys": []string{"PLAN_NOTE"}}, "load_checkpoint": {"name": "plan"}, "initiative": {"action": "get"}}
			for tool := range c.refused {
				calls = append(calls, tool)
			}
			w.Mock.Script(inTurn("SECRET-PROMPT", "done", len(calls), func(i int) (string, mockapi.Reply) {
				return calls[i], mockapi.ToolUse(cairnTool(calls[i]), args[calls[i]])
			})...)
			r := w.runScript(t, RunOptions{Prompt: "SECRET-PROMPT: where are we?"})
			if c.name != "initiative" { // no workflow: no report
				if report := cairnReport(t, r.FirstMain(t)); !strings.Contains(report, hiddenSecret) {
					t.Errorf("the report does not say the text is not shown:\n%s", report)
				}
			}
			trs := r.ToolResults()
			if len(trs) != len(calls) {
				t.Fatalf("%d tool results, want %d: %+v", len(trs), len(calls), trs)
			}
			if trs[0].IsError || c.name != "initiative" && !strings.Contains(trs[0].Text, hiddenSecret) {
				t.Errorf("resume_check's result does not say the text is not shown:\n%s", trs[0].Text)
			}
			for i, tool := range calls[1:] {
				// initiative's answer is no error: it leaves out the document, saying so.
				if tr := trs[i+1]; tr.IsError != (tool != "initiative") || !strings.Contains(tr.Text, c.refused[tool]) {
					t.Errorf("%s: error %v, %q, want a refusal naming %s", tool, tr.IsError, tr.Text, c.refused[tool])
				}
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
