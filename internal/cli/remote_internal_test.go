package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote/gitremote"
	"github.com/cairn-dev/cairn/internal/remote/remotesync"
	"github.com/cairn-dev/cairn/internal/store"
)

// A sync that lost a race, adopted the remote's line and replayed this machine's change, and
// then could not push it (the network died), has changed this clone: the person is told what
// it did (where their copy went, what retention removed for it) and that the replayed change
// waits for the next sync, not that nothing changed; before, only git's error was printed.
func TestSyncFailedAfterLostRace(t *testing.T) {
	t.Parallel()
	out := remotesync.Outcome{Workflow: "wf-1", Local: 6, Notices: []string{"retention removed 1 older archive: old-1-x"},
		Conflict: &remotesync.Conflict{Common: 4, By: store.Event{Kind: "var"}, State: "implement",
			Archive: store.ArchiveInfo{Revision: 5, Dir: "conflict-wf-1-x"}, Lost: 1, Replayed: 1}}
	cut := &gitremote.GitError{Op: "push", Err: errors.New("exit status 128"), Stderr: "fatal: the remote end hung up unexpectedly"}
	for _, c := range []struct {
		name      string
		err       error
		wantErr   string
		wantLine  string
		wantNotes string
	}{
		{"unreached", cut,
			"origin did not take the push (git push: fatal: the remote end hung up unexpectedly): this clone changed as said above; check that this clone can reach origin and push there (its credentials may allow only reading), then run cairn sync again",
			"wf-1: origin changed it first (var, in implement, after r4); this machine's r5 is kept in archive/conflict-wf-1-x; 1 of its 1 change replayed on top, for the next sync to push; now at r6\n",
			"cairn: warning: retention removed 1 older archive: old-1-x\n"},
		{"other", remotesync.ErrMoved, remotesync.ErrMoved.Error(),
			"wf-1: origin changed it first (var, in implement, after r4); this machine's r5 is kept in archive/conflict-wf-1-x; 1 of its 1 change replayed on top, for the next sync to push; now at r6\n",
			"cairn: warning: retention removed 1 older archive: old-1-x\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			a := &app{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }, name: "sync"}
			err := a.syncFailed(t.TempDir(), "origin", out, c.err)
			if err == nil || err.Error() != c.wantErr {
				t.Errorf("error %v\nwant  %s", err, c.wantErr)
			}
			if stdout.String() != c.wantLine || stderr.String() != c.wantNotes {
				t.Errorf("stdout %q\nstderr %q\nwant %q and %q", stdout.String(), stderr.String(), c.wantLine, c.wantNotes)
			}
		})
	}
	var stdout, stderr bytes.Buffer
	a := &app{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }, name: "sync", json: true}
	if a.syncFailed(t.TempDir(), "origin", out, cut); stdout.Len() > 0 || !strings.Contains(stderr.String(), "cairn: warning: wf-1: origin changed it first") {
		t.Errorf("with --json: stdout %q (want none), stderr %q", stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	a.json = false
	err := a.syncFailed(t.TempDir(), "origin", remotesync.Outcome{Workflow: "wf-1", Local: 2}, cut)
	if want := "origin did not take the push (git push: fatal: the remote end hung up unexpectedly): nothing here changed; check that this clone can reach origin and push there (its credentials may allow only reading), then run cairn sync again"; err == nil || err.Error() != want || stdout.Len()+stderr.Len() > 0 {
		t.Errorf("with nothing changed: error %v, stdout %q, stderr %q\nwant %s", err, stdout.String(), stderr.String(), want)
	}
}

// A sync whose time runs out while git waits on the remote (syncTimeout, shortened here so that
// it is out before the first fetch) says what an unreachable remote's does, with its one step;
// before, it ended with git's bare "gitremote: git fetch: context deadline exceeded".
func TestSyncOutOfTime(t *testing.T) {
	cairn, _, _ := sharedProject(t)
	defer func(d time.Duration) { syncTimeout = d }(syncTimeout)
	syncTimeout = time.Nanosecond
	const want = "cairn sync: origin could not be reached (git fetch: no answer in the time allowed): nothing here changed; check that git fetch origin works from this clone, then run cairn sync again\n"
	if code, out := cairn("sync"); code == 0 || out != want {
		t.Errorf("sync out of time: exit %d\n%s\nwant %s", code, out, want)
	}
}

// A line too large to take (store.ErrLineTooLarge) fails every sync the same way: the error
// says so and gives the step that ends it, where before it said only that the journal would
// exceed a size.
func TestSyncFailedLineTooLarge(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	a := &app{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }, name: "sync"}
	err := a.syncFailed(t.TempDir(), "origin", remotesync.Outcome{Workflow: "wf-1", Local: 2},
		fmt.Errorf("remotesync: wf-1 changed both here and on origin: %w", store.ErrLineTooLarge))
	if err == nil || !errors.Is(err, store.ErrLineTooLarge) || !strings.HasSuffix(err.Error(), "; every sync fails the same way: cairn remote disable stops them, and nothing here or on origin is lost") {
		t.Errorf("error %v, want the step that ends the failing syncs", err)
	}
}

