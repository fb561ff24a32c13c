// Package simfs is an in-memory durable.FS that models what a power loss keeps, for tests: a
// file's bytes survive only as of its last Sync, and a directory's entries (creates, renames,
// removes) only as of its last SyncDir. Power is lost at a chosen operation; Recover then gives
// the file system as it would come back after a reboot. Enumerating the operation at which
// power is lost finds every missing fsync or directory fsync in a write path in well under a
// second. It models the pessimistic case (nothing unsynced survives); it is not a full model of
// any real file system, and it is single-process (Lock only counts as an operation). Outside
// tests, store uses an empty one as the read-only stand-in for a state directory not yet made.
package simfs

import (
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
)

// ErrPowerLost is returned by every operation from the one at which power is lost.
var ErrPowerLost = errors.New("power lost")

// FS is the simulated file system. The zero value is not usable; call New.
type FS struct {
	// CrashAt is the operation number (from 1) at which power is lost; 0 never.
	CrashAt int

	mu      sync.Mutex
	root    *node
	nextID  uint64
	n       int
	crashed bool
}

type node struct {
	id       uint64
	dir      bool
	data     []byte           // a file's bytes as written
	synced   []byte           // a file's bytes as of its last Sync
	children map[string]*node // a directory's entries now
	durable  map[string]*node // a directory's entries as of its last SyncDir
	mtime    time.Time
}

// New returns an empty file system whose root directory exists durably.
func New() *FS {
	f := &FS{}
	f.root = f.newNode(true)
	return f
}

func (f *FS) newNode(dir bool) *node {
	f.nextID++
	n := &node{id: f.nextID, dir: dir, mtime: time.Unix(int64(f.nextID), 0)}
	if dir {
		n.children = map[string]*node{}
		n.durable = map[string]*node{}
	}
	return n
}

// Ops returns how many operations were attempted.
func (f *FS) Ops() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// Crashed reports whether power was lost.
func (f *FS) Crashed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.crashed
}

// step counts an operation; the caller holds f.mu.
func (f *FS) step() error {
	f.n++
	if f.crashed || (f.CrashAt > 0 && f.n >= f.CrashAt) {
		f.crashed = true
		return ErrPowerLost
	}
	return nil
}

// do runs call under f's lock as one operation, unless power is lost at it or, for an
// operation on the open file h, h is closed (which fails without counting).
func do[T any](f *FS, h *file, call func() (T, error)) (T, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var err error
	if h != nil {
		err = h.op()
	} else {
		err = f.step()
	}
	if err != nil {
		var zero T
		return zero, err
	}
	return call()
}

// do0 is do for an operation that returns only an error.
func do0(f *FS, h *file, call func() error) error {
	_, err := do(f, h, func() (struct{}, error) { return struct{}{}, call() })
	return err
}

// Recover returns the file system as it comes back after power is lost now: each directory
// holds its entries as of its last SyncDir, each file its bytes as of its last Sync.
func (f *FS) Recover() *FS {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &FS{nextID: f.nextID, root: copyTree(f.root, true)}
}

// Clone returns a copy of the file system as it is now, what is not yet synced included, with
// its power on and its operations counted from 0: a test that cuts the power at every
// operation of a step sets up the state before it once, and runs each cut on a clone.
func (f *FS) Clone() *FS {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &FS{nextID: f.nextID, root: copyTree(f.root, false)}
}

// copyTree copies the tree at root, each node once (a file under two names stays one file).
// recovered copies it as it comes back after power is lost: each directory holds its entries
// as of its last SyncDir, each file its bytes as of its last Sync.
func copyTree(root *node, recovered bool) *node {
	seen := map[*node]*node{}
	var copyNode func(n *node) *node
	entries := func(m map[string]*node) map[string]*node {
		out := make(map[string]*node, len(m))
		for name, ch := range m {
			out[name] = copyNode(ch)
		}
		return out
	}
	copyNode = func(n *node) *node {
		if c, ok := seen[n]; ok {
			return c
		}
		c := &node{id: n.id, dir: n.dir, mtime: n.mtime}
		seen[n] = c
		switch {
		case n.dir && recovered:
			c.children = entries(n.durable)
			c.durable = maps.Clone(c.children)
		case n.dir:
			c.children, c.durable = entries(n.children), entries(n.durable)
		case recovered:
			c.data, c.synced = slices.Clone(n.synced), slices.Clone(n.synced)
		default:
			c.data, c.synced = slices.Clone(n.data), slices.Clone(n.synced)
		}
		return c
	}
	return copyNode(root)
}

