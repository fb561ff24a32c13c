package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/memory"
)

// quarantined lists what the state directory's quarantine/ holds.
func (e *env) quarantined() []string {
	names, _ := filepath.Glob(filepath.Join(e.project, ".claude/cairn/quarantine/*"))
	return names
}

// A damaged earlier-tasks-told.json, a document Cairn owns and rebuilds, is set aside in
// quarantine/ and written anew: the notice about an earlier session's task settles after
// the start that tells it, instead of coming back at every session start.
func TestDamagedEarlierTasksToldIsRebuilt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	must(e.open("sess-aaaa-1").RecordClaudeTask(engine.ClaudeTask{SessionID: "sess-aaaa-1", TaskID: "1", Subject: "write the parser"}, false))(t)
	e.write(".claude/cairn/earlier-tasks-told.json", "{not json")
	const stale = "open task came from an earlier Claude Code session"
	r := e.open("sess-bbbb-2").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
	if !strings.Contains(r.Report, "1 "+stale) {
		t.Fatalf("the first new session is not told of the earlier session's task:\n%s", r.Report)
	}
	const aside = "earlier-tasks-told.json was damaged"
	if !containsAny(r.Notices, aside) || !strings.Contains(r.SystemMessage, aside) {
		t.Errorf("the damaged document set aside is not told: notices %q, system message %q", r.Notices, r.SystemMessage)
	}
	if r := e.open("sess-cccc-3").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true}); strings.Contains(r.Report, stale) {
		t.Errorf("told again at the next start: the damaged document was never rebuilt:\n%s", r.Report)
	}
	if q := e.quarantined(); len(q) != 1 || !strings.Contains(filepath.Base(q[0]), "earlier-tasks-told.json-") {
		t.Errorf("quarantine/ holds %v, want the damaged earlier-tasks-told.json", q)
	}
}

// A damaged l2-state.json is set aside and written anew: an L2 line that could not be
// written is recorded as owed, and the Stop hook writes it once the memory directory can be
// written again.
func TestDamagedL2StateRecordsWhatIsOwed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	unblock := e.blockMemory(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "owed"}))(t)
	e.write(".claude/cairn/l2-state.json", "{not json")
	if res := must(en.Transition(engine.TransitionRequest{To: "plan"}))(t); !containsAny(res.Warnings, "l2-state.json was damaged") {
		t.Errorf("the damaged l2-state set aside is not told: warnings %q", res.Warnings)
	}
	if got := e.readFile(".claude/cairn/l2-state.json"); !strings.Contains(got, `"owed":["Active APEX workflow`) {
		t.Errorf("l2-state.json holds %q: the line owed was not recorded", got)
	}
	unblock()
	if out := must(en.Stop(engine.StopInput{SessionID: "s1"}))(t); len(out.Wrote) != 1 || !strings.Contains(out.Wrote[0], "Active APEX workflow") {
		t.Fatalf("stop wrote %v: the line owed was never recorded", out.Wrote)
	}
	if q := e.quarantined(); len(q) != 1 || !strings.Contains(filepath.Base(q[0]), "l2-state.json-") {
		t.Errorf("quarantine/ holds %v, want the damaged l2-state.json", q)
	}
}

// A damaged stop-state.json no longer fails every Stop hook: it is set aside, and the
// blocking list is asked about once.
func TestDamagedStopStateIsRebuilt(t *testing.T) {
	t.Parallel()
	e, en := startApex(t)
	must(en.SetEnforcement([]engine.Violation{{Code: "V-SEC-02", Severity: "HIGH", Details: "key in repo"}}))(t)
	e.write(".claude/cairn/stop-state.json", "{not json")
	out, err := en.Stop(engine.StopInput{SessionID: "s1"})
	if err != nil || !out.Block {
		t.Fatalf("stop with a damaged stop-state: %+v, %v", out, err)
	}
	if !strings.Contains(out.SystemMessage, "stop-state.json was damaged") || !strings.Contains(out.SystemMessage, "quarantine/stop-state.json-") {
		t.Errorf("the damaged stop-state set aside is not told: %q", out.SystemMessage)
	}
	if out := must(en.Stop(engine.StopInput{SessionID: "s1"}))(t); out.Block {
		t.Errorf("asked again about the same list: %s", out.Reason)
	}
}

