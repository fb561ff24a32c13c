package engine_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/alloctest"
	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store"
)

// An L2 line another process comes to owe while a Stop hook settles the lines owed before it
// is kept owed, not dropped when the settling records what it could not write.
func TestOwedLineAddedWhileSettlingIsKept(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	openWait := func(session string, wait time.Duration) *engine.Engine { return e.openWaiting(session, 4242, wait) }
	agent := openWait("s1", 50*time.Millisecond)
	must(agent.Start(engine.StartRequest{Type: "apex", Context: "owed lines"}))(t)

	// Hold Cairn's memory lock, as a slow writer would: L2 writes fail and are owed.
	mem := e.memoryDir()
	if err := os.MkdirAll(mem, 0o700); err != nil {
		t.Fatal(err)
	}
	unlock := holdLock(t, mem, ".cairn-memory.lock")
	if res := must(agent.Transition(engine.TransitionRequest{To: "plan"}))(t); len(res.Warnings) == 0 {
		t.Fatal("the L2 line was written although the memory lock is held")
	}

	// A Stop hook settles the owed line; it waits for the lock a while, and meanwhile the
	// agent makes another move whose line is owed too.
	done := make(chan error, 1)
	go func() {
		_, err := openWait("s1", 1500*time.Millisecond).Stop(engine.StopInput{})
		done <- err
	}()
	if durabletest.WaitLockWaiter(filepath.Join(mem, ".cairn-memory.lock"), done) {
		t.Fatalf("the Stop hook did not wait for the memory lock: %v", <-done)
	}
	must(agent.Transition(engine.TransitionRequest{To: "analyze"}))(t)
	<-done
	unlock()

	out := must(openWait("s1", time.Second).Stop(engine.StopInput{}))(t)
	if !slices.ContainsFunc(out.Wrote, func(l string) bool { return strings.Contains(l, "analyzing") }) {
		t.Fatalf("the line owed for the move back to analyze was lost; settled now: %q", out.Wrote)
	}
	if b, _ := os.ReadFile(filepath.Join(mem, "MEMORY.md")); !strings.Contains(string(b), "analyzing") {
		t.Errorf("MEMORY.md does not hold the analyze line:\n%s", b)
	}
}

// A topic file Cairn leaves as it is (here a symlink; a directory or a file over 4 MiB alike)
// cannot be restored until the person changes it: the Stop hooks after every turn say nothing
// of it (a move's L2 write says it), and once it is a file Cairn can write again, the next
// Stop puts Cairn's back.
func TestRestoreRefusedForGoodIsQuiet(t *testing.T) {
	t.Parallel()
	e, en := startApex(t)
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	topic := filepath.Join(e.memoryDir(), "cairn-workflow.md")
	mine := e.readMemory("cairn-workflow.md")
	other := filepath.Join(t.TempDir(), "notes.md")
	if err := os.WriteFile(other, []byte("the person's notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(topic); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, topic); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if out := must(e.open("s1").Stop(engine.StopInput{}))(t); out.SystemMessage != "" || len(out.Wrote) > 0 {
			t.Errorf("Stop %d with the topic file a symlink = %q (wrote %q), want nothing written or said", i+1, out.SystemMessage, out.Wrote)
		}
	}
	if err := os.Remove(topic); err != nil {
		t.Fatal(err)
	}
	if out := must(e.open("s1").Stop(engine.StopInput{}))(t); !slices.Contains(out.Wrote, "cairn-workflow.md (restored)") || e.readMemory("cairn-workflow.md") != mine {
		t.Errorf("Stop once the symlink is gone wrote %q, want the topic file restored", out.Wrote)
	}
}

// A MEMORY.md Cairn leaves as it is (here a directory; a symlink or a file over 4 MiB alike)
// stays so until the person changes it: the line a move could not write is said once, in the
// move's warnings, and stays owed without a word from the Stop hooks after it (which would
// otherwise say it again after every turn), until the file is one Cairn can write again.
func TestLineRefusedForGoodIsSaidOnce(t *testing.T) {
	t.Parallel()
	e, en := startApexWith(t, "memory index left alone")
	index := filepath.Join(e.memoryDir(), "MEMORY.md")
	if err := os.MkdirAll(index, 0o700); err != nil {
		t.Fatal(err)
	}
	if res := must(en.Transition(engine.TransitionRequest{To: "plan"}))(t); len(res.Warnings) == 0 {
		t.Fatal("no warning that the L2 line was not written")
	}
	for i := range 2 {
		if out := must(e.open("s1").Stop(engine.StopInput{}))(t); out.SystemMessage != "" || len(out.Wrote) > 0 {
			t.Errorf("Stop %d after the move = %q (wrote %q), want nothing written or said", i+1, out.SystemMessage, out.Wrote)
		}
	}
	if err := os.Remove(index); err != nil {
		t.Fatal(err)
	}
	if out := must(e.open("s1").Stop(engine.StopInput{}))(t); len(out.Wrote) != 1 || !strings.Contains(e.readMemory("MEMORY.md"), "planning") {
		t.Errorf("Stop once MEMORY.md can be written wrote %q, want the owed line", out.Wrote)
	}
}

