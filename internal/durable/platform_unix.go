//go:build !windows

package durable

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
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

// typedEntries lists the directory f, opened in a Root at abs, with the types the directory
// gives (d_type). A File opened in a Root stats every entry in ReadDir; one made from a copy of
// its descriptor does not (it stats, by abs, only an entry whose type the file system does not
// keep).
func typedEntries(f *os.File, abs string) ([]fs.DirEntry, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: abs, Err: err}
	}
	g := os.NewFile(uintptr(fd), abs)
	defer g.Close()
	return g.ReadDir(-1)
}