// A sync cairn sync could not finish (other machines kept pushing through every round, or the
// replay it owed failed) told the person "the next sync tries again": only cairn-mcp syncs by
// itself, and a person who runs none would wait for a sync that never comes. cairn sync names
// the command that runs it.
func TestSyncRetryIsTheCommand(t *testing.T) {
	t.Parallel()
	for _, err := range []error{
		remotesync.ErrMoved,
		fmt.Errorf("wrapped: %w", remotesync.ErrMoved),
		errors.New("replaying this machine's changes on the remote's line (" + remotesync.NextSyncTries + "): disk full"),
	} {
		var stdout, stderr bytes.Buffer
		a := &app{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }, name: "sync"}
		if code := a.fail(a.syncFailed(t.TempDir(), "origin", remotesync.Outcome{Workflow: "wf-1"}, err)); code != ExitRefused {
			t.Errorf("%v: exit %d, want %d", err, code, ExitRefused)
		}
		if got := stderr.String(); strings.Contains(got, "next sync") || !strings.Contains(got, "run cairn sync again") {
			t.Errorf("%v: cairn sync said %q, want the step run cairn sync again, not the next sync", err, got)
		}
	}
}

// sharedProject is a git project, proj, whose origin is a bare repository (file://), with
// sharing on and workflow wf-1 started, not yet synced: cairn runs the CLI there (exit code,
// stdout and stderr together), git runs git there.
func sharedProject(t *testing.T) (cairn func(args ...string) (int, string), git func(args ...string), proj string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	work := t.TempDir()
	proj, bare := filepath.Join(work, "project"), filepath.Join(work, "shared.git")
	git = func(args ...string) {
		t.Helper()
		if out, err := exec.Command("git", append([]string{"-C", proj}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	for _, args := range [][]string{{"init", "-q", "--bare", bare}, {"init", "-q", proj}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("remote", "add", "origin", "file://"+bare)
	vars := map[string]string{"HOME": filepath.Join(work, "home"), "CLAUDE_PROJECT_DIR": proj, "CAIRN_MEMORY_DIR": filepath.Join(work, "memory")}
	cairn = func(args ...string) (int, string) {
		var out bytes.Buffer
		code := Main(args, strings.NewReader(""), &out, &out, func(k string) string { return vars[k] })
		return code, out.String()
	}
	for _, args := range [][]string{{"remote", "enable"}, {"start", "apex", "shared", "--id", "wf-1"}} {
		if code, out := cairn(args...); code != 0 {
			t.Fatalf("cairn %v: exit %d\n%s", args, code, out)
		}
	}
	return cairn, git, proj
}

// A remote renamed (git remote rename) or removed while sharing goes through it fails every
// sync alike. cairn sync said "origin could not be reached (git fetch: fatal: 'origin' does not
// appear to be a git repository) ...; check that git fetch origin works from this clone, then
// run cairn sync again", a step that can never work, and cairn remote status said all was well.
// Both now say that origin is no longer a remote of this clone and the step that works, which
// is shown to work.
func TestSyncRemoteRenamed(t *testing.T) {
	t.Parallel()
	cairn, git, _ := sharedProject(t)
	if code, out := cairn("sync"); code != 0 {
		t.Fatalf("first sync: exit %d\n%s", code, out)
	}
	git("remote", "rename", "origin", "upstream")
	if code, out := cairn("vars", "set", "WF_X", "1"); code != 0 {
		t.Fatalf("vars set: exit %d\n%s", code, out)
	}
	const gone = "origin is no longer a git remote of this clone (renamed or removed)"
	const step = "cairn remote enable REMOTE, with one that git remote -v lists, shares through it"
	want := "cairn sync: " + gone + ": nothing here changed; " + step + "\n"
	if code, out := cairn("sync"); code != ExitRefused || out != want {
		t.Errorf("sync: exit %d\n%s\nwant exit %d\n%s", code, out, ExitRefused, want)
	}
	want = "remote origin: wf-1 at r2 here; " + gone + ": " + step + "; 1 unpushed\n"
	if code, out := cairn("remote", "status"); code != 0 || !strings.HasSuffix(out, want) {
		t.Errorf("remote status: exit %d\n%s\nwant it to end with\n%s", code, out, want)
	}
	for _, args := range [][]string{{"remote", "enable", "upstream"}, {"sync"}} {
		if code, out := cairn(args...); code != 0 {
			t.Errorf("cairn %v, the step: exit %d\n%s", args, code, out)
		}
	}
}

// A remote renamed (git remote rename origin upstream) while a workflow was finished here and
// another started: the step given, cairn remote enable upstream, forgot what the last sync
// left, as for another repository. cairn remote status then said "never synced", and the next
// sync did not push the end of the workflow finished here (what the last sync was about), so
// the machines still on it went on alone. The remote is the same repository (it holds the line
// this clone last fetched under the old name): what the last sync left is kept, and the end
// is pushed. A remote that is another repository still starts afresh.
func TestSyncRemoteRenamedKeepsTheLastSync(t *testing.T) {
	t.Parallel()
	for _, to := range []string{"upstream", "elsewhere"} {
		t.Run(to, func(t *testing.T) {
			t.Parallel()
			cairn, git, proj := sharedProject(t)
			if code, out := cairn("sync"); code != 0 {
				t.Fatalf("first sync: exit %d\n%s", code, out)
			}
			git("remote", "rename", "origin", "upstream")
			other := filepath.Join(t.TempDir(), "other.git")
			git("init", "-q", "--bare", other)
			git("remote", "add", "elsewhere", "file://"+other)
			for _, args := range [][]string{{"complete", "done here"}, {"start", "apex", "next", "--id", "wf-2"}, {"remote", "enable", to}} {
				if code, out := cairn(args...); code != 0 {
					t.Fatalf("cairn %v: exit %d\n%s", args, code, out)
				}
			}
			code, out := cairn("remote", "status")
			if never := strings.Contains(out, "never synced"); code != 0 || never != (to == "elsewhere") {
				t.Errorf("status through %s: exit %d\n%s\nwant never synced: %v", to, code, out, to == "elsewhere")
			}
			if to == "elsewhere" {
				return
			}
			if code, out := cairn("sync"); code != 0 || !strings.Contains(out, "pushed 1 revision of workflows finished here to upstream") {
				t.Errorf("sync after the rename: exit %d\n%s\nwant wf-1's end pushed", code, out)
			}
			bare := filepath.Join(filepath.Dir(proj), "shared.git")
			if got, err := exec.Command("git", "--git-dir", bare, "log", "-1", "--format=%s", "refs/cairn/wf/wf-1").Output(); err != nil || strings.TrimSpace(string(got)) != "cairn wf-1 r2" {
				t.Errorf("the remote's line of wf-1 ends at %q (%v), want its end, r2", got, err)
			}
		})
	}
}

// Two clones each started a workflow of their own under one id: the second to sync took the
// first's line as a race lost, archived its own workflow and made the other one active. The
// sync now refuses, changes nothing, and gives the step that ends the failing syncs.
func TestSyncSameIDAnotherWorkflow(t *testing.T) {
	t.Parallel()
	cairn, _, proj := sharedProject(t)
	other, git2, _ := sharedProject(t)
	git2("remote", "set-url", "origin", "file://"+filepath.Join(filepath.Dir(proj), "shared.git"))
	if code, out := other("sync"); code != 0 {
		t.Fatalf("the other clone's sync: exit %d\n%s", code, out)
	}
	const want = "cairn sync: the remote holds another workflow under this id: wf-1 on origin shares no revision with the wf-1 active here, so it is another workflow, started elsewhere; neither is taken for the other and nothing here changed; every sync fails the same way until one of the two is started again under another id: cairn remote disable stops them meanwhile, and loses nothing\n"
	if code, out := cairn("sync"); code != ExitRefused || out != want {
		t.Errorf("sync: exit %d\n%s\nwant exit %d\n%s", code, out, ExitRefused, want)
	}
	if _, err := os.Stat(filepath.Join(proj, ".claude", "cairn", "archive")); err == nil {
		t.Errorf("the sync archived something here")
	}
	// Its status named the other workflow's head as this one's on the remote.
	const status = "remote origin: wf-1 at r1 here; the line of wf-1 on origin (at r1) was never synced with it, so it may be another workflow under this id: cairn sync says which; 1 unpushed\n"
	if code, out := cairn("remote", "status"); code != 0 || !strings.HasSuffix(out, status) {
		t.Errorf("status: exit %d\n%s\nwant it to end\n%s", code, out, status)
	}
	if code, out := cairn("remote", "status", "--json"); code != 0 || !strings.Contains(out, `"remote_revision": 0`) {
		t.Errorf("status --json: exit %d\n%s\nwant remote_revision 0: no sync saw this workflow there", code, out)
	}
}

// A remote that pushes to another repository than it fetches from (remote.origin.pushurl
// naming a fork) took the first push, which no fetch reads back ("pushed"), and then refused every sync
// with "the remote refused refs/cairn/wf/wf-1 ([rejected] (stale info)): run `cairn doctor` to
// check which refs it accepts", a step that finds nothing wrong; a task set running was said
// claimed nowhere and ran unclaimed. Both now say where the pushes go and the step, from the
// first push of a line on.
func TestSyncPushesElsewhere(t *testing.T) {
	t.Parallel()
	cairn, git, _ := sharedProject(t)
	fork := filepath.Join(t.TempDir(), "fork.git")
	git("init", "-q", "--bare", fork)
	git("config", "remote.origin.pushurl", "file://"+fork)
	const split = "origin pushes to another repository than it fetches from (git remote get-url --push origin shows where), so %s there is never read back: cairn remote enable REMOTE, with a remote that fetches and pushes one repository, shares through it"
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		// Into the fork: read back where the fetch reads, it is not there.
		{[]string{"sync"}, ExitRefused, "cairn sync: " + fmt.Sprintf(split, "the line of wf-1 pushed") + "\n"},
		{[]string{"task", "t1", "pending"}, 0, ""},
		{[]string{"sync"}, ExitRefused, "cairn sync: " + fmt.Sprintf(split, "the line of wf-1 pushed") + "\n"},
		{[]string{"task", "t1", "running"}, 0, fmt.Sprintf(split, "the task claims line of wf-1 pushed")},
		{[]string{"task", "t2", "pending"}, 0, ""},
		{[]string{"task", "t2", "running"}, 0, fmt.Sprintf(split, "the task claims line of wf-1 pushed")},
	} {
		code, out := cairn(c.args...)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("cairn %v: exit %d\n%s\nwant exit %d with\n%s", c.args, code, out, c.code, c.want)
		}
	}
}

// A lock file that a stopped git left on a ref of Cairn's copy of the remote's lines (a git
// killed mid-fetch: cairn-mcp stopping, the machine losing power) failed every fetch until it
// was gone, and the error told the agent to delete it. cairn sync now clears it (no git holds
// it: it outlasted git's wait, and no Cairn process was syncing) and goes on.
func TestSyncStaleLockFile(t *testing.T) {
	t.Parallel()
	cairn, _, proj := sharedProject(t)
	if code, out := cairn("sync"); code != 0 {
		t.Fatalf("first sync: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{{"vars", "set", "WF_X", "1"}, {"sync"}} {
		if code, out := cairn(args...); code != 0 {
			t.Fatalf("cairn %v: exit %d\n%s", args, code, out)
		}
	}
	// The copy behind the remote, as the killed git left it: the fetch must move it.
	ref := "refs/cairn-mirror/origin/wf-1"
	if out, err := exec.Command("git", "-C", proj, "update-ref", ref, ref+"~1").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lock := filepath.Join(proj, ".git", filepath.FromSlash(ref)+".lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(lock, time.Now().Add(-time.Minute), time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	if code, out := cairn("sync"); code != 0 || !strings.Contains(out, "up to date with origin at r2") {
		t.Errorf("sync with a stale lock file: exit %d\n%s", code, out)
	}
	if _, err := os.Lstat(lock); err == nil {
		t.Errorf("%s is still there", lock)
	}
}