// A damaged l2-mark.json is set aside by the Stop hook's restore, which reads it, and told
// once; not left for the next L2 write to replace without a word. A mark that is JSON but
// holds no mark (bad hex) is set aside the same way.
func TestDamagedL2MarkIsSetAsideAndTold(t *testing.T) {
	t.Parallel()
	for _, damaged := range []string{"{not json", `{"index_hex":"zz","topic_hex":""}`} {
		e := newEnv(t)
		must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "marked"}))(t)
		must(e.open("s1").Transition(engine.TransitionRequest{To: "plan"}))(t) // nothing owed after it
		e.write(".claude/cairn/l2-mark.json", damaged)
		out := must(e.open("s1").Stop(engine.StopInput{SessionID: "s1"}))(t)
		if !strings.Contains(out.SystemMessage, "l2-mark.json was damaged") {
			t.Errorf("%s: the damaged l2-mark set aside is not told: system message %q", damaged, out.SystemMessage)
		}
		if q := e.quarantined(); len(q) != 1 || !strings.Contains(filepath.Base(q[0]), "l2-mark.json-") {
			t.Errorf("%s: quarantine/ holds %v, want the damaged l2-mark.json", damaged, q)
		}
		if out := must(e.open("s1").Stop(engine.StopInput{SessionID: "s1"}))(t); out.SystemMessage != "" {
			t.Errorf("%s: the next Stop hook says %q, want nothing", damaged, out.SystemMessage)
		}
	}
}

// A turn that ends in an API error (StopFailure: the engine opened NoRepair, its output
// discarded) meeting a damaged l2-mark.json leaves the mark and the lines owed to the next Stop,
// which sets the mark aside, says so, and writes and marks the lines. Before, it wrote the
// lines without a mark: a background memory writer's rewrite that then dropped them was not
// put back, and MEMORY.md's topic file lost the workflow's latest line until the next move.
func TestStopFailureLeavesLinesOwedPastADamagedMark(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	unblock := e.blockMemory(t)
	must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "marked"}))(t)
	must(e.open("s1").Transition(engine.TransitionRequest{To: "plan"}))(t) // its line owed
	unblock()
	e.write(".claude/cairn/l2-mark.json", "{not json")
	failed := e.openWith("s1", 4242, func(c *engine.Config) { c.NoRepair = true })
	if _, err := failed.Stop(engine.StopInput{SessionID: "s1", NoAsk: true}); err != nil {
		t.Fatal(err)
	}
	// A background memory writer's rewrite of the topic file, without Cairn's lines.
	rewrite := "---\nname: cairn-workflow\ndescription: where the work stands\nmetadata:\n  type: project\n---\n\n- The team ships OAuth today\n"
	if err := os.MkdirAll(e.memoryDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.memoryDir(), memory.TopicFile), []byte(rewrite), 0o600); err != nil {
		t.Fatal(err)
	}
	out := must(e.open("s1").Stop(engine.StopInput{SessionID: "s1"}))(t)
	if !strings.Contains(out.SystemMessage, "l2-mark.json was damaged") {
		t.Errorf("the damaged l2-mark set aside is not told: system message %q", out.SystemMessage)
	}
	if topic := e.readMemory(memory.TopicFile); !strings.Contains(topic, "planning “marked”") {
		t.Errorf("the topic file after the failed turn's end and the next Stop lacks the move's line:\n%s", topic)
	}
}

