package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// openYAML opens the engine with the given YAML reader: nil is what the hook binaries pass.
func (e *env) openYAML(y engine.YAML) *engine.Engine {
	e.t.Helper()
	en, err := engine.Open(engine.Config{
		Getenv: func(k string) string { return e.vars[k] }, WorkDir: e.project, Now: e.clock.Now,
		SessionID: "s1", PID: 4242, Actor: "test", YAML: y,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { en.Close() })
	return en
}

func (e *env) write(rel, content string) {
	e.t.Helper()
	p := filepath.Join(e.project, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// The read protocol's last resort lists seed 001's milestone files, with their front matter
// when a YAML reader is there, by name only when not; either way nothing fails, and a file
// whose front matter does not read is listed by name with a note, not dropped.
func TestMilestoneScan(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write("documentation/milestones/_active/m1-auth.md", "---\ntitle: Auth rework\nstatus: in_progress\n---\nbody\n")
	e.write("documentation/milestones/_active/m2.md", "no front matter\n")
	e.write("documentation/milestones/_active/m3.md", "---\ntitle: [unclosed\n---\n")
	for _, tc := range []struct {
		name string
		yaml engine.YAML
		want string
	}{
		{"with-yaml", yamldoc.Codec{}, "no workflow on record; active milestone files in documentation/milestones/_active: m1-auth (Auth rework) [in_progress], m2, m3 (front matter unreadable)"},
		{"without-yaml", nil, "no workflow on record; active milestone files in documentation/milestones/_active: m1-auth, m2, m3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := e.openYAML(tc.yaml).Resume(engine.ResumeOptions{})
			if !slices.Contains(res.Notices, tc.want) {
				t.Fatalf("notices %q, want %q among them", res.Notices, tc.want)
			}
		})
	}
}

// Without a YAML reader the user's definitions are reported, not silently dropped, and the
// built-in definitions still work.
func TestNoYAMLReader(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write(".claude/workflows/mine.md", "---\nphases: [a, b]\n---\n")
	en := e.openYAML(nil)
	if got := strings.Join(en.Definitions(), ","); got != "apex,brainstorm,coordinate,debug,dotagent" {
		t.Fatalf("definitions %q", got)
	}
	if w := strings.Join(en.Warnings(), "\n"); !strings.Contains(w, "mine.md") || !strings.Contains(w, "no YAML reader") {
		t.Fatalf("warnings %q do not report the unread definition", w)
	}
	if _, err := en.Start(engine.StartRequest{Type: "mine", Context: "x"}); err == nil {
		t.Fatal("started a workflow of a type this engine could not read")
	}
	if _, err := en.Start(engine.StartRequest{Type: "apex", Context: "x"}); err != nil {
		t.Fatalf("built-in type: %v", err)
	}

	// WORKFLOW-STATUS.yaml is left alone, and said so.
	e.write(".claude/WORKFLOW-STATUS.yaml", "initiative: x\nlastUpdated: 2026-11-22T10:00:00Z\n")
	res, err := en.Initiative(engine.InitiativeRequest{Action: "get"})
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(res.Warnings, "\n"); !strings.Contains(w, "WORKFLOW-STATUS.yaml was not read") {
		t.Fatalf("warnings %q", w)
	}
	if data, _ := os.ReadFile(filepath.Join(e.project, ".claude", "WORKFLOW-STATUS.yaml")); string(data) != "initiative: x\nlastUpdated: 2026-11-22T10:00:00Z\n" {
		t.Fatalf("the status file was changed: %q", data)
	}
}

// A WORKFLOW-STATUS.yaml that is there but cannot be read (a value of the wrong type, a
// lastUpdated that is not a time, broken YAML, a file over the size cap) is left byte for
// byte as it is, with a warning that says so: rewriting it from initiative.json would drop
// every key its author or another tool added. A file that holds no YAML at all is written.
func TestStatusFileThatDoesNotParseIsLeftAlone(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, content string }{
		{"type error", "initiative: x\nprogress: half\nowner: bob\nlastUpdated: 2026-11-22T10:00:00Z\n"},
		{"bad lastUpdated", "initiative: x\nowner: bob\nlastUpdated: yesterday\n"},
		{"broken YAML", "initiative: x\nowner: [bob\n"},
		{"too big", "owner: bob\nnotes: " + strings.Repeat("n", 300<<10) + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			en := e.open("s1")
			must(en.Initiative(engine.InitiativeRequest{Action: "create", Title: "keep my keys"}))(t)
			e.write(".claude/WORKFLOW-STATUS.yaml", tc.content)
			for _, r := range []engine.InitiativeRequest{{Action: "add_milestone", Milestone: "design"}, {Action: "get"}} {
				res := must(en.Initiative(r))(t)
				if w := strings.Join(res.Warnings, "\n"); !strings.Contains(w, "left as it is") {
					t.Errorf("%s: warnings %q do not say the file was left as it is", r.Action, w)
				} else if !strings.HasPrefix(w, filepath.Join(".claude", "WORKFLOW-STATUS.yaml")+" ") {
					t.Errorf("%s: warnings %q do not name the file where it is", r.Action, w)
				}
				if data, _ := os.ReadFile(filepath.Join(e.project, ".claude", "WORKFLOW-STATUS.yaml")); string(data) != tc.content {
					t.Fatalf("%s rewrote the status file:\n%s", r.Action, data)
				}
			}
		})
	}
	for _, content := range []string{"", "# to be filled in by Cairn\n"} {
		e := newEnv(t)
		en := e.open("s1")
		e.write("WORKFLOW-STATUS.yaml", content)
		res := must(en.Initiative(engine.InitiativeRequest{Action: "create", Title: "fill me"}))(t)
		data, _ := os.ReadFile(filepath.Join(e.project, "WORKFLOW-STATUS.yaml"))
		if len(res.Warnings) > 0 || !strings.Contains(string(data), "title: fill me") {
			t.Errorf("an empty status file %q was not written: %q, warnings %q", content, data, res.Warnings)
		}
	}
}

