package durable

import (
	"io"
	"io/fs"
	"os"
)

// ReadPath reads a file Cairn did not just create, by path, outside any state directory
// (settings, MEMORY.md, definitions, WORKFLOW-STATUS.yaml, git's pointer files). It never
// blocks on open: the open is O_NONBLOCK, so a FIFO planted there returns at once, and the
// opened file itself (fstat, not a stat of the name beforehand, which a swap could outrun)
// must be a regular file of at most max bytes. follow=false also refuses a symlink as the
// last component.
func ReadPath(path string, max int64, follow bool) ([]byte, error) {
	flag := os.O_RDONLY | readFlag | cloexec
	if !follow {
		flag |= noFollow
	}
	f, st, err := openKind(path, flag, fs.FileMode.IsRegular)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readSized(f, path, st.Size(), max)
}

// ReadDirPath lists a directory by path without ever blocking: a FIFO or device in its
// place is refused at open (O_DIRECTORY|O_NONBLOCK) instead of waiting for a writer, as
// os.ReadDir would.
func ReadDirPath(path string) ([]fs.DirEntry, error) {
	f, _, err := openKind(path, os.O_RDONLY|readFlag|dirFlag|cloexec, fs.FileMode.IsDir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// openKind opens path with flag and checks the opened file itself (fstat) with isKind,
// refusing any other kind with ErrNotRegular.
func openKind(path string, flag int, isKind func(fs.FileMode) bool) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil && !isKind(st.Mode()) {
		err = pathErr("read", path, ErrNotRegular)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// DirHasName reports whether the directory at path holds an entry whose name match accepts,
// without blocking (as ReadDirPath), reading the names a batch at a time and stopping at the
// first match: a directory of many other files is not listed whole into memory.
func DirHasName(path string, match func(name string) bool) (bool, error) {
	f, _, err := openKind(path, os.O_RDONLY|readFlag|dirFlag|cloexec, fs.FileMode.IsDir)
	if err != nil {
		return false, err
	}
	defer f.Close()
	for {
		names, err := f.Readdirnames(256)
		for _, n := range names {
			if match(n) {
				return true, nil
			}
		}
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
}
