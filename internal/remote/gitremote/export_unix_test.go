//go:build unix

package gitremote

import (
	"syscall"
	"testing"
)

// OnSignalGroup calls f with each signal a cancelled git's process group is sent, before it
// is sent, for the test t.
func OnSignalGroup(t *testing.T, f func(pgid int, sig syscall.Signal)) {
	was := signalGroup
	signalGroup = func(pgid int, sig syscall.Signal) error {
		f(pgid, sig)
		return was(pgid, sig)
	}
	t.Cleanup(func() { signalGroup = was })
}
