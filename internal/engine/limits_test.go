package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store/storetest"
	"github.com/cairn-dev/cairn/internal/vars"
	"github.com/cairn-dev/cairn/internal/workflow"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// vars.MaxVars bounds the workflow's variables as a whole, not one set_vars call: a set
// that would take the merged set over it is refused whole, with the limit and a step that
// loses nothing, and one that only changes values already set still lands.
func TestSetVarsKeepsTheMergedSetWithinMaxVars(t *testing.T) {
	t.Parallel()
	_, en := startApex(t)
	full := map[string]string{}
	for i := range vars.MaxVars {
		full[fmt.Sprintf("WF_V%03d", i)] = "v"
	}
	must(en.SetVars(full))(t)
	for _, kv := range []map[string]string{
		{"WF_ONE_MORE": "x"},
		{"WF_V000": "changed", "WF_ONE_MORE": "x"},
	} {
		_, err := en.SetVars(kv)
		if err == nil {
			t.Fatalf("set %v on a workflow holding %d variables was accepted", kv, vars.MaxVars)
		}
		msg := err.Error()
		if !strings.Contains(msg, fmt.Sprint(vars.MaxVars)) || !strings.Contains(msg, engine.AskWhichVars) || strings.Contains(msg, "cairn ") || strings.Contains(msg, "archive") {
			t.Errorf("refusal %q: want the limit %d and the agent's step (%s), no CLI command", msg, vars.MaxVars, engine.AskWhichVars)
		}
	}
	if kv := must(en.GetVars(nil))(t); len(kv) != vars.MaxVars || kv["WF_V000"] != "v" {
		t.Fatalf("after the refusals: %d variables, WF_V000=%q; want %d, unchanged", len(kv), kv["WF_V000"], vars.MaxVars)
	}
	// Changing a value already set adds none, and the step the refusal names makes room.
	must(en.SetVars(map[string]string{"WF_V001": "changed"}))(t)
	must(en.UnsetVars([]string{"WF_V002"}))(t)
	must(en.SetVars(map[string]string{"WF_ONE_MORE": "x"}))(t)
	if kv := must(en.GetVars(nil))(t); len(kv) != vars.MaxVars {
		t.Errorf("%d variables, want %d", len(kv), vars.MaxVars)
	}
}

// An initiative's milestones an older Cairn let fill initiative.json (it took titles of any
// length) up to the 1 MiB a document may hold: the refusal names that limit and a step that
// keeps the initiative, not archiving it.
func TestInitiativeFullSaysSo(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	must(en.Initiative(engine.InitiativeRequest{Action: "create", Title: "big"}))(t)
	for i := range 11 {
		must(en.Initiative(engine.InitiativeRequest{Action: "add_milestone", Milestone: fmt.Sprintf("m%d", i), Note: "short"}))(t)
	}
	status := filepath.Join(e.project, ".claude", workflow.StatusFileName)
	doc, err := os.ReadFile(filepath.Join(en.StateDir(), "initiative.json"))
	if err != nil {
		t.Fatal(err)
	}
	// To 300 bytes short of the limit: one more milestone takes more than that.
	title := strings.Repeat("t", (1<<20-300-len(doc))/11+len("short"))
	for _, p := range []string{filepath.Join(en.StateDir(), "initiative.json"), status} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(b), "short", title)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err = en.Initiative(engine.InitiativeRequest{Action: "add_milestone", Milestone: "m11", Note: strings.Repeat("t", 500)})
	if err == nil {
		t.Fatal("a milestone of 500 characters fit in an initiative.json 300 bytes short of 1 MiB")
	}
	if msg := err.Error(); !strings.Contains(msg, "1 MiB") || !strings.Contains(msg, "nothing was changed") ||
		!strings.Contains(msg, "WORKFLOW-STATUS.yaml") || strings.Contains(msg, "archive") {
		t.Fatalf("refusal %q: want the 1 MiB limit and a step that keeps the initiative", msg)
	}
	// The step works: titles shortened in the status file are taken in, and there is room.
	b, err := os.ReadFile(status)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Add(time.Minute)
	short := strings.ReplaceAll(string(b), title, "short")
	short = regexp.MustCompile(`lastUpdated: .*`).ReplaceAllString(short, "lastUpdated: "+e.clock.Now().Format(time.RFC3339))
	if err := os.WriteFile(status, []byte(short), 0o644); err != nil {
		t.Fatal(err)
	}
	must(en.Initiative(engine.InitiativeRequest{Action: "add_milestone", Milestone: "next", Note: "fits"}))(t)
}

