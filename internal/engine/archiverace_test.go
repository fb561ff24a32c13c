package engine_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/store/storetest"
	"github.com/cairn-dev/cairn/internal/workflow"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// archiveRaceEngine is what the parent and the starter process share: the project, its own HOME,
// retention high enough to keep every archive, and killClock's skew file for expiry. No
// process is killed and no power cut, so the engines skip fsyncs.
func archiveRaceEngine(project, session string) (*engine.Engine, error) {
	env := killEnv(project)
	return engine.Open(engine.Config{Getenv: func(k string) string {
		if k == "CAIRN_ARCHIVE_RETENTION" {
			return "100000"
		}
		return env(k)
	}, WorkDir: project, Now: killClock(project), SessionID: session, Actor: session,
		YAML: yamldoc.Codec{}, LockWait: 30 * time.Second, WrapFS: noSync})
}

// noSync is engine.Config.WrapFS for tests that cut no power: the fsyncs they would pay
// change nothing they can see.
func noSync(fsys durable.FS) durable.FS { return durabletest.NoSync{FS: fsys} }

// archiveStarter is the second process of TestArchiveRacesAStartingProcess: until the stop
// file appears, it starts a workflow whenever the active slot is free or holds a finished one
// (a new session starting work), printing "started ID" for each.
func archiveStarter() int {
	project := os.Getenv("CLAUDE_PROJECT_DIR")
	en, err := archiveRaceEngine(project, "starter")
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	fmt.Println("ready")
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
		if _, err := os.Stat(filepath.Join(project, "stop")); err == nil {
			return 0
		}
		res, err := en.Start(engine.StartRequest{Type: "debug", Context: "starter", TTL: "1h"})
		switch {
		case err == nil && res.Changed:
			fmt.Println("started", res.WorkflowID)
		case err == nil, lostRace(err):
			// Its own workflow still active (a start repeated, nothing changed) or another:
			// the slot is not free yet. Or the parent took the slot each time this start found
			// it finished: a start gives up after three such tries, and a person starts again.
			time.Sleep(500 * time.Microsecond)
		default:
			fmt.Println("error:", err)
			return 1
		}
	}
	fmt.Println("error: not stopped")
	return 1
}

