package engine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/memory"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
)

// Memory has other writers (Claude Code's memory writer, the model, a person, a Cairn from
// before a scan): a line there of a secret's shape, read as the last position or the last
// ending, is repeated by no surface of the resume answer (its JSON, which resume_check's
// structured content and cairn status --json are, and its report).
func TestMemoryLineWithASecretIsNotRepeated(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, file string
		content    func(line string) string
		ended      bool
	}{
		{"index line", memory.IndexFile, func(l string) string {
			return "# Memory\n- [Cairn workflow](" + memory.TopicFile + ") — " + l + "\n"
		}, false},
		{"topic line", memory.TopicFile, func(l string) string { return "- 2026-11-22T09:00:00Z " + l + "\n" }, false},
		{"ending on the index line", memory.IndexFile, func(l string) string {
			return "- [Cairn workflow](" + memory.TopicFile + ") — Completed APEX for x: " + l + "\n"
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, s := range secrettest.Shapes() {
				if strings.Contains(s.Text, "\n") {
					continue // a memory line is one line
				}
				e := newEnv(t)
				if err := os.MkdirAll(e.memoryDir(), 0o700); err != nil {
					t.Fatal(err)
				}
				line := "Active APEX for x: " + s.Text
				if c.ended {
					line = s.Text
				}
				if err := os.WriteFile(filepath.Join(e.memoryDir(), c.file), []byte(c.content(line)), 0o600); err != nil {
					t.Fatal(err)
				}
				for _, opt := range []engine.ResumeOptions{{Person: true}, {Apply: true, FromClient: true}, {Apply: true, ReportOnly: true}} {
					r := e.open("s1").Resume(opt)
					raw, _ := json.Marshal(r)
					if strings.Contains(string(raw), s.Core) || strings.Contains(r.Report, s.Core) {
						t.Fatalf("%s (%+v): repeated:\n%s\n%s", s.Name, opt, raw, r.Report)
					}
					got := r.L2Line
					if c.ended {
						got = r.Ended
					}
					if opt.ReportOnly && !c.ended { // an ending known only from memory is not told
						got = r.Report
					}
					if !strings.Contains(got, "(not shown: it has a secret's shape)") {
						t.Fatalf("%s (%+v): the line is not said to be hidden:\n%s\n%s", s.Name, opt, raw, r.Report)
					}
				}
			}
		})
	}
}

