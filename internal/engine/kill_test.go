package engine_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/store/storetest"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// killRetention is the archive retention the kill -9 writer runs with: small, so that most
// archives prune an older one.
const killRetention = 3

// The endings the kill -9 writer rotates through, one per workflow.
var killEndings = []string{"complete", "archive", "archive-note", "expire", "replace", "terminal"}

// killEnv is the environment the kill -9 writer and its checker share: a project with its
// own HOME, retention killRetention.
func killEnv(project string) func(string) string {
	vars := map[string]string{"HOME": filepath.Join(project, "home"), "CLAUDE_PROJECT_DIR": project,
		"CAIRN_ARCHIVE_RETENTION": strconv.Itoa(killRetention)}
	return func(k string) string { return vars[k] }
}

// killClock is real time plus a skew kept in a plain file of the project (a kill -9 keeps the
// page cache), which the writer moves 2h on before each expiry, so every TTL it set has passed.
func killClock(project string) func() time.Time {
	return func() time.Time {
		h, _ := os.ReadFile(filepath.Join(project, "skew"))
		n, _ := strconv.Atoi(string(h))
		return time.Now().UTC().Add(time.Duration(n) * 2 * time.Hour)
	}
}

// killWriter is the process TestKillDashNineEveryOperation kills: it recovers, says "ready",
// then runs workflows forever through every write operation, each ending in the next of
// killEndings. It prints "do OP ID" before each operation and "ack OP ID REV" once it returned.
func killWriter() int {
	project := os.Getenv("CLAUDE_PROJECT_DIR")
	en, err := engine.Open(engine.Config{Getenv: killEnv(project), WorkDir: project, Now: killClock(project),
		SessionID: "killer", Actor: "kill", YAML: yamldoc.Codec{}, LockWait: 30 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 2
	}
	counter := func(name string) int {
		b, _ := os.ReadFile(filepath.Join(project, name))
		n, _ := strconv.Atoi(string(b))
		return n
	}
	bump := func(name string) int {
		n := counter(name) + 1
		// Replaced whole, so that a kill never leaves it empty (no fsync: a kill keeps the page cache).
		tmp := filepath.Join(project, name+".tmp")
		_ = os.WriteFile(tmp, []byte(strconv.Itoa(n)), 0o600)
		_ = os.Rename(tmp, filepath.Join(project, name))
		return n
	}
	fail := func(op string, err error) int {
		fmt.Fprintf(os.Stderr, "%s: %v\n", op, err)
		return 4
	}
	// Recovery: what a new session does first. It archives a workflow whose completion or
	// expiry the kill cut short; that archive counts for retention, so it is acknowledged too.
	before, err := en.Snapshot()
	if err != nil {
		return fail("snapshot", err)
	}
	en.Resume(engine.ResumeOptions{Apply: true})
	after, err := en.Snapshot()
	if err != nil {
		return fail("snapshot", err)
	}
	// Recovery settled what L2 was owed: no line owed, and l2-state at the active revision.
	// Said before "ready", so that no kill cuts the check short.
	if err := owesNothing(project, after); err != nil {
		return fail("recovery", err)
	}
	fmt.Println("ready")
	if before.WorkflowID != "" && after.WorkflowID != before.WorkflowID {
		fmt.Printf("ack recovery %s 0 %s\n", before.WorkflowID, before.WorkflowID)
	}
	id := ""
	var rev int64
	do := func(op string, f func() (*engine.Result, error)) error {
		fmt.Printf("do %s %s\n", op, id)
		res, err := f()
		if err != nil {
			return err
		}
		// A recovery notice is expected after a kill; a failure reported as a warning is not.
		for _, w := range res.Warnings {
			if strings.Contains(w, "fail") {
				return fmt.Errorf("warned: %v", w)
			}
		}
		if op == "expire" && !res.Changed {
			return fmt.Errorf("did not expire: %s", res.Message)
		}
		old := id
		if res.WorkflowID != "" {
			id = res.WorkflowID
		}
		if res.Revision > 0 {
			rev = res.Revision
		}
		if old == "" {
			old = "-"
		}
		fmt.Printf("ack %s %s %d %s\n", op, id, res.Revision, old)
		if strings.Contains(res.Message, "retention removed") {
			fmt.Println("ack prune - 0 -")
		}
		return nil
	}
	for {
		snap, err := en.Snapshot()
		if err != nil {
			return fail("snapshot", err)
		}
		if id = snap.WorkflowID; id == "" {
			if err := do("start", func() (*engine.Result, error) {
				return en.Start(engine.StartRequest{Type: "debug", Context: "kill run", TTL: "1h"})
			}); err != nil {
				return fail("start", err)
			}
		}
		steps := []struct {
			op string
			f  func() (*engine.Result, error)
		}{
			{"transition", func() (*engine.Result, error) {
				return en.Transition(engine.TransitionRequest{To: "fix", Checkpoint: json.RawMessage(`{"cause":"race"}`)})
			}},
			{"task", func() (*engine.Result, error) {
				return en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running", Note: "rev " + strconv.FormatInt(rev, 10)})
			}},
			{"vars", func() (*engine.Result, error) {
				return en.SetVars(map[string]string{"WF_STEP": strconv.FormatInt(rev, 10)})
			}},
			{"checkpoint", func() (*engine.Result, error) {
				return en.SaveCheckpoint("cp", json.RawMessage(fmt.Sprintf(`{"wf":%q,"n":%d}`, id, bump("checkpoints"))))
			}},
			{"log", func() (*engine.Result, error) {
				return en.AppendLog("events", json.RawMessage(fmt.Sprintf(`{"wf":%q,"n":%d}`, id, bump("logs"))))
			}},
		}
		for _, s := range steps {
			if err := do(s.op, s.f); err != nil {
				return fail(s.op, err)
			}
		}
		// Counted before it runs, so that an ending a kill keeps cutting short does not hold
		// the rotation up: the next workflow takes the next one.
		ending := killEndings[counter("workflows")%len(killEndings)]
		bump("workflows")
		var end func() (*engine.Result, error)
		switch ending {
		case "complete":
			end = func() (*engine.Result, error) { return en.Complete("root cause fixed") }
		case "archive":
			end = func() (*engine.Result, error) { return en.Archive("abandoned") }
		case "archive-note":
			end = func() (*engine.Result, error) { return en.Archive("superseded by the retry rewrite") }
		case "expire":
			bump("skew")
			end = func() (*engine.Result, error) { return en.ExpireTTL(false) }
		case "replace":
			end = func() (*engine.Result, error) {
				return en.Start(engine.StartRequest{Type: "debug", Context: "kill run, again", TTL: "1h", Replace: true})
			}
		case "terminal":
			end = func() (*engine.Result, error) { return en.Transition(engine.TransitionRequest{To: "git-commit"}) }
		}
		if err := do(ending, end); err != nil {
			return fail(ending, err)
		}
	}
}

// owesNothing checks that l2-state owes L2 no line with the workflow of snap active: none
// owed, and noted at snap's workflow and revision (else the journal's lines after it are owed).
func owesNothing(project string, snap engine.Snapshot) error {
	b, err := os.ReadFile(filepath.Join(project, ".claude", "cairn", "l2-state.json"))
	if errors.Is(err, os.ErrNotExist) && snap.WorkflowID == "" {
		return nil
	}
	var st struct {
		WorkflowID string   `json:"workflow_id"`
		Revision   int64    `json:"revision"`
		Owed       []string `json:"owed"`
	}
	if err != nil || json.Unmarshal(b, &st) != nil {
		return fmt.Errorf("l2-state unreadable after recovery: %q (%v)", b, err)
	}
	if len(st.Owed) > 0 || snap.WorkflowID != "" && (st.WorkflowID != snap.WorkflowID || st.Revision < snap.Revision) {
		return fmt.Errorf("l2-state owes L2 after recovery, with workflow %s at revision %d active: %s", snap.WorkflowID, snap.Revision, b)
	}
	return nil
}

// killAcks is what the parent learned from the writer's stdout.
type killAcks struct {
	mu       sync.Mutex
	inFlight string            // the operation begun and not acknowledged
	flightID string            // the workflow it began on
	rev      map[string]int64  // workflow id -> highest acknowledged revision
	ended    map[string]string // workflow id -> the acknowledged ending that archived it
	archived []string          // workflow ids in the order their archive was acknowledged
	lines    []string          // what the writers printed, for a failure's message
	current  string            // the workflow the last acknowledgement left active
	lastLog  int               // the last acknowledged log line number
	lastCP   int               // the last acknowledged checkpoint number
	acked    map[string]int    // operation -> acknowledgements
	killedIn map[string]int    // operation -> kills while it ran
}

func (a *killAcks) read(sc *bufio.Scanner, acked chan<- struct{}) {
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		a.mu.Lock()
		a.lines = append(a.lines, sc.Text())
		switch {
		case len(f) >= 2 && f[0] == "do":
			a.inFlight, a.flightID = f[1], ""
			if len(f) > 2 {
				a.flightID = f[2]
			}
		case len(f) == 5 && f[0] == "ack":
			op, id, old := f[1], f[2], f[4]
			n, _ := strconv.ParseInt(f[3], 10, 64)
			a.acked[op]++
			select {
			case acked <- struct{}{}:
			default:
			}
			if op == "prune" {
				break // said of the operation just acknowledged
			}
			a.inFlight = ""
			a.current = id
			switch op {
			case "complete", "archive", "archive-note", "expire", "terminal", "replace", "recovery":
				a.ended[old] = op
				a.archived = append(a.archived, old)
				if op == "replace" {
					a.rev[id] = n
				} else {
					a.current = ""
				}
			case "prune":
			case "log":
				a.lastLog++
			case "checkpoint":
				a.lastCP++
			default:
				a.rev[id] = max(a.rev[id], n)
			}
		}
		a.mu.Unlock()
	}
}

