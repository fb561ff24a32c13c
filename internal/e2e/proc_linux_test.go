package e2e

import "syscall"

// dieWithParent has the kernel kill the process when this test binary dies, however it dies.
// (The signal follows the thread that started the process; Go ends a thread only when a
// goroutine locked to it returns, which the harness never does.)
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
