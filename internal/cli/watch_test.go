//go:build unix

package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/store/storetest"
)

// project makes a git project in a temp dir and returns it with the environment cairn runs
// in there: HOME, state and auto-memory all inside the temp dir, nothing inherited that would
// move them.
func project(t *testing.T) (string, []string) {
	t.Helper()
	work := t.TempDir()
	dir := filepath.Join(work, "project")
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CAIRN_") && !strings.HasPrefix(kv, "CLAUDE_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "GORACE=") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+filepath.Join(work, "home"), "CLAUDE_PROJECT_DIR="+dir,
		"CLAUDE_CONFIG_DIR="+filepath.Join(work, "home", ".claude"), "CAIRN_MEMORY_DIR="+filepath.Join(work, "memory"), "GORACE="+storetest.RaceOptions)
	return dir, env
}

// outsideProject is project's environment without CLAUDE_PROJECT_DIR: cairn run there is in
// a project only if its working directory is.
func outsideProject(t *testing.T) []string {
	t.Helper()
	_, env := project(t)
	var outside []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "CLAUDE_PROJECT_DIR=") {
			outside = append(outside, kv)
		}
	}
	return outside
}

// cairnCmd is the cairn that testscript.Main put on PATH (this test binary under that name).
func cairnCmd(t *testing.T, dir string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	bin, err := exec.LookPath("cairn")
	if err != nil {
		t.Fatalf("cairn is not on PATH (testscript.Main puts it there): %v", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	return cmd
}

func run(t *testing.T, dir string, env []string, args ...string) {
	t.Helper()
	if out, err := cairnCmd(t, dir, env, args...).CombinedOutput(); err != nil {
		t.Fatalf("cairn %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// watcher starts `cairn watch ARGS...` and returns its output lines as they come.
func watcher(t *testing.T, dir string, env []string, args ...string) (*exec.Cmd, <-chan string, *bytes.Buffer) {
	t.Helper()
	cmd := cairnCmd(t, dir, env, append([]string{"watch"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	return cmd, lines, &stderr
}

func next(t *testing.T, lines <-chan string, what string) string {
	t.Helper()
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatalf("watch ended before %s", what)
		}
		return l
	case <-time.After(10 * time.Second):
		t.Fatalf("no line from watch for %s within 10s", what)
	}
	return ""
}

// stop sends sig and checks that watch exits 0 promptly with nothing on stderr.
func stop(t *testing.T, cmd *exec.Cmd, sig os.Signal, stderr *bytes.Buffer) {
	t.Helper()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, fmt.Sprintf("after %v", sig), stderr); code != 0 {
		t.Fatalf("watch after %v: exit %d (stderr %q)", sig, code, stderr)
	}
	if stderr.Len() > 0 {
		t.Errorf("watch wrote to stderr: %q", stderr)
	}
}

// waitExit waits up to 10 s for watch to end and returns its exit code; a watch still
// running then is killed (and waited for, so no other Wait races this one) and fails the test.
func waitExit(t *testing.T, cmd *exec.Cmd, what string, stderr fmt.Stringer) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("watch %s: %v (stderr %q)", what, err, stderr)
		}
		return cmd.ProcessState.ExitCode()
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("watch still running 10s %s (stderr %q)", what, stderr)
		return -1
	}
}

type line struct {
	At         time.Time `json:"at"`
	WorkflowID string    `json:"workflow_id"`
	Revision   int64     `json:"revision"`
	Phase      string    `json:"phase"`
	SessionID  string    `json:"session_id"`
	UpdatedAt  time.Time `json:"updated_at"`
	Changes    []string  `json:"changes"`
	By         string    `json:"by"`
}

func decode(t *testing.T, s string) line {
	t.Helper()
	// Every line has every key, so a script reads any line as it reads another
	// (jq '.changes[]' on the first line too).
	var keys map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &keys); err != nil {
		t.Fatalf("watch --json line %q: %v", s, err)
	}
	for _, k := range []string{"at", "workflow_id", "revision", "phase", "session_id", "updated_at", "changes", "by"} {
		if v, ok := keys[k]; !ok || k == "changes" && string(v) == "null" {
			t.Fatalf("watch --json line %q: %s is missing (or null, not a list)", s, k)
		}
	}
	var l line
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		t.Fatalf("watch --json line %q: %v", s, err)
	}
	return l
}

