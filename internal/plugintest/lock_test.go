package plugintest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// An install that runs longer than ten minutes (a Go build on a slow machine, a download on a
// slow network) keeps its lock while its holder lives: the lock records the holder's start
// time, so a start that finds it old can tell the live holder from a process that was given
// its pid, and does not break in and install into the same bin-V.tmp.
func TestLaunchKeepsTheLockOfALongInstall(t *testing.T) {
	skipOnWindows(t)
	if runtime.GOOS != "linux" {
		t.Skip("the test ages a live holder's lock through /proc")
	}
	// The hook's wait on the live holder ends by its clock, moved on at each reading.
	tools := toolDir(t)
	fastClock(t, tools)
	st := stalledStartWith(t, tools)
	defer func() { st.cmd.Process.Kill(); <-st.done }()
	lock := filepath.Join(st.data, ".install-lock-"+pluginVersion(t))
	old := time.Now().Add(-11 * time.Minute)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	res := runShell(t, hookCommand(t, "SessionStart"), st.env, st.work, `{"session_id":"s"}`)
	var out map[string]string
	if res.code != 0 || json.Unmarshal([]byte(res.stdout), &out) != nil ||
		!strings.HasPrefix(out["systemMessage"], "Cairn: the binaries for version "+pluginVersion(t)+" are being installed by another start") {
		t.Errorf("SessionStart while a live install holds an old lock = %+v, want exit 0 and the line saying another start is installing", res)
	}
	if fi, err := os.Stat(lock); err != nil || !fi.ModTime().Equal(old) {
		t.Errorf("the live holder's lock was broken (%v)", err)
	}
}

// A lock whose pid now belongs to another process (a live one: this test's) that started at
// another time than the holder is the lock of a dead install: it is broken at once, not left to
// hold every start off for ten minutes.
func TestLaunchBreaksALockWhosePidWasReused(t *testing.T) {
	skipOnWindows(t)
	if runtime.GOOS != "linux" {
		t.Skip("the holder's start time is read from /proc")
	}
	root := copyPlugin(t, launcherFiles...)
	work := t.TempDir()
	data := filepath.Join(work, "data")
	lock := filepath.Join(data, ".install-lock-"+pluginVersion(t))
	writeFile(t, filepath.Join(lock, "pid"), fmt.Sprintln(os.Getpid()))
	writeFile(t, filepath.Join(lock, "start"), "1\n")
	env := launchEnv(root, data, work, toolDir(t))
	rounds := lockWaitRounds(t, env)
	res := runShell(t, hookCommand(t, "SessionStart"), env, work, `{"session_id":"s"}`)
	if n := rounds(); res.code != 0 || !strings.Contains(res.stderr, "could not be installed (downloading") || n != 0 {
		t.Errorf("SessionStart with a reused pid's lock = %+v after %d rounds of waiting on the lock, want its own download tried at once", res, n)
	}
}

// noStartTimes is the command that runs its arguments on a system that cannot tell when a
// process started: in a mount namespace of its own, /proc empty (so ps cannot say either).
func noStartTimes(t *testing.T) []string {
	t.Helper()
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("hiding /proc needs root on Linux")
	}
	unshare, err := exec.LookPath("unshare")
	mount, err2 := exec.LookPath("mount")
	if err != nil || err2 != nil {
		t.Skip("unshare or mount is not installed")
	}
	wrap := []string{unshare, "-m", "/bin/sh", "-c", mount + ` -t tmpfs tmpfs /proc && exec "$@"`, "sh"}
	if out, err := exec.Command(wrap[0], append(wrap[1:], "/bin/sh", "-c", "test ! -e /proc/self")...).CombinedOutput(); err != nil {
		t.Skipf("cannot hide /proc here: %v: %s", err, out)
	}
	return wrap
}