// A record written before a scan refused its text (an older Cairn's rules, a hand edit) may
// hold a secret: the resume answer (resume_check's structured content, cairn status and its
// --json, the report) repeats it nowhere, as the report already did not, and says it is there.
func TestStoredSecretIsNotRepeatedByResume(t *testing.T) {
	t.Parallel()
	for _, s := range secrettest.Shapes() {
		e := newEnv(t)
		en := e.open("s1")
		must(en.Start(engine.StartRequest{Type: "apex", Context: "placeholder-context"}))(t)
		must(en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running", Note: "placeholder-note"}))(t)
		must(en.SetEnforcement([]engine.Violation{{Code: "V-1", Severity: "HIGH", Details: "placeholder-details"}}))(t)
		snap := filepath.Join(en.StateDir(), "workflow-state.json")
		plant(t, snap, string(must(os.ReadFile(snap))(t)), s.Text, "placeholder-context", "placeholder-note", "placeholder-details")
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

// A phase name of a secret's shape in the record (a hand edit, or a definition's phase renamed
// since) is not repeated by the next step either, which names the phase: not by the resume
// answer nor its report, nor by the compaction anchor; the step is still given.
func TestStoredSecretPhaseIsNotRepeatedByTheNextStep(t *testing.T) {
	t.Parallel()
	for _, s := range secrettest.Shapes() {
		e := newEnv(t)
		en := e.open("s1")
		must(en.Start(engine.StartRequest{Type: "apex", Context: "phase"}))(t)
		snap := filepath.Join(en.StateDir(), "workflow-state.json")
		q, _ := json.Marshal(s.Text)
		data := strings.Replace(string(must(os.ReadFile(snap))(t)), `"state":"analyze"`, `"state":`+string(q), 1)
		if err := os.WriteFile(snap, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, opt := range []engine.ResumeOptions{{Person: true}, {FromClient: true}, {ReportOnly: true}} {
			r := e.open("s1").Resume(opt)
			r.Workflow = nil // the record itself: cairn show's
			raw, _ := json.Marshal(r)
			if strings.Contains(string(raw), s.Core) || strings.Contains(r.Report, s.Core) {
				t.Fatalf("%s (%+v): repeated:\n%s\n%s", s.Name, opt, raw, r.Report)
			}
			if !strings.Contains(r.Next, "(not shown: it has a secret's shape)") {
				t.Fatalf("%s (%+v): the next step does not say the phase is hidden: %q", s.Name, opt, r.Next)
			}
		}
		if anchor, problem := e.open("s1").CompactAnchor(); anchor == "" || strings.Contains(anchor, s.Core) || strings.Contains(problem, s.Core) {
			t.Fatalf("%s: the compaction anchor: %q, %q", s.Name, anchor, problem)
		}
		if st, ok, err := e.open("s1").QuickStatus(); !ok || err != nil || strings.Contains(st.Phase, s.Core) {
			t.Fatalf("%s: the status line's status: %+v, %v, %v", s.Name, st, ok, err)
		}
		if title := engine.Title(e.open("s1").Resume(engine.ResumeOptions{ReportOnly: true})); strings.Contains(title, s.Core) {
			t.Fatalf("%s: the session title: %q", s.Name, title)
		}
	}
}

// plantPhase starts an apex workflow and writes phase into its record as the phase it is in.
func plantPhase(t *testing.T, e *env, phase string) {
	t.Helper()
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "phase"}))(t)
	snap := filepath.Join(en.StateDir(), "workflow-state.json")
	q, _ := json.Marshal(phase)
	data := strings.Replace(string(must(os.ReadFile(snap))(t)), `"state":"analyze"`, `"state":`+string(q), 1)
	if err := os.WriteFile(snap, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// A phase name with no secret's shape may make one when it is cut to fit: a key glued to more
// text ("sk_live_...-x") cut after its body. The session title (phase cut at 40) and the
// compaction anchor, which cut it, end the cut before that word.
func TestPhaseCutToFitDoesNotMakeASecret(t *testing.T) {
	t.Parallel()
	for name, phase := range map[string]string{
		"title":  secrettest.GluedKey(t, 40), // the title's width for a phase
		"anchor": secrettest.GluedKey(t, 64), // the anchor's
	} {
		e := newEnv(t)
		plantPhase(t, e, phase)
		title := engine.Title(e.open("s1").Resume(engine.ResumeOptions{ReportOnly: true}))
		anchor, problem := e.open("s1").CompactAnchor()
		for what, text := range map[string]string{"title": title, "anchor": anchor, "problem": problem} {
			if secrets.ScanString(text) != nil {
				t.Errorf("%s: the %s has a secret's shape: %q", name, what, text)
			}
		}
	}
}

// A checkpoint written before a scan refused its text (an older Cairn's rules, a hand edit)
// is not given back, to the model (load_checkpoint) or a person (cairn checkpoint load): the
// refusal names the rule and where, never the secret, and the file is left as it is.
func TestStoredSecretIsNotLoadedFromACheckpoint(t *testing.T) {
	t.Parallel()
	_, en := startApex(t)
	must(en.SaveCheckpoint("plan", json.RawMessage(`{"note":"placeholder"}`)))(t)
	for _, s := range secrettest.Shapes() {
		q, _ := json.Marshal(s.Text)
		doc := []byte(`{"note":` + string(q) + `}`)
		p := filepath.Join(en.StateDir(), "checkpoints", "plan.json")
		if err := os.WriteFile(p, doc, 0o600); err != nil {
			t.Fatal(err)
		}
		for name, load := range map[string]func(string) (json.RawMessage, error){"load": en.LoadCheckpoint, "load or empty": en.LoadCheckpointOrEmpty} {
			data, err := load("plan")
			if err == nil || strings.Contains(string(data), s.Core) || strings.Contains(err.Error(), s.Core) || !strings.Contains(err.Error(), "$.note") {
				t.Fatalf("%s: %s: %s, %v", s.Name, name, data, err)
			}
		}
		if b, _ := os.ReadFile(p); string(b) != string(doc) {
			t.Fatalf("%s: the checkpoint was changed", s.Name)
		}
	}
}

// A variable set before a scan refused its value (an older Cairn's rules, a hand edit) is not
// given back, to the model (get_vars) or a person (cairn vars get, cairn vars export). Asked
// for by name, the answer is refused; asked for with the rest, the others are given and the
// one left out is named. Either way the rule is said, never the value.
func TestStoredSecretIsNotGivenBackAsAVariable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "vars"}))(t)
	must(en.SetVars(map[string]string{"PLAN_NOTE": "placeholder-value", "PLAN_PATH": "plans/001.md"}))(t)
	snap := filepath.Join(en.StateDir(), "workflow-state.json")
	clean, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrettest.Shapes() {
		plant(t, snap, string(clean), s.Text, "placeholder-value")
		en := e.open("s1")
		kv, err := en.GetVars([]string{"PLAN_NOTE"})
		if err == nil || strings.Contains(kv["PLAN_NOTE"], s.Core) || strings.Contains(err.Error(), s.Core) || !strings.Contains(err.Error(), "PLAN_NOTE") {
			t.Fatalf("%s: asked for by name: %q, %v", s.Name, kv, err)
		}
		r, err := en.ReadVars(nil)
		kv, withheld := r.Vars, r.Withheld
		if err != nil || len(kv) != 1 || kv["PLAN_PATH"] != "plans/001.md" || len(withheld) != 1 ||
			strings.Contains(withheld[0], s.Core) || withheld[0] != "variable PLAN_NOTE not shown: it holds text of a secret's shape ("+s.Rule+"), set before Cairn refused such text or written by hand, and left as it is: set it again without that text" {
			t.Fatalf("%s: all asked for: %q, %q, %v", s.Name, kv, withheld, err)
		}
		if kv := must(en.GetVars([]string{"PLAN_PATH"}))(t); kv["PLAN_PATH"] != "plans/001.md" {
			t.Fatalf("%s: a clean variable asked for by name is not given: %q", s.Name, kv)
		}
	}
	// A name of a secret's shape is not repeated: the variable left out is said to be one.
	const name = "ghp_Qk7aB9cD3eF5gH7jK9mN1pQ3rS5tU7vW9xY1"
	plant(t, snap, string(clean), name, "PLAN_NOTE")
	r, err := e.open("s1").ReadVars(nil)
	kv, withheld := r.Vars, r.Withheld
	if err != nil || len(kv) != 1 || kv["PLAN_PATH"] != "plans/001.md" || len(withheld) != 1 ||
		strings.Contains(withheld[0], name) || !strings.HasPrefix(withheld[0], "a variable not shown: its name holds text of a secret's shape (github-token)") {
		t.Fatalf("a name of a secret's shape: %q, %q, %v", kv, withheld, err)
	}
}