// An active workflow whose definition stops loading (its file broken, or gone) is not of an
// "unknown workflow type": an operation on it says that its definition does not load, names
// the broken file and line, and says the workflow is kept, so that the agent fixes the file
// instead of starting another workflow over this one.
func TestActiveWorkflowWhoseDefinitionBreaks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write(".claude/workflows/release.md", "---\nphases: [prep, ship, done]\n---\n")
	must(e.openYAML(yamldoc.Codec{}).Start(engine.StartRequest{Type: "release", Context: "x"}))(t)

	e.write(".claude/workflows/release.md", "---\nphases: [prep, ship, done]\nttl: forever\n---\n")
	en := e.openYAML(yamldoc.Codec{})
	_, err := en.Transition(engine.TransitionRequest{To: "ship"})
	if err == nil || strings.Contains(err.Error(), "unknown workflow type") || !strings.Contains(err.Error(), "release.md:3") ||
		!strings.Contains(err.Error(), "kept as it is") {
		t.Errorf("transition with the definition broken: %v", err)
	}
	if w := strings.Join(en.Resume(engine.ResumeOptions{}).Warnings, "\n"); strings.Contains(w, "unknown workflow type") {
		t.Errorf("resume calls the type unknown:\n%s", w)
	}

	if err := os.Remove(filepath.Join(e.project, ".claude", "workflows", "release.md")); err != nil {
		t.Fatal(err)
	}
	_, err = e.openYAML(yamldoc.Codec{}).Transition(engine.TransitionRequest{To: "ship"})
	if err == nil || strings.Contains(err.Error(), "unknown workflow type") || !strings.Contains(err.Error(), `"release"`) ||
		!strings.Contains(err.Error(), "kept as it is") {
		t.Errorf("transition with the definition gone: %v", err)

	}
}