// A checkpoint over the 1 MiB a document may hold, named or kept with a move, is refused in
// words that name the limit and a step, not as invalid JSON.
func TestCheckpointOverTheCapSaysSo(t *testing.T) {
	t.Parallel()
	_, en := startApex(t)
	big := []byte(`{"data":"` + strings.Repeat("d", 1<<20) + `"}`)
	_, err := en.SaveCheckpoint("plan", big)
	if err == nil || strings.Contains(err.Error(), "invalid JSON") || !strings.Contains(err.Error(), "1 MiB") || !strings.Contains(err.Error(), "split") {
		t.Errorf("save_checkpoint of %d bytes: %v; want the 1 MiB limit and a step", len(big), err)
	}
	_, err = en.Transition(engine.TransitionRequest{To: "plan", Checkpoint: big})
	if err == nil || strings.Contains(err.Error(), "invalid JSON") || !strings.Contains(err.Error(), "1 MiB") || !strings.Contains(err.Error(), "save_checkpoint") {
		t.Errorf("transition with a checkpoint of %d bytes: %v; want the 1 MiB limit and a step", len(big), err)
	}
}

// A checkpoint kept with a move sits four levels down in the workflow record, which may nest
// 64 deep: one nested deeper than fits there is refused in words that name its limit and a
// step (a named checkpoint takes the full depth), not as invalid JSON in the workflow, and
// one that fits is kept.
func TestPhaseCheckpointDepthSaysSo(t *testing.T) {
	t.Parallel()
	_, en := startApex(t)
	nested := func(depth int) []byte {
		return []byte(strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth))
	}
	must(en.SaveCheckpoint("deep", nested(64)))(t)
	for _, depth := range []int{61, 64, 65} {
		_, err := en.Transition(engine.TransitionRequest{To: "plan", Checkpoint: nested(depth)})
		if err == nil || strings.Contains(err.Error(), "invalid JSON") || !strings.Contains(err.Error(), "60 levels") ||
			!strings.Contains(err.Error(), "save_checkpoint") || !strings.Contains(err.Error(), "nothing was changed") {
			t.Errorf("transition with a checkpoint %d deep: %v; want its limit of 60 levels and save_checkpoint as the step", depth, err)
		}
	}
	if res := must(en.Transition(engine.TransitionRequest{To: "plan", Checkpoint: nested(60)}))(t); res.Phase != "plan" {
		t.Errorf("a checkpoint 60 deep: the workflow is at %s, want plan", res.Phase)
	}
}

// startLoop starts a workflow whose phases a, b and c go round (a -> b -> c -> a), so that
// moves can add outputs and checkpoints for as long as a test likes; extra is more front
// matter (such as "approvals: [b]\n").
func startLoop(t *testing.T, e *env, extra ...string) *engine.Engine {
	t.Helper()
	dir := filepath.Join(e.project, ".claude", "workflows")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	def := "---\nname: loop\ndescription: round and round\nphases: [a, b, c, done]\ntransitions: {a: [b], b: [c], c: [a, done]}\nterminal: [done]\n" + strings.Join(extra, "") + "---\nbody\n"
	if err := os.WriteFile(filepath.Join(dir, "loop.md"), []byte(def), 0o644); err != nil {
		t.Fatal(err)
	}
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "loop", Context: "c"}))(t)
	return en
}

var loopNext = map[string]string{"a": "b", "b": "c", "c": "a"}

// The outputs moves record (on their phase and in the artifacts) have limits of their own,
// in number and in bytes, well inside the 1 MiB a record may hold: the move that would pass
// one is refused with that limit and a step that keeps the workflow going, and the same move
// without outputs still goes through.
func TestOutputsHaveALimitOfTheirOwn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, limit string
		path        func(move, i int) string
	}{
		{"number", "500 outputs", func(move, i int) string { return fmt.Sprintf("out/m%02d/f%03d.go", move, i) }},
		{"bytes", "128 KiB", func(move, i int) string { return fmt.Sprintf("out/m%02d/f%03d/%s", move, i, strings.Repeat("p", 1000)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			en := startLoop(t, e)
			phase := "a"
			var err error
			for move := 0; move < 12 && err == nil; move++ {
				var outs []string
				for i := range 100 {
					outs = append(outs, tc.path(move, i))
				}
				var res *engine.Result
				if res, err = en.Transition(engine.TransitionRequest{To: loopNext[phase], Outputs: outs}); err == nil {
					phase = res.Phase
				}
			}
			if err == nil {
				t.Fatal("1200 outputs were recorded")
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.limit) || !strings.Contains(msg, "directory") || !strings.Contains(msg, "nothing was changed") ||
				strings.Contains(msg, "archive") || strings.Contains(msg, "complete this workflow") || strings.Contains(msg, "cairn show") {
				t.Fatalf("refusal %q: want the limit %s and a step that keeps the workflow", msg, tc.limit)
			}
			must(en.Transition(engine.TransitionRequest{To: loopNext[phase]}))(t)
		})
	}
}

