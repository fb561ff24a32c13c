//go:build !linux

package durabletest

import "time"

// Watched is false: without inotify (see durable's watchRelease) a waiter shows nothing
// outside its process.
func Watched(string) bool { return false }

// WaitLockWaiter gives a call half a second to reach its wait for a lock file matching the
// glob pattern, as nothing shows the wait here. It tells whether the call ended first instead
// (done, which gets the call's error back).
func WaitLockWaiter(_ string, done chan error) (ended bool) {
	select {
	case err := <-done:
		done <- err
		return true
	case <-time.After(500 * time.Millisecond):
		return false
	}
}
