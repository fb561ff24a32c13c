package engine

import (
	"os"

	"golang.org/x/sys/unix"
)

// isAncestor reports whether pid is an ancestor of this process, as the kernel's process
// table says.
func isAncestor(pid int) bool {
	for p, hops := os.Getppid(), 0; p > 1 && hops < maxAncestors; hops++ {
		if p == pid {
			return true
		}
		k, err := unix.SysctlKinfoProc("kern.proc.pid", p)
		if err != nil {
			return true // unknown: taken as before, on its liveness alone
		}
		p = int(k.Eproc.Ppid)
	}
	return false
}
