package durable

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
)

// AppendResult says what AppendLine did besides appending.
type AppendResult struct {
	// Repaired is how many bytes of a torn last line (no trailing newline, left by a process
	// killed mid-write) were cut off before the append.
	Repaired int64
	// Offset is where the new line starts.
	Offset int64
}

// AppendLine appends line plus a newline to name, creating it 0600 if needed. The caller must
// hold the file's lock. A torn tail is first truncated back to the last newline; the line goes
// out in one write; on any write error the file is truncated back to its old size; with sync
// the file is fsynced before returning (and a new file's directory too); a file it created is
// removed again when the line could not be appended. line must not contain a newline.
func AppendLine(fsys FS, name string, line []byte, sync bool) (res AppendResult, err error) {
	return AppendLineKeeping(fsys, name, line, sync, nil)
}

// maxKeepRounds bounds how often AppendLineKeeping reads a torn tail again because the file
// grew while it was being kept.
const maxKeepRounds = 3

// ErrChangedWhileKept is AppendLineKeeping's answer when the file shrank, or kept growing,
// while its torn tail was being kept: a process writes it without the lock. Nothing was cut.
var ErrChangedWhileKept = errors.New("it changed while its unfinished last line was being kept (a process writes it without the lock); nothing was cut")

// AppendLineKeeping is AppendLine for a caller that keeps a torn tail before it is cut: keep
// gets the bytes after the last newline, read from the open file about to be truncated, and
// the file is cut only when keep returned nil, and only while it still ends where they were
// read. Should a writer that takes no lock append in between, the tail is read and kept again
// (keep is called again, with the new tail or nil when the file now ends in a newline; the
// tail it was given before is then in the file or in the new tail): what is cut is always
// exactly the last tail kept. keep's own errors are returned as they are.
func AppendLineKeeping(fsys FS, name string, line []byte, sync bool, keep func(tail []byte) error) (res AppendResult, err error) {
	if bytes.IndexByte(line, '\n') >= 0 {
		return res, pathErr("append", name, errors.New("line contains a newline"))
	}
	_, statErr := fsys.Lstat(name)
	created := errors.Is(statErr, fs.ErrNotExist)
	f, st, err := openChecked(fsys, name, os.O_RDWR|appendFlag|os.O_CREATE, 0o600)
	if err != nil {
		return res, err
	}
	durable := false
	defer func() {
		// After a successful fsync the line is on disk whatever close says: reporting the
		// close error would make a caller retry and append the line twice.
		if cerr := f.Close(); err == nil && cerr != nil && !durable {
			err = cerr
		}
		// A file this call created and could not append to goes again: left empty, it would
		// read as a log appended to, not as one never written.
		if err != nil && created && res.Offset == 0 && !durable {
			_ = fsys.Remove(name)
		}
	}()
	size, cut, err := cutTornTail(f, st.Size(), keep)
	if err != nil {
		return res, err
	}
	res.Repaired, res.Offset = cut, size
	buf := append(line[:len(line):len(line)], '\n') // a new array: line is the caller's
	// One write: a concurrent lock-free reader sees the whole line or (until it lands) none.
	var w io.Writer = f
	if appendFlag == 0 {
		w = io.NewOffsetWriter(f, size)
	}
	if err = writeAll(w, buf); err != nil {
		_ = f.Truncate(size)
		return res, err
	}
	if sync {
		if err := f.Sync(); err != nil {
			// Never retried; take the line back so a later reader does not count a line that
			// was reported as failed. A failed fsync may have reached the disk all the same,
			// so the truncate is synced: this sync makes the size durable, it vouches for no
			// data.
			if f.Truncate(size) == nil {
				_ = f.Sync()
			}
			return res, err
		}
		durable = true
		if created {
			if err := fsys.SyncDir(path.Dir(name)); err != nil {
				return res, &NotDurableError{Path: name, Err: err}
			}
		}
	}
	return res, nil
}

// EndLine gives name's last line its newline, in place, when it has none: for a last line the
// caller keeps as whole, which AppendLine would cut off as torn. Nothing of the line is written
// again, so no failure or kill can lose it: one byte in one write, taken back when the write
// fails. The caller must hold the file's lock.
func EndLine(fsys FS, name string) (err error) {
	f, st, err := openChecked(fsys, name, os.O_RDWR|appendFlag, 0)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	size := st.Size()
	if size == 0 {
		return nil
	}
	var one [1]byte
	if _, err := f.ReadAt(one[:], size-1); err != nil || one[0] == '\n' {
		return err
	}
	var w io.Writer = f
	if appendFlag == 0 {
		w = io.NewOffsetWriter(f, size)
	}
	if err := writeAll(w, []byte{'\n'}); err != nil {
		_ = f.Truncate(size)
		return err
	}
	return nil
}

// cutTornTail truncates f, of size size, back to just past its last newline, first handing
// the bytes cut to keep (when not nil), and returns f's new size and how many bytes it cut. A file that grew while keep
// ran is read again: only what keep was last given is ever cut. The kept size is checked
// again just before the cut; a writer without the lock can still land between the two.
func cutTornTail(f File, size int64, keep func([]byte) error) (end, cut int64, err error) {
	kept := false // keep was last given a tail: a grown file's new end must be told to it
	for range maxKeepRounds {
		end = size
		if size > 0 {
			if end, err = lastNewlineEnd(f, size); err != nil {
				return 0, 0, err
			}
		}
		if end == size && !kept {
			return size, 0, nil
		}
		var tail []byte
		if end != size {
			tail = make([]byte, size-end)
			if _, err := f.ReadAt(tail, end); err != nil {
				return 0, 0, err
			}
		}
		if keep != nil {
			if err := keep(tail); err != nil {
				return 0, 0, err
			}
			kept = tail != nil
			st, err := f.Stat()
			if err != nil {
				return 0, 0, err
			}
			if st.Size() < size {
				return 0, 0, ErrChangedWhileKept
			}
			if st.Size() != size {
				size = st.Size()
				continue
			}
		}
		if end != size {
			if err := f.Truncate(end); err != nil {
				return 0, 0, err
			}
		}
		return end, size - end, nil
	}
	return 0, 0, ErrChangedWhileKept
}

// lastNewlineEnd returns the offset just past the last '\n' in the first size bytes of f, or 0.
func lastNewlineEnd(f File, size int64) (int64, error) {
	var one [1]byte
	if _, err := f.ReadAt(one[:], size-1); err != nil {
		return 0, err
	}
	if one[0] == '\n' {
		return size, nil
	}
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	end := size
	for end > 0 {
		start := max(end-chunk, 0)
		b := buf[:end-start]
		if _, err := f.ReadAt(b, start); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}
