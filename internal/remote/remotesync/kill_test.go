package remotesync_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
	"github.com/cairn-dev/cairn/internal/remote/remotesync"
)

// gitKiller is a git on PATH that counts its calls and, at call CAIRN_GITKILL_AT, kills the
// process that ran it with SIGKILL: before running the real git (the step never happens) or
// after (it happened, and the sync never learns of it; a push landed but unacknowledged).
const gitKiller = `#!/bin/sh
n=$(( $(cat "$CAIRN_GITKILL_COUNT" 2>/dev/null || echo 0) + 1 ))
echo $n > "$CAIRN_GITKILL_COUNT"
if [ "$n" = "$CAIRN_GITKILL_AT" ] && [ "$CAIRN_GITKILL_WHEN" = before ]; then kill -9 $PPID; exit 137; fi
"$CAIRN_REAL_GIT" "$@"
rc=$?
if [ "$n" = "$CAIRN_GITKILL_AT" ]; then kill -9 $PPID; fi
exit $rc
`

// TestKillSyncAtEveryStep kills a sync that loses a race (it takes the remote's line, replays
// this machine's changes on it and pushes them) with SIGKILL at each of its git calls in turn,
// before the call and after it, with the machines' clocks an hour apart. Each time the store
// stays readable and the remote's line whole, and once a sync runs to the end every change of
// both machines is on the remote exactly once and both machines agree.
func TestKillSyncAtEveryStep(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("needs a Unix process model and sh")
	}
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(gitKiller), 0o755); err != nil {
		t.Fatal(err)
	}
	// run plays the scenario with the kill at git call at (0: none), before or after it, or at
	// the named step of remotesync (when "step"), and returns the number of git calls the
	// killed sync made and whether the kill landed.
	run := func(t *testing.T, at int, when, step string) (calls int, killed bool) {
		ctx := context.Background()
		url := "file://" + bareRepo(t)
		a, b := newMachine(t, time.Hour), newMachine(t, -time.Hour)
		open := func(m *machine) *gitremote.Backend {
			if out, err := exec.Command("git", "-C", m.dir, "remote", "add", "origin", url).CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			return gitBackend(t, gitremote.Config{Dir: m.dir, Remote: "origin"})
		}
		ra, rb := open(a), open(b)
		a.start("wf-k", "kill")
		a.sync(ra, "")
		b.sync(rb, "")
		task := func(m *machine, id string) {
			if _, err := m.en.UpdateTask(engine.TaskRequest{ID: id, Status: "pending"}); err != nil {
				t.Fatal(err)
			}
		}
		task(b, "TB")
		b.setVarKey("WF_B", "b")
		b.sync(rb, "")
		task(a, "TA")
		a.setVarKey("WF_A", "a")
		a.move("plan")

		count := filepath.Join(t.TempDir(), "count")
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "REMOTESYNC_STATE="+a.en.StateDir(), "REMOTESYNC_REPO="+a.dir,
			"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "CAIRN_REAL_GIT="+realGit,
			"CAIRN_GITKILL_COUNT="+count, "CAIRN_GITKILL_AT="+strconv.Itoa(at), "CAIRN_GITKILL_WHEN="+when, "REMOTESYNC_KILL_STEP="+step)
		out, err := cmd.CombinedOutput()
		killed = cmd.ProcessState.ExitCode() == -1
		if at == 0 && step == "" && err != nil {
			t.Fatalf("the sync without a kill failed: %v\n%s", err, out)
		}
		n, _ := os.ReadFile(count)
		calls, _ = strconv.Atoi(strings.TrimSpace(string(n)))

		// Killed: the store reads, the remote's line is whole.
		if _, err := a.st.ReadWorkflow(); err != nil {
			t.Fatalf("the store is unreadable after the kill: %v", err)
		}
		recs, err := ra.Since(ctx, "wf-k", 0)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range recs {
			var e remotesync.Entry
			if err := json.Unmarshal(r.Data, &e); err != nil || e.Revision != int64(i+1) || r.Rev != int64(i+1) {
				t.Fatalf("remote revision %d is not whole: %v", i+1, err)
			}
		}
		// Then syncs run to the end: every change lands once, and the machines agree.
		for range 2 {
			if _, err := remotesync.Sync(ctx, a.st, ra, "origin", "", remotesync.EngineReplayer(a.en)); err != nil {
				t.Fatal(err)
			}
		}
		b.sync(rb, "")
		agree(t, ra, a, b)
		rec := a.held()
		var ids []string
		for _, tk := range rec.Tasks {
			ids = append(ids, tk.ID)
		}
		if got := strings.Join(ids, ","); got != "TB,TA" || rec.Vars["WF_A"] != "a" || rec.Vars["WF_B"] != "b" || rec.State != "plan" {
			t.Fatalf("after the kill and a full sync: phase %s, tasks %s, vars %v; want plan, TB,TA, both variables", rec.State, got, rec.Vars)
		}
		return calls, killed
	}
	calls, _ := run(t, 0, "", "")
	t.Logf("a sync that loses the race and replays makes %d git calls", calls)
	if calls == 0 {
		t.Fatal("the sync ran no git through the wrapper: the test proved nothing")
	}
	killed := 0
	for _, s := range []string{"intent", "adopted", "replayed"} {
		t.Run("at-"+s, func(t *testing.T) {
			if _, k := run(t, 0, "", s); k {
				killed++
			} else {
				t.Fatalf("the sync passed step %s without being killed", s)
			}
		})
	}
	every := 10 // CI: every tenth git call; CAIRN_REMOTE_FULL: every one
	if os.Getenv("CAIRN_REMOTE_FULL") != "" {
		every = 1
	}
	for at := 1; at <= calls; at += every {
		for _, when := range []string{"before", "after"} {
			t.Run(fmt.Sprintf("%s-git-%d", when, at), func(t *testing.T) {
				if _, k := run(t, at, when, ""); k {
					killed++
				}
			})
		}
	}
	if killed == 0 {
		t.Fatal("no kill landed: the test proved nothing")
	}
	t.Logf("%d kills landed", killed)
}