// plant writes clean to path with each JSON string named in placeholders ("placeholder-x",
// its quotes left out) replaced by text: a file as an older Cairn or a hand edit leaves it.
func plant(t *testing.T, path, clean, text string, placeholders ...string) {
	t.Helper()
	q, _ := json.Marshal(text)
	for _, p := range placeholders {
		clean = strings.Replace(clean, `"`+p+`"`, string(q), 1)
	}
	if err := os.WriteFile(path, []byte(clean), 0o600); err != nil {
		t.Fatal(err)
	}
}

// One secret in initiative.json, newer than WORKFLOW-STATUS.yaml, is told once: the answer's
// warning that the document is not shown says the status file is not updated from it either.
// A second warning about the same secret ("WORKFLOW-STATUS.yaml not updated: the initiative
// holds text of a secret's shape") told the model twice.
func TestStoredInitiativeSecretIsToldOnce(t *testing.T) {
	t.Parallel()
	e, en := startApex(t)
	must(en.Initiative(engine.InitiativeRequest{Action: "create", Title: "placeholder-title"}))(t)
	must(en.Initiative(engine.InitiativeRequest{Action: "add_milestone", Milestone: "m1", Note: "milestone-title"}))(t)
	e.clock.Add(10 * time.Minute)
	doc := filepath.Join(en.StateDir(), "initiative.json")
	clean := regexp.MustCompile(`"updated_at":"[^"]*"`).ReplaceAllString(string(must(os.ReadFile(doc))(t)), `"updated_at":"`+e.clock.Now().Format(time.RFC3339)+`"`)
	s := secrettest.Shapes()[0]
	plant(t, doc, clean, s.Text, "milestone-title")
	r := must(en.Initiative(engine.InitiativeRequest{Action: "get"}))(t)
	var told []string
	for _, w := range r.Warnings {
		if strings.Contains(w, "secret's shape") {
			told = append(told, w)
		}
	}
	if len(told) != 1 || !strings.HasPrefix(told[0], "the initiative's document is not shown: it holds text of a secret's shape") ||
		!strings.Contains(told[0], filepath.Join(".claude", "WORKFLOW-STATUS.yaml")+" is not updated from it") {
		t.Errorf("the secret is told %d times, want once, saying the status file is not updated: %q", len(told), r.Warnings)
	}
}