// A line owed while Cairn's memory lock was held (rev 2, planning) is written by the Stop
// hook after the next move (rev 3, back to analyzing) wrote its own line: it goes into the
// topic file's history before the newer line, and MEMORY.md goes on showing the newer
// position. All three moves share one second, as fast moves do, so the topic file's times
// cannot order them.
func TestOwedLineNeverReplacesANewerOne(t *testing.T) {
	t.Parallel()
	e := owedThenNewer(t, "owed and newer")
	out := must(e.open("s1").Stop(engine.StopInput{}))(t)
	if len(out.Wrote) != 1 || !strings.Contains(out.Wrote[0], "planning") {
		t.Errorf("the Stop hook wrote %q, want the owed planning line", out.Wrote)
	}
	if index := e.readMemory("MEMORY.md"); !strings.Contains(index, "analyzing") || strings.Contains(index, "planning") {
		t.Fatalf("MEMORY.md does not show the newest position (analyzing):\n%s", index)
	}
	topic := e.readMemory("cairn-workflow.md")
	plan, analyze := strings.Index(topic, "planning"), strings.LastIndex(topic, "analyzing")
	if plan < 0 || analyze < plan {
		t.Fatalf("the topic file does not hold the planning line before the analyzing one:\n%s", topic)
	}
	if again := must(e.open("s1").Stop(engine.StopInput{}))(t); len(again.Wrote) > 0 {
		t.Errorf("the next Stop hook wrote %q again", again.Wrote)
	}
}

// The same when a background memory writer dropped the topic file after the newer line was
// written: the Stop hook puts Cairn's topic file back before it writes the owed line into its
// history. Written onto the emptied file, the owed line stood alone there as the latest line,
// the position memory gives when L1 is gone, and its write marked that as Cairn's.
func TestOwedLineAfterTheTopicFileWasDropped(t *testing.T) {
	t.Parallel()
	e := owedThenNewer(t, "owed and dropped")
	if err := os.Remove(filepath.Join(e.memoryDir(), "cairn-workflow.md")); err != nil {
		t.Fatal(err)
	}
	must(e.open("s1").Stop(engine.StopInput{}))(t)
	if got := e.topicLines(t); len(got) != 2 || !strings.Contains(got[0], "planning") || !strings.Contains(got[1], "analyzing") {
		t.Fatalf("the topic file's lines are %q, want the planning line, then the analyzing line", got)
	}
}