// Milestones in a WORKFLOW-STATUS.yaml that none of the initiative's operations could produce
// (a status other than pending, in_progress and completed, no id, an id given twice, a
// current milestone that is not listed) are not copied into initiative.json, where they
// stood for good: progress counted "done" as not done, and two milestones shared one id. The
// file is a person's to correct: it is left as it is, with a warning naming the entry.
func TestStatusFileMilestonesThatCannotBeApplied(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, milestones, want string }{
		{"bad status", "milestones:\n  - id: m1\n    status: done\n", `milestones item 1 (id "m1"): status "done" is not one of pending, in_progress, completed`},
		{"no id", "milestones:\n  - id: m1\n  - title: second\n", "milestones item 2 has no id"},
		{"id twice", "milestones:\n  - id: m1\n  - id: m1\n    status: completed\n", `milestones items 1 and 2 both have id "m1"`},
		{"id on two lines", "milestones:\n  - id: \"m1\\nm2\"\n", "milestones item 1: the id is not one line"},
		{"look-alike id", "milestones:\n  - id: m1\n  - id: \"m1\\u200b\"\n", "milestones item 2: the id holds control or invisible characters"},
		{"current not listed", "currentMilestone: m9\nmilestones:\n  - id: m1\n", `currentMilestone "m9" is not the id of a milestone`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			en := e.openYAML(yamldoc.Codec{})
			r := must(en.Initiative(engine.InitiativeRequest{Action: "create", Title: "T"}))(t)
			must(en.Initiative(engine.InitiativeRequest{Action: "add_milestone", Milestone: "m1"}))(t)
			before, err := os.ReadFile(filepath.Join(e.project, ".claude", "cairn", "initiative.json"))
			if err != nil {
				t.Fatal(err)
			}
			id := strings.Fields(strings.TrimPrefix(r.Message, "initiative "))[0]
			e.clock.Add(time.Hour)
			content := "initiative: " + id + "\nstatus: in_progress\n" + tc.milestones + "lastUpdated: " + e.clock.Now().Format(time.RFC3339) + "\n"
			e.write(".claude/WORKFLOW-STATUS.yaml", content)
			res := must(en.Initiative(engine.InitiativeRequest{Action: "get"}))(t)
			if w := strings.Join(res.Warnings, "\n"); !strings.Contains(w, tc.want) || !strings.Contains(w, "left as it is") {
				t.Errorf("warnings %q, want one saying %q and that the file was left as it is", w, tc.want)
			}
			if data, _ := os.ReadFile(filepath.Join(e.project, ".claude", "WORKFLOW-STATUS.yaml")); string(data) != content {
				t.Errorf("the status file was rewritten:\n%s", data)
			}
			if after, _ := os.ReadFile(filepath.Join(e.project, ".claude", "cairn", "initiative.json")); string(after) != string(before) {
				t.Errorf("initiative.json took the status file's milestones:\n%s", after)
			}
		})
	}
}

// A WORKFLOW-STATUS.yaml with no initiative.json beside it (a fresh clone: the status file is
// committed, .claude/cairn is not) holds the team's initiative. An initiative operation takes
// it up first: "create" used to overwrite it with a new initiative, and the others answered
// "no initiative: create one first", steering the agent to that create.
func TestStatusFileWithoutInitiativeJSONIsTakenUp(t *testing.T) {
	t.Parallel()
	const content = "initiative: initiative-20261120T090000Z-ab12\ntitle: Team plan\nstatus: in_progress\nmilestones:\n  - id: design\n    status: completed\n  - id: build\n    status: in_progress\ncurrentMilestone: build\nowner: team\nlastUpdated: 2026-11-21T09:00:00Z\n"
	e := newEnv(t)
	e.write("WORKFLOW-STATUS.yaml", content)
	en := e.openYAML(yamldoc.Codec{})
	if _, err := en.Initiative(engine.InitiativeRequest{Action: "create", Title: "Another"}); err == nil || !strings.Contains(err.Error(), "initiative-20261120T090000Z-ab12") {
		t.Errorf("create over the status file's initiative: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(e.project, "WORKFLOW-STATUS.yaml")); string(data) != content {
		t.Fatalf("create rewrote the status file:\n%s", data)
	}

	e2 := newEnv(t)
	e2.write("WORKFLOW-STATUS.yaml", content)
	res := must(e2.openYAML(yamldoc.Codec{}).Initiative(engine.InitiativeRequest{Action: "add_milestone", Milestone: "ship"}))(t)
	if !strings.Contains(res.Message, "initiative-20261120T090000Z-ab12") {
		t.Errorf("add_milestone: %s", res.Message)
	}
	data, _ := os.ReadFile(filepath.Join(e2.project, "WORKFLOW-STATUS.yaml"))
	for _, want := range []string{"title: Team plan", "id: design", "id: ship", "owner: team"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the status file lost %q:\n%s", want, data)
		}
	}
}