// A person's WORKFLOW-STATUS.yaml whose text has a secret's shape is not taken in: the
// refusal names that file as where it is, not the caller as the one who sent it, and repeats
// nothing of it.
func TestStatusFileWithASecretIsNamedAsItsSource(t *testing.T) {
	t.Parallel()
	for _, s := range secrettest.Shapes() {
		if strings.Contains(s.Text, "\n") {
			continue // a title is one line
		}
		e, en := startApex(t)
		must(en.Initiative(engine.InitiativeRequest{Action: "create", Title: "placeholder-title"}))(t)
		status := filepath.Join(e.project, ".claude", "WORKFLOW-STATUS.yaml")
		data := string(must(os.ReadFile(status))(t))
		e.clock.Add(10 * time.Minute)
		q, _ := json.Marshal(s.Text)
		data = strings.Replace(data, "placeholder-title", string(q), 1) // YAML reads a JSON string
		data = regexp.MustCompile(`(?m)^lastUpdated:.*$`).ReplaceAllString(data, `lastUpdated: "`+e.clock.Now().Format(time.RFC3339)+`"`)
		if err := os.WriteFile(status, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, req := range []engine.InitiativeRequest{{Action: "get"}, {Action: "add_milestone", Milestone: "m1"}} {
			_, err := en.Initiative(req)
			if err == nil || strings.Contains(err.Error(), s.Core) || !strings.Contains(err.Error(), filepath.Join(".claude", "WORKFLOW-STATUS.yaml")+" holds text of a secret's shape") {
				t.Fatalf("%s: %s: %v", s.Name, req.Action, err)
			}
		}
	}
}

// An initiative.json whose title or a milestone's title has a secret's shape (stored before a
// rule found it, or written by hand) is not repeated by the initiative's answer, which says it
// is there. The answer's document (initiative's structured "data" and the text after its
// line) repeated it whole while the line hid it; a change was refused as if the caller had
// sent the secret.
func TestStoredInitiativeTitleIsNotRepeated(t *testing.T) {
	t.Parallel()
	for i, s := range secrettest.Shapes() {
		for _, where := range []string{"placeholder-title", "milestone-title"} {
			if where == "milestone-title" && i > 0 {
				continue // where it is matters, not which shape: one is enough
			}
			e, en := startApex(t)
			must(en.Initiative(engine.InitiativeRequest{Action: "create", Title: "placeholder-title"}))(t)
			must(en.Initiative(engine.InitiativeRequest{Action: "add_milestone", Milestone: "m1", Note: "milestone-title"}))(t)
			doc := filepath.Join(en.StateDir(), "initiative.json")
			plant(t, doc, string(must(os.ReadFile(doc))(t)), s.Text, where)
			r, err := en.Initiative(engine.InitiativeRequest{Action: "get"})
			if err != nil {
				t.Fatalf("%s in %s: %v", s.Name, where, err)
			}
			whole, _ := json.Marshal(r)
			if strings.Contains(string(whole), s.Core) || strings.Contains(string(r.Workflow), s.Core) {
				t.Fatalf("%s in %s: the answer repeats it: %s", s.Name, where, whole)
			}
			if where == "placeholder-title" && (!strings.Contains(r.Message, "(not shown: it has a secret's shape)") || strings.Contains(r.Message, "((")) {
				t.Fatalf("%s: the line does not say the title is hidden: %s", s.Name, r.Message)
			}
			if !slices.ContainsFunc(r.Warnings, func(w string) bool {
				return strings.HasPrefix(w, "the initiative's document is not shown: it holds text of a secret's shape")
			}) {
				t.Fatalf("%s in %s: no warning says the document is left out: %q", s.Name, where, r.Warnings)
			}
			if b, _ := os.ReadFile(filepath.Join(e.project, ".claude", "WORKFLOW-STATUS.yaml")); strings.Contains(string(b), s.Core) {
				t.Fatalf("%s: copied into WORKFLOW-STATUS.yaml", s.Name)
			}
			// A change is refused as the stored text's, not as if the caller had sent it
			// ("keep it in an environment variable").
			_, err = en.Initiative(engine.InitiativeRequest{Action: "set_status", Status: "blocked"})
			if err == nil || strings.Contains(err.Error(), s.Core) || strings.Contains(err.Error(), "environment variable") ||
				!strings.Contains(err.Error(), "set_status was not done, nothing was changed") || !strings.HasSuffix(err.Error(), "tell the user, who can take it out of "+filepath.Join(".claude", "cairn", "initiative.json")) {
				t.Fatalf("%s in %s: set_status: %v", s.Name, where, err)
			}
		}
	}
}

// The compaction anchor is cut to fit as a whole too, its open task's title last: a title
// with no secret's shape whose cut ends right after a glued key's body ends before that word.
func TestAnchorCutToFitDoesNotMakeASecret(t *testing.T) {
	t.Parallel()
	anchor := func(note string) string {
		e := newEnv(t)
		en := e.open("s1")
		must(en.Start(engine.StartRequest{Type: "apex", Context: "phase"}))(t)
		must(en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "pending", Note: note}))(t)
		// A long type and phase (a hand edit: no definition then) push the title to the cut.
		snap := filepath.Join(en.StateDir(), "workflow-state.json")
		data := strings.Replace(string(must(os.ReadFile(snap))(t)), `"state":"analyze"`, `"state":"`+strings.Repeat("p", 64)+`"`, 1)
		data = strings.Replace(data, `"type":"apex"`, `"type":"`+strings.Repeat("y", 64)+`"`, 1)
		if err := os.WriteFile(snap, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		a, _ := e.open("s1").CompactAnchor()
		return a
	}
	const pad = "wwwwwwwwww "
	long := anchor(pad + strings.Repeat("w", 65))
	head, _, _ := strings.Cut(long, "“t1: "+pad)
	before, _, _ := strings.Cut(long, "…")
	kept := utf8.RuneCountInString(before) - utf8.RuneCountInString(head+"“t1: "+pad) // runes of the key before the cut
	if got := anchor(pad + secrettest.GluedKey(t, kept+1)); secrets.ScanString(got) != nil {
		t.Fatalf("the anchor has a secret's shape: %q", got)
	}
}

