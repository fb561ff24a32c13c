//go:build !linux && !darwin && !windows

package store

// ProcessStart cannot tell here: a running pid is taken as the client that recorded it.
func ProcessStart(int) (uint64, bool) { return 0, false }
