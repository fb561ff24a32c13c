//go:build unix && !linux

package e2e

import "syscall"

// dieWithParent does nothing where there is no parent-death signal: an interrupt still kills
// the groups (killGroupsOnSignal), a SIGKILL of the test binary does not.
func dieWithParent(*syscall.SysProcAttr) {}
