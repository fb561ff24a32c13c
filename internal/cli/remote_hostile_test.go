//go:build unix

package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote/gittest"
)

// cairnRefs lists the refs Cairn's sharing wrote in the bare repository at dir.
func cairnRefs(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.Command("git", "--git-dir="+dir, "for-each-ref", "refs/cairn/").CombinedOutput()
	if err != nil {
		t.Fatalf("%v %s", err, out)
	}
	return string(out)
}

// TestPlantedSettingsPushNothing: settings that switch sharing on, put in the state directory
// by anything but cairn remote enable in this clone (committed into the repository it was
// cloned from), push nothing and say why; cairn remote disable clears them, and cairn remote
// enable switches sharing on.
func TestPlantedSettingsPushNothing(t *testing.T) {
	t.Parallel()
	base := bareRepo(t)
	bare := filepath.Join(base, "shared.git")
	m := newMachine(t, "file://"+bare)
	m.must("start", "apex", "planted", "--id", "wf-p")
	if err := os.WriteFile(filepath.Join(m.dir, ".claude", "cairn", "remote.json"), []byte(`{"enabled":true,"remote":"origin"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errb := m.cairn("sync")
	if code == 0 || !strings.Contains(errb, "cairn remote enable origin was not run in this clone") {
		t.Fatalf("sync with planted settings: exit %d\n%s%s", code, out, errb)
	}
	if r := cairnRefs(t, bare); r != "" {
		t.Fatalf("planted settings pushed:\n%s", r)
	}
	m.must("remote", "disable")
	if out := m.must("remote", "status"); !strings.Contains(out, "remote sync is off") {
		t.Fatalf("status after disabling planted settings: %s", out)
	}
	m.must("remote", "enable", "--yes")
	if out := m.must("sync"); !strings.Contains(out, "wf-p: pushed 1 revision to origin") {
		t.Fatalf("sync once enabled here: %s", out)
	}
}

// TestIdleSyncNamesForeignRefs: a ref under refs/cairn/wf/ that Cairn did not write is left out
// of an idle cairn sync, which says so and takes the remote's workflow all the same.
func TestIdleSyncNamesForeignRefs(t *testing.T) {
	t.Parallel()
	base := bareRepo(t)
	url := "file://" + filepath.Join(base, "shared.git")
	team(t, url, 1, nil)
	work := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-q", "--allow-empty", "-m", "not cairn"},
		{"push", "-q", url, "HEAD:refs/cairn/wf/wf-x"}} {
		if out, err := exec.Command("git", append([]string{"-C", work}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	b := newMachine(t, url)
	b.must("remote", "enable", "--yes")
	out := b.must("sync")
	if !strings.Contains(out, "origin: wf-x was left out of this sync: refs/cairn/wf/wf-x holds commits Cairn did not write; "+
		"see what it holds (git fetch origin refs/cairn/wf/wf-x, then git log FETCH_HEAD) and keep any work there on a branch; "+
		"deleting the ref then (git push origin :refs/cairn/wf/wf-x) loses no workflow: every machine keeps its own copy of wf-x, and one where it is active pushes it again\n") ||
		!strings.Contains(out, "wf-1: pulled 1 revision from origin") {
		t.Fatalf("idle sync beside a foreign ref:\n%s", out)
	}
	if !strings.Contains(b.must("remote", "status"), "wf-1 at r1 here, r1 on the remote") {
		t.Fatalf("status beside a foreign ref: %s", b.must("remote", "status"))
	}
}

// TestIdleSyncNamesDamagedRef: a ref on the remote that points at an object the remote does not
// have is left out of an idle cairn sync, which takes the remote's workflow beside it and says
// why that one was left out: not as a ref "Cairn did not write", and with the step that names the
// one ref to delete and why that loses nothing.
func TestIdleSyncNamesDamagedRef(t *testing.T) {
	t.Parallel()
	base := bareRepo(t)
	bare := filepath.Join(base, "shared.git")
	team(t, "file://"+bare, 1, nil)
	b := newMachine(t, "file://"+bare)
	b.must("remote", "enable", "--yes") // its probe push would be refused once the remote is damaged
	if err := os.WriteFile(filepath.Join(bare, "refs", "cairn", "wf", "wf-bad"), []byte("1234567890123456789012345678901234567890\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := b.must("sync")
	want := "origin: wf-bad was left out of this sync: refs/cairn/wf/wf-bad points at an object origin does not have (its repository is damaged); " +
		"delete it (git push origin :refs/cairn/wf/wf-bad), which loses nothing more since nobody can read that line there: " +
		"every machine keeps its own copy of wf-bad, and one where it is active pushes it again\n"
	if !strings.Contains(out, want) || strings.Contains(out, "did not write") || !strings.Contains(out, "wf-1: pulled 1 revision from origin") {
		t.Fatalf("idle sync beside a ref to a missing object:\n%s\nwant the line\n%s", out, want)
	}
}

// TestPushToDamagedRemote: a remote whose repository holds a ref to an object it does not have
// refuses every push ("missing necessary objects"). cairn sync said the remote refused the
// workflow's ref and to run cairn doctor, which said the host refuses refs/cairn/* and
// cairn-state/* branches and to ask its admin or turn sharing off; cairn remote enable said it
// accepts neither. Each says the repository is damaged, names the ref and gives the step.
func TestPushToDamagedRemote(t *testing.T) {
	t.Parallel()
	base := bareRepo(t)
	bare := filepath.Join(base, "shared.git")
	a := team(t, "file://"+bare, 1, nil)[0]
	if err := os.WriteFile(filepath.Join(bare, "refs", "cairn", "wf", "wf-bad"), []byte("1234567890123456789012345678901234567890\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a.must("vars", "set", "WF_K", "v")
	named := "its repository is damaged, refs/cairn/wf/wf-bad there points at an object it does not have, and every push is refused until that ref is gone; " +
		"delete it (git push origin :refs/cairn/wf/wf-bad), which loses nothing more since nobody can read that line there"
	code, out, errb := a.cairn("sync")
	if code == 0 || !strings.Contains(errb, named) || strings.Contains(errb, "cairn doctor") {
		t.Errorf("sync to a damaged remote: exit %d\n%s%s\nwant it to say %q", code, out, errb, named)
	}
	_, out, errb = a.cairn("doctor")
	if !strings.Contains(out+errb, "origin's repository is damaged (a ref there points at an object it does not have), so it refuses every push: refs/cairn/wf/wf-bad") ||
		!strings.Contains(out+errb, "git push origin :refs/cairn/wf/wf-bad") || strings.Contains(out+errb, "admin") {
		t.Errorf("doctor beside a damaged remote:\n%s%s", out, errb)
	}
	n := newMachine(t, "file://"+bare)
	code, out, errb = n.cairn("remote", "enable", "--yes")
	if code == 0 || !strings.Contains(errb, named) || strings.Contains(errb, "accepts neither") {
		t.Errorf("remote enable on a damaged remote: exit %d\n%s%s\nwant it to say %q", code, out, errb, named)
	}
}

// TestSyncErrorsNameNoPackage: what cairn sync prints when the remote's line cannot be read or
// taken says what failed and the step, in the person's words: it opened with the Go package
// that found it ("cairn sync: gitremote: the remote's ref ...", "remotesync: the remote holds
// several workflows ..."), which names nothing the person knows.
func TestSyncErrorsNameNoPackage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, bare string) *machine
		want  string
	}{
		{"line force-pushed to commits Cairn did not write", func(t *testing.T, bare string) *machine {
			a := team(t, "file://"+bare, 1, nil)[0]
			a.git("-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-q", "--allow-empty", "-m", "not cairn")
			a.git("push", "-q", "-f", "origin", "HEAD:refs/cairn/wf/wf-1")
			return a
		}, "points at a commit Cairn did not write: see what it holds (git fetch origin refs/cairn/wf/wf-1"},
		{"several workflows and none active", func(t *testing.T, bare string) *machine {
			team(t, "file://"+bare, 1, nil)
			o := newMachine(t, "file://"+bare)
			o.must("remote", "enable", "--yes")
			o.must("start", "apex", "other", "--id", "wf-2")
			o.must("sync")
			b := newMachine(t, "file://"+bare)
			b.must("remote", "enable", "--yes")
			return b
		}, "cairn sync ID with one of wf-1, wf-2"},
		{"push refused by the host", func(t *testing.T, bare string) *machine {
			a := team(t, "file://"+bare, 1, nil)[0]
			hook := filepath.Join(bare, "hooks", "pre-receive")
			if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'no pushes today' >&2\nexit 1\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			a.must("vars", "set", "WF_K", "v")
			return a
		}, "the remote refused refs/cairn/wf/wf-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := tc.setup(t, filepath.Join(bareRepo(t), "shared.git"))
			code, out, errb := m.cairn("sync")
			if code == 0 || !strings.Contains(errb, tc.want) {
				t.Fatalf("cairn sync: exit %d\n%s%s\nwant it to say %q", code, out, errb, tc.want)
			}
			for _, pkg := range []string{"gitremote:", "remotesync:", "sync: remote:"} {
				if strings.Contains(errb, pkg) {
					t.Errorf("cairn sync said %q, naming the package %s", errb, pkg)
				}
			}
		})
	}
}

// TestRemoteStatusSaysTheLineCannotBeRead: the active workflow's ref on the remote was
// force-pushed to commits Cairn did not write. cairn remote status said "wf-1 at r2 here, r0
// on the remote", as if the remote held nothing of it; it says the remote's line cannot be
// read and that cairn sync names the step, and --json says so too.
func TestRemoteStatusSaysTheLineCannotBeRead(t *testing.T) {
	t.Parallel()
	bare := filepath.Join(bareRepo(t), "shared.git")
	a := team(t, "file://"+bare, 1, nil)[0]
	a.must("vars", "set", "WF_K", "v")
	a.git("-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-q", "--allow-empty", "-m", "not cairn")
	a.git("push", "-q", "-f", "origin", "HEAD:refs/cairn/wf/wf-1")
	if code, _, _ := a.cairn("sync"); code == 0 {
		t.Fatal("cairn sync over a foreign line succeeded")
	}
	out := a.must("remote", "status")
	if strings.Contains(out, "r0 on the remote") || !strings.Contains(out, "wf-1 at r2 here; its line on origin cannot be read (refs/cairn/wf/wf-1 holds commits Cairn did not write): cairn sync names the step") {
		t.Fatalf("remote status over a foreign line:\n%s", out)
	}
	if js := a.must("remote", "status", "--json"); !strings.Contains(js, `"remote_unreadable": true`) {
		t.Fatalf("remote status --json over a foreign line:\n%s", js)
	}
}

// TestHookReasonReachesThePerson: a host whose pre-receive hook refuses a push says why in its
// own words. cairn sync said only "pre-receive hook declined" and sent the person to cairn
// doctor, which said the host refuses both namespaces; both now carry the hook's reason.
func TestHookReasonReachesThePerson(t *testing.T) {
	t.Parallel()
	bare := filepath.Join(bareRepo(t), "shared.git")
	a := team(t, "file://"+bare, 1, nil)[0]
	hook := filepath.Join(bare, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'pushes are frozen until Monday: ask ops' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	a.must("vars", "set", "WF_K", "v")
	const said = "said: pushes are frozen until Monday: ask ops"
	code, out, errb := a.cairn("sync")
	if code == 0 || !strings.Contains(errb, said) {
		t.Fatalf("cairn sync refused by a hook: exit %d\n%s%s\nwant it to say %q", code, out, errb, said)
	}
	_, out, errb = a.cairn("doctor")
	if !strings.Contains(out+errb, "it "+said) {
		t.Fatalf("cairn doctor on a host whose hook refuses every push:\n%s%s\nwant it to say %q", out, errb, said)
	}
}

// TestInterruptedSyncEndsItsGit: Ctrl-C on a cairn sync (or doctor's probe of the remote)
// waiting for a remote that does not answer ended cairn but not its git, which runs in a
// session of its own (so that it cannot prompt on the terminal) and so never had the
// terminal's SIGINT: it held its connection open for good, one more with each command
// interrupted. cairn ends its git, then itself by the signal, as before. A cairn task that
// claims the task on the remote did the same; ended so, it sets the task running neither.
func TestInterruptedSyncEndsItsGit(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"sync"}, {"doctor"}, {"task", "t1", "running"}} {
		t.Run(args[0], func(t *testing.T) {
			t.Parallel()
			interruptedRemoteCommand(t, args...)
		})
	}
}

// interruptedRemoteCommand checks that cairn's command (args), sent each signal while its git
// waits for a remote that does not answer, ends that git.
func interruptedRemoteCommand(t *testing.T, args ...string) {
	command := strings.Join(args, " ")
	m := newMachine(t, "file://"+filepath.Join(bareRepo(t), "shared.git"))
	m.must("remote", "enable", "--yes")
	m.must("start", "apex", "interrupted", "--id", "wf-i")
	hung := gittest.Hung(t)
	// Over http git's helper holds the connection: it must end too, not only git.
	m.git("remote", "set-url", "origin", "http://"+hung.Addr+"/shared.git")
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP} {
		was := hung.Accepted()
		cmd := cairnCmd(t, m.dir, m.env, args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for end := time.Now().Add(time.Minute); hung.Accepted() == was; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(end) {
				cmd.Process.Kill()
				t.Fatalf("cairn %s's git never reached the remote", command)
			}
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		// It ends as the signal would have ended it, its git's end waited for.
		if cmd.Wait(); !cmd.ProcessState.Sys().(syscall.WaitStatus).Signaled() || cmd.ProcessState.Sys().(syscall.WaitStatus).Signal() != sig {
			t.Fatalf("cairn %s sent %v ended with %v, want ended by the signal", command, sig, cmd.ProcessState)
		}
		// Ended, git closes its connection within moments; 30 s is for a loaded machine.
		for end := time.Now().Add(30 * time.Second); hung.Closed() < hung.Accepted(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("cairn %s ended by %v, and its git still holds its connection to the remote", command, sig)
			}
		}
		// Ended before the remote answered, the claim the user aborted is not made here.
		if out := m.must("status"); args[0] == "task" && strings.Contains(out, "t1") {
			t.Fatalf("cairn %s ended by %v, and the task is on record:\n%s", command, sig, out)
		}
	}
}
