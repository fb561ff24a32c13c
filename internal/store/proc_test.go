package store_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/store/storetest"
	"github.com/cairn-dev/cairn/internal/strictjson"
)

// The test binary doubles as the writer processes these tests start and kill.
const helperEnv = "CAIRN_STORE_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helper(mode, os.Getenv("CAIRN_STORE_TEST_DIR")))
	}
	storetest.QuietExits()
	os.Exit(m.Run())
}

func helper(mode, dir string) int {
	opts := []store.Option{store.WithLockWait(60 * time.Second)}
	if n, err := strconv.ParseInt(os.Getenv("CAIRN_STORE_TEST_COMPACT"), 10, 64); err == nil {
		opts = append(opts, store.WithJournalCompaction(n))
	}
	if mode == "crash" {
		// A kill leaves the page cache as it was: fsyncs change nothing the test can see,
		// and on a machine loaded with other writes they made the writer slow to get anywhere.
		opts = append(opts, store.WithWrapFS(func(fsys durable.FS) durable.FS { return durabletest.NoSync{FS: fsys} }))
	}
	s, err := store.Open(dir, opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	switch mode {
	case "crash":
		return crashWriter(s)
	case "incr", "incr-nolock":
		n, _ := strconv.Atoi(os.Getenv("CAIRN_STORE_TEST_N"))
		return incrementer(s, n, mode == "incr")
	case "once":
		_, wf := s.UpdateWorkflow(setNext(wfID, "plan"))
		cp := s.SaveCheckpoint("cp", []byte(`{"v":2}`))
		lg := s.AppendLog("events", []byte(`{"n":2}`))
		for _, r := range []struct {
			what string
			err  error
		}{{"wf", wf}, {"cp", cp}, {"log", lg}} {
			if r.err != nil {
				fmt.Printf("%s err %v\n", r.what, r.err)
			} else {
				fmt.Printf("%s ok\n", r.what)
			}
		}
		return 0
	case "hold":
		_, err := s.Update("held", func([]byte) ([]byte, error) {
			fmt.Println("ready")
			time.Sleep(time.Minute)
			return nil, nil
		})
		fmt.Fprintln(os.Stderr, err)
		return 0
	}
	return 2
}

var pad = strings.Repeat("p", 4000)

// crashWriter recovers, says "ready", then transitions, saves checkpoints and appends log
// lines forever, acknowledging each on stdout once the call has returned.
func crashWriter(s *store.Store) int {
	w, err := s.ReadWorkflow()
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		fmt.Fprintln(os.Stderr, "recovery:", err)
		return 3
	}
	rev := w.Revision
	fmt.Println("ready")
	for {
		rev++
		_, err := s.UpdateWorkflow(func(cur []byte) ([]byte, store.Event, error) {
			return crashDoc(rev), store.Event{Kind: "transition"}, nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "update:", err)
			return 4
		}
		fmt.Printf("ack wf %d\n", rev)
		if err := s.SaveCheckpoint("cp", []byte(fmt.Sprintf(`{"rev":%d,"pad":%q}`, rev, pad))); err != nil {
			fmt.Fprintln(os.Stderr, "checkpoint:", err)
			return 4
		}
		fmt.Printf("ack cp %d\n", rev)
		if err := s.AppendLog("events", []byte(fmt.Sprintf(`{"rev":%d,"pad":%q}`, rev, pad[:1000]))); err != nil {
			fmt.Fprintln(os.Stderr, "log:", err)
			return 4
		}
		fmt.Printf("ack log %d\n", rev)
	}
}

// crashDoc is the crash writer's record at rev: a sliding history, members that come and go,
// so its journal holds every kind of delta.
func crashDoc(rev int64) []byte {
	hist := []int64{}
	for r := max(rev-5, 1); r <= rev; r++ {
		hist = append(hist, r)
	}
	m := map[string]any{"version": "2.0", "workflow_id": wfID, "revision": rev, "pad": pad, "history": hist,
		"phases": map[string]any{fmt.Sprintf("p%d", rev%3): rev, "fixed": rev % 2}}
	if rev%4 == 0 {
		m["sometimes"] = rev
	}
	doc, _ := json.Marshal(m)
	return doc
}