// TestKillDashNineEveryOperation kills a writer running every engine write operation (start,
// transition, task, vars, checkpoint, log, complete, archive with a status and with a note,
// expiry, start --replace, a terminal transition, and the retention pruning the archives cause)
// at random moments, and checks after each kill with a fresh store and engine: every
// acknowledged change is there, each workflow is active with its journal or archived with its
// journal (never both, never neither), the archive index agrees with archive/, revisions never
// go back, the state reads without error, and the recovery the next writer runs first leaves
// L2 owed nothing.
func TestKillDashNineEveryOperation(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("kill -9 semantics are Unix")
	}
	kills := 300
	if testing.Short() {
		kills = 60
	}
	if s := os.Getenv("CAIRN_KILLS"); s != "" {
		kills, _ = strconv.Atoi(s)
	}
	base := t.TempDir()
	var project string
	var acks *killAcks
	seen := map[string]int64{}
	reset := func(i int) {
		project = filepath.Join(base, fmt.Sprintf("run-%d", i))
		if err := os.MkdirAll(filepath.Join(project, ".git"), 0o700); err != nil {
			t.Fatal(err)
		}
		old := acks
		acks = &killAcks{rev: map[string]int64{}, ended: map[string]string{}, acked: map[string]int{}, killedIn: map[string]int{}}
		if old != nil {
			acks.acked, acks.killedIn = old.acked, old.killedIn
		}
		clear(seen)
	}
	reset(0)
	start := time.Now()
	midArchive := 0 // kills that left an archive or a prune half done
	for i := 0; i < kills; i++ {
		if i%30 == 29 {
			reset(i)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "CAIRN_ENGINE_CHILD=kill", "CLAUDE_PROJECT_DIR="+project)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		sc := storetest.StartChild(t, cmd, fmt.Sprintf("kill %d: the writer", i), "ready")
		// Ready, the writer has run its recovery, which settled what the last kill cut short
		// (archived an ending left in the slot, under the reason the slot's record gives): that
		// operation is no longer in flight, and a kill before the writer's next "do" is in none.
		acks.inFlight, acks.flightID = "", ""
		done := make(chan struct{})
		acked := make(chan struct{}, 1<<16)
		go func() { defer close(done); acks.read(sc, acked) }()
		// Half the kills at a random time, half a moment after a random number of
		// acknowledgements, so that a slow writer (-race, a busy machine) still gets to the
		// ends of workflows.
		if i%2 == 0 {
			time.Sleep(time.Duration(rand.IntN(40000)) * time.Microsecond)
		} else {
		wait:
			for m := rand.IntN(14); m > 0; m-- {
				select {
				case <-acked:
				case <-done:
					break wait
				case <-time.After(10 * time.Second):
					break wait
				}
			}
			time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
		}
		cmd.Process.Kill() // SIGKILL
		<-done
		cmd.Wait()
		if strings.TrimSpace(stderr.String()) != "" {
			t.Fatalf("kill %d: the writer failed before it was killed: %s", i, stderr.String())
		}
		if acks.inFlight != "" {
			acks.killedIn[acks.inFlight]++
		}
		if p, h := checkAfterKill(t, i, project, acks, seen); p || h > 0 {
			midArchive++
		}
		// Every other kill inside an operation is followed by its retry; the others by the
		// next session's recovery, as the writer's start runs it.
		if acks.inFlight != "" && acks.killedIn[acks.inFlight]%2 == 1 {
			retryAfterKill(t, i, project, acks)
		}
		// An archive the kill cut short may have been made, and retention counts it: an
		// unknown entry keeps its place among the archives.
		if slices.Contains(killEndings, acks.inFlight) {
			acks.archived = append(acks.archived, "")
		}
	}
	t.Logf("%d kills in %v, %d of them inside an archive or prune; acknowledged %v; killed while running %v",
		kills, time.Since(start).Round(time.Millisecond), midArchive, acks.acked, acks.killedIn)
	for _, op := range append([]string{"start", "transition", "task", "vars", "checkpoint", "log", "prune"}, killEndings...) {
		if acks.acked[op] == 0 {
			t.Errorf("operation %s never completed: the writer does not cover it", op)
		}
	}
}

