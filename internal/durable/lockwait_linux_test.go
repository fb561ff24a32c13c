package durable_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/durable/durabletest"
)

// A waiter wakes when the holder lets go, whether it unlocks or is killed, not at a retry on a
// timer: with timed retries off, the waiter would otherwise wait out its whole deadline (and
// then take the lock at its last try), so it must have it well before.
func TestLockWaiterWakesOnRelease(t *testing.T) {
	defer durable.WaitEventsOnly()()
	d, dir := mustDir(t)
	const deadline = 30 * time.Second

	unlock, err := d.Lock(".lock-w", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		unlock2, err := d.Lock(".lock-w", deadline)
		if err == nil {
			err = unlock2()
		}
		got <- err
	}()
	waitWatched(t, filepath.Join(dir, ".lock-w"), true) // the waiter was refused and is waiting
	released := time.Now()
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil || time.Since(released) > deadline/2 {
		t.Fatalf("after an unlock: %v, %s later", err, time.Since(released))
	}

	// A holder killed with the lock held: the kernel closes its descriptor.
	holder := exec.Command(os.Args[0], "-test.run=^TestLockHolderProcess$")
	holder.Env = append(os.Environ(), "DURABLE_HOLD_LOCK="+dir)
	out, _ := holder.StdoutPipe()
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "held\n" {
		holder.Process.Kill()
		t.Fatalf("the holder said %q", line)
	}
	waitWatched(t, filepath.Join(dir, ".lock-w"), false) // the first waiter's watch is closed
	go func() {
		unlock2, err := d.Lock(".lock-w", deadline)
		if err == nil {
			err = unlock2()
		}
		got <- err
	}()
	waitWatched(t, filepath.Join(dir, ".lock-w"), true)
	released = time.Now()
	holder.Process.Kill()
	holder.Wait()
	if err := <-got; err != nil || time.Since(released) > deadline/2 {
		t.Fatalf("after the holder was killed: %v, %s later", err, time.Since(released))
	}
}

// TestLockHolderProcess is the holder TestLockWaiterWakesOnRelease kills: it takes the lock and
// waits to be killed.
func TestLockHolderProcess(t *testing.T) {
	dir := os.Getenv("DURABLE_HOLD_LOCK")
	if dir == "" {
		t.Skip("run by TestLockWaiterWakesOnRelease")
	}
	if host := os.Getenv("DURABLE_HOLD_HOST"); host != "" {
		durable.SetHostname(host)
	}
	if cmd := os.Getenv("DURABLE_HOLD_COMMAND"); cmd != "" {
		os.Args[0] = cmd // as a shell's exec -a names it
	}
	d, err := durable.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Lock(".lock-w", time.Second); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("held\n")
	time.Sleep(time.Minute)
}

// waitWatched waits until an inotify instance of this process watches path (want true), as a
// lock waiter does from its first refusal on, or until none does (want false).
func waitWatched(t *testing.T, path string, want bool) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		if durabletest.Watched(path) == want {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("%s watched: still %t after a minute", path, !want)
		}
	}
}

