package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// waitLockWaiter waits until a call of this process waits for a lock file in dir matching
// glob, which it does from its first refusal on, watching the file with inotify (durable's
// watchRelease): /proc shows the watch. It tells whether the call ended first instead (done,
// which gets the call's error back).
func waitLockWaiter(dir, glob string, done chan error) (ended bool) {
	for !lockWaited(dir, glob) {
		select {
		case err := <-done:
			done <- err
			return true
		case <-time.After(time.Millisecond):
		}
	}
	return false
}

// lockWaited tells whether an inotify instance of this process watches a file in dir matching
// glob.
func lockWaited(dir, glob string) bool {
	locks, _ := filepath.Glob(filepath.Join(dir, glob))
	var inos []string
	for _, l := range locks {
		if fi, err := os.Stat(l); err == nil {
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