func incrementer(s *store.Store, n int, locked bool) int {
	bump := func(cur []byte) ([]byte, error) {
		var c struct{ N int }
		if cur != nil {
			if err := json.Unmarshal(cur, &c); err != nil {
				return nil, err
			}
		}
		return []byte(fmt.Sprintf(`{"N":%d}`, c.N+1)), nil
	}
	for i := 0; i < n; i++ {
		if locked {
			if _, err := s.Update("counter", bump); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 4
			}
			if _, err := s.UpdateWorkflow(setNext(wfID, "s"+strconv.Itoa(i))); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 4
			}
			continue
		}
		// The negative control: the same read-modify-write without holding the lock across it.
		cur, err := s.Read("counter")
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			fmt.Fprintln(os.Stderr, err)
			return 4
		}
		next, _ := bump(cur)
		time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)
		if err := s.Write("counter", next); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 4
		}
	}
	return 0
}

func helperCmd(t testing.TB, mode, dir string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{helperEnv + "=" + mode, "CAIRN_STORE_TEST_DIR=" + dir}, env...)...)
	cmd.Stderr = os.Stderr
	return cmd
}

// TestKillDashNine kills a writer at random moments (every tenth time after enough writes for a
// compaction) at least 200 times and checks after each kill: the snapshot and checkpoint are
// complete documents, revisions never go back, nothing acknowledged is lost, only the last log
// or journal line may be torn, and the next writer repairs it. The writer compacts its journal
// at every full line (every 32 transitions), so kills land in compactions too: the sealed
// segments and the active journal together must then hold every revision once.
func TestKillDashNine(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("kill -9 semantics are Unix")
	}
	kills := 200
	base := t.TempDir()
	var dir string
	var ackWF, ackCP, ackLog, lastSeen int64
	reset := func(i int) {
		dir = filepath.Join(base, fmt.Sprintf("run-%d", i))
		ackWF, ackCP, ackLog, lastSeen = 0, 0, 0, 0
	}
	reset(0)
	tornLogs, tornJournals, sealedSeen := 0, 0, 0
	inCompaction := map[string]bool{}
	for i := 0; i < kills; i++ {
		if i%40 == 0 {
			reset(i)
		}
		cmd := helperCmd(t, "crash", dir, "CAIRN_STORE_TEST_COMPACT=4096")
		sc := storetest.StartChild(t, cmd, fmt.Sprintf("kill %d: the writer", i), "ready")
		var mu sync.Mutex
		done := make(chan struct{})
		go func() {
			defer close(done)
			for sc.Scan() {
				f := strings.Fields(sc.Text())
				if len(f) != 3 {
					continue
				}
				n, _ := strconv.ParseInt(f[2], 10, 64)
				mu.Lock()
				switch f[1] {
				case "wf":
					ackWF = max(ackWF, n)
				case "cp":
					ackCP = max(ackCP, n)
				case "log":
					ackLog = max(ackLog, n)
				}
				mu.Unlock()
			}
		}()
		if i%10 == 9 {
			// Under load a writer killed at a random moment may never write enough for its
			// journal to reach a compaction: every tenth is killed only once it has
			// acknowledged 40 more transitions (a full line every 32). A minute only bounds a
			// writer that hangs; a shorter give-up let a loaded machine skip the compaction.
			mu.Lock()
			want := ackWF + 40
			mu.Unlock()
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
				mu.Lock()
				got := ackWF
				mu.Unlock()
				if got >= want {
					break
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("kill %d: the writer acknowledged %d of %d transitions in a minute", i, got-want+40, 40)
				}
			}
		} else {
			time.Sleep(time.Duration(rand.IntN(20000)) * time.Microsecond)
		}
		cmd.Process.Kill() // SIGKILL
		<-done
		cmd.Wait()

		// Raw files first, before any store call repairs anything.
		snap, err := os.ReadFile(filepath.Join(dir, store.WorkflowFile))
		if err == nil {
			if strictjson.Check(snap) != nil {
				t.Fatalf("kill %d: snapshot is not a complete document: %.80q", i, snap)
			}
			rev := revOf(t, snap)
			if rev < ackWF {
				t.Fatalf("kill %d: snapshot revision %d, but %d was acknowledged", i, rev, ackWF)
			}
		} else if ackWF > 0 {
			t.Fatalf("kill %d: snapshot missing after acknowledged writes: %v", i, err)
		}
		if cut := cutCompaction(dir); cut != "" {
			inCompaction[cut] = true
		}
		segs, _ := filepath.Glob(filepath.Join(dir, "journal", wfID+".sealed", "*.jsonl"))
		sealedSeen = max(sealedSeen, len(segs))
		s := mustOpen(t, dir)
		j, _ := s.ReadJournal(wfID) // segments and active journal, read as they are
		if len(j.Problems) != 0 {
			t.Fatalf("kill %d: journal problems %v", i, j.Problems)
		}
		tornJournals += j.Torn
		for k, r := range j.Records {
			if r.Seq != int64(k+1) || r.Revision != int64(k+1) {
				t.Fatalf("kill %d: journal record %d is seq %d revision %d", i, k, r.Seq, r.Revision)
			}
		}
		if n := int64(len(j.Records)); n < ackWF || (err == nil && revOf(t, snap) != n && revOf(t, snap) != n-1) {
			t.Fatalf("kill %d: journal has %d records, %d acknowledged", i, n, ackWF)
		}
		if cp, err := os.ReadFile(filepath.Join(dir, "checkpoints", "cp.json")); err == nil {
			if strictjson.Check(cp) != nil || revOf2(t, cp) < ackCP {
				t.Fatalf("kill %d: checkpoint %.60q, %d acknowledged", i, cp, ackCP)
			}
		}
		lraw, _ := os.ReadFile(filepath.Join(dir, "logs", "events.jsonl"))
		l := store.ParseLines(lraw, store.MaxLogLine)
		tornLogs += l.Torn
		if l.Invalid != 0 {
			t.Fatalf("kill %d: %d invalid complete log lines", i, l.Invalid)
		}
		last := int64(0)
		for k, line := range l.Lines {
			r := revOf2(t, line)
			if r <= last {
				t.Fatalf("kill %d: log line %d has rev %d after %d", i, k, r, last)
			}
			last = r
		}
		if last < ackLog {
			t.Fatalf("kill %d: last log line is rev %d, %d was acknowledged", i, last, ackLog)
		}
		// The writer cleans the snapshot's temp files under the lock, so at most the one of the
		// write it was killed in is left.
		if tmps, _ := filepath.Glob(filepath.Join(dir, ".tmp-*")); len(tmps) > 1 {
			t.Fatalf("kill %d: %d stale temp files: %v", i, len(tmps), tmps)
		}
		// Every state the journal replays to is the one that was written.
		states, err := s.ReadJournalSince(wfID, 0)
		if err != nil || len(states) != len(j.Records) {
			t.Fatalf("kill %d: journal replays %d of %d records: %v", i, len(states), len(j.Records), err)
		}
		for _, st := range states {
			if !bytes.Equal(st.Snapshot, crashDoc(st.Revision)) {
				t.Fatalf("kill %d: revision %d replays to %.100s", i, st.Revision, st.Snapshot)
			}
		}
		// Then the lock-free read: never behind what was seen before.
		w, err := s.ReadWorkflow()
		if err == nil {
			if w.Revision < lastSeen {
				t.Fatalf("kill %d: revision went back from %d to %d", i, lastSeen, w.Revision)
			}
			lastSeen = w.Revision
		} else if !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("kill %d: read: %v", i, err)
		}
		s.Close()
		// A single write this small is rarely cut by SIGKILL on a local disk, so tear the tails
		// by hand now and then, as a large write or a power loss would: the next writer must cut
		// them off before appending, and the checks above must then find no damage.
		if i%5 == 4 {
			for _, p := range []string{filepath.Join(dir, "logs", "events.jsonl"), filepath.Join(dir, "journal", wfID+".jsonl")} {
				if f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0); err == nil {
					f.WriteString(`{"rev":999999,"seq":999999,"half a rec`)
					f.Close()
				}
			}
		}
	}
	t.Logf("%d kills; torn log tails seen %d times, torn journal tails %d times (each repaired by the next writer); up to %d sealed segments, %d kills cut a compaction short", kills, tornLogs, tornJournals, sealedSeen, len(inCompaction))
	if sealedSeen == 0 {
		t.Fatal("the writer never compacted its journal")
	}
}

