//go:build !linux

package engine_test

import "time"

// waitLockWaiter gives a call half a second to reach its wait for a lock file in dir: without
// inotify (see durable's watchRelease) a waiter shows nothing outside its process. It tells
// whether the call ended first instead (done, which gets the call's error back).
func waitLockWaiter(dir, glob string, done chan error) (ended bool) {
	select {
	case err := <-done:
		done <- err
		return true
	case <-time.After(500 * time.Millisecond):
		return false
	}
}
