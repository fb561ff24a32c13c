package engine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
)

// A record written before a scan refused its text (an older Cairn's rules, a hand edit) may
// hold a secret: the resume answer (resume_check's structured content, cairn status and its
// --json, the report) repeats it nowhere, as the report already did not, and says it is there.
func TestStoredSecretIsNotRepeatedByResume(t *testing.T) {
	for _, s := range secrettest.Shapes() {
		e := newEnv(t)
		en := e.open("s1")
		must(en.Start(engine.StartRequest{Type: "apex", Context: "placeholder-context"}))(t)
		must(en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running", Note: "placeholder-note"}))(t)
		must(en.SetEnforcement([]engine.Violation{{Code: "V-1", Severity: "HIGH", Details: "placeholder-details"}}))(t)
		snap := filepath.Join(en.StateDir(), "workflow-state.json")
		b, err := os.ReadFile(snap)
		if err != nil {
			t.Fatal(err)
		}
		q, _ := json.Marshal(s.Text)
		doc := string(b)
		for _, p := range []string{"placeholder-context", "placeholder-note", "placeholder-details"} {
			doc = strings.Replace(doc, `"`+p+`"`, string(q), 1)
		}
		if err := os.WriteFile(snap, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		r := e.open("s1").Resume(engine.ResumeOptions{Person: true})
		r.Workflow = nil // the record itself: cairn show's
		raw, _ := json.Marshal(r)
		if strings.Contains(string(raw), s.Core) || strings.Contains(r.Report, s.Core) {
			t.Fatalf("%s: repeated:\n%s\n%s", s.Name, raw, r.Report)
		}
		if r.Context != "(not shown: it has a secret's shape)" {
			t.Fatalf("%s: context %q", s.Name, r.Context)
		}
	}
}
