package gitremote

import (
	"runtime"
	"syscall"
)

// terminateWithParent has the kernel terminate git when the Cairn process that started it dies
// (cairn-mcp killed with its client, kill -9 on cairn sync): in a session of its own (detach),
// git would otherwise run on, against a remote that does not answer for good. The kernel sends
// the signal as the starting thread ends, not the process, so the calling goroutine keeps that
// thread until unpin, called once git has been waited for.
func terminateWithParent(a *syscall.SysProcAttr) (unpin func()) {
	a.Pdeathsig = syscall.SIGTERM
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}
