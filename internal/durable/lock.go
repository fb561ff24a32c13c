package durable

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Holder is what a lock holder writes into its lock file, so a process that gives up waiting
// can say who holds the lock.
type Holder struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
	// Host is the holder's machine (os.Hostname), for a directory shared between machines;
	// absent in older lock files and where the name is unknown.
	Host string `json:"host,omitempty"`
}

// Elsewhere is the machine h recorded when it is not this one, else "".
func (h *Holder) Elsewhere() string {
	if h.Host == hostname() {
		return ""
	}
	return h.Host
}

// hostname is this machine's name, for the holders it records (empty when unknown).
var hostname = sync.OnceValue(func() string {
	h, _ := os.Hostname()
	return printable(h)
})

// printable is s without control characters, for a holder's names.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
}

// WaitBefore is wait cut to end by until, and never below 0 (the lock tried once): the wait
// for one of several locks taken under one deadline. Zero until leaves wait as it is.
func WaitBefore(wait time.Duration, until time.Time) time.Duration {
	if until.IsZero() {
		return wait
	}
	return max(0, min(wait, time.Until(until)))
}

// LockTimeoutError is returned when a lock stays held for longer than the caller would wait.
type LockTimeoutError struct {
	Path   string // the lock file
	Waited time.Duration
	Holder *Holder // nil when the holder has not said who it is
	// Stopped is true when the holder is a stopped process of this machine (SIGSTOP, Ctrl-Z),
	// which holds the lock until it is resumed.
	Stopped bool
}

func (e *LockTimeoutError) Error() string { return e.GaveUp() + "; " + e.Step() }

// Step is the lock's next step: resume a stopped holder, else try again once it has finished.
func (e *LockTimeoutError) Step() string {
	if r := e.Resume(); r != "" {
		return r + ", then try again"
	}
	return "try again once that process has finished"
}

// Resume is the step that frees the lock of a stopped holder, which holds it until it is
// resumed: for a caller that says its own "try again" (none for a holder that is running).
func (e *LockTimeoutError) Resume() string {
	if !e.Stopped {
		return ""
	}
	return fmt.Sprintf("resume it (fg in its shell, or kill -CONT %d)", e.Holder.PID)
}

// GaveUp is Error without its next step, for a caller that says its own: who holds the lock,
// and that nothing changed. A stopped holder is not waited for (waiting frees nothing), so
// no wait is said.
func (e *LockTimeoutError) GaveUp() string {
	if e.Stopped {
		return fmt.Sprintf("%s is locked %s, which holds it until it is resumed; nothing changed", e.Path, e.Who())
	}
	return fmt.Sprintf("%s is locked %s; gave up after %s with nothing changed", e.Path, e.Who(), e.WaitedSaid())
}

// WaitedSaid is how long the wait was, as a person reads it: a second or more to a tenth of
// a second (a timer's overshoot made 3 s "3.001s"), a shorter wait to the millisecond.
func (e *LockTimeoutError) WaitedSaid() string {
	if e.Waited >= time.Second {
		return e.Waited.Round(100 * time.Millisecond).String()
	}
	return e.Waited.Round(time.Millisecond).String()
}

// Who says who holds the lock: "by pid N (COMMAND) since TIME" ("(COMMAND, stopped)" for a
// stopped holder, "on HOST" for another machine's), or that it did not say.
func (e *LockTimeoutError) Who() string {
	if h := e.Holder; h != nil {
		cmd, on := h.Command, ""
		if e.Stopped {
			cmd += ", stopped"
		}
		if host := h.Elsewhere(); host != "" {
			on = " on " + host
		}
		return fmt.Sprintf("by pid %d (%s)%s since %s", h.PID, cmd, on, h.Since.UTC().Format(time.RFC3339))
	}
	return "by a process that did not record itself"
}