// Where no start time can be told (no /proc, no ps), a lock's live pid alone cannot tell its
// holder from a process later given its pid. Such a holder's lock stayed for ten minutes, and
// then was broken even while its install went on (a Go build on a slow machine). Now the holder
// rewrites the lock's alive file while it lives: a lock whose live pid has no start and which
// nothing rewrote within a minute is broken at once; one whose holder beats is kept, however
// old.
func TestLaunchLockWithoutStartTimes(t *testing.T) {
	skipOnWindows(t)
	wrap := noStartTimes(t)
	t.Run("reused pid", func(t *testing.T) {
		root := copyPlugin(t, launcherFiles...)
		work := t.TempDir()
		data := filepath.Join(work, "data")
		lock := filepath.Join(data, ".install-lock-"+pluginVersion(t))
		writeFile(t, filepath.Join(lock, "pid"), fmt.Sprintln(os.Getpid()))
		old := time.Now().Add(-2 * time.Minute)
		if err := os.Chtimes(lock, old, old); err != nil {
			t.Fatal(err)
		}
		env := launchEnv(root, data, work, toolDir(t))
		rounds := lockWaitRounds(t, env)
		res := runProcess(t, 2*time.Minute, "SessionStart without start times", env, work, `{"session_id":"s"}`, wrap[0], append(wrap[1:], "/bin/sh", "-c", hookCommand(t, "SessionStart"))...)
		if n := rounds(); res.code != 0 || !strings.Contains(res.stderr, "could not be installed (downloading") || n != 0 {
			t.Errorf("SessionStart with a live pid's lock that nothing rewrote for two minutes = %+v after %d rounds of waiting on the lock, want its own download tried at once", res, n)
		}
	})
	t.Run("live holder", func(t *testing.T) {
		tools := toolDir(t)
		fastClock(t, tools) // the hook's wait on the live holder ends by its clock
		st := stalledStartWith(t, tools, wrap...)
		defer func() { st.cmd.Process.Kill(); <-st.done }()
		lock := filepath.Join(st.data, ".install-lock-"+pluginVersion(t))
		if _, err := os.Stat(filepath.Join(lock, "start")); err == nil {
			t.Fatal("the holder wrote a start time with /proc hidden")
		}
		old := time.Now().Add(-11 * time.Minute)
		if err := os.Chtimes(lock, old, old); err != nil {
			t.Fatal(err)
		}
		res := runProcess(t, 2*time.Minute, "SessionStart without start times", st.env, st.work, `{"session_id":"s"}`, wrap[0], append(wrap[1:], "/bin/sh", "-c", hookCommand(t, "SessionStart"))...)
		var out map[string]string
		if res.code != 0 || json.Unmarshal([]byte(res.stdout), &out) != nil || !strings.Contains(out["systemMessage"], "being installed by another start") {
			t.Errorf("SessionStart while a live install holds an old lock = %+v, want exit 0 and the line saying another start is installing", res)
		}
		if fi, err := os.Stat(lock); err != nil || !fi.ModTime().Equal(old) {
			t.Errorf("the live holder's lock was broken (%v)", err)
		}
	})
}

// A dead install's lock in a data dir that can no longer be written (here remounted read-only;
// a full disk fails the same mkdir) cannot be broken. A start says at once that the data dir
// cannot be written: not after waiting its whole budget (a hook 6 s, the MCP server a minute)
// on a lock no one holds, to say another start is installing, every session.
func TestLaunchDeadLockInAReadOnlyDataDir(t *testing.T) {
	skipOnWindows(t)
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root on Linux")
	}
	root := copyPlugin(t, launcherFiles...)
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	dead := exec.Command("/bin/sh", "-c", "exit 0")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(mnt, "data")
	writeFile(t, filepath.Join(data, ".install-lock-"+pluginVersion(t), "pid"), fmt.Sprintln(dead.Process.Pid))
	if out, err := exec.Command("mount", "-o", "remount,ro", mnt).CombinedOutput(); err != nil {
		t.Fatalf("remounting read-only: %v: %s", err, out)
	}
	work := t.TempDir()
	env := launchEnv(root, data, work, toolDir(t))
	rounds := lockWaitRounds(t, env)
	for _, name := range []string{"cairn-session-start", "cairn-mcp"} {
		res := launchAs(t, root, env, work, name)
		lines := strings.Split(strings.TrimRight(res.stderr, "\n"), "\n")
		if n := rounds(); res.code != launchFailCode(name) || len(lines) != 1 || !strings.Contains(lines[0], data+" cannot be written") || n != 0 {
			t.Errorf("%s after %d rounds of waiting on the lock: %+v, want exit %d at once and one line saying %s cannot be written", name, n, res, launchFailCode(name), data)
		}
	}
}