// cutCompaction names what a compaction of the journal in dir cut short left ("" for
// nothing): a temp file of a segment or of the active journal (removed by the next
// compaction), or a segment whose lines are still in the active journal.
func cutCompaction(dir string) string {
	sealed := filepath.Join(dir, "journal", wfID+".sealed")
	tmps, _ := filepath.Glob(filepath.Join(sealed, ".tmp-*"))
	jtmps, _ := filepath.Glob(filepath.Join(dir, "journal", ".tmp-*"))
	if len(tmps)+len(jtmps) > 0 {
		return strings.Join(append(tmps, jtmps...), " ")
	}
	segs, _ := filepath.Glob(filepath.Join(sealed, "*.jsonl"))
	newest := ""
	for _, s := range segs {
		if len(s) > len(newest) || (len(s) == len(newest) && s > newest) {
			newest = s
		}
	}
	seg, _ := os.ReadFile(newest)
	active, _ := os.ReadFile(filepath.Join(dir, "journal", wfID+".jsonl"))
	sj, aj := store.ParseJournal(seg), store.ParseJournal(active)
	if len(sj.Records) > 0 && len(aj.Records) > 0 && aj.Records[0].Seq <= sj.Records[len(sj.Records)-1].Seq {
		return fmt.Sprintf("%s overlap %d", dir, aj.Records[0].Seq)
	}
	return ""
}

