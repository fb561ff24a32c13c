//go:build !unix

package store

// canCheckPIDs is false where no cheap check tells a pid that is gone (Windows would need
// OpenProcess and an exit code for each): session records are not pruned there.
const canCheckPIDs = false

func processGone(int) bool { return false }