// A start killed between taking the lock and writing its pid into it (or while writing it)
// leaves a lock that names no holder. Its holder writes the pid at once, so such a lock more
// than a minute old is dead: it is broken at once, not left to hold every start off for the
// ten minutes after which a lock is old. A younger one is still waited on (its holder may be
// about to write).
func TestLaunchBreaksAnOldLockThatNamesNoHolder(t *testing.T) {
	skipOnWindows(t)
	for _, tc := range []struct {
		name string
		pid  bool
		age  time.Duration
	}{{"no pid", false, 2 * time.Minute}, {"empty pid", true, 2 * time.Minute}, {"young", false, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			root := copyPlugin(t, launcherFiles...)
			work := t.TempDir()
			data := filepath.Join(work, "data")
			lock := filepath.Join(data, ".install-lock-"+pluginVersion(t))
			if err := os.MkdirAll(lock, 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.pid {
				writeFile(t, filepath.Join(lock, "pid"), "")
			}
			when := time.Now().Add(-tc.age)
			if err := os.Chtimes(lock, when, when); err != nil {
				t.Fatal(err)
			}
			tools := toolDir(t)
			fastClock(t, tools) // the hook's wait on a young lock ends by its clock
			env := launchEnv(root, data, work, tools)
			rounds := lockWaitRounds(t, env)
			res := runShell(t, hookCommand(t, "SessionStart"), env, work, `{"session_id":"s"}`)
			n := rounds()
			if tc.age == 0 {
				if !strings.Contains(res.stdout, "being installed by another start") || n == 0 {
					t.Errorf("SessionStart with a young lock naming no holder = %+v after %d rounds of waiting on the lock, want the line saying another start is installing", res, n)
				}
				return
			}
			if res.code != 0 || !strings.Contains(res.stderr, "could not be installed (downloading") || n != 0 {
				t.Errorf("SessionStart with an old lock naming no holder = %+v after %d rounds of waiting on the lock, want its own download tried at once", res, n)
			}
		})
	}
}

// A holder that cannot tell start times beats its lock's alive file while its lock names it.
// A beat checked the lock's pid, then wrote into whatever directory had the lock's path by
// then: a lock made there anew by another start (here one whose pid is the old holder's, as
// when a pid is given again or the MCP server's shell takes the lock for its build after its
// download) got the old holder's beats, and a dead start's lock looked alive for up to a
// minute more. The beats go to the holder's own lock only, wherever it is.
func TestLaunchBeatTouchesOnlyItsOwnLock(t *testing.T) {
	skipOnWindows(t)
	wrap := noStartTimes(t)
	tools := toolDir(t)
	beat := heldBeats(t, tools)
	st := stalledStartWith(t, tools, wrap...)
	defer func() { st.cmd.Process.Kill(); <-st.done }()
	lock := filepath.Join(st.data, ".install-lock-"+pluginVersion(t))
	beat(false) // the holder's beat waits between two beats
	pid, err := os.ReadFile(filepath.Join(lock, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(lock, "alive")); err != nil {
		t.Fatalf("the holder without a start time does not beat: %v", err)
	}
	// The old lock moved aside, where its holder's beats still reach it.
	moved := lock + ".old"
	if err := os.Rename(lock, moved); err != nil {
		t.Fatal(err)
	}
	before := time.Now().Add(-time.Second)
	if err := os.Chtimes(filepath.Join(moved, "alive"), before, before); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(lock, "pid"), string(pid))
	beat(true)
	if _, err := os.Stat(filepath.Join(lock, "alive")); err == nil {
		t.Errorf("the old holder's heartbeat wrote alive into the new lock at %s", lock)
	}
	if fi, err := os.Stat(filepath.Join(moved, "alive")); err != nil || !fi.ModTime().After(before) {
		t.Errorf("the holder's heartbeat stopped beating its own lock (%v)", err)
	}
}

