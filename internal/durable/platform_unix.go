//go:build !windows

package durable

import (
	"io/fs"
	"os"
	"syscall"
)

// readFlag keeps an open of a planted FIFO from blocking; regular files ignore it.
const readFlag = syscall.O_NONBLOCK

// dirFlag makes an open fail at once on anything but a directory.
const dirFlag = syscall.O_DIRECTORY

// cloexec keeps descriptors out of child processes.
const cloexec = syscall.O_CLOEXEC

// noFollow makes the final path component refuse to be a symlink.
const noFollow = syscall.O_NOFOLLOW | syscall.O_CLOEXEC

// appendFlag: appends use O_APPEND, so even a writer that ignores our lock (a seed's
// "echo >>") cannot be overwritten.
const appendFlag = os.O_APPEND

// linkCount reports the file's hard link count.
func linkCount(fi fs.FileInfo) (uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Nlink), true
}

func rename(root *os.Root, oldname, newname string) error { return root.Rename(oldname, newname) }

func syncDirIn(root *os.Root, name string) error {
	return syncOpened(root.OpenFile(name, os.O_RDONLY|dirFlag|readFlag|cloexec, 0))
}
