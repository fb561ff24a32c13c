package store

import "golang.org/x/sys/unix"

// ProcessStart is when the process of pid started, in microseconds since the epoch, as the
// kernel's process table says: the same pid with another start is another process.
func ProcessStart(pid int) (uint64, bool) {
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || k.Proc.P_starttime.Sec <= 0 {
		return 0, false
	}
	return uint64(k.Proc.P_starttime.Sec)*1e6 + uint64(k.Proc.P_starttime.Usec), true
}
