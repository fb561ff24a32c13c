//go:build !linux && !darwin

package durable

// NoFreeInodes is false where no statfs tells free inodes (see inodes_statfs.go).
func NoFreeInodes(string) bool { return false }

// NoFreeSpace is false where no statfs tells free blocks (see inodes_statfs.go).
func NoFreeSpace(string) bool { return false }