// TestWatchJSON: `cairn watch --json` as a real process prints the current position, then a
// line for each change other processes make (a transition, a start in another session, an
// archive), and exits 0 on SIGINT.
func TestWatchJSON(t *testing.T) {
	t.Parallel()
	dir, env := project(t)
	run(t, dir, env, "start", "apex", "watch me", "--id", "apex-w")

	cmd, lines, stderr := watcher(t, dir, env, "--json")
	first := decode(t, next(t, lines, "the current position"))
	if first.WorkflowID != "apex-w" || first.Revision != 1 || first.Phase != "analyze" || first.At.IsZero() || first.UpdatedAt.IsZero() {
		t.Fatalf("first line %+v, want apex-w at revision 1 in analyze", first)
	}

	run(t, dir, env, "transition", "plan")
	if l := decode(t, next(t, lines, "the transition")); l.WorkflowID != "apex-w" || l.Revision != 2 || l.Phase != "plan" ||
		strings.Join(l.Changes, "; ") != "phase analyze -> plan" || l.By != "cli" {
		t.Fatalf("after transition: %+v, want apex-w at revision 2 in plan, by cli", l)
	}
	// A person's yes is a change worth a line that says so.
	run(t, dir, env, "approve", "plan reviewed")
	if l := decode(t, next(t, lines, "the approval")); l.Revision != 3 || strings.Join(l.Changes, "; ") != "phase plan approved" || l.By != "cli" {
		t.Fatalf("after approve: %+v, want revision 3, phase plan approved, by cli", l)
	}

	// Another session starts over: archiving the old one and starting the new one are several
	// writes, which the debounce may or may not merge; the lines end at the new workflow.
	run(t, dir, append(env, "CLAUDE_CODE_SESSION_ID=other-session"), "start", "debug", "next", "--id", "dbg-w", "--replace")
	var l line
	for i := 0; i < 4 && l.WorkflowID != "dbg-w"; i++ {
		l = decode(t, next(t, lines, "the new workflow"))
	}
	if l.WorkflowID != "dbg-w" || l.Revision != 1 || l.SessionID != "other-session" {
		t.Fatalf("after the replacing start: %+v, want dbg-w at revision 1 by other-session", l)
	}

	// The archive marks the workflow archived, then moves it out of the active slot: two
	// writes, which the debounce may or may not merge; the lines end at no workflow.
	run(t, dir, env, "archive")
	l = decode(t, next(t, lines, "the archive"))
	if l.WorkflowID != "" {
		if l.WorkflowID != "dbg-w" || l.Revision != 2 || strings.Join(l.Changes, "; ") != "workflow archived" {
			t.Fatalf("after archive: %+v, want dbg-w marked archived at revision 2, or no workflow", l)
		}
		l = decode(t, next(t, lines, "the archive's move"))
	}
	if l.WorkflowID != "" || l.Revision != 0 {
		t.Fatalf("after archive: %+v, want no workflow", l)
	}

	stop(t, cmd, os.Interrupt, stderr)
}

// TestWatchHuman: the person's view names the workflow, its type and context when it
// appears, then per change what changed (phase, task, variables, checkpoints) and who
// changed it; SIGTERM ends it cleanly too.
func TestWatchHuman(t *testing.T) {
	t.Parallel()
	dir, env := project(t)
	cmd, lines, stderr := watcher(t, dir, env)
	if l := next(t, lines, "the current position"); !strings.HasSuffix(l, "  no active workflow") {
		t.Fatalf("first line %q, want no active workflow", l)
	}
	// Cairn never ran here: watch makes no state directory (it did, .gitignore and all), and
	// follows the one the first change makes.
	if _, err := os.Lstat(filepath.Join(dir, ".claude")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("watch made %s/.claude (%v)", dir, err)
	}
	run(t, dir, env, "start", "debug", "flaky upload test", "--id", "dbg-h")
	if l := next(t, lines, "the start"); !strings.HasSuffix(l, "  workflow dbg-h (debug): flaky upload test") {
		t.Fatalf("line %q, want the new workflow's header", l)
	}
	if l := next(t, lines, "the start"); !strings.HasSuffix(l, "  dbg-h  phase troubleshoot  revision 1  by cli") {
		t.Fatalf("line %q, want its position", l)
	}
	run(t, dir, env, "vars", "set", "WF_NOTE", "x")
	if l := next(t, lines, "the variable"); !strings.HasSuffix(l, "  dbg-h  phase troubleshoot  revision 2  vars set WF_NOTE  by cli") {
		t.Fatalf("line %q, want revision 2 and the variable's name", l)
	}
	run(t, dir, append(env, "CLAUDE_CODE_SESSION_ID=s-2"), "task", "t1", "running")
	if l := next(t, lines, "the task"); !strings.HasSuffix(l, "  revision 3  task t1 running  by cli in session s-2") {
		t.Fatalf("line %q, want the task and its session", l)
	}
	run(t, dir, env, "vars", "unset", "WF_NOTE")
	if l := next(t, lines, "the unset"); !strings.HasSuffix(l, "  vars unset WF_NOTE  by cli") {
		t.Fatalf("line %q, want the unset variable", l)
	}
	run(t, dir, env, "checkpoint", "save", "notes", "{}")
	if l := next(t, lines, "the checkpoint"); !strings.HasSuffix(l, "  checkpoint notes saved") {
		t.Fatalf("line %q, want the checkpoint", l)
	}
	run(t, dir, env, "checkpoint", "delete", "notes")
	if l := next(t, lines, "the deletion"); !strings.HasSuffix(l, "  checkpoint notes deleted") {
		t.Fatalf("line %q, want the deletion", l)
	}
	stop(t, cmd, syscall.SIGTERM, stderr)
}

