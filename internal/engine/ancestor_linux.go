package engine

import (
	"bytes"
	"os"
	"strconv"
)

// isAncestor reports whether pid is an ancestor of this process, as /proc's parent pids say.
func isAncestor(pid int) bool {
	for p, hops := os.Getppid(), 0; p > 1 && hops < maxAncestors; hops++ {
		if p == pid {
			return true
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat")
		// The parent pid is the field after the state, which follows the parenthesised
		// command name (which may itself hold ") ").
		end := bytes.LastIndexByte(b, ')')
		if err != nil || end < 0 {
			return true // unknown: taken as before, on its liveness alone
		}
		f := bytes.Fields(b[end+1:])
		if len(f) < 2 {
			return true
		}
		if p, err = strconv.Atoi(string(f[1])); err != nil {
			return true
		}
	}
	return false
}