func split(name string) []string {
	name = strings.Trim(name, "/")
	if name == "" || name == "." {
		return nil
	}
	return strings.Split(name, "/")
}

// lookup returns the parent directory of name and the last element.
func (f *FS) parent(op, name string) (*node, string, error) {
	parts := split(name)
	if len(parts) == 0 {
		return nil, "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	d := f.root
	for _, p := range parts[:len(parts)-1] {
		c, ok := d.children[p]
		if !ok {
			return nil, "", &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
		}
		if !c.dir {
			return nil, "", &fs.PathError{Op: op, Path: name, Err: errors.New("not a directory")}
		}
		d = c
	}
	return d, parts[len(parts)-1], nil
}

func (f *FS) lookup(op, name string) (*node, error) {
	if len(split(name)) == 0 {
		return f.root, nil
	}
	d, base, err := f.parent(op, name)
	if err != nil {
		return nil, err
	}
	n, ok := d.children[base]
	if !ok {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return n, nil
}

// OpenFile opens or creates a file; O_CREATE, O_EXCL, O_TRUNC and O_APPEND are honoured.
func (f *FS) OpenFile(name string, flag int, perm fs.FileMode) (durable.File, error) {
	return do(f, nil, func() (durable.File, error) {
		d, base, err := f.parent("open", name)
		if err != nil {
			return nil, err
		}
		n, ok := d.children[base]
		switch {
		case ok && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrExist}
		case !ok && flag&os.O_CREATE == 0:
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		case !ok:
			n = f.newNode(false)
			d.children[base] = n
		}
		if n.dir && flag&(os.O_WRONLY|os.O_RDWR) != 0 {
			return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("is a directory")}
		}
		if flag&os.O_TRUNC != 0 {
			n.data = nil
		}
		return &file{fs: f, n: n, name: name, flag: flag}, nil
	})
}

// Rename moves oldname to newname, replacing a file there.
func (f *FS) Rename(oldname, newname string) error { return f.rename(oldname, newname, true) }

// RenameNoReplace is Rename failing with fs.ErrExist when newname exists.
func (f *FS) RenameNoReplace(oldname, newname string) error {
	return f.rename(oldname, newname, false)
}

func (f *FS) rename(oldname, newname string, replace bool) error {
	return do0(f, nil, func() error {
		od, ob, err := f.parent("rename", oldname)
		if err != nil {
			return err
		}
		n, ok := od.children[ob]
		if !ok {
			return &fs.PathError{Op: "rename", Path: oldname, Err: fs.ErrNotExist}
		}
		nd, nb, err := f.parent("rename", newname)
		if err != nil {
			return err
		}
		if t, ok := nd.children[nb]; ok && !replace {
			return &fs.PathError{Op: "rename", Path: newname, Err: fs.ErrExist}
		} else if ok && t.dir && len(t.children) > 0 {
			return &fs.PathError{Op: "rename", Path: newname, Err: errors.New("directory not empty")}
		}
		delete(od.children, ob)
		nd.children[nb] = n
		return nil
	})
}

// Remove removes a file or an empty directory.
func (f *FS) Remove(name string) error {
	return do0(f, nil, func() error {
		d, b, err := f.parent("remove", name)
		if err != nil {
			return err
		}
		n, ok := d.children[b]
		if !ok {
			return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
		}
		if n.dir && len(n.children) > 0 {
			return &fs.PathError{Op: "remove", Path: name, Err: errors.New("directory not empty")}
		}
		delete(d.children, b)
		return nil
	})
}

// RemoveAll removes name and everything under it; a missing name is fine.
func (f *FS) RemoveAll(name string) error {
	return do0(f, nil, func() error {
		if d, b, err := f.parent("removeall", name); err == nil {
			delete(d.children, b)
		}
		return nil
	})
}

// Mkdir creates a directory.
func (f *FS) Mkdir(name string, perm fs.FileMode) error {
	return do0(f, nil, func() error {
		d, b, err := f.parent("mkdir", name)
		if err != nil {
			return err
		}
		if _, ok := d.children[b]; ok {
			return &fs.PathError{Op: "mkdir", Path: name, Err: fs.ErrExist}
		}
		d.children[b] = f.newNode(true)
		return nil
	})
}

// Lstat describes name (there are no symlinks here).
func (f *FS) Lstat(name string) (fs.FileInfo, error) {
	return do(f, nil, func() (fs.FileInfo, error) {
		n, err := f.lookup("lstat", name)
		if err != nil {
			return nil, err
		}
		return info{name: path.Base(strings.Trim(name, "/")), n: n, size: int64(len(n.data))}, nil
	})
}

