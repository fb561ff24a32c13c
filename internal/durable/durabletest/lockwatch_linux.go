package durabletest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Watched tells whether an inotify instance of this process watches a file matching the glob
// pattern, as a durable lock waiter does from its first refusal on (/proc shows the watch).
func Watched(pattern string) bool {
	files, _ := filepath.Glob(pattern)
	var inos []string
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			inos = append(inos, fmt.Sprintf(" ino:%x ", fi.Sys().(*syscall.Stat_t).Ino))
		}
	}
	infos, _ := filepath.Glob("/proc/self/fdinfo/*")
	for _, f := range infos {
		b, _ := os.ReadFile(f)
		for line := range strings.Lines(string(b)) {
			for _, ino := range inos {
				if strings.HasPrefix(line, "inotify ") && strings.Contains(line, ino) {
					return true
				}
			}
		}
	}
	return false
}

// WaitLockWaiter waits until a call of this process waits for a lock file matching the glob
// pattern (see Watched). It tells whether the call ended first instead (done, which gets the
// call's error back).
func WaitLockWaiter(pattern string, done chan error) (ended bool) {
	for !Watched(pattern) {
		select {
		case err := <-done:
			done <- err
			return true
		case <-time.After(time.Millisecond):
		}
	}
	return false
}