// The checkpoints moves keep with the phases they leave have a limit of their own: the one
// that would take them past it is refused with the limit and a step, and a smaller one,
// or none, still moves.
func TestPhaseCheckpointsHaveALimitOfTheirOwn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := startLoop(t, e)
	big := []byte(`{"data":"` + strings.Repeat("d", 200<<10) + `"}`)
	phase := "a"
	var err error
	for move := 0; move < 3 && err == nil; move++ {
		var res *engine.Result
		if res, err = en.Transition(engine.TransitionRequest{To: loopNext[phase], Checkpoint: big}); err == nil {
			phase = res.Phase
		}
	}
	if err == nil {
		t.Fatal("three checkpoints of 200 KiB were kept with the phases")
	}
	msg := err.Error()
	if !strings.Contains(msg, "512 KiB") || !strings.Contains(msg, "save_checkpoint") || !strings.Contains(msg, "nothing was changed") ||
		strings.Contains(msg, "archive") || strings.Contains(msg, "cairn show") {
		t.Fatalf("refusal %q: want the 512 KiB limit and save_checkpoint as the step", msg)
	}
	must(en.Transition(engine.TransitionRequest{To: loopNext[phase], Checkpoint: []byte(`{"saved_as":"big"}`)}))(t)
}

// An initiative's milestones are bounded where they are added, not only when initiative.json
// is full: the one past the limit is refused with it and a step that keeps the initiative,
// and the step (a milestone removed in WORKFLOW-STATUS.yaml) makes room.
func TestMilestonesHaveALimitAtAddTime(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	must(en.Initiative(engine.InitiativeRequest{Action: "create", Title: "many"}))(t)
	var err error
	added := 0
	for ; added < 150 && err == nil; added++ {
		_, err = en.Initiative(engine.InitiativeRequest{Action: "add_milestone", Milestone: fmt.Sprintf("m%03d", added)})
	}
	if err == nil {
		t.Fatal("150 milestones were added")
	}
	if msg := err.Error(); !strings.Contains(msg, "100 milestones") || !strings.Contains(msg, "nothing was changed") ||
		!strings.Contains(msg, workflow.StatusFileName) || strings.Contains(msg, "archive") || strings.Contains(msg, "1 MiB") {
		t.Fatalf("refusal %q: want the limit of 100 milestones and a step that keeps the initiative", msg)
	}
	status := filepath.Join(e.project, ".claude", workflow.StatusFileName)
	b, err := os.ReadFile(status)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := yamldoc.Codec{}.ParseStatusDoc(b)
	if err != nil {
		t.Fatal(err)
	}
	doc.Milestones = doc.Milestones[:len(doc.Milestones)-1]
	e.clock.Add(time.Minute)
	doc.LastUpdated = e.clock.Now().Format(time.RFC3339)
	if b, err = (yamldoc.Codec{}).MarshalStatusDoc(*doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(status, b, 0o644); err != nil {
		t.Fatal(err)
	}
	must(en.Initiative(engine.InitiativeRequest{Action: "add_milestone", Milestone: "one more"}))(t)
}

// A milestone's id and title have the add_milestone tool's limits wherever they come from (the
// engine's callers beside the tool), so one call cannot fill initiative.json.
func TestMilestoneIDAndTitleHaveLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	must(en.Initiative(engine.InitiativeRequest{Action: "create", Title: "long"}))(t)
	for _, r := range []engine.InitiativeRequest{
		{Action: "add_milestone", Milestone: strings.Repeat("i", 201)},
		{Action: "add_milestone", Milestone: "m", Note: strings.Repeat("t", 501)},
	} {
		_, err := en.Initiative(r)
		if err == nil || !strings.Contains(err.Error(), "characters") || !strings.Contains(err.Error(), "the most is") {
			t.Errorf("milestone %d characters, title %d characters: %v; want a refusal with the limit", len(r.Milestone), len(r.Note), err)
		}
	}
}

// Free text kept in the record (a move's note, which the history keeps 50 of, an approval's
// note, the outcome) has the tools' own limits wherever it comes from: through the CLI it
// took any length, and a few long notes filled the record for good (no operation shortens
// the history). The refusal names the limit; the record is unchanged.
func TestFreeTextOnRecordHasTheToolsLimits(t *testing.T) {
	t.Parallel()
	e, en := startApex(t)
	long := func(n int) string { return strings.Repeat("x", n) }
	for name, call := range map[string]func() (*engine.Result, error){
		"transition": func() (*engine.Result, error) {
			return en.Transition(engine.TransitionRequest{To: "plan", Note: long(501)})
		},
		// A person's: the agent's is refused before apex's gate (EarlyEndError) whatever its length.
		"complete": func() (*engine.Result, error) { return en.CompleteByPerson(long(501)) },
	} {
		if _, err := call(); err == nil || !strings.Contains(err.Error(), "501 characters, the most is 500") || !strings.Contains(err.Error(), "nothing was changed") {
			t.Errorf("%s with 501 characters of text: %v; want a refusal with the limit", name, err)
		}
	}
	must(en.Transition(engine.TransitionRequest{To: "plan", Note: long(500)}))(t)
	if _, err := e.open("person").Approve(long(501)); err == nil || !strings.Contains(err.Error(), "501 characters, the most is 500") {
		t.Errorf("approve with a note of 501 characters: %v; want a refusal with the limit", err)
	}
	must(e.open("person").Approve(long(500)))(t)
}