func revOf2(t testing.TB, doc []byte) int64 {
	var m struct {
		Rev int64 `json:"rev"`
	}
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatalf("%.40q: %v", doc, err)
	}
	return m.Rev
}

// TestConcurrentWritersLoseNothing runs 6 processes doing locked read-modify-writes of one
// document and of the workflow, and checks that no update was lost.
func TestConcurrentWritersLoseNothing(t *testing.T) {
	const procs, each = 6, 40
	dir := filepath.Join(t.TempDir(), "cairn")
	mustOpen(t, dir)
	runAll(t, "incr", dir, procs, each)
	s := mustOpen(t, dir)
	b, err := s.Read("counter")
	if err != nil || string(b) != fmt.Sprintf(`{"N":%d}`, procs*each) {
		t.Fatalf("counter %s (%v), want %d", b, err, procs*each)
	}
	w, err := s.ReadWorkflow()
	if err != nil || w.Revision != procs*each {
		t.Fatalf("workflow revision %d (%v), want %d", w.Revision, err, procs*each)
	}
	j, _ := s.ReadJournal(wfID)
	if len(j.Records) != procs*each || len(j.Problems) != 0 {
		t.Fatalf("journal %d records, problems %v", len(j.Records), j.Problems)
	}
}

// TestConcurrentWritersWithoutLockLoseUpdates is the negative control: the same processes
// doing read, then write, without holding the lock across both, must lose updates; if they
// did not, the test above would prove nothing.
func TestConcurrentWritersWithoutLockLoseUpdates(t *testing.T) {
	const procs, each = 6, 40
	for attempt := 0; attempt < 3; attempt++ {
		dir := filepath.Join(t.TempDir(), "cairn")
		mustOpen(t, dir)
		runAll(t, "incr-nolock", dir, procs, each)
		s := mustOpen(t, dir)
		b, _ := s.Read("counter")
		var c struct{ N int }
		json.Unmarshal(b, &c)
		if c.N < procs*each {
			t.Logf("without the lock %d of %d updates survived", c.N, procs*each)
			return
		}
	}
	t.Fatal("no update was lost without the lock: the concurrency test cannot tell a lock from none")
}

func runAll(t *testing.T, mode, dir string, procs, each int) {
	t.Helper()
	var cmds []*exec.Cmd
	for p := 0; p < procs; p++ {
		cmd := helperCmd(t, mode, dir, "CAIRN_STORE_TEST_N="+strconv.Itoa(each))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("writer: %v", err)
		}
	}
}

// TestLockTimeoutSaysWhoHoldsIt has another process hold a document's lock and checks that
// giving up names the lock file and the holder's pid.
func TestLockTimeoutSaysWhoHoldsIt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cairn")
	mustOpen(t, dir)
	cmd := helperCmd(t, "hold", dir)
	storetest.StartChild(t, cmd, "the holder", "ready")
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	s := mustOpen(t, dir, store.WithLockWait(100*time.Millisecond))
	_, err := s.Update("held", func([]byte) ([]byte, error) { return []byte(`{}`), nil })
	var te *durable.LockTimeoutError
	if !errors.As(err, &te) || te.Holder == nil || te.Holder.PID != cmd.Process.Pid {
		t.Fatalf("got %v, want a timeout naming pid %d", err, cmd.Process.Pid)
	}
	msg := err.Error()
	if !strings.Contains(msg, ".lock-held") || !strings.Contains(msg, strconv.Itoa(cmd.Process.Pid)) {
		t.Fatalf("message %q does not say which file and who", msg)
	}
	// Other names are not blocked, and once the holder dies (kill -9) its lock is gone.
	if err := s.Write("other", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if err := s.Write("held", []byte(`{"after":true}`)); err != nil {
		t.Fatalf("lock outlived its holder: %v", err)
	}
}
