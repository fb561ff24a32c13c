// Package durable holds the durable file primitives Cairn's state stands on: the atomic, durable
// replace of a whole file, a durable line append with torn-tail repair, cross-process locks on
// dedicated lock files, careful reads that refuse planted FIFOs, symlinks and hard links, and
// an FS interface (real: an os.Root anchored at the state directory; test: fault injection)
// that every store write goes through. It knows nothing of workflows; its only JSON is the lock
// holder's record (for the timeout message). internal/store and internal/memory build on it.
package durable

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
)

// WriteFileAtomic replaces path with data so that a crash at any moment leaves either the old
// content or the new, never a mix, and the new content is durable when it returns nil. It
// writes a temp file in the same directory (O_EXCL), fsyncs it, renames it over path and fsyncs
// the directory. A failed fsync is never retried: the temp file is removed and the error
// returned, since a second fsync can report success for data the kernel already dropped.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp := filepath.Join(dir, ".tmp-"+base+"-"+randSuffix())
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, perm)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if err = writeAll(f, data); err != nil {
		f.Close()
		return err
	}
	if err = f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	if err := SyncDir(dir); err != nil {
		return &NotDurableError{Path: path, Err: err}
	}
	return nil
}

// WriteFile is WriteFileAtomic inside fsys: temp file ".tmp-NAME-RAND" beside name, opened
// O_EXCL, written in full, fsynced, closed (checked), renamed over name, directory fsynced.
// On any failure before the rename the temp file is removed and name is untouched, so a full
// disk or a read-only directory leaves the old content intact.
func WriteFile(fsys FS, name string, data []byte, perm fs.FileMode) error {
	return writeFile(fsys, name, data, perm, true, true)
}

// WriteFileNoReplace is WriteFile that never replaces: the temp file is moved to name with
// RenameNoReplace, so when name exists, even if made after the caller looked, it returns an
// error matching fs.ErrExist, removes the temp file and leaves name as it was.
func WriteFileNoReplace(fsys FS, name string, data []byte, perm fs.FileMode) error {
	return writeFile(fsys, name, data, perm, true, false)
}

// WriteFileNoSync replaces name atomically (old or new content, never a mix) but without
// fsyncs, so it is not durable: after a power loss the file may come back old or empty. It is
// for advisory records that are rewritten often and cheap to lose (which session a client is
// in), where two fsyncs would be most of a hook's running time.
func WriteFileNoSync(fsys FS, name string, data []byte, perm fs.FileMode) error {
	return writeFile(fsys, name, data, perm, false, true)
}

func writeFile(fsys FS, name string, data []byte, perm fs.FileMode, durable, replace bool) (err error) {
	dir, base := path.Split(name)
	tmp := dir + ".tmp-" + base + "-" + randSuffix()
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, perm)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			fsys.Remove(tmp)
		}
	}()
	if err = writeAll(f, data); err != nil {
		f.Close()
		return err
	}
	// Never retried: after a failed fsync the page cache may already have dropped the data.
	if durable {
		if err = f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	if err = f.Close(); err != nil {
		return err
	}
	if replace {
		err = fsys.Rename(tmp, name)
	} else {
		err = fsys.RenameNoReplace(tmp, name)
	}
	if err != nil {
		// A directory in name's place makes the rename fail in the kernel's words (EEXIST,
		// EISDIR, ENOTEMPTY): say what is there instead.
		if fi, lerr := fsys.Lstat(name); replace && lerr == nil && fi.IsDir() {
			return pathErr("write", name, &NotRegularError{Mode: fi.Mode()})
		}
		return err
	}
	if !durable {
		return nil
	}
	if err := fsys.SyncDir(path.Dir(name)); err != nil {
		return &NotDurableError{Path: name, Err: err}
	}
	return nil
}

// TempPrefix is the prefix of the temp files WriteFile leaves behind only when a process dies
// between creating and renaming one.
func TempPrefix(base string) string { return ".tmp-" + base + "-" }

// TempName is a new temp name for base: TempPrefix(base) and a random suffix, for a temp file
// or directory a caller makes itself (with O_EXCL or Mkdir, which catch a collision).
func TempName(base string) string { return TempPrefix(base) + randSuffix() }

// writeAll writes data in one call: an io.Writer that writes less returns an error.
func writeAll(w io.Writer, data []byte) error {
	n, err := w.Write(data)
	if err == nil && n < len(data) {
		err = io.ErrShortWrite
	}
	return err
}

// NotDurableError reports a replace that happened (the new content is visible) but whose
// directory entry could not be confirmed on disk.
type NotDurableError struct {
	Path string
	Err  error
}

func (e *NotDurableError) Error() string {
	return fmt.Sprintf("%s was replaced but its directory could not be synced, so the change may not survive a power loss: %v", e.Path, e.Err)
}

func (e *NotDurableError) Unwrap() error { return e.Err }

// IsNotDurable reports whether err says a write landed but is not confirmed durable.
func IsNotDurable(err error) bool {
	var nd *NotDurableError
	return errors.As(err, &nd)
}

// randSuffix names a temp file: O_EXCL catches a collision, so math/rand/v2 (the runtime's
// generator, no system call) is enough; crypto/rand's first use costs a short process tens of
// microseconds.
func randSuffix() string {
	return fmt.Sprintf("%012x", rand.Uint64()&(1<<48-1))
}