// editedInitiative makes an initiative with milestone design through en, then a person's
// edit adds milestone research to WORKFLOW-STATUS.yaml an hour later, which makes the file the
// newer side. It returns the file's path; the clock stands a minute after the edit.
func (e *env) editedInitiative(en *engine.Engine) string {
	t := e.t
	t.Helper()
	must(en.Initiative(engine.InitiativeRequest{Action: "create", Title: "T"}))(t)
	must(en.Initiative(engine.InitiativeRequest{Action: "add_milestone", Milestone: "design"}))(t)
	p := filepath.Join(e.project, ".claude", "WORKFLOW-STATUS.yaml")
	data, _ := os.ReadFile(p)
	e.clock.Add(time.Hour)
	edited := strings.Replace(string(data), "milestones:\n", "milestones:\n  - id: research\n    status: completed\n", 1)
	edited = strings.Replace(edited, `lastUpdated: "2026-11-22T10:00:00Z"`, "lastUpdated: "+e.clock.Now().Format(time.RFC3339), 1)
	if edited == string(data) || !strings.Contains(edited, "T11:00:00Z") {
		t.Fatalf("the edit did not apply to:\n%s", data)
	}
	e.write(".claude/WORKFLOW-STATUS.yaml", edited)
	e.clock.Add(time.Minute)
	return p
}

// A person's edit to WORKFLOW-STATUS.yaml, newer than initiative.json, survives the next
// initiative change: the change used to start from initiative.json alone and rewrite the file
// from it, so a milestone the person added (or a status they set) vanished unless an
// initiative get happened to run in between.
func TestStatusFileEditSurvivesTheNextChange(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.openYAML(yamldoc.Codec{})
	p := e.editedInitiative(en)
	res := must(en.Initiative(engine.InitiativeRequest{Action: "update_milestone", Milestone: "design", Status: "in_progress"}))(t)
	after, _ := os.ReadFile(p)
	if !strings.Contains(string(after), "id: research") || !strings.Contains(string(res.Workflow), `"research"`) {
		t.Errorf("the person's milestone was lost:\n%s\n%s", after, res.Workflow)
	}
}

// The definitions of a project are read up to a total size, in name order: every process
// (the hooks under their deadline, the MCP server as it opens, each command) reads and parses
// them all, and a repository holding hundreds of 256 KiB files made each one read and parse
// every byte. Files past the budget are reported, not read; the rest load.
func TestDefinitionsAreReadUpToABudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pad := "\n" + strings.Repeat("Padding the body of a large definition.\n", 250<<10/40)
	for i := range 12 {
		e.write(fmt.Sprintf(".claude/workflows/big%02d.md", i), "---\nphases: [a, b]\n---\n"+pad)
	}
	e.write(".claude/workflows/small.md", "---\nphases: [x, y]\n---\n")
	en := e.openYAML(yamldoc.Codec{})
	names := strings.Join(en.Definitions(), ",")
	if !strings.Contains(names, "big00") || !strings.Contains(names, "big06") || strings.Contains(names, "big08") || strings.Contains(names, "small") {
		t.Errorf("loaded %s; want big00 to big07 (2 MiB), the rest not", names)
	}
	// One warning says them all: the first file past the budget, and how many follow it.
	w := strings.Join(en.Warnings(), "\n")
	if want := "big08.md: not read, nor the 4 files after it in name order: Cairn reads at most 2 MiB of definitions"; !strings.Contains(w, want) || strings.Count(w, "not read") != 1 {
		t.Errorf("the files past the budget are not reported in one warning saying %q:\n%s", want, w)
	}
}