// owedThenNewer starts an apex workflow with context and makes two moves: to plan, while
// Cairn's memory lock is held, so that its line (rev 2, planning) is owed; then back to
// analyze (rev 3), whose line is written.
func owedThenNewer(t *testing.T, context string) *env {
	t.Helper()
	e := newEnv(t)
	agent := e.openWaiting("s1", 4242, 50*time.Millisecond)
	must(agent.Start(engine.StartRequest{Type: "apex", Context: context}))(t)
	if err := os.MkdirAll(e.memoryDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	unlock := holdLock(t, e.memoryDir(), ".cairn-memory.lock")
	if res := must(agent.Transition(engine.TransitionRequest{To: "plan"}))(t); len(res.Warnings) == 0 {
		t.Fatal("the L2 line was written although the memory lock is held")
	}
	unlock()
	must(agent.Transition(engine.TransitionRequest{To: "analyze"}))(t)
	return e
}

// The same across workflows, ordered by time: the line owed for the workflow a start
// replaced does not stand in MEMORY.md over the line the new workflow wrote after it.
func TestOwedLineOfAReplacedWorkflowNeverReplacesANewerOne(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	agent := e.openWaiting("s1", 4242, 50*time.Millisecond)
	must(agent.Start(engine.StartRequest{Type: "apex", Context: "first"}))(t)
	must(agent.Transition(engine.TransitionRequest{To: "plan"}))(t)
	unlock := holdLock(t, e.memoryDir(), ".cairn-memory.lock")
	if res := must(agent.Start(engine.StartRequest{Type: "apex", Context: "second", Replace: true}))(t); len(res.Warnings) == 0 {
		t.Fatal("the replaced workflow's line was written although the memory lock is held")
	}
	unlock()
	e.clock.Add(time.Second)
	must(agent.Transition(engine.TransitionRequest{To: "plan"}))(t)
	if out := must(e.open("s1").Stop(engine.StopInput{}))(t); len(out.Wrote) != 1 {
		t.Errorf("the Stop hook wrote %q, want the owed line", out.Wrote)
	}
	if index := e.readMemory("MEMORY.md"); !strings.Contains(index, "second") {
		t.Fatalf("MEMORY.md does not show the new workflow's position:\n%s", index)
	}
}

// A Stop hook killed after writing the owed lines to L2 but before noting them written in
// l2-state (simulated: l2-state and l2-mark put back as they were before it) leaves them owed.
// The next Stop hook finds them in the topic file's history, the same text at the same time,
// and does not add them again, although the first is no longer the last line.
func TestOwedLinesWrittenBeforeACrashAreNotAddedAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	agent := e.openWaiting("s1", 4242, 50*time.Millisecond)
	must(agent.Start(engine.StartRequest{Type: "apex", Context: "crash while settling"}))(t)
	if err := os.MkdirAll(e.memoryDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	unlock := holdLock(t, e.memoryDir(), ".cairn-memory.lock")
	for _, to := range []string{"plan", "analyze"} {
		e.clock.Add(time.Second)
		if res := must(agent.Transition(engine.TransitionRequest{To: to}))(t); len(res.Warnings) == 0 {
			t.Fatalf("the line of the move to %s was written although the memory lock is held", to)
		}
	}
	unlock()
	state, mark := e.readFile(".claude/cairn/l2-state.json"), e.readFile(".claude/cairn/l2-mark.json")
	e.clock.Add(time.Second)
	if out := must(e.open("s1").Stop(engine.StopInput{}))(t); len(out.Wrote) != 2 {
		t.Fatalf("the Stop hook wrote %q, want the two owed lines", out.Wrote)
	}
	e.write(".claude/cairn/l2-state.json", state)
	e.write(".claude/cairn/l2-mark.json", mark)
	before := e.readMemory("cairn-workflow.md")

	e.clock.Add(time.Second)
	must(e.open("s1").Stop(engine.StopInput{}))(t)
	if topic := e.readMemory("cairn-workflow.md"); topic != before {
		t.Errorf("the topic file changed when the lines written before the crash were settled again:\nbefore\n%s\nafter\n%s", before, topic)
	}
	if index := e.readMemory("MEMORY.md"); !strings.Contains(index, "analyzing") {
		t.Errorf("MEMORY.md does not show the newest position (analyzing):\n%s", index)
	}
}

// A settle (the Stop hook, a session start) after a workflow ended and another started notes
// the new workflow at its own revision, not the ended one's: noted at the old revision, the
// new workflow's lines up to it (a move, its ending) were taken as older than one noted, held
// back as owed, and MEMORY.md went on showing the old workflow until the next settle.
func TestSettleNotesTheNewWorkflowsRevision(t *testing.T) {
	t.Parallel()
	e, en := startApexWith(t, "the first")
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	for _, s := range []string{"running", "done"} {
		must(en.UpdateTask(engine.TaskRequest{ID: "t1", Status: s}))(t)
	}
	must(en.Archive("abandoned"))(t)
	must(en.Start(engine.StartRequest{Type: "apex", Context: "the second"}))(t)
	must(e.open("s1").Stop(engine.StopInput{SessionID: "s1"}))(t)
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	if m := e.readMemory("MEMORY.md"); !strings.Contains(m, "Active APEX workflow: analyze completed, planning “the second”") {
		t.Errorf("MEMORY.md after the second workflow's move: %q", m)
	}
	if st := e.readFile(".claude/cairn/l2-state.json"); st == "" || strings.Contains(st, "owed") {
		t.Errorf("l2-state owes a line with memory available: %s", st)
	}
}

// apexOverride is a project's apex with its own verb for plan; ttl's value (forever is not a
// duration) breaks it.
const apexOverride = "---\nname: apex\nphases: [analyze, plan, implement, review, git-commit]\nverbs: {plan: drafting the plan}\n%s---\n"

// lineWaitingOnABrokenOverride starts apex-wait under the project's apex override, loses the
// line of its move to plan to a crash after L1 committed (simulated: its L2 write kept off by
// the mark's lock, and l2-state put back as it was), and breaks the override.
func lineWaitingOnABrokenOverride(t *testing.T) (*env, *engine.Engine) {
	t.Helper()
	e := newEnv(t)
	e.write(".claude/workflows/apex.md", fmt.Sprintf(apexOverride, ""))
	agent := e.openWaiting("s1", 4242, 50*time.Millisecond)
	must(agent.Start(engine.StartRequest{Type: "apex", Context: "project verbs", WorkflowID: "apex-wait"}))(t)
	st := must(store.Open(agent.StateDir()))(t)
	defer st.Close()
	if _, err := st.Read("l2-state"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("l2-state after the start: %v, want none", err)
	}
	unlock := holdLock(t, agent.StateDir(), ".lock-l2-mark")
	must(agent.Transition(engine.TransitionRequest{To: "plan"}))(t)
	unlock()
	if err := os.Remove(filepath.Join(agent.StateDir(), "l2-state.json")); err != nil {
		t.Fatal(err)
	}
	e.write(".claude/workflows/apex.md", fmt.Sprintf(apexOverride, "ttl: forever\n"))
	return e, agent
}

// A move's line lost to a crash after L1 committed is recovered from the journal by a later
// settle. When the project's override of the type no longer loads then, the line waits for it:
// worked out with the built-in definition instead, it would say the built-in's verb, not the
// one the workflow ran under. Once the override loads again, the next settle writes it.
func TestJournalLineWaitsForABrokenOverride(t *testing.T) {
	t.Parallel()
	e, _ := lineWaitingOnABrokenOverride(t)
	for i := range 2 {
		must(e.open("s1").Stop(engine.StopInput{}))(t)
		if index := e.readMemory("MEMORY.md"); strings.Contains(index, "planning") || strings.Contains(index, "drafting") {
			t.Fatalf("Stop %d with the override broken wrote the move's line:\n%s", i+1, index)
		}
	}

	e.write(".claude/workflows/apex.md", fmt.Sprintf(apexOverride, ""))
	must(e.open("s1").Stop(engine.StopInput{}))(t)
	if index := e.readMemory("MEMORY.md"); !strings.Contains(index, "analyze completed, drafting the plan") {
		t.Fatalf("Stop once the override loads again did not write the move's line:\n%s", index)
	}
	if topic := e.readMemory("cairn-workflow.md"); strings.Contains(topic, "planning") {
		t.Errorf("the topic file holds the built-in's verb:\n%s", topic)
	}
	if again := must(e.open("s1").Stop(engine.StopInput{}))(t); len(again.Wrote) > 0 {
		t.Errorf("the next Stop wrote %q again", again.Wrote)
	}
}

// TestLineWaitingOnABrokenOverrideCostsNoJournalRead: while the override stays broken the
// workflow goes on (variables, tasks, heartbeats: a long session's journal), and every Stop
// finds the line still waiting. It does not read the journal since the line again to learn
// that: each Stop would cost the whole of it, sealed segments included, and more every turn.
// Once the override loads, the line is written as the workflow ran it.
func TestLineWaitingOnABrokenOverrideCostsNoJournalRead(t *testing.T) {
	e, agent := lineWaitingOnABrokenOverride(t)
	for i := range 400 {
		must(agent.SetVars(map[string]string{"WF_STEP": fmt.Sprintf("%d %s", i, strings.Repeat("v", 1500))}))(t)
	}
	journal := must(os.Stat(filepath.Join(agent.StateDir(), "journal", "apex-wait.jsonl")))(t).Size()
	en := e.open("s1")
	must(en.Stop(engine.StopInput{}))(t) // the first Stop after the changes, as any turn's
	var err error
	n := alloctest.Bytes(func() { _, err = en.Stop(engine.StopInput{}) })
	if err != nil {
		t.Fatal(err)
	}
	// What a Stop costs with nothing to read (l2-state, the record read from the journal's
	// last window, the definitions): a small part of the journal's bytes.
	if budget := uint64(256 << 10); n > budget || journal < 2*int64(budget) {
		t.Errorf("a Stop with the line waiting and a %d-byte journal allocated %d bytes, want at most %d", journal, n, budget)
	}
	t.Logf("a Stop with the line waiting and a %d-byte journal allocated %d bytes", journal, n)

	e.write(".claude/workflows/apex.md", fmt.Sprintf(apexOverride, ""))
	must(e.open("s1").Stop(engine.StopInput{}))(t)
	if index := e.readMemory("MEMORY.md"); !strings.Contains(index, "analyze completed, drafting the plan") {
		t.Fatalf("Stop once the override loads again did not write the move's line:\n%s", index)
	}
}

// A move whose L2 line waited on Cairn's memory lock past its wait has happened: the warning
// names who holds the lock and promises Cairn's retry, and gives no step of its own ("try
// again" would run the move once more, or, after a completion, fail).
func TestOwedLineWarningNamesTheHolderAndOneStep(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	agent := e.openWaiting("s1", 4242, 20*time.Millisecond)
	must(agent.Start(engine.StartRequest{Type: "apex", Context: "owed lines"}))(t)
	mem := e.memoryDir()
	if err := os.MkdirAll(mem, 0o700); err != nil {
		t.Fatal(err)
	}
	holdLock(t, mem, ".cairn-memory.lock")
	res := must(agent.Transition(engine.TransitionRequest{To: "plan"}))(t)
	w := strings.Join(res.Warnings, "\n")
	if !strings.Contains(w, "Cairn retries after the next turn") || !strings.Contains(w, fmt.Sprintf("by pid %d", os.Getpid())) || strings.Contains(w, "try again") {
		t.Fatalf("warnings %q", res.Warnings)
	}
}
