package gitremote

import (
	"testing"
	"time"
)

// MirrorLock is the lock file, in the clone's git directory, that Cairn's syncs hold.
const MirrorLock = mirrorLock

// SetRefLockWait sets how long git waits for a ref's lock file, for the test t.
func SetRefLockWait(t *testing.T, d time.Duration) {
	was := refLockWait
	refLockWait = d
	t.Cleanup(func() { refLockWait = was })
}

// OnMirrorWait calls f as a sync starts waiting for the mirror lock, for the test t.
func OnMirrorWait(t *testing.T, f func()) {
	was := mirrorWaiting
	mirrorWaiting = f
	t.Cleanup(func() { mirrorWaiting = was })
}