// A transition's checkpoint written before a scan refused its text (a hand edit of the
// record) is refused as a named checkpoint is: the rule and where, never the secret, the
// record left as it is, and one next step; the step for a phase's checkpoint, which no call
// saves again, is to keep what is needed under a name.
func TestStoredSecretIsNotLoadedFromAPhaseCheckpoint(t *testing.T) {
	t.Parallel()
	_, en := startApex(t)
	must(en.Transition(engine.TransitionRequest{To: "plan", Checkpoint: json.RawMessage(`{"note":"placeholder"}`)}))(t)
	must(en.SaveCheckpoint("plan", json.RawMessage(`{"note":"placeholder"}`)))(t)
	snap := filepath.Join(en.StateDir(), "workflow-state.json")
	clean := string(must(os.ReadFile(snap))(t))
	for _, s := range secrettest.Shapes() {
		q, _ := json.Marshal(s.Text)
		q = q[1 : len(q)-1]
		if err := os.WriteFile(snap, []byte(strings.Replace(clean, "placeholder", string(q), 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(en.StateDir(), "checkpoints", "plan.json"), []byte(`{"note":"`+string(q)+`"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		for what, tc := range map[string]struct {
			load func() (json.RawMessage, error)
			step string
		}{
			"named": {func() (json.RawMessage, error) { return en.LoadCheckpoint("plan") }, "save the checkpoint again without that text"},
			"phase": {func() (json.RawMessage, error) { return en.LoadPhaseCheckpoint("analyze") }, "save what the next step needs as a named checkpoint, without that text"},
		} {
			data, err := tc.load()
			if err == nil || strings.Contains(string(data), s.Core) || strings.Contains(err.Error(), s.Core) {
				t.Fatalf("%s: %s: %s, %v", s.Name, what, data, err)
			}
			for _, want := range []string{"is not shown: it holds text of a secret's shape (" + s.Rule + " at $.note)", "left as it is: " + tc.step} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%s: %s: %q does not say %q", s.Name, what, err, want)
				}
			}
		}
	}
	if b, _ := os.ReadFile(snap); strings.Contains(string(b), "placeholder") {
		t.Errorf("the record was rewritten")
	}
}

// A phase_status of a secret's shape in the record (a hand edit) was repeated by the resume
// answer's phase_status, which cairn status --json prints and cairn status shows.
func TestStoredSecretPhaseStatusIsNotRepeated(t *testing.T) {
	t.Parallel()
	for _, s := range secrettest.Shapes() {
		e := newEnv(t)
		en := e.open("s1")
		must(en.Start(engine.StartRequest{Type: "apex", Context: "phase status"}))(t)
		snap := filepath.Join(en.StateDir(), "workflow-state.json")
		q, _ := json.Marshal(s.Text)
		data := strings.Replace(string(must(os.ReadFile(snap))(t)), `"phase_status":"in_progress"`, `"phase_status":`+string(q), 1)
		if err := os.WriteFile(snap, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, opt := range []engine.ResumeOptions{{Person: true}, {FromClient: true}, {ReportOnly: true}} {
			r := e.open("s1").Resume(opt)
			r.Workflow = nil // the record itself: cairn show's
			raw, _ := json.Marshal(r)
			if strings.Contains(string(raw), s.Core) || strings.Contains(r.Report, s.Core) {
				t.Fatalf("%s (%+v): repeated:\n%s\n%s", s.Name, opt, raw, r.Report)
			}
		}
		if anchor, problem := e.open("s1").CompactAnchor(); strings.Contains(anchor, s.Core) || strings.Contains(problem, s.Core) {
			t.Fatalf("%s: the compaction anchor: %q, %q", s.Name, anchor, problem)
		}
	}
}

// A record holding text of a secret's shape kept before a scan refused it (an older Cairn's
// rules, a hand edit) could never end: every write of it, its ending too (archive, expiry, a
// replacing start), was refused as if the caller had sent the secret. A change is refused only
// for what it brings in: the record ends and goes on, and a new secret is still refused.
func TestStoredSecretDoesNotBlockChanges(t *testing.T) {
	t.Parallel()
	shapes := secrettest.Shapes()
	s, other := shapes[3], shapes[0]
	for name, change := range map[string]func(e *env) (*engine.Result, error){
		"update task": func(e *env) (*engine.Result, error) {
			return e.open("s1").UpdateTask(engine.TaskRequest{ID: "t2", Status: "running", Note: "x"})
		},
		"archive": func(e *env) (*engine.Result, error) { return e.open("s1").Archive("") },
		"expire": func(e *env) (*engine.Result, error) {
			e.clock.Add(2 * time.Hour)
			return e.open("s1").ExpireTTL(false)
		},
		"replacing start": func(e *env) (*engine.Result, error) {
			return e.open("s1").Start(engine.StartRequest{Type: "debug", Context: "two", Replace: true})
		},
	} {
		for _, in := range []string{"note", "phase"} {
			e := newEnv(t)
			en := e.open("s1")
			must(en.Start(engine.StartRequest{Type: "apex", Context: "placeholder-context", TTL: "1h"}))(t)
			must(en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running", Note: "placeholder-note"}))(t)
			snap := filepath.Join(en.StateDir(), "workflow-state.json")
			clean := string(must(os.ReadFile(snap))(t))
			if in == "phase" { // named in each change's event too
				clean = strings.Replace(clean, `"state":"analyze"`, `"state":"placeholder-note"`, 1)
			}
			plant(t, snap, clean, s.Text, "placeholder-note")
			if _, err := e.open("s1").UpdateTask(engine.TaskRequest{ID: "t3", Status: "running", Note: other.Text}); err == nil || strings.Contains(err.Error(), other.Core) {
				t.Fatalf("%s (%s): a new secret beside the kept one: %v", name, in, err)
			}
			if _, err := change(e); err != nil {
				t.Errorf("%s (%s): %v", name, in, err)
			}
		}
	}
}

// A change to a record whose phase name has a secret's shape (kept from before a rule found
// it, or a hand edit) keeps the phase in its journal event, as the record keeps it: the history
// (cairn history, cairn watch, the changes told at a resume) shows the event without it.
func TestStoredSecretPhaseIsNotRepeatedByTheHistory(t *testing.T) {
	t.Parallel()
	s := secrettest.Shapes()[3]
	e := newEnv(t)
	plantPhase(t, e, s.Text)
	en := e.open("s1")
	must(en.UpdateTask(engine.TaskRequest{ID: "t2", Status: "running", Note: "x"}))(t)
	id := must(en.Snapshot())(t).WorkflowID
	for name, evs := range map[string][]engine.Event{"history": must(en.History(id))(t), "since": must(en.HistorySince(id, 0))(t)} {
		raw, _ := json.Marshal(evs)
		if strings.Contains(string(raw), s.Core) || !strings.Contains(string(raw), "not shown") {
			t.Errorf("%s: %s", name, raw)
		}
	}
}

// A seed's state file holding text of a secret's shape (written before any scan) that appears
// beside the active workflow is settled as any second copy: archived when older, made active
// when newer. Each was refused as if the caller had sent the secret, at every session start.
func TestSecondCopyWithAStoredSecretIsSettled(t *testing.T) {
	t.Parallel()
	s := secrettest.Shapes()[3]
	for name, age := range map[string]time.Duration{"seed-file-newer": -time.Minute, "active-newer": -2 * time.Hour} {
		e := newEnv(t)
		e.clock.Add(-time.Hour)
		must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "cairn copy"}))(t)
		e.clock.Add(2 * time.Hour)
		p := e.seedCopy(age)
		plant(t, p, string(must(os.ReadFile(p))(t)), s.Text, "seed copy")
		r := e.open("s2").Resume(engine.ResumeOptions{Apply: true})
		if !containsAny(r.Notices, "two copies") || containsAny(r.Warnings, "secret") {
			t.Errorf("%s: notices %q, warnings %q", name, r.Notices, r.Warnings)
		}
	}
}

// TestNewerCopyWithItsJournalInTheWayLeavesTheActiveOne: a newer seed copy whose journal's place
// is taken (a directory there) is refused before the active workflow is archived: that one stays
// active, and the warning says the copy could not replace it. Before, the active one was
// archived first, and the refusal left no workflow active.
func TestNewerCopyWithItsJournalInTheWayLeavesTheActiveOne(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.clock.Add(-time.Hour)
	en := e.open("s1")
	started := must(en.Start(engine.StartRequest{Type: "apex", Context: "cairn copy"}))(t)
	e.clock.Add(2 * time.Hour)
	e.write(".claude/workflow-state.json", `{"workflowId":"apex-20261122T100000Z-eeee","type":"APEX","phase":"implement","lastUpdated":"`+
		e.clock.Now().Add(-time.Minute).Format(time.RFC3339)+`","ttl":"24h","context":"seed copy"}`)
	if err := os.MkdirAll(filepath.Join(en.StateDir(), "journal", "apex-20261122t100000z-eeee.jsonl"), 0o700); err != nil {
		t.Fatal(err)
	}
	r := e.open("s2").Resume(engine.ResumeOptions{Apply: true})
	if r.WorkflowID != started.WorkflowID || !containsAny(r.Warnings, "could not replace the active one") || containsAny(r.Warnings, "no workflow is active") {
		t.Errorf("active %q (started %s), warnings %q", r.WorkflowID, started.Message, r.Warnings)
	}
}

// TestNewerCopyNotSavedAfterTheArchiveSaysNoneIsActive: a newer seed copy that replaces the
// active workflow but whose archive could not be finished (the index's place taken; a journal
// in the way is refused before the archive, above), is said as it stands: the
// previous one is archived, where, none is active, and the next session start takes the copy
// up once the cause is fixed, as it does. Before, the warning said the copy could not replace
// the active one and nothing was lost; then the unfinished archive's cause said nothing was
// changed, to try again, and no step.
func TestNewerCopyNotSavedAfterTheArchiveSaysNoneIsActive(t *testing.T) {
	t.Parallel()
	for _, taken := range []string{"archive/index.jsonl"} {
		e := newEnv(t)
		e.clock.Add(-time.Hour)
		en := e.open("s1")
		started := must(en.Start(engine.StartRequest{Type: "apex", Context: "cairn copy"}))(t)
		e.clock.Add(2 * time.Hour)
		e.write(".claude/workflow-state.json", `{"workflowId":"apex-20261122T100000Z-eeee","type":"APEX","phase":"implement","lastUpdated":"`+
			e.clock.Now().Add(-time.Minute).Format(time.RFC3339)+`","ttl":"24h","context":"seed copy"}`)
		p := filepath.Join(en.StateDir(), filepath.FromSlash(taken))
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		r := e.open("s2").Resume(engine.ResumeOptions{Apply: true})
		if r.WorkflowID != "" || len(r.Warnings) != 1 || containsAny(r.Warnings, "nothing was") || containsAny(r.Warnings, "try again") ||
			!containsAny(r.Warnings, "no workflow is active") || !strings.HasSuffix(r.Warnings[0], "; the next session start takes the copy up once that is fixed") {
			t.Errorf("%s: active %q (started %s), warnings %q", taken, r.WorkflowID, started.Message, r.Warnings)
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if r := e.open("s3").Resume(engine.ResumeOptions{Apply: true}); r.WorkflowID != "apex-20261122t100000z-eeee" {
			t.Errorf("%s: once fixed, active %q, warnings %q", taken, r.WorkflowID, r.Warnings)
		}
	}
}

// TestReplaceWithItsJournalInTheWayLeavesTheOldOneActive: a replace with a given workflow_id
// whose journal's place is taken (a directory there) is refused before the old workflow is
// archived: that one stays active. Before, it was archived first, and the refusal left no
// workflow active.
func TestReplaceWithItsJournalInTheWayLeavesTheOldOneActive(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	old := must(en.Start(engine.StartRequest{Type: "apex", Context: "old", WorkflowID: "apex-20261122T100000Z-0ld1"}))(t)
	if err := os.MkdirAll(filepath.Join(en.StateDir(), "journal", "apex-20261122T100000Z-beef.jsonl"), 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := en.Start(engine.StartRequest{Type: "apex", Context: "new", Replace: true, WorkflowID: "apex-20261122T100000Z-beef"})
	if err == nil || !strings.Contains(err.Error(), "nothing was changed") {
		t.Errorf("replace: %v (started %s)", err, old.Message)
	}
	if id := must(en.Snapshot())(t).WorkflowID; id != "apex-20261122T100000Z-0ld1" {
		t.Errorf("active after the refusal: %q, want the old one", id)
	}
}

// TestSecondCopyNotSettledSaysTheNextStartDoes: a second copy of the workflow state that
// cannot be settled (a file where archive/ belongs) said "it was left as it is" twice and
// "then try again", which no one reading a session start's report can: it says the cause and
// that the next session start settles it once that is fixed, as it does.
func TestSecondCopyNotSettledSaysTheNextStartDoes(t *testing.T) {
	t.Parallel()
	for name, age := range map[string]time.Duration{"seed-file-newer": -time.Minute, "active-newer": -2 * time.Hour} {
		e := newEnv(t)
		e.clock.Add(-time.Hour)
		en := e.open("s1")
		must(en.Start(engine.StartRequest{Type: "apex", Context: "cairn copy"}))(t)
		e.clock.Add(2 * time.Hour)
		e.seedCopy(age)
		archive := filepath.Join(en.StateDir(), "archive")
		noErr(t, os.WriteFile(archive, []byte("x"), 0o600))
		r := e.open("s2").Resume(engine.ResumeOptions{Apply: true})
		if len(r.Warnings) != 1 || containsAny(r.Warnings, "try again") || strings.Count(r.Warnings[0], "left as it is") > 0 ||
			!strings.HasSuffix(r.Warnings[0], "; the next session start settles the two copies once that is fixed") {
			t.Errorf("%s: warnings %q", name, r.Warnings)
		}
		noErr(t, os.Remove(archive))
		if r := e.open("s3").Resume(engine.ResumeOptions{Apply: true}); !containsAny(r.Notices, "two copies") {
			t.Errorf("%s: once fixed, notices %q, warnings %q", name, r.Notices, r.Warnings)
		}
	}
}