// TestWatchBurst: a burst of writes by other processes may print fewer lines than writes
// (the debounce), but the revisions only go up and the last line is the last write.
func TestWatchBurst(t *testing.T) {
	t.Parallel()
	dir, env := project(t)
	run(t, dir, env, "start", "apex", "busy", "--id", "apex-b")
	cmd, lines, stderr := watcher(t, dir, env, "--json")
	if l := decode(t, next(t, lines, "the current position")); l.Revision != 1 {
		t.Fatalf("first line %+v, want revision 1", l)
	}
	const writes = 8
	writer := exec.Command("sh", "-c", `for i in 1 2 3 4 5 6 7 8; do cairn vars set WF_N "$i" || exit 1; done`)
	writer.Dir, writer.Env = dir, env
	if out, err := writer.CombinedOutput(); err != nil {
		t.Fatalf("writer: %v\n%s", err, out)
	}
	last := int64(1)
	for last < 1+writes {
		l := decode(t, next(t, lines, "the last write"))
		if l.Revision <= last {
			t.Fatalf("revision went from %d to %d", last, l.Revision)
		}
		last = l.Revision
	}
	if last != 1+writes {
		t.Fatalf("last revision %d, want %d", last, 1+writes)
	}
	stop(t, cmd, os.Interrupt, stderr)
}

// watchingApex is a project with the apex workflow id started and `cairn watch --json` on it,
// past its first line.
func watchingApex(t *testing.T, id string) (dir string, cmd *exec.Cmd, lines <-chan string, stderr *bytes.Buffer) {
	t.Helper()
	dir, env := project(t)
	run(t, dir, env, "start", "apex", "watch me go", "--id", id)
	cmd, lines, stderr = watcher(t, dir, env, "--json")
	if l := decode(t, next(t, lines, "the current position")); l.WorkflowID != id {
		t.Fatalf("first line %+v, want %s", l, id)
	}
	return dir, cmd, lines, stderr
}

// requireStateGoneExit fails the test unless the watch ends with exit 3, saying its state
// directory is gone.
func requireStateGoneExit(t *testing.T, cmd *exec.Cmd, stderr *bytes.Buffer) {
	t.Helper()
	if code := waitExit(t, cmd, "after its state directory was removed", stderr); code != 3 {
		t.Fatalf("watch ended with exit %d, want 3 (stderr %q)", code, stderr)
	}
	if !strings.Contains(stderr.String(), "state directory") {
		t.Errorf("stderr %q does not say the state directory is gone", stderr)
	}
}

// TestWatchStateDirRemoved: when the state directory goes away under a running watch (cairn
// uninstall --with-state, rm -r .claude/cairn), watch says so and ends with exit 3, rather
// than waiting forever on a directory no write will ever touch again.
func TestWatchStateDirRemoved(t *testing.T) {
	t.Parallel()
	dir, cmd, _, stderr := watchingApex(t, "apex-r")
	if err := os.RemoveAll(filepath.Join(dir, ".claude", "cairn")); err != nil {
		t.Fatal(err)
	}
	requireStateGoneExit(t, cmd, stderr)
}