// ReadDirNames lists a directory's current entries.
func (f *FS) ReadDirNames(name string) ([]string, error) {
	return do(f, nil, func() ([]string, error) {
		n, err := f.lookup("readdir", name)
		if err != nil {
			return nil, err
		}
		if !n.dir {
			return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
		}
		return slices.Sorted(maps.Keys(n.children)), nil
	})
}

// ReadDir lists a directory's current entries with their types.
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	return do(f, nil, func() ([]fs.DirEntry, error) {
		n, err := f.lookup("readdir", name)
		if err != nil {
			return nil, err
		}
		if !n.dir {
			return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
		}
		out := make([]fs.DirEntry, 0, len(n.children))
		for _, k := range slices.Sorted(maps.Keys(n.children)) {
			c := n.children[k]
			out = append(out, fs.FileInfoToDirEntry(info{name: k, n: c, size: int64(len(c.data))}))
		}
		return out, nil
	})
}

// SyncDir makes a directory's current entries durable.
func (f *FS) SyncDir(name string) error {
	return do0(f, nil, func() error {
		n, err := f.lookup("syncdir", name)
		if err != nil {
			return err
		}
		n.durable = maps.Clone(n.children)
		return nil
	})
}

// Lock only counts as an operation: the simulation runs in one process.
func (f *FS) Lock(name string, wait time.Duration) (func() error, error) {
	return do(f, nil, func() (func() error, error) { return func() error { return nil }, nil })
}

type info struct {
	name string
	n    *node
	size int64
}

func (i info) Name() string { return i.name }
func (i info) Size() int64  { return i.size }
func (i info) Mode() fs.FileMode {
	if i.n.dir {
		return fs.ModeDir | 0o700
	}
	return 0o600
}
func (i info) ModTime() time.Time { return i.n.mtime }
func (i info) IsDir() bool        { return i.n.dir }
func (i info) Sys() any           { return nil }

// ID lets durable tell whether two FileInfos are the same file.
func (i info) ID() uint64 { return i.n.id }

type file struct {
	fs     *FS
	n      *node
	name   string
	flag   int
	pos    int64
	closed bool
}

func (h *file) op() error {
	if h.closed {
		return fs.ErrClosed
	}
	return h.fs.step()
}

func (h *file) Read(p []byte) (int, error) {
	return do(h.fs, h, func() (int, error) {
		if h.pos >= int64(len(h.n.data)) {
			return 0, io.EOF
		}
		n := copy(p, h.n.data[h.pos:])
		h.pos += int64(n)
		return n, nil
	})
}

func (h *file) ReadAt(p []byte, off int64) (int, error) {
	return do(h.fs, h, func() (int, error) {
		if off >= int64(len(h.n.data)) {
			return 0, io.EOF
		}
		n := copy(p, h.n.data[off:])
		if n < len(p) {
			return n, io.EOF
		}
		return n, nil
	})
}

// resize sets the file's length, a growth reading as zeros.
func (n *node) resize(size int64) {
	if size <= int64(len(n.data)) {
		n.data = n.data[:size]
	} else {
		n.data = append(n.data, make([]byte, size-int64(len(n.data)))...)
	}
}

func (h *file) writeAt(p []byte, off int64) (int, error) {
	if end := off + int64(len(p)); end > int64(len(h.n.data)) {
		h.n.resize(end)
	}
	return copy(h.n.data[off:], p), nil
}

func (h *file) Write(p []byte) (int, error) {
	return do(h.fs, h, func() (int, error) {
		if h.flag&os.O_APPEND != 0 {
			h.pos = int64(len(h.n.data))
		}
		n, err := h.writeAt(p, h.pos)
		h.pos += int64(n)
		return n, err
	})
}

func (h *file) WriteAt(p []byte, off int64) (int, error) {
	return do(h.fs, h, func() (int, error) { return h.writeAt(p, off) })
}

func (h *file) Stat() (fs.FileInfo, error) {
	return do(h.fs, h, func() (fs.FileInfo, error) {
		base := h.name[strings.LastIndexByte(h.name, '/')+1:]
		return info{name: base, n: h.n, size: int64(len(h.n.data))}, nil
	})
}

func (h *file) Sync() error {
	return do0(h.fs, h, func() error {
		h.n.synced = append([]byte(nil), h.n.data...)
		return nil
	})
}

func (h *file) Truncate(size int64) error {
	return do0(h.fs, h, func() error {
		h.n.resize(size)
		return nil
	})
}

func (h *file) Close() error {
	h.fs.mu.Lock()
	defer h.fs.mu.Unlock()
	err := h.op()
	h.closed = true
	return err
}

var _ durable.FS = (*FS)(nil)