// Named checkpoints are files of the project's, kept across workflows and never removed on
// their own: a new name past the limit is refused with it and a step, a checkpoint saved
// again under its name is not, and the step (the agent asks the user which are no longer
// needed; at the CLI, cairn checkpoint delete) makes room.
func TestNamedCheckpointsHaveALimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	must(en.SaveCheckpoint("first", []byte(`{}`)))(t)
	dir := filepath.Join(en.StateDir(), "checkpoints")
	for i := range 499 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("cp%03d.json", i)), []byte(`{}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	_, err := en.SaveCheckpoint("one-more", []byte(`{"a":1}`))
	if err == nil || !strings.Contains(err.Error(), "500 checkpoints") || !strings.Contains(err.Error(), engine.AskWhichCheckpoints) ||
		strings.Contains(err.Error(), "cairn ") || strings.Contains(err.Error(), "delete") || !strings.Contains(err.Error(), "nothing was saved") {
		t.Fatalf("a 501st checkpoint: %v; want a refusal with the limit and the agent's step (%s), no delete command", err, engine.AskWhichCheckpoints)
	}
	must(en.SaveCheckpoint("cp000", []byte(`{"a":2}`)))(t)
	must(en.DeleteCheckpoint("cp001"))(t)
	must(en.SaveCheckpoint("one-more", []byte(`{"a":1}`)))(t)
}

// Going back from an approval phase and into it again, with no yes in between, asks for the
// same approval: the request still open is kept, not another added each time, so that such
// a loop does not grow the record without bound. The yes then given lets the move on.
func TestReenteringAnApprovalPhaseKeepsItsOpenRequest(t *testing.T) {
	t.Parallel()
	e, en := startApex(t)
	for range 20 {
		must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
		must(en.Transition(engine.TransitionRequest{To: "analyze"}))(t)
	}
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	if rec := storetest.ReadRecord(t, en.StateDir()); len(rec.Approvals) != 1 || !rec.Approvals[0].Open() {
		t.Fatalf("after 21 entries into plan without a yes: %d approvals on record, want the one open request", len(rec.Approvals))
	}
	must(e.open("person").Approve("ok"))(t)
	must(en.Transition(engine.TransitionRequest{To: "implement"}))(t)
}

// A workflow that goes round through an approval phase, with approvals turned off for the
// project, kept one approval entry for every pass and no operation shortened them: the record
// grew until the 1 MiB it may hold refused every move, and the resume listed each pass. The
// record keeps the newest workflow.MaxHistory entries, as it does the moves (the journal keeps
// them all), and the phase still waits for a yes once approvals are on again.
func TestApprovalsThroughALoopStayBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	conf := filepath.Join(startLoop(t, e, "approvals: [b]\n").StateDir(), "config.json")
	if err := os.WriteFile(conf, []byte(`{"approvals": false}`), 0o600); err != nil {
		t.Fatal(err)
	}
	en := e.open("s1") // reads the setting
	phase := "a"
	for range 3 * (workflow.MaxHistory + 10) {
		phase = must(en.Transition(engine.TransitionRequest{To: loopNext[phase]}))(t).Phase
	}
	if n := len(storetest.ReadRecord(t, en.StateDir()).Approvals); n > workflow.MaxHistory {
		t.Fatalf("after %d passes through b: %d approvals on record, want at most %d", workflow.MaxHistory+10, n, workflow.MaxHistory)
	}
	if err := os.Remove(conf); err != nil {
		t.Fatal(err)
	}
	en = e.open("s1")
	must(en.Transition(engine.TransitionRequest{To: "b"}))(t)
	if _, err := en.Transition(engine.TransitionRequest{To: "c"}); err == nil {
		t.Fatal("left b without a yes once approvals were on again")
	}
	must(e.open("person").Approve("ok"))(t)
	must(en.Transition(engine.TransitionRequest{To: "c"}))(t)
	if got := storetest.ReadRecord(t, en.StateDir()).Approvals; len(got) > workflow.MaxHistory || got[len(got)-1].Source != workflow.ApprovalCLI {
		t.Fatalf("approvals after the yes: %d, the last %+v", len(got), got[len(got)-1])
	}
}
