package store

import win "golang.org/x/sys/windows"

// ProcessStart is when the process of pid started, in 100-nanosecond intervals since 1601
// (GetProcessTimes' creation time): the same pid with another start is another process. A
// process that cannot be opened (gone, or another user's and protected) cannot tell.
func ProcessStart(pid int) (uint64, bool) {
	if pid <= 0 || uint64(pid) > 1<<32-1 {
		return 0, false
	}
	h, err := win.OpenProcess(win.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return 0, false
	}
	defer win.CloseHandle(h)
	var created, exited, kernel, user win.Filetime
	if err := win.GetProcessTimes(h, &created, &exited, &kernel, &user); err != nil {
		return 0, false
	}
	return fileTimeStart(created.HighDateTime, created.LowDateTime)
}