// heldBeats wraps sleep in tools (a toolDir) so that the install lock's heartbeat (cairn_beat,
// whose 10 s between beats are a "sleep 10") waits for the test instead: beat(false) returns
// once the heartbeat waits before its next beat; beat(true) lets one beat go and returns once
// it is done (the heartbeat waits again). A heartbeat that stopped fails the test.
func heldBeats(t *testing.T, tools string) (beat func(one bool)) {
	t.Helper()
	dir := t.TempDir()
	calls, next := filepath.Join(dir, "calls"), filepath.Join(dir, "next")
	wrapTool(t, tools, "sleep", func(real string) string {
		// A minute at most, so that a heartbeat left waiting when the test ends goes too.
		return "if [ \"$*\" = 10 ]; then\n\techo >>" + calls + "\n\tn=0\n\tuntil rm " + next + " 2>/dev/null; do\n" +
			"\t\t[ $n -lt 6000 ] || exit 0\n\t\t" + real + " 0.01\n\t\tn=$((n + 1))\n\tdone\n\texit 0\nfi\nexec " + real + " \"$@\"\n"
	})
	waits := 0
	return func(one bool) {
		t.Helper()
		if one {
			writeFile(t, next, "")
		}
		waits++
		for end := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			b, _ := os.ReadFile(calls)
			if strings.Count(string(b), "\n") >= waits {
				return
			}
			if time.Now().After(end) {
				t.Fatalf("the holder's heartbeat did not come back to wait for its next beat (%d waits seen, want %d)", strings.Count(string(b), "\n"), waits)
			}
		}
	}
}

// lockWaitRounds wraps the sleep and mkdir on env's PATH (a toolDir), and returns how many
// rounds (sleep 0.1) a start has slept since, before it took the install lock (or in all,
// if it never took it): a start that does a thing at once, not after waiting on a lock,
// slept none. The rounds it sleeps after, waiting on its own download, do not count.
func lockWaitRounds(t testing.TB, env []string) func() int {
	t.Helper()
	var tools string
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			tools = p
		}
	}
	calls := filepath.Join(t.TempDir(), "calls")
	wrapTool(t, tools, "sleep", func(real string) string {
		return "echo \"$*\" >>" + calls + "\nexec " + real + " \"$@\"\n"
	})
	wrapTool(t, tools, "mkdir", func(real string) string {
		return real + " \"$@\" || exit\ncase $1 in */.install-lock-*.break) ;; */.install-lock-*) echo taken >>" + calls + " ;; esac\n"
	})
	return func() int {
		b, _ := os.ReadFile(calls)
		before, _, _ := strings.Cut(string(b), "taken\n")
		n := 0
		for _, args := range strings.Split(before, "\n") {
			if args == "0.1" {
				n++
			}
		}
		return n
	}
}

