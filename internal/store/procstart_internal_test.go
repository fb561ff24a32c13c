package store

import "testing"

// Windows tells a process's start as a FILETIME (ProcessStart, procstart_windows.go): its two
// halves make one count, and an unset one is no start (a reused pid would then look the same
// process).
func TestFileTimeStart(t *testing.T) {
	for _, tc := range []struct {
		high, low uint32
		want      uint64
		ok        bool
	}{
		{0, 0, 0, false},
		{0, 1, 1, true},
		{1, 0, 1 << 32, true},
		{0x01db2f3c, 0x9a6b1c00, 0x01db2f3c9a6b1c00, true},
		{0xffffffff, 0xffffffff, 1<<64 - 1, true},
	} {
		if got, ok := fileTimeStart(tc.high, tc.low); got != tc.want || ok != tc.ok {
			t.Errorf("fileTimeStart(%#x, %#x) = %#x, %v; want %#x, %v", tc.high, tc.low, got, ok, tc.want, tc.ok)
		}
	}
}
