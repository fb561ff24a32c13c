// Package durabletest holds what tests need of durable and nothing else links: Faulty, a
// durable.FS that fails the operation a test chooses (durable's and store's fault suites),
// DirSyncFails, whose syncs of one directory fail, and Watched/WaitLockWaiter, which see a lock
// waiter start waiting.
package durabletest

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
)

// ErrInjected is the error a Faulty FS returns for the operation it was told to fail.
var ErrInjected = errors.New("injected fault")

// Faulty wraps an FS for tests: it numbers every operation (including reads, writes, syncs,
// truncates and closes on open files) from 1 and fails operation FailAt, only that one or,
// with Persistent, every one from there on, as SQLite's I/O-error tests do. A test first runs
// the scenario with FailAt 0 to count the operations, then once for every k.
type Faulty struct {
	FS         durable.FS
	FailAt     int
	Persistent bool
	Err        error // returned for a failed operation; ErrInjected when nil

	mu       sync.Mutex
	n        int
	injected int
	trace    []string
}

// Ops returns how many operations have been attempted so far.
func (f *Faulty) Ops() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// Injected returns how many operations were made to fail.
func (f *Faulty) Injected() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.injected
}

// Trace lists the operations in order ("rename a -> b"), for test failure messages.
func (f *Faulty) Trace() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.trace...)
}

func (f *Faulty) step(op, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	fail := f.FailAt > 0 && (f.n == f.FailAt || (f.Persistent && f.n > f.FailAt))
	mark := ""
	if fail {
		mark = " !"
		f.injected++
	}
	f.trace = append(f.trace, fmt.Sprintf("%d %s %s%s", f.n, op, name, mark))
	if !fail {
		return nil
	}
	return &fs.PathError{Op: op, Path: name, Err: cmp.Or(f.Err, ErrInjected)}
}

// then runs call unless the operation is the one to fail.
func (f *Faulty) then(op, name string, call func() error) error {
	if err := f.step(op, name); err != nil {
		return err
	}
	return call()
}

// then2 is then for an operation that returns a value too.
func then2[T any](f *Faulty, op, name string, call func() (T, error)) (T, error) {
	if err := f.step(op, name); err != nil {
		var zero T
		return zero, err
	}
	return call()
}

func (f *Faulty) OpenFile(name string, flag int, perm fs.FileMode) (durable.File, error) {
	file, err := then2(f, "open", name, func() (durable.File, error) { return f.FS.OpenFile(name, flag, perm) })
	if err != nil {
		return nil, err
	}
	return &faultyFile{File: file, f: f, name: name}, nil
}

func (f *Faulty) Rename(oldname, newname string) error {
	return f.then("rename", oldname+" -> "+newname, func() error { return f.FS.Rename(oldname, newname) })
}

func (f *Faulty) RenameNoReplace(oldname, newname string) error {
	return f.then("rename-noreplace", oldname+" -> "+newname, func() error { return f.FS.RenameNoReplace(oldname, newname) })
}

func (f *Faulty) Remove(name string) error {
	return f.then("remove", name, func() error { return f.FS.Remove(name) })
}

func (f *Faulty) RemoveAll(name string) error {
	return f.then("removeall", name, func() error { return f.FS.RemoveAll(name) })
}

func (f *Faulty) Mkdir(name string, perm fs.FileMode) error {
	return f.then("mkdir", name, func() error { return f.FS.Mkdir(name, perm) })
}

func (f *Faulty) Lstat(name string) (fs.FileInfo, error) {
	return then2(f, "lstat", name, func() (fs.FileInfo, error) { return f.FS.Lstat(name) })
}

func (f *Faulty) ReadDirNames(name string) ([]string, error) {
	return then2(f, "readdir", name, func() ([]string, error) { return f.FS.ReadDirNames(name) })
}

func (f *Faulty) ReadDir(name string) ([]fs.DirEntry, error) {
	return then2(f, "readdir", name, func() ([]fs.DirEntry, error) { return f.FS.ReadDir(name) })
}

func (f *Faulty) SyncDir(name string) error {
	return f.then("syncdir", name, func() error { return f.FS.SyncDir(name) })
}

func (f *Faulty) Lock(name string, wait time.Duration) (func() error, error) {
	unlock, err := then2(f, "lock", name, func() (func() error, error) { return f.FS.Lock(name, wait) })
	if err != nil {
		return nil, err
	}
	return func() error {
		// The release always happens; a fault here only reports an error.
		serr := f.step("unlock", name)
		if err := unlock(); err != nil {
			return err
		}
		return serr
	}, nil
}

type faultyFile struct {
	durable.File
	f    *Faulty
	name string
}

func (ff *faultyFile) Read(p []byte) (int, error) {
	return then2(ff.f, "read", ff.name, func() (int, error) { return ff.File.Read(p) })
}

func (ff *faultyFile) ReadAt(p []byte, off int64) (int, error) {
	return then2(ff.f, "readat", ff.name, func() (int, error) { return ff.File.ReadAt(p, off) })
}

func (ff *faultyFile) Write(p []byte) (int, error) {
	return then2(ff.f, "write", ff.name, func() (int, error) { return ff.File.Write(p) })
}

func (ff *faultyFile) WriteAt(p []byte, off int64) (int, error) {
	return then2(ff.f, "writeat", ff.name, func() (int, error) { return ff.File.WriteAt(p, off) })
}

func (ff *faultyFile) Stat() (fs.FileInfo, error) {
	return then2(ff.f, "fstat", ff.name, func() (fs.FileInfo, error) { return ff.File.Stat() })
}

func (ff *faultyFile) Sync() error {
	return ff.f.then("fsync", ff.name, func() error { return ff.File.Sync() })
}

func (ff *faultyFile) Truncate(size int64) error {
	return ff.f.then("truncate", ff.name, func() error { return ff.File.Truncate(size) })
}

func (ff *faultyFile) Close() error {
	err := ff.f.step("close", ff.name)
	// The descriptor is released either way, as a real failed close(2) does.
	if cerr := ff.File.Close(); err == nil {
		err = cerr
	}
	return err
}