// The MCP server (or the CLI) that waited its whole minute on another start's install, with
// no Go on PATH, said the binaries "could not be installed (another start is still installing
// them)" and to install Go: a step that does not help, while the other start's install may
// well succeed. With Go, it waited two minutes more, then said "the binaries are not built
// yet; see build-V.log", a log no build had written (the other start was downloading). Either
// way it says another start is installing them, and to start a new session once that is done.
func TestLaunchMCPWaitedOnAnotherStart(t *testing.T) {
	skipOnWindows(t)
	if runtime.GOOS != "linux" {
		t.Skip("the holder's start time is read from /proc")
	}
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	_, fields, _ := strings.Cut(string(stat), ") ")
	start := strings.Fields(fields)[19]
	for _, withGo := range []bool{false, true} {
		t.Run(fmt.Sprintf("go=%v", withGo), func(t *testing.T) {
			root := copyPlugin(t, launcherFiles...)
			work := t.TempDir()
			data := filepath.Join(work, "data")
			lock := filepath.Join(data, ".install-lock-"+pluginVersion(t))
			writeFile(t, filepath.Join(lock, "pid"), fmt.Sprintln(os.Getpid()))
			writeFile(t, filepath.Join(lock, "start"), start+"\n")
			tools := toolDir(t)
			calls := filepath.Join(work, "go-calls")
			if withGo {
				calls = goThatFails(t, tools, work)
			}
			// The rounds of waiting are counted, not timed: each sleep returns at once, as true,
			// which starts no shell at each of the rounds as a script would.
			noop, err := exec.LookPath("true")
			if err != nil {
				t.Skipf("host tool true is missing: %v", err)
			}
			if err := os.Remove(filepath.Join(tools, "sleep")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(noop, filepath.Join(tools, "sleep")); err != nil {
				t.Fatal(err)
			}
			env := launchEnv(root, data, work, tools)
			res := runLaunch(t, root, env, initializeLine, "cairn-mcp")
			want := "cairn: the binaries for version " + pluginVersion(t) + " are being installed by another start (first use only): start a new session once that is done.\n"
			if res.code != launchFailCode("cairn-mcp") || res.stderr != want || strings.Contains(res.stderr, "Go") {
				t.Errorf("cairn-mcp after waiting on another start's install = %+v, want exit 1 and %q", res, want)
			}
			if _, err := os.Stat(filepath.Join(lock, "pid")); err != nil {
				t.Errorf("the live holder's lock was broken (%v)", err)
			}
			if b, err := os.ReadFile(calls); err == nil {
				t.Errorf("go ran while another start held the lock: %s", b)
			}
		})
	}
}

// Starts that take the install lock, or the lock for breaking a dead one, and let it go at
// once (a set found installed, a failure read from .download-failed-V, a dead lock broken) can
// each do so between another start's failed mkdir and its look for that lock: twice in a row,
// and that start took a writable data dir for one that cannot be written, and said its disk
// was full. Here mkdir fails twice as if another held the lock and let it go in between: the
// start takes it on its third try and downloads.
func TestLaunchLockLetGoTwiceInARow(t *testing.T) {
	skipOnWindows(t)
	for _, tc := range []struct{ name, lock, dead string }{
		{"install lock", "*/.install-lock-*[0-9]", ""},
		{"break lock", "*/.install-lock-*.break", "999999999"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := copyPlugin(t, launcherFiles...)
			work := t.TempDir()
			data := filepath.Join(work, "data")
			if tc.dead != "" {
				writeFile(t, filepath.Join(data, ".install-lock-"+pluginVersion(t), "pid"), tc.dead+"\n")
			}
			tools := toolDir(t)
			tries := t.TempDir()
			wrapTool(t, tools, "mkdir", func(real string) string {
				return "case $1 in " + tc.lock + ") for n in 1 2; do\n" +
					"\tif [ ! -e " + tries + "/$n ]; then : >" + tries + "/$n; echo \"mkdir: cannot create directory '$1': File exists\" >&2; exit 1; fi\n" +
					"done ;; esac\nexec " + real + " \"$@\"\n"
			})
			env := launchEnv(root, data, work, tools)
			res := runLaunch(t, root, env, initializeLine, "cairn-mcp")
			if res.code != launchFailCode("cairn-mcp") || !strings.Contains(res.stderr, "could not be installed (downloading") || strings.Contains(res.stderr, "disk") {
				t.Errorf("cairn-mcp after a lock let go twice = %+v, want exit 1 and the line saying its own download failed", res)
			}
		})
	}
}