// TestWatchStateDirRemovedLast: the directory itself may go well after its files (a slow
// rm -r on a loaded machine). Watch has by then looked, found the directory still there and
// printed the empty position; the directory's own removal must still end it. Before, it
// relied on seeing the directory gone at the check after its files' events, and waited forever.
func TestWatchStateDirRemovedLast(t *testing.T) {
	t.Parallel()
	dir, cmd, lines, stderr := watchingApex(t, "apex-l")
	state := filepath.Join(dir, ".claude", "cairn")
	ents, err := os.ReadDir(state)
	if err != nil {
		t.Fatal(err)
	}
	// The workflow file last: the line saying it is gone then comes after every other event.
	for _, e := range ents {
		if e.Name() != "workflow-state.json" {
			if err := os.RemoveAll(filepath.Join(state, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Remove(filepath.Join(state, "workflow-state.json")); err != nil {
		t.Fatal(err)
	}
	if l := decode(t, next(t, lines, "the workflow file's removal")); l.WorkflowID != "" {
		t.Fatalf("after the files went: %+v, want no workflow", l)
	}
	if err := os.Remove(state); err != nil {
		t.Fatal(err)
	}
	requireStateGoneExit(t, cmd, stderr)
}

// TestWatchNoProject: outside any project (no git repository, no CLAUDE_PROJECT_DIR) there is
// no state to follow; watch says so and ends with exit 1, creating no .claude/cairn there
// (it used to create one in whatever directory it was run, $HOME included, and wait on it).
func TestWatchNoProject(t *testing.T) {
	t.Parallel()
	nogit := t.TempDir()
	noProject := outsideProject(t)
	cmd := cairnCmd(t, nogit, noProject, "watch")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd, "outside a project", &stderr); code != 1 {
		t.Errorf("watch ended with exit %d, want 1 (stderr %q)", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "no project") {
		t.Errorf("stderr %q does not say there is no project", stderr.String())
	}
	if _, err := os.Lstat(filepath.Join(nogit, ".claude")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("watch outside a project made %s/.claude (%v)", nogit, err)
	}
}

// TestWatchReaderGone: `cairn watch | head -1` ends when head does, while nothing changes.
// Before, watch noticed the closed pipe only at its next write, so it hung until the
// workflow next changed, perhaps never.
func TestWatchReaderGone(t *testing.T) {
	t.Parallel()
	dir, env := project(t)
	run(t, dir, env, "start", "apex", "watched")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := cairnCmd(t, dir, env, "watch")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	w.Close()
	// The position is two lines: read both, so no write of watch's own meets the closed pipe.
	br := bufio.NewReader(r)
	for _, want := range []string{"watched", "phase analyze"} {
		l, err := br.ReadString('\n')
		if err != nil || !strings.Contains(l, want) {
			t.Fatalf("watch printed %q (%v), want a line with %q", l, err, want)
		}
	}
	r.Close() // head exits
	if code := waitExit(t, cmd, "after its reader closed the pipe", &stderr); code != 0 {
		t.Fatalf("watch: exit %d (stderr %q)", code, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("watch wrote to stderr: %q", stderr.String())
	}
}

// TestClosedPipe: the commands whose help promises exit 0 keep it when the reader of their
// piped output left before their first write (cairn watch | head -1 once head has gone): a
// write then finds the pipe closed, which must not end them by SIGPIPE (exit 141).
func TestClosedPipe(t *testing.T) {
	t.Parallel()
	dir, env := project(t)
	run(t, dir, env, "start", "apex", "watched")
	for _, tc := range []struct {
		args   []string
		stderr string // what it says; "" for nothing
	}{
		{[]string{"watch"}, ""},
		{[]string{"watch", "--json"}, ""},
		{[]string{"statusline"}, "the output could not be written"},
	} {
		t.Run(strings.Join(tc.args, "_"), func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			r.Close() // the reader is gone before the first write
			cmd := cairnCmd(t, dir, env, tc.args...)
			var stderr bytes.Buffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(""), w, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			w.Close()
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			code := waitExit(t, cmd, "with its reader gone", &stderr)
			if code != 0 || (tc.stderr == "") != (stderr.Len() == 0) || !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("cairn %v with its reader gone: exit %d (%v), stderr %q; want exit 0 and stderr %q", tc.args, code, cmd.ProcessState, stderr.String(), tc.stderr)
			}
		})
	}
}

// TestWatchNoContext: the header of a workflow without a context (a migrated seed's record)
// ends at its type, not in ": ".
func TestWatchNoContext(t *testing.T) {
	t.Parallel()
	dir, env := project(t)
	state := filepath.Join(dir, ".claude", "cairn")
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	rec := `{"version":"2.0","workflow_id":"apex-20261101T120000Z-5c1e","type":"apex","state":"implement","phase_status":"in_progress","status":"active","phases":{"implement":{"completed":false}},"ttl":"876000h","created_at":"2026-11-01T12:00:00Z","updated_at":"2026-11-01T12:00:00Z","owner":{"session_id":"","heartbeat":"2026-11-01T12:00:00Z"},"interruption_safe":true,"revision":1}`
	if err := os.WriteFile(filepath.Join(state, "workflow-state.json"), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, lines, stderr := watcher(t, dir, env)
	if l := next(t, lines, "the header"); !strings.HasSuffix(l, "  workflow apex-20261101T120000Z-5c1e (apex)") {
		t.Fatalf("first line %q, want the header ending at the type", l)
	}
	if l := next(t, lines, "the position"); !strings.HasSuffix(l, "  apex-20261101T120000Z-5c1e  phase implement  revision 1") {
		t.Fatalf("line %q, want the position", l)
	}
	stop(t, cmd, syscall.SIGTERM, stderr)
}

// TestWatchStateDirReplaced: a state directory removed and made anew between two looks (rm -r
// .claude/cairn then cairn start, or a restore from a backup) is not the one watch follows:
// the engine holds the old one open, so watch read on from it, printed "no active workflow"
// or nothing, and missed every change made in the new one. It now says so and ends with exit
// 3, as when the directory is only removed.
func TestWatchStateDirReplaced(t *testing.T) {
	t.Parallel()
	dir, cmd, _, stderr := watchingApex(t, "apex-n")
	state := filepath.Join(dir, ".claude", "cairn")
	if err := os.Rename(state, state+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	requireStateGoneExit(t, cmd, stderr)
	if !strings.Contains(stderr.String(), "made anew") || !strings.Contains(stderr.String(), "cairn watch") {
		t.Errorf("stderr %q does not say the directory was made anew and what to run", stderr)
	}
}

// TestWatchStateMoved: a project moved (or renamed) under a running watch takes its state
// directory with it, whole, and a state directory moved aside keeps its files. Watch said "the
// state directory ... was removed: nothing left to watch", which tells a person their workflow
// is gone; it now says what was moved and what to run, and still ends with exit 3.
func TestWatchStateMoved(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, want string
		move       func(dir string) (string, error) // moves, returns the project as it is now
	}{
		{"project", "run cairn watch in the project where it is now", func(dir string) (string, error) {
			return dir + "-moved", os.Rename(dir, dir+"-moved")
		}},
		{"state directory", "put it back, then run cairn watch again", func(dir string) (string, error) {
			state := filepath.Join(dir, ".claude", "cairn")
			return dir, os.Rename(state, state+"-aside")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, cmd, _, stderr := watchingApex(t, "apex-m")
			now, err := tc.move(dir)
			if err != nil {
				t.Fatal(err)
			}
			if now != dir {
				// A change in the moved project: the event that has watch look where its
				// directory was. (A directory moved aside sends its parent's event.)
				_, env := project(t)
				for i, kv := range env {
					if strings.HasPrefix(kv, "CLAUDE_PROJECT_DIR=") {
						env[i] = "CLAUDE_PROJECT_DIR=" + now
					}
				}
				run(t, now, env, "vars", "set", "PLAN_PATH", "p.md")
			}
			requireStateGoneExit(t, cmd, stderr)
			if got := stderr.String(); strings.Contains(got, "was removed") || !strings.Contains(got, "moved") || !strings.Contains(got, tc.want) {
				t.Errorf("stderr %q: want it to say what was moved, not removed, and %q", got, tc.want)
			}
		})
	}
}

// TestWatchNamesWhoMadeAPulledChange: a change a sync took from the remote was printed with
// nobody named (the journal's entry is the sync's, which has no actor), though the remote's
// entry names who made it; it is now named, with the remote it came through.
func TestWatchNamesWhoMadeAPulledChange(t *testing.T) {
	t.Parallel()
	file, _ := sharedRepo(t)
	ms := team(t, file, 2, nil)
	a, b := ms[0], ms[1]
	cmd, lines, stderr := watcher(t, b.dir, b.env)
	next(t, lines, "the header")
	next(t, lines, "the current position")
	a.must("transition", "plan")
	a.must("sync")
	b.must("sync")
	if l := next(t, lines, "the pulled move"); !strings.HasSuffix(l, "  wf-1  phase plan  revision 2  phase analyze -> plan  by cli from origin") {
		t.Fatalf("line %q, want the move and who made it, from origin", l)
	}
	stop(t, cmd, os.Interrupt, stderr)
}