// The sync with WORKFLOW-STATUS.yaml is a read-modify-write of initiative.json and the file:
// it used to read initiative.json unlocked and write both later, so a milestone another
// process added in between was lost from both. The other process's change lands here between
// the sync's reads and its writes (its clock is read there); under the lock it waits its turn.
func TestInitiativeSyncKeepsAChangeMadeMeanwhile(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	other := e.openYAML(yamldoc.Codec{})
	p := e.editedInitiative(other)

	calls := -1 // counted from the sync's start
	done := make(chan error, 1)
	now := func() time.Time {
		if calls >= 0 {
			calls++
		}
		if calls == 2 { // after the sync's reads
			go func() {
				_, err := other.Initiative(engine.InitiativeRequest{Action: "add_milestone", Milestone: "ship"})
				done <- err
			}()
			// It lands now, or waits for the lock and lands after.
			durabletest.WaitLockWaiter(filepath.Join(e.project, ".claude", "cairn", ".lock-*"), done)
		}
		return e.clock.Now()
	}
	en, err := engine.Open(engine.Config{
		Getenv: func(k string) string { return e.vars[k] }, WorkDir: e.project, Now: now,
		SessionID: "s2", PID: 4243, Actor: "test", YAML: yamldoc.Codec{},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer en.Close()
	calls = 0
	must(en.Initiative(engine.InitiativeRequest{Action: "get"}))(t)
	if calls < 2 {
		t.Fatalf("the sync read the clock %d times: the other change never ran", calls)
	}
	if err := <-done; err != nil {
		t.Fatalf("the other process's add_milestone: %v", err)
	}
	// initiative.json itself must hold every milestone: the next sync would take a newer
	// status file's back, but a status file that is not committed, or edited again, would not.
	data, err := os.ReadFile(filepath.Join(e.project, ".claude", "cairn", "initiative.json"))
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(p)
	for _, id := range []string{"research", "design", "ship"} {
		if !strings.Contains(string(data), `"`+id+`"`) || !strings.Contains(string(after), "id: "+id) {
			t.Errorf("milestone %s was lost:\n%s\n%s", id, data, after)
		}
	}
}

// An initiative.json an older Cairn wrote may hold a milestone id with an invisible character,
// which Cairn copies into WORKFLOW-STATUS.yaml. The file must stay usable: it was refused on
// every read since (a warning each time, never brought up to date again). The milestone is
// kept, and can still be completed.
func TestMilestoneIDAnOlderCairnTookKeepsTheStatusFileUsable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.openYAML(yamldoc.Codec{})
	must(en.Initiative(engine.InitiativeRequest{Action: "create", Title: "T"}))(t)
	must(en.Initiative(engine.InitiativeRequest{Action: "add_milestone", Milestone: "m1"}))(t)
	p := filepath.Join(e.project, ".claude", "cairn", "initiative.json")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(data), `"m1"`, `"m1\u200b"`)), 0o644); err != nil {
		t.Fatal(err)
	}
	const id = "m1\u200b"
	must(en.Initiative(engine.InitiativeRequest{Action: "get"}))(t) // writes the id into the status file
	e.clock.Add(time.Minute)
	for _, r := range []engine.InitiativeRequest{{Action: "get"}, {Action: "update_milestone", Milestone: id, Status: "completed"}, {Action: "get"}} {
		res := must(en.Initiative(r))(t)
		if len(res.Warnings) != 0 {
			t.Errorf("%s: warnings %q", r.Action, res.Warnings)
		}
	}
	status, _ := os.ReadFile(filepath.Join(e.project, ".claude", "WORKFLOW-STATUS.yaml"))
	after, _ := os.ReadFile(p)
	if !strings.Contains(string(status), "status: completed") || !strings.Contains(string(after), `"`+id+`"`) {
		t.Errorf("the milestone was not completed in both files, or was lost:\n%s\n%s", status, after)
	}
}

// Texts that name the status file name it where it is: under .claude/ when the project root
// has none (the side a sync took, a change refused because the file could not be taken into
// account first).
func TestInitiativeRefusalNamesTheStatusFileWhereItIs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	e.editedInitiative(en)
	if res := must(en.Initiative(engine.InitiativeRequest{Action: "get"}))(t); !strings.HasSuffix(res.Message, "; authoritative: "+filepath.Join(".claude", "WORKFLOW-STATUS.yaml")) {
		t.Errorf("get: %s", res.Message)
	}
	e.write(".claude/cairn/initiative.json", "{\"version\":\"2.0\",\"id\":\"x\",\"title\":")
	_, err := en.Initiative(engine.InitiativeRequest{Action: "add_milestone", Milestone: "m"})
	if err == nil || !strings.Contains(err.Error(), "since "+filepath.Join(".claude", "WORKFLOW-STATUS.yaml")+" must be taken into account") {
		t.Fatalf("refusal %v", err)
	}
}

