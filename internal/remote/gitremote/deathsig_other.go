//go:build unix && !linux

package gitremote

import "syscall"

// terminateWithParent does nothing where the kernel cannot signal a child as its parent dies.
func terminateWithParent(*syscall.SysProcAttr) (unpin func()) { return func() {} }