// StoppedHolder is the refusal of lock name in dir when a stopped process holds it (Ctrl-Z on
// a Cairn process), which keeps every writer out until it is resumed; else nil. The lock is
// tried once, and only where its file is: none is made. For cairn doctor.
func StoppedHolder(dir, name string) *LockTimeoutError {
	d, err := OpenDir(dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	if fi, err := d.Lstat(name); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	unlock, err := d.Lock(name, 0)
	if err == nil {
		_ = unlock()
	}
	if te, ok := errors.AsType[*LockTimeoutError](err); ok && te.Stopped {
		return te
	}
	return nil
}

func lockIn(d *Dir, name string, wait time.Duration) (func() error, error) {
	start := time.Now()
	for {
		osf, err := lockFile(d, name, start, wait)
		if err != nil {
			return nil, err
		}
		// The name must still lead to the file locked: one removed while this waited (cairn
		// uninstall removes the memory directory's lock file under its lock) is no lock, as
		// the next locker makes a new file there. Then the new file is locked.
		st, serr := osf.Stat()
		fi, lerr := d.Lstat(name)
		if serr != nil || lerr == nil && sameFile(fi, st) || lerr != nil && !errors.Is(lerr, fs.ErrNotExist) {
			writeHolder(osf)
			return func() error {
				_ = osf.Truncate(0)
				uerr := unlock(osf)
				if cerr := osf.Close(); uerr == nil {
					uerr = cerr
				}
				return uerr
			}, nil
		}
		_ = unlock(osf)
		osf.Close()
	}
}

// lockFile opens the lock file name and locks it, waiting until start+wait at most.
func lockFile(d *Dir, name string, start time.Time, wait time.Duration) (*os.File, error) {
	f, _, err := openChecked(d, name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	osf := f.(*os.File)
	var held releaseWait // set up at the first refusal
	for {
		err := tryLock(osf)
		if err == nil {
			break
		}
		if !isWouldBlock(err) {
			closeWait(held)
			f.Close()
			return nil, &os.PathError{Op: "lock", Path: filepath.Join(d.path, name), Err: err}
		}
		// A holder that is stopped, before this came or while it waits, holds the lock until
		// it is resumed: waiting for it frees nothing.
		waited, h := time.Since(start), readHolder(osf)
		if stopped := h != nil && h.Elsewhere() == "" && holderStopped(h); stopped || waited >= wait {
			closeWait(held)
			f.Close()
			return nil, &LockTimeoutError{Path: filepath.Join(d.path, name), Waited: waited, Holder: h, Stopped: stopped}
		}
		if held == nil {
			held = watchRelease(osf)
			continue // try again now it is watched: a release just before is not missed
		}
		held.wait(wait - waited)
	}
	closeWait(held)
	return osf, nil
}

// releaseWait waits, up to a time, for the holder of a lock to release it.
type releaseWait interface {
	wait(max time.Duration)
	close()
}

func closeWait(w releaseWait) {
	if w != nil {
		w.close()
	}
}

// backoff waits a jittered, doubling while (0.5 ms to 50 ms), so that waiting processes do
// not wake in lockstep: where a release cannot be watched (see watchRelease).
type backoff struct{ delay time.Duration }

func newBackoff() *backoff { return &backoff{500 * time.Microsecond} }

func (b *backoff) wait(max time.Duration) {
	time.Sleep(min(max, b.delay/2+rand.N(b.delay/2+1)))
	b.delay = min(2*b.delay, 50*time.Millisecond)
}

func (b *backoff) close() {}

func writeHolder(f *os.File) {
	b, _ := json.Marshal(Holder{PID: os.Getpid(), Command: printable(filepath.Base(os.Args[0])), Since: time.Now().UTC(), Host: hostname()})
	// Best effort: the lock works without it, only the timeout message gets poorer.
	_ = f.Truncate(0)
	_, _ = f.WriteAt(b, 0)
}

// readHolder reads the record writeHolder wrote: 4 KiB holds the longest (a 255-byte file
// name and a host name, each byte written as a 6-byte JSON escape at worst).
func readHolder(f *os.File) *Holder {
	b := make([]byte, 4<<10)
	n, _ := f.ReadAt(b, 0)
	var h Holder
	if n == 0 || json.Unmarshal(b[:n], &h) != nil || h.PID == 0 {
		return nil
	}
	return &h
}
