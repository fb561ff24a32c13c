package store

// fileTimeStart is a Windows FILETIME's two halves as one count of 100-nanosecond intervals
// (ProcessStart on Windows); zero, which no process that ran has, is not a start.
func fileTimeStart(high, low uint32) (uint64, bool) {
	t := uint64(high)<<32 | uint64(low)
	return t, t > 0
}