// TestArchiveRacesAStartingProcess: every operation that commits a workflow's end and then
// archives it (complete, a move to a terminal phase, expiry, a replacing start, cairn
// archive) runs while another process starts a workflow as soon as the active slot is free
// or finished. Whatever the interleaving, an operation archives only the workflow it ended
// (store.ArchiveIf with its id): the starter's workflow, started between the end's commit and
// its archive, is never archived as completed or expired under it. Every workflow started is
// archived at most once, and is either archived or the active one at the end.
func TestArchiveRacesAStartingProcess(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns a process")
	}
	project := filepath.Join(t.TempDir(), "proj")
	for _, d := range []string{filepath.Join(project, ".git"), filepath.Join(project, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	en, err := archiveRaceEngine(project, "parent")
	if err != nil {
		t.Fatal(err)
	}
	defer en.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CAIRN_ENGINE_CHILD=archive-starter", "CLAUDE_PROJECT_DIR="+project,
		"HOME="+filepath.Join(project, "home"))
	cmd.Stderr = os.Stderr
	sc := storetest.StartChild(t, cmd, "the starter", "ready")
	defer cmd.Process.Kill()
	lines := make(chan string, 1024)
	go func() {
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()

	started := map[string]string{} // workflow id -> "parent" or "starter"
	var order []string
	endings := []string{"complete", "terminal", "expire", "replace", "archive"}
	moved := map[string]int{} // ending -> times the starter took the slot first
	lost := 0                 // replacing starts that lost the slot to the starter every time
	const rounds = 60
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; i < rounds && time.Now().Before(deadline); i++ {
		// Take the slot: a starter's workflow there is replaced (its archive says so).
		res, err := en.Start(engine.StartRequest{Type: "debug", Context: "parent", TTL: "1h", Replace: true})
		if lostRace(err) {
			lost++
			continue
		}
		if err != nil {
			t.Fatalf("round %d: start: %v", i, err)
		}
		started[res.WorkflowID] = "parent"
		order = append(order, res.WorkflowID)
		ending := endings[i%len(endings)]
		switch ending {
		case "complete":
			res, err = en.Complete("done")
		case "terminal":
			if res, err = en.Transition(engine.TransitionRequest{To: "fix"}); err == nil {
				res, err = en.Transition(engine.TransitionRequest{To: "git-commit"})
			}
		case "expire":
			n, _ := os.ReadFile(filepath.Join(project, "skew"))
			k, _ := strconv.Atoi(string(n))
			os.WriteFile(filepath.Join(project, "skew"), []byte(strconv.Itoa(k+1)), 0o600)
			res, err = en.ExpireTTL(false)
		case "replace":
			res, err = en.Start(engine.StartRequest{Type: "debug", Context: "parent", TTL: "1h", Replace: true})
			if err == nil {
				started[res.WorkflowID] = "parent"
				order = append(order, res.WorkflowID)
			}
		case "archive":
			res, err = en.Archive("abandoned")
		}
		switch {
		case err == nil:
			if strings.Contains(res.Message, "another process has since moved it out") {
				moved[ending]++
			}
			for _, w := range res.Warnings {
				if strings.Contains(w, "fail") {
					t.Fatalf("round %d: %s warned: %s", i, ending, w)
				}
			}
		case ending == "replace" && lostRace(err):
			lost++
		case errors.Is(err, engine.ErrNoActiveWorkflow):
			// The starter can take only a free or finished slot: never the parent's active one.
			t.Fatalf("round %d: %s found no active workflow: %v", i, ending, err)
		default:
			t.Fatalf("round %d: %s: %v", i, ending, err)
		}
	drain:
		for {
			select {
			case l := <-lines:
				id, ok := strings.CutPrefix(l, "started ")
				if !ok {
					t.Fatalf("the starter said %q", l)
				}
				started[id] = "starter"
				order = append(order, id)
			default:
				break drain
			}
		}
	}
	os.WriteFile(filepath.Join(project, "stop"), nil, 0o600)
	for l := range lines {
		id, ok := strings.CutPrefix(l, "started ")
		if !ok {
			t.Fatalf("the starter said %q", l)
		}
		started[id] = "starter"
		order = append(order, id)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the starter: %v", err)
	}

	archives, err := store.Open(filepath.Join(project, ".claude", "cairn"))
	if err != nil {
		t.Fatal(err)
	}
	defer archives.Close()
	list, err := archives.ListArchives()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, a := range list {
		seen[a.WorkflowID]++
		who, ok := started[a.WorkflowID]
		if !ok {
			t.Errorf("archive %s is of a workflow nobody started", a.Dir)
			continue
		}
		data, _, err := archives.ReadArchive(a.Dir)
		if err != nil {
			t.Fatal(err)
		}
		r, err := store.ParseRecord(data)
		if err != nil {
			t.Fatal(err)
		}
		// An operation that ended a workflow archives that one only: a workflow still active
		// in its archive was archived by a replace or by cairn archive, never as completed or
		// expired (another process's workflow, started in between, taken for the one ended).
		switch {
		case a.Reason == "completed" && r.Status != workflow.StatusCompleted && r.Status != workflow.StatusArchived,
			a.Reason == "expired" && r.Status != workflow.StatusExpired,
			who == "starter" && r.Status == workflow.StatusActive:
			t.Errorf("the %s's workflow %s, status %s, was archived as %s", who, a.WorkflowID, r.Status, a.Reason)
		}
	}
	active, err := en.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range order {
		if n := seen[id]; n > 1 || n == 0 && id != active.WorkflowID {
			t.Errorf("workflow %s (started by the %s) is archived %d times (active: %s)", id, started[id], n, active.WorkflowID)
		}
	}
	t.Logf("%d workflows; the starter took a just-ended slot first %v; %d replacing starts lost the slot", len(order), moved, lost)
}

// lostRace reports a replacing start that lost the active slot to another process.
func lostRace(err error) bool {
	_, active := errors.AsType[*workflow.ActiveError](err)
	return active || errors.Is(err, store.ErrNotActive) || errors.Is(err, store.ErrNotFound)
}
