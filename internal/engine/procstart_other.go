//go:build !linux && !darwin

package engine

// processStart cannot tell here: a running pid is taken as the client that recorded it.
func processStart(int) (uint64, bool) { return 0, false }