// checkAfterKill reads the state a kill left, first with the store (no repair beyond what a
// read does), then with a fresh engine.
// It returns what the kill cut short inside an archive: whether archive/pending.json was left,
// and how many directories without a snapshot (half pruned, or an archive's temp directory).
func checkAfterKill(t *testing.T, i int, project string, a *killAcks, seen map[string]int64) (pending bool, half int) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("kill %d (in %q): "+format+"\nthe writers said:\n%s", append(append([]any{i, a.inFlight}, args...), strings.Join(a.lines[max(0, len(a.lines)-30):], "\n"))...)
	}
	dir := filepath.Join(project, ".claude", "cairn")
	s, err := store.Open(dir, store.WithRetention(killRetention))
	if err != nil {
		fail("open: %v", err)
	}
	defer s.Close()

	// The active workflow, with its journal.
	active := ""
	w, err := s.ReadWorkflow()
	switch {
	case err == nil:
		active = w.ID
		j, err := s.ReadJournal(w.ID)
		if err != nil || len(j.Records) == 0 || j.Records[len(j.Records)-1].Revision != w.Revision {
			fail("workflow %s is active at revision %d without its journal (%d records, %v)", w.ID, w.Revision, len(j.Records), err)
		}
		if w.Revision < seen[w.ID] || w.Revision < a.rev[w.ID] {
			fail("workflow %s is at revision %d; %d was seen and %d acknowledged", w.ID, w.Revision, seen[w.ID], a.rev[w.ID])
		}
		seen[w.ID] = w.Revision
		if end, ok := a.ended[w.ID]; ok {
			fail("workflow %s is active after its %s was acknowledged", w.ID, end)
		}
		rec, err := w.Record()
		if err != nil {
			fail("the active record: %v", err)
		}
		// The variable holds the revision the writer saw before setting it.
		if v := rec.Vars["WF_STEP"]; v != "" {
			if n, err := strconv.ParseInt(v, 10, 64); err != nil || n >= rec.Revision {
				fail("vars WF_STEP=%q at revision %d", v, rec.Revision)
			}
		}
	case errors.Is(err, store.ErrNotFound):
	default:
		fail("reading the active workflow: %v", err)
	}

	// The archives: each with its snapshot and journal, none the active workflow, the index
	// naming every one of them.
	pendingDir := ""
	if b, err := os.ReadFile(filepath.Join(dir, "archive", "pending.json")); err == nil {
		pending = true
		var p struct{ Dir string }
		_ = json.Unmarshal(b, &p)
		pendingDir = p.Dir
	}
	index, err := s.ListArchives()
	if err != nil {
		fail("listing archives: %v", err)
	}
	indexed := map[string]int{}
	for k, x := range index {
		if _, dup := indexed[x.Dir]; dup {
			fail("the index lists %s twice", x.Dir)
		}
		indexed[x.Dir] = k
	}
	archivedIDs := map[string]string{}
	entries, _ := os.ReadDir(filepath.Join(dir, "archive"))
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		snap, err := os.ReadFile(filepath.Join(dir, "archive", e.Name(), store.WorkflowFile))
		if err != nil {
			// The read above recovered: a half-made archive is undone, its directory removed.
			// What is left is a half-pruned archive, still in the index until a prune ends it,
			// or the empty directory an archive makes before its marker names it (it is renamed
			// to the archive's name), left by a kill before the marker: Cairn writes nothing in
			// that one, and the next archive removes it.
			if strings.HasPrefix(e.Name(), ".tmp-") {
				if in, err := os.ReadDir(filepath.Join(dir, "archive", e.Name())); err != nil || len(in) > 0 {
					fail("the temp directory archive/%s is not empty (%d entries, %v)", e.Name(), len(in), err)
				}
			} else if _, ok := indexed[e.Name()]; !ok && e.Name() != pendingDir {
				fail("archive/%s, without a snapshot, is in neither the index nor archive/pending.json: a half-made archive recovery left", e.Name())
			}
			half++
			continue
		}
		var m struct {
			ID  string `json:"workflow_id"`
			Rev int64  `json:"revision"`
		}
		if json.Unmarshal(snap, &m) != nil {
			fail("archive %s holds a damaged snapshot: %.80q", e.Name(), snap)
		}
		if m.ID == active {
			fail("workflow %s is both active and archived in %s", m.ID, e.Name())
		}
		if prev, dup := archivedIDs[m.ID]; dup {
			fail("workflow %s is archived twice: %s and %s", m.ID, prev, e.Name())
		}
		archivedIDs[m.ID] = e.Name()
		_, j, err := s.ReadArchive(e.Name())
		if err != nil || len(j.Records) == 0 || j.Records[len(j.Records)-1].Revision != m.Rev {
			fail("archive %s (revision %d) without its journal (%d records, %v)", e.Name(), m.Rev, len(j.Records), err)
		}
		if m.Rev < seen[m.ID] || m.Rev < a.rev[m.ID] {
			fail("workflow %s archived at revision %d; %d was seen and %d acknowledged", m.ID, m.Rev, seen[m.ID], a.rev[m.ID])
		}
		seen[m.ID] = m.Rev
		if _, ok := indexed[e.Name()]; !ok && e.Name() != pendingDir {
			fail("archive %s is not in the index %v", e.Name(), index)
		}
	}
	// An index line without its directory is only one a killed prune was removing: one
	// beyond the newest killRetention.
	for k, x := range index {
		if _, err := os.Stat(filepath.Join(dir, "archive", x.Dir, store.WorkflowFile)); err != nil && k < killRetention {
			fail("the index lists %s (position %d) but it is not there: %v", x.Dir, k, err)
		}
	}
	// Never neither: every workflow acknowledged is active or archived, unless retention
	// removed it, which it may only do once retention is full, and never to the workflow the
	// last acknowledgement left active nor to the newest killRetention-1 archives acknowledged
	// (the one being made may be the killRetention-th).
	keep := map[string]bool{}
	for k := len(a.archived) - 1; k >= 0 && k >= len(a.archived)-(killRetention-1); k-- {
		keep[a.archived[k]] = true
	}
	for id := range a.rev {
		if _, arch := archivedIDs[id]; id == active || arch {
			continue
		}
		if id == a.current || keep[id] || len(archivedIDs) < killRetention-1 {
			fail("workflow %s, acknowledged, is neither active nor archived (active %q, archives %v)", id, active, archivedIDs)
		}
	}
	if a.lastLog > 0 {
		l, err := s.ReadLog("events")
		if err != nil || l.Invalid != 0 || len(l.Lines) < a.lastLog {
			fail("log: %d lines (%d invalid, %v), %d acknowledged", len(l.Lines), l.Invalid, err, a.lastLog)
		}
		// Numbers are taken before the append, so a kill may skip one; never repeat one.
		last := 0
		for k, line := range l.Lines {
			var e struct{ N int }
			if json.Unmarshal(line, &e) != nil || e.N <= last {
				fail("log line %d is %q after number %d", k+1, line, last)
			}
			last = e.N
		}
	}
	if a.lastCP > 0 {
		cp, err := s.LoadCheckpoint("cp")
		var c struct{ N int }
		if err != nil || json.Unmarshal(cp, &c) != nil || c.N < a.lastCP {
			fail("checkpoint %q (%v), number %d acknowledged", cp, err, a.lastCP)
		}
	}

	// A fresh engine reads it all without error, and agrees.
	en, err := engine.Open(engine.Config{Getenv: killEnv(project), WorkDir: project, Now: killClock(project), Actor: "check", YAML: yamldoc.Codec{}, NoCreate: true})
	if err != nil {
		fail("engine: %v", err)
	}
	defer en.Close()
	snap, err := en.Snapshot()
	if err != nil || snap.WorkflowID != active {
		fail("engine snapshot %+v (%v), store read %q", snap, err, active)
	}
	if _, err := en.List(); err != nil {
		fail("engine list: %v", err)
	}
	return pending, half
}