// A definition file whose extension is .md in another case (mine.MD, as some editors and
// systems write it) was skipped without a word, so the type its author wrote did not exist
// and nothing said why. Cairn reads only .md files; the others are now named in a warning
// with the name that would be read.
func TestDefinitionWithUpperCaseExtensionIsReported(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write(".claude/workflows/mine.MD", "---\nphases: [a, b]\n---\n")
	e.write(".claude/workflows/other.Md", "---\nphases: [a, b]\n---\n")
	e.write(".claude/workflows/notes.txt", "not a definition")
	en := e.openYAML(yamldoc.Codec{})
	if names := strings.Join(en.Definitions(), ","); strings.Contains(names, "mine") {
		t.Fatalf("loaded %s: mine.MD is read after all, so its warning would be false", names)
	}
	w := strings.Join(en.Warnings(), "\n")
	for _, f := range []string{"mine", "other"} {
		if !strings.Contains(w, f+".M") || !strings.Contains(w, "rename it to "+f+".md") {
			t.Errorf("the warnings do not say %s's file is not read and what to rename it to:\n%s", f, w)
		}
	}
	if strings.Contains(w, "notes.txt") {
		t.Errorf("a file that is no definition is warned about:\n%s", w)
	}
}

// start_workflow retried after its definition's ttl was edited (the user changed the file
// between the call and its retry) is the start already made: the request named no ttl, so
// it asked for the definition's, whatever that was when it landed. "Still active ... start
// again with replace" would lead the model to archive the work it just started. A retry
// that names another ttl is another start, and still refused.
func TestStartAgainAfterTheDefinitionsTTLChanged(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	def := "---\nname: review\nphases: [draft, done]\nttl: %s\n---\nbody\n"
	e.write(".claude/workflows/review.md", fmt.Sprintf(def, "24h"))
	req := engine.StartRequest{Type: "review", Context: "review the parser"}
	first := must(e.openYAML(yamldoc.Codec{}).Start(req))(t)
	e.write(".claude/workflows/review.md", fmt.Sprintf(def, "72h"))
	for _, replace := range []bool{false, true} {
		req.Replace = replace
		res := again(t, e, fmt.Sprintf("start_workflow (replace %v)", replace), first, func() (*engine.Result, error) {
			return e.openYAML(yamldoc.Codec{}).Start(req)
		})
		if res.WorkflowID != first.WorkflowID || !strings.Contains(res.Message, "already started") {
			t.Errorf("retry (replace %v): %+v; want it to name the workflow started", replace, res)
		}
	}
	other := engine.StartRequest{Type: "review", Context: "review the parser", TTL: "48h"}
	if _, err := e.openYAML(yamldoc.Codec{}).Start(other); err == nil || !strings.Contains(err.Error(), "still active") {
		t.Errorf("start with another ttl: %v; want it refused", err)
	}
}

// A seed's state file that names no ttl takes its type's TTL from the project's definition
// when migrated, as a start of that type would: 24h would archive a workflow idle for 30
// hours as expired at the first session start, though its definition gives it 72.
func TestSeedWithoutTTLTakesItsDefinitionsTTL(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write(".claude/workflows/release.md", "---\nname: release\nphases: [draft, done]\nttl: 72h\n---\nbody\n")
	e.write(".claude/workflow-state.json", `{"type":"release","phase":"draft","lastUpdated":"`+
		e.clock.Now().Add(-30*time.Hour).Format(time.RFC3339)+`","context":"seed without ttl"}`)
	r := e.openYAML(yamldoc.Codec{}).Resume(engine.ResumeOptions{Apply: true})
	if r.WorkflowID == "" || r.Phase != "draft" {
		t.Fatalf("the seed's workflow is not active after the session start: workflow %q, phase %q, warnings %v", r.WorkflowID, r.Phase, r.Warnings)
	}
	rec := must(e.openYAML(yamldoc.Codec{}).Show(r.WorkflowID))(t)
	if !strings.Contains(string(rec), `"ttl":"72h"`) {
		t.Errorf("migrated record: %s; want the definition's ttl, 72h", rec)
	}
}
