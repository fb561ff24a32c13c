package plugintest

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/hooktest"
)

// A hook hands its install to a process of its own (hooks/install, cairn_handoff), which then
// releases the lock. The hook wrote the new holder's pid into the lock after starting it: where
// the hook was held up that long (a loaded machine), the install had finished and let go, and
// another start taken the lock anew, whose pid the hook then replaced with the finished
// installer's. Its lock named a dead process, for any start to break while it installed (here
// on a loaded machine the hook's write came after the install most runs, into no lock). Here
// the order is made: a FIFO in place of the lock's start file holds whoever opens it for a
// write until a reader comes, the installer's sha256sum waits for a gate, and its rm of the
// lock another (a process exiting would have the hook's open start again, where the lock is
// gone). The lock another start takes after the install still names it.
func TestLaunchHandoffLeavesTheNextLockAlone(t *testing.T) {
	root, archive, data := releasedPlugin(t)
	work, project, pdata := launchSite(t)
	lock := filepath.Join(pdata, ".install-lock-"+pluginVersion(t))
	fifo, gate, rmGate := filepath.Join(work, "start-fifo"), filepath.Join(work, "gate"), filepath.Join(work, "rm-gate")
	for _, g := range []string{gate, rmGate} {
		if err := syscall.Mkfifo(g, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// Whatever waits at a FIFO when the test ends goes on (O_RDWR is both ends on Linux).
	t.Cleanup(func() {
		for _, f := range []string{gate, rmGate, fifo} {
			if f, err := os.OpenFile(f, os.O_RDWR, 0); err == nil {
				f.Close()
			}
		}
	})
	tools := toolDir(t)
	wrapTool(t, tools, "sha256sum", func(real string) string { return ": <" + gate + "\nexec " + real + " \"$@\"\n" })
	wrapTool(t, tools, "rm", func(real string) string {
		return real + " \"$@\"\nrc=$?\nfor a; do if [ \"$a\" = " + lock + " ]; then : <" + rmGate + "; fi; done\nexit $rc\n"
	})
	// The hook's waits for the installer (cairn_handoff: sleep 0.1 between looks) are marked
	// with the pid of the shell that waits: the hook itself, past the point where it wrote into
	// the lock after the handoff.
	polled := filepath.Join(work, "polled")
	wrapTool(t, tools, "sleep", func(real string) string {
		return "if [ \"$1\" = 0.1 ]; then echo $PPID >>" + polled + "; fi\nexec " + real + " \"$@\"\n"
	})
	var once sync.Once
	asked := make(chan struct{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Asked while the hook holds the lock.
		once.Do(func() {
			if err := os.Remove(filepath.Join(lock, "start")); err != nil {
				t.Error(err)
			}
			if err := syscall.Mkfifo(filepath.Join(lock, "start"), 0o644); err != nil {
				t.Error(err)
			}
			if err := os.Link(filepath.Join(lock, "start"), fifo); err != nil {
				t.Error(err)
			}
			close(asked)
		})
		if strings.HasSuffix(r.URL.Path, "/"+archive) {
			w.Write(data)
			return
		}
		http.NotFound(w, r)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	env := launchEnv(root, pdata, filepath.Join(work, "home"), tools, "CAIRN_DOWNLOAD_URL=http://"+ln.Addr().String()+"/releases",
		"CLAUDE_PROJECT_DIR="+project, "CAIRN_MEMORY_DIR="+filepath.Join(work, "memory"), "CLAUDE_PID="+hooktest.ClaudePID)
	hook := exec.Command("/bin/sh", "-c", hookCommand(t, "SessionStart"))
	hook.Env, hook.Dir = env, project
	hook.Stdin = strings.NewReader(`{"session_id":"s-1","hook_event_name":"SessionStart","source":"startup"}`)
	var stdout, stderr strings.Builder
	hook.Stdout, hook.Stderr = &stdout, &stderr
	if err := hook.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- hook.Wait() }()
	defer func() {
		if hook.ProcessState == nil {
			hook.Process.Kill()
			<-done
		}
	}()
	wchan := func() string { b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", hook.Process.Pid)); return string(b) }
	select {
	case <-asked:
	case err := <-done:
		t.Fatalf("the hook ended before downloading: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	case <-time.After(time.Minute):
		t.Fatal("the hook never asked for the archive")
	}
	// The hook waits for its download, where a kernel that tells says so (a process running
	// says 0). A loaded machine may keep it running for seconds: only a kernel that says 0 for
	// longer than that is taken for one that does not tell.
	for end := time.Now().Add(10 * time.Second); wchan() == "0" || wchan() == ""; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Skip("this kernel does not say where a process waits (/proc/PID/wchan)")
		}
	}
	// open opens name as flag says, and closes it: a FIFO's other end goes on.
	open := func(name string, flag int) {
		f, err := os.OpenFile(name, flag, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	// release lets writes into the lock's start go on, this one and any later.
	release := func() {
		f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
	}
	// The hook waits at the FIFO (a write into the lock after the handoff), or waits for the
	// installer without having written (its clock would let it go only after 6 s), or has
	// ended.
	hookPolled := func() bool {
		b, _ := os.ReadFile(polled)
		return slices.Contains(strings.Fields(string(b)), fmt.Sprint(hook.Process.Pid))
	}
	var hookErr error
	ended, released := false, false
	for end := time.Now().Add(time.Minute); wchan() != "wait_for_partner"; time.Sleep(10 * time.Millisecond) {
		select {
		case hookErr = <-done:
			ended = true
		default:
		}
		if ended || hookPolled() {
			release()
			released = true
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the hook neither ended nor wrote into the lock\nstdout: %s\nstderr: %s", stdout.String(), stderr.String())
		}
	}
	open(gate, os.O_WRONLY)
	for end := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(lock); os.IsNotExist(err) {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the install never let go of its lock")
		}
	}
	// Another start takes the lock.
	writeFile(t, filepath.Join(lock, "pid"), fmt.Sprintln(os.Getpid()))
	if !released {
		release()
	}
	open(rmGate, os.O_WRONLY)
	if !ended {
		hookErr = <-done
	}
	if hookErr != nil {
		t.Errorf("the hook: %v\nstdout: %s\nstderr: %s", hookErr, stdout.String(), stderr.String())
	}
	if b, err := os.ReadFile(filepath.Join(lock, "pid")); err != nil || strings.TrimSpace(string(b)) != fmt.Sprint(os.Getpid()) {
		t.Errorf("the lock another start took names %q (%v), want that start's pid %d", b, err, os.Getpid())
	}
}
