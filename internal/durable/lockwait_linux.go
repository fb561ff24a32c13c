package durable

import (
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// watchRelease watches the lock file f with inotify, so that a waiter wakes when the holder
// lets go, not at its next backoff step: the holder truncates the file when it unlocks and
// closes it after, and a holder that dies has its descriptor closed by the kernel, so every
// release is followed by an event (a close, even by a holder that opened the file read-only).
// Where inotify is not to be had it backs off instead.
func watchRelease(f *os.File) releaseWait {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return newBackoff()
	}
	// The open file itself, through /proc, whatever its name is by now.
	if _, err := unix.InotifyAddWatch(fd, "/proc/self/fd/"+strconv.Itoa(int(f.Fd())), unix.IN_MODIFY|unix.IN_CLOSE); err != nil {
		unix.Close(fd)
		return newBackoff()
	}
	return &inotifyWait{fd: fd}
}

type inotifyWait struct {
	fd  int
	buf [1024]byte
}

// maxEventWait bounds one wait for an event, in case one is missed: the lock is tried again
// at least this often.
var maxEventWait = 100 * time.Millisecond

func (w *inotifyWait) wait(max time.Duration) {
	ms := int(min(max, maxEventWait).Milliseconds()) + 1
	_, _ = unix.Poll([]unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}, ms) // EINTR: try again
	// Drained, so that the next wait is for events after the next try.
	for {
		if n, err := unix.Read(w.fd, w.buf[:]); n <= 0 || err != nil {
			return
		}
	}
}

// close lets the waiter go on at once: closing an inotify instance waits out a kernel grace
// period (about 5 ms here), longer than most lock hand-overs.
func (w *inotifyWait) close() { go unix.Close(w.fd) }