// retryAfterKill runs again, as the agent or the person would, the ending the kill cut short
// (a.inFlight, on workflow a.flightID), with a fresh engine before any session start: the
// retry must succeed and finish what the kill left, so that the workflow has left the
// active slot whatever step the kill stopped at.
func retryAfterKill(t *testing.T, i int, project string, a *killAcks) {
	t.Helper()
	var retry func(en *engine.Engine) (*engine.Result, error)
	switch a.inFlight {
	case "complete":
		retry = func(en *engine.Engine) (*engine.Result, error) { return en.Complete("root cause fixed") }
	case "archive":
		retry = func(en *engine.Engine) (*engine.Result, error) { return en.Archive("abandoned") }
	case "archive-note":
		retry = func(en *engine.Engine) (*engine.Result, error) { return en.Archive("superseded by the retry rewrite") }
	case "expire":
		retry = func(en *engine.Engine) (*engine.Result, error) { return en.ExpireTTL(false) }
	case "terminal":
		retry = func(en *engine.Engine) (*engine.Result, error) {
			return en.Transition(engine.TransitionRequest{To: "git-commit"})
		}
	case "replace":
		retry = func(en *engine.Engine) (*engine.Result, error) {
			return en.Start(engine.StartRequest{Type: "debug", Context: "kill run, again", TTL: "1h", Replace: true})
		}
	default:
		return
	}
	en, err := engine.Open(engine.Config{Getenv: killEnv(project), WorkDir: project, Now: killClock(project),
		SessionID: "killer", Actor: "kill", YAML: yamldoc.Codec{}, LockWait: 30 * time.Second})
	if err != nil {
		t.Fatalf("kill %d: engine: %v", i, err)
	}
	defer en.Close()
	res, err := retry(en)
	if err != nil {
		t.Fatalf("kill %d: %s retried after the kill: %v", i, a.inFlight, err)
	}
	for _, w := range res.Warnings {
		if strings.Contains(w, "fail") {
			t.Fatalf("kill %d: %s retried after the kill warned: %s", i, a.inFlight, w)
		}
	}
	snap, err := en.Snapshot()
	if err != nil || snap.WorkflowID != "" && snap.WorkflowID == a.flightID {
		t.Fatalf("kill %d: %s retried after the kill (%q) left workflow %s in the active slot (%v)", i, a.inFlight, res.Message, snap.WorkflowID, err)
	}
	// A replace retried starts the workflow the archived record says replaced it.
	if a.inFlight == "replace" {
		s, err := store.Open(filepath.Join(project, ".claude", "cairn"), store.WithRetention(killRetention))
		if err != nil {
			t.Fatalf("kill %d: %v", i, err)
		}
		defer s.Close()
		index, _ := s.ListArchives()
		for _, x := range index {
			if x.WorkflowID != a.flightID {
				continue
			}
			data, _, err := s.ReadArchive(x.Dir)
			var r struct{ History []struct{ Note string } }
			if err != nil || json.Unmarshal(data, &r) != nil || len(r.History) == 0 {
				t.Fatalf("kill %d: archive %s: %v", i, x.Dir, err)
			}
			if by := r.History[len(r.History)-1].Note; by != "archived: replaced by "+snap.WorkflowID {
				t.Fatalf("kill %d: replace retried after the kill (%q) left workflow %s active; its archive says %q", i, res.Message, snap.WorkflowID, by)
			}
		}
	}
	// The next session start is told that it ended, not given a position to resume from.
	if r := en.Resume(engine.ResumeOptions{Apply: true, ReportOnly: true}); snap.WorkflowID == "" && r.L2Line != "" {
		t.Fatalf("kill %d: %s retried after the kill (%q): the next session start resumes from memory's %q", i, a.inFlight, res.Message, r.L2Line)
	}
}