// An L2 write that finds a document of its own damaged, l2-mark.json or l2-state.json (not
// JSON, a mark that holds no mark, a newer Cairn's state with fields this one does not know, a
// foreign document), sets it aside and tells it before writing the one of the line it wrote:
// not overwritten without a word, and not told again by the Stop hook.
func TestL2WriteSetsADamagedDocumentAsideAndTellsIt(t *testing.T) {
	t.Parallel()
	const markTold = "l2-mark.json was damaged"
	// Another Cairn's or another tool's l2-state is told as what it is, not as damage.
	const stateTold = "l2-state.json holds no l2-state this Cairn knows (a newer Cairn's, or another tool's) and was moved to quarantine/l2-state.json-"
	for _, c := range []struct{ name, damaged, fresh, told string }{
		{"l2-mark.json", "{not json", `"index_hex":"`, markTold},
		{"l2-mark.json", `{"index_hex":"zz","topic_hex":""}`, `"index_hex":"`, markTold},
		{"l2-state.json", `{"workflow_id":"wf-x","revision":3,"future":{"x":1}}`, `"workflow_id":"apex-own"`, stateTold},
		{"l2-state.json", `["not","a","state"]`, `"workflow_id":"apex-own"`, stateTold},
	} {
		e := newEnv(t)
		en := e.open("s1")
		must(en.Start(engine.StartRequest{Type: "apex", Context: "c", WorkflowID: "apex-own"}))(t)
		e.write(".claude/cairn/"+c.name, c.damaged)
		res := must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
		if !containsAny(res.Warnings, c.told) {
			t.Errorf("%s: the %s set aside is not told: warnings %q", c.damaged, c.name, res.Warnings)
		}
		if c.name == "l2-state.json" && containsAny(res.Warnings, "damaged") {
			t.Errorf("%s: the foreign l2-state is told as damaged: warnings %q", c.damaged, res.Warnings)
		}
		q := e.quarantined()
		if len(q) != 1 || !strings.Contains(filepath.Base(q[0]), c.name+"-") {
			t.Fatalf("%s: quarantine/ holds %v, want the damaged %s", c.damaged, q, c.name)
		}
		if got := e.readFile(strings.TrimPrefix(q[0], e.project+"/")); got != c.damaged {
			t.Errorf("%s: quarantine/ keeps %q", c.damaged, got)
		}
		if got := e.readFile(".claude/cairn/" + c.name); !strings.Contains(got, c.fresh) || got == c.damaged {
			t.Errorf("%s: %s holds %q, want the one of the line written", c.damaged, c.name, got)
		}
		if out := must(en.Stop(engine.StopInput{SessionID: "s1"}))(t); strings.Contains(out.SystemMessage, strings.TrimSuffix(c.name, ".json")) {
			t.Errorf("%s: told again by the Stop hook: %q", c.damaged, out.SystemMessage)
		}
	}
}

// A last-ending.json with fields this Cairn does not know (a newer Cairn's) keeps them when
// the ending is marked told.
func TestEndingToldKeepsUnknownFields(t *testing.T) {
	t.Parallel()
	e, en := startApexWith(t, "first try")
	must(en.Archive("abandoned"))(t)
	doc := e.readFile(".claude/cairn/last-ending.json")
	e.write(".claude/cairn/last-ending.json", strings.TrimSuffix(doc, "}")+`,"future":{"x":[1,2]}}`)
	if r := e.open("s2").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true}); !strings.Contains(r.Report, "first try") {
		t.Fatalf("the ending is not told:\n%s", r.Report)
	}
	got := e.readFile(".claude/cairn/last-ending.json")
	if !strings.Contains(got, `"told":true`) || !strings.Contains(got, `"future":{"x":[1,2]}`) {
		t.Errorf("last-ending.json holds %s, want it told with its unknown field kept", got)
	}
}

// A line of archive/index.jsonl that names no archive (a foreign one in place of an entry)
// is told by cairn list, not left out without a word; the index is left as it is.
func TestListTellsAForeignIndexLine(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 5} {
		e := newEnv(t)
		en := e.open("s1")
		must(en.Start(engine.StartRequest{Type: "apex", Context: "first"}))(t)
		must(en.Archive("abandoned"))(t)
		index := e.readFile(".claude/cairn/archive/index.jsonl")
		damaged := index + `{"not":"an entry"}` + "\n"
		e.write(".claude/cairn/archive/index.jsonl", damaged)
		out, _, notices, err := en.ListRecentNotices(n)
		if err != nil || len(out) != 1 {
			t.Fatalf("n=%d: list %v, %v", n, out, err)
		}
		if !containsAny(notices, "archive/index.jsonl has 1 line naming no archive,") {
			t.Errorf("n=%d: the foreign index line is not told: notices %q", n, notices)
		}
		if got := e.readFile(".claude/cairn/archive/index.jsonl"); got != damaged {
			t.Errorf("n=%d: the index was changed to %q", n, got)
		}
	}
}