// A lock file removed under its lock (cairn uninstall removes the memory directory's) while a
// writer waits on it: the waiter must not take the lock of the removed file, since the next
// writer locks a new file at that name, and the two would hold "the" lock at once. It takes
// the lock of the file the name leads to, which then holds the next writer off.
func TestLockRemovedWhileWaitedFor(t *testing.T) {
	d, dir := mustDir(t)
	unlock, err := d.Lock(".lock-r", time.Second) // the remover
	if err != nil {
		t.Fatal(err)
	}
	type lockResult struct {
		unlock func() error
		err    error
	}
	got := make(chan lockResult, 1)
	go func() {
		u, err := d.Lock(".lock-r", 30*time.Second)
		got <- lockResult{u, err}
	}()
	waitWatched(t, filepath.Join(dir, ".lock-r"), true)
	if err := d.Remove(".lock-r"); err != nil {
		t.Fatal(err)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	w := <-got
	if w.err != nil {
		t.Fatal(w.err)
	}
	if u, err := d.Lock(".lock-r", 0); err == nil {
		u()
		t.Fatal("the next writer took the lock while the waiter held it: the waiter holds the removed file's")
	}
	if err := w.unlock(); err != nil {
		t.Fatal(err)
	}
	u, err := d.Lock(".lock-r", 0)
	if err != nil {
		t.Fatalf("after the waiter let go: %v", err)
	}
	u()
}

// A holder that is stopped (SIGSTOP, or Ctrl-Z on the session it runs in) never finishes: a
// waiter that gives up must say so and how to resume it, not to try again once it has
// finished, which would never come.
func TestLockHeldByAStoppedProcess(t *testing.T) {
	d, dir := mustDir(t)
	holder := startHolder(t, dir)
	pid := strconv.Itoa(holder.Process.Pid)
	for _, stopped := range []bool{true, false} {
		sig := syscall.SIGCONT
		if stopped {
			sig = syscall.SIGSTOP
		}
		if err := holder.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		durabletest.WaitStopped(t, holder.Process.Pid, stopped)
		_, err := d.Lock(".lock-w", 0)
		var te *durable.LockTimeoutError
		if !errors.As(err, &te) {
			t.Fatalf("stopped %t: got %v, want a LockTimeoutError", stopped, err)
		}
		msg := err.Error()
		says := strings.Contains(msg, "stopped") && strings.Contains(msg, "kill -CONT "+pid) && !strings.Contains(msg, "has finished")
		if says != stopped || !strings.Contains(te.Who(), "pid "+pid) || strings.Contains(te.Who(), "stopped") != stopped {
			t.Errorf("holder stopped %t: %q (who: %q)", stopped, msg, te.Who())
		}
	}
}

// A lock held from another machine over a shared directory (NFS and SMB carry flock locks):
// its pid means nothing here, and a person who finds no such process would take the lock for
// stale. A waiter that gives up names the machine; one of this machine's holders is named as
// before.
func TestLockHeldFromAnotherMachine(t *testing.T) {
	for _, host := range []string{"", "build-7.example"} {
		d, dir := mustDir(t)
		holder := startHolder(t, dir, "DURABLE_HOLD_HOST="+host)
		_, err := d.Lock(".lock-w", 0)
		var te *durable.LockTimeoutError
		if !errors.As(err, &te) {
			t.Fatalf("host %q: got %v, want a LockTimeoutError", host, err)
		}
		want := fmt.Sprintf("by pid %d (%s) since ", holder.Process.Pid, filepath.Base(os.Args[0]))
		if host != "" {
			want = fmt.Sprintf("by pid %d (%s) on %s since ", holder.Process.Pid, filepath.Base(os.Args[0]), host)
		}
		if !strings.HasPrefix(te.Who(), want) {
			t.Errorf("host %q: %q, want it to start %q", host, te.Who(), want)
		}
	}
}

// startHolder starts TestLockHolderProcess holding .lock-w in dir, with env added, and kills
// it when the test ends.
func startHolder(t *testing.T, dir string, env ...string) *exec.Cmd {
	holder := exec.Command(os.Args[0], "-test.run=^TestLockHolderProcess$")
	holder.Env = append(append(os.Environ(), "DURABLE_HOLD_LOCK="+dir), env...)
	out, _ := holder.StdoutPipe()
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "held\n" {
		t.Fatalf("the holder said %q", line)
	}
	return holder
}

// TestStoppedHolderIsNotWaitedFor: a waiter whose lock's holder is stopped (SIGSTOP, Ctrl-Z),
// before it came or while it waits, waited out all its time (a workflow write its seconds,
// a memory write or uninstall its own) to say at the end to resume it; it says so at once.
func TestStoppedHolderIsNotWaitedFor(t *testing.T) {
	const wait = 20 * time.Second
	for _, before := range []bool{true, false} {
		d, dir := mustDir(t)
		holder := startHolder(t, dir)
		stop := func() {
			if err := holder.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Error(err)
			}
			durabletest.WaitStopped(t, holder.Process.Pid, true)
		}
		if before {
			stop()
		} else {
			go func() { waitWatched(t, filepath.Join(dir, ".lock-w"), true); stop() }()
		}
		start := time.Now()
		_, err := d.Lock(".lock-w", wait)
		var te *durable.LockTimeoutError
		if !errors.As(err, &te) || !te.Stopped || time.Since(start) > wait/4 {
			t.Errorf("stopped before the wait %t: %v after %s, want at once that the holder is stopped", before, err, time.Since(start))
		}
	}
}

// TestTracedHolderIsNotStopped: a holder under strace or gdb stops for its tracer at each
// syscall ('t' in /proc, tracing stop) and goes on: a waiter that came at such a moment gave
// up at once, saying to resume it with kill -CONT, which does nothing to a traced process.
// Only a job-control stop ('T') holds the lock until resumed; a traced holder is waited for.
func TestTracedHolderIsNotStopped(t *testing.T) {
	d, dir := mustDir(t)
	holder := startHolder(t, dir)
	pid := holder.Process.Pid
	runtime.LockOSThread() // ptrace requests must come from the tracing thread
	defer runtime.UnlockOSThread()
	if err := syscall.PtraceAttach(pid); err != nil {
		t.Skipf("cannot trace a child here: %v", err)
	}
	durabletest.WaitProcState(t, pid, "", "t", nil)
	defer syscall.PtraceDetach(pid)
	_, err := d.Lock(".lock-w", 50*time.Millisecond)
	var te *durable.LockTimeoutError
	if !errors.As(err, &te) || te.Stopped || strings.Contains(err.Error(), "kill -CONT") {
		t.Errorf("a traced holder: %v, want a timeout that does not say it is stopped", err)
	}
}

// TestLongHolderCommandIsRead: a holder whose command name is long (a file name may be 255
// bytes, and JSON writes each of <, > and & in 6) recorded more than the 512 bytes a waiter
// read of it, and a waiter that gave up said it was held "by a process that did not record
// itself". The whole record is read.
func TestLongHolderCommandIsRead(t *testing.T) {
	host := strings.Repeat("h", 64)
	for _, cmd := range []string{strings.Repeat("a", 255), strings.Repeat("<&>", 85)} {
		d, dir := mustDir(t)
		holder := startHolder(t, dir, "DURABLE_HOLD_COMMAND=/usr/local/bin/"+cmd, "DURABLE_HOLD_HOST="+host)
		_, err := d.Lock(".lock-w", 0)
		var te *durable.LockTimeoutError
		want := fmt.Sprintf("by pid %d (%s) on %s since ", holder.Process.Pid, cmd, host)
		if !errors.As(err, &te) || !strings.HasPrefix(te.Who(), want) {
			t.Errorf("command of %d bytes: %v, want it held %q", len(cmd), err, want)
		}
	}
}
