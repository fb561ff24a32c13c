package store

import (
	"bytes"
	"os"
	"strconv"
)

// ProcessStart is when the process of pid started, in clock ticks after boot (/proc's stat,
// field 22): the same pid with another start is another process.
func ProcessStart(pid int) (uint64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	// The fields after the parenthesised command name (which may itself hold ") ") start
	// with the state, field 3.
	end := bytes.LastIndexByte(b, ')')
	if err != nil || end < 0 {
		return 0, false
	}
	f := bytes.Fields(b[end+1:])
	if len(f) < 20 {
		return 0, false
	}
	t, err := strconv.ParseUint(string(f[19]), 10, 64)
	return t, err == nil && t > 0
}
