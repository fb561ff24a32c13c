package simfs_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"syscall"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/durable/simfs"
)

// powerLoss runs setup, then write with power lost at every operation of write in turn, and
// hands check the recovered file system and write's error.
func powerLoss(t *testing.T, setup, write func(durable.FS) error, check func(k int, rec *simfs.FS, err error) error) {
	t.Helper()
	clean := simfs.New()
	if err := setup(clean); err != nil {
		t.Fatal(err)
	}
	base := clean.Ops()
	if err := write(clean); err != nil {
		t.Fatal(err)
	}
	n := clean.Ops() - base
	if err := check(0, clean.Recover(), nil); err != nil {
		t.Fatalf("no crash: %v", err)
	}
	for k := 1; k <= n+1; k++ {
		f := simfs.New()
		if err := setup(f); err != nil {
			t.Fatal(err)
		}
		f.CrashAt = f.Ops() + k
		err := write(f)
		if err := check(k, f.Recover(), err); err != nil {
			t.Fatalf("power lost at operation %d of %d: %v", k, n, err)
		}
	}
}

func content(f durable.FS, name string) (string, error) {
	b, err := durable.ReadFile(f, name, 1<<20)
	return string(b), err
}

func TestWriteFileSurvivesPowerLoss(t *testing.T) {
	setup := func(f durable.FS) error { return durable.WriteFile(f, "doc.json", []byte("old"), 0o600) }
	write := func(f durable.FS) error { return durable.WriteFile(f, "doc.json", []byte("new"), 0o600) }
	powerLoss(t, setup, write, func(k int, rec *simfs.FS, err error) error {
		got, rerr := content(rec, "doc.json")
		switch {
		case rerr != nil:
			return rerr
		case got != "old" && got != "new":
			return errors.New("torn content " + got)
		case err == nil && got != "new":
			return errors.New("an acknowledged write came back old")
		}
		return nil
	})
}

func TestAppendLineSurvivesPowerLoss(t *testing.T) {
	setup := func(f durable.FS) error {
		_, err := durable.AppendLine(f, "log.jsonl", []byte(`{"n":1}`), true)
		return err
	}
	write := func(f durable.FS) error {
		_, err := durable.AppendLine(f, "log.jsonl", []byte(`{"n":2}`), true)
		return err
	}
	powerLoss(t, setup, write, func(k int, rec *simfs.FS, err error) error {
		got, rerr := content(rec, "log.jsonl")
		switch {
		case rerr != nil:
			return rerr
		case got != "{\"n\":1}\n" && got != "{\"n\":1}\n{\"n\":2}\n":
			return errors.New("log holds " + got)
		case err == nil && got != "{\"n\":1}\n{\"n\":2}\n":
			return errors.New("an acknowledged append was lost")
		}
		return nil
	})
	// The very first append creates the file: its directory entry must be synced too.
	powerLoss(t, func(durable.FS) error { return nil }, setup, func(k int, rec *simfs.FS, err error) error {
		got, rerr := content(rec, "log.jsonl")
		if err == nil && (rerr != nil || got != "{\"n\":1}\n") {
			return errors.New("an acknowledged first append was lost")
		}
		return nil
	})
}

// TestSimulatorCatchesMissingFsyncs is the simulator's negative control: replaces that skip the
// file fsync or the directory fsync must be caught losing data.
func TestSimulatorCatchesMissingFsyncs(t *testing.T) {
	broken := map[string]func(f durable.FS) error{
		"no-file-fsync": func(f durable.FS) error { return replace(f, false, true) },
		"no-dir-fsync":  func(f durable.FS) error { return replace(f, true, false) },
		"in-place": func(f durable.FS) error {
			h, err := f.OpenFile("doc.json", os.O_WRONLY|os.O_TRUNC, 0o600)
			if err != nil {
				return err
			}
			h.Write([]byte("new"))
			return h.Close()
		},
	}
	for name, write := range broken {
		t.Run(name, func(t *testing.T) {
			f := simfs.New()
			if err := durable.WriteFile(f, "doc.json", []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := write(f); err != nil {
				t.Fatal(err)
			}
			got, err := content(f.Recover(), "doc.json")
			if err == nil && got == "new" {
				t.Fatal("the simulator did not notice the missing fsync")
			}
		})
	}
}

func replace(f durable.FS, syncFile, syncDir bool) error {
	h, err := f.OpenFile(".tmp", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	h.Write([]byte("new"))
	if syncFile {
		h.Sync()
	}
	h.Close()
	if err := f.Rename(".tmp", "doc.json"); err != nil {
		return err
	}
	if syncDir {
		return f.SyncDir(".")
	}
	return nil
}

func TestModel(t *testing.T) {
	f := simfs.New()
	if err := f.Mkdir("d", 0o700); err != nil {
		t.Fatal(err)
	}
	h, _ := f.OpenFile("d/x", os.O_RDWR|os.O_CREATE, 0o600)
	h.Write([]byte("abc"))
	h.Sync()
	h.Close()
	// The directory d was never made durable in its parent: all of it is gone.
	if _, err := f.Recover().Lstat("d"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("unsynced directory survived: %v", err)
	}
	f.SyncDir(".")
	f.SyncDir("d")
	if got, _ := content(f.Recover(), "d/x"); got != "abc" {
		t.Fatalf("synced file lost: %q", got)
	}
	f.CrashAt = f.Ops() + 1
	if err := f.Remove("d/x"); !errors.Is(err, simfs.ErrPowerLost) {
		t.Fatalf("after the crash point: %v", err)
	}
	if !f.Crashed() || !bytes.Equal([]byte("abc"), []byte(must(content(f.Recover(), "d/x")))) {
		t.Fatal("state after power loss")
	}
}

func must(s string, err error) string {
	if err != nil {
		panic(err)
	}
	return s
}

// syncLies is an FS whose files' first Sync reaches the disk but reports EIO, as an fsync
// whose error is about a write the disk took (or whose data an ext4 journal commit made
// durable anyway) does.
type syncLies struct {
	durable.FS
	failed bool
}

type syncLiesFile struct {
	durable.File
	fs *syncLies
}

func (f *syncLies) OpenFile(name string, flag int, perm fs.FileMode) (durable.File, error) {
	h, err := f.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return syncLiesFile{h, f}, nil
}

func (f syncLiesFile) Sync() error {
	if err := f.File.Sync(); err != nil || f.fs.failed {
		return err
	}
	f.fs.failed = true
	return &fs.PathError{Op: "sync", Path: "log.jsonl", Err: syscall.EIO}
}

// An append whose fsync failed was reported failed and taken back by a truncate that was never
// synced: when the failed fsync had reached the disk, power lost afterwards brought the line
// back, a journal's commit point reported as not made. The truncate is made durable.
func TestAppendLineTakenBackAfterAFailedSyncStaysTakenBack(t *testing.T) {
	sim := simfs.New()
	if _, err := durable.AppendLine(sim, "log.jsonl", []byte(`{"n":1}`), true); err != nil {
		t.Fatal(err)
	}
	if _, err := durable.AppendLine(&syncLies{FS: sim}, "log.jsonl", []byte(`{"n":2}`), true); !errors.Is(err, syscall.EIO) {
		t.Fatalf("append: %v, want the sync's EIO", err)
	}
	if got, err := content(sim.Recover(), "log.jsonl"); err != nil || got != "{\"n\":1}\n" {
		t.Fatalf("after power loss the log holds %q, %v; want only the line acknowledged", got, err)
	}
}

// A clone holds what the file system holds, what is not synced included (and loses it to a
// power loss as the original would), and what either does after does not reach the other.
func TestClone(t *testing.T) {
	f := simfs.New()
	if err := durable.WriteFile(f, "synced", []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := f.OpenFile("unsynced", os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Write([]byte("lost")); err != nil {
		t.Fatal(err)
	}
	c := f.Clone()
	if c.Ops() != 0 || c.Crashed() {
		t.Fatalf("a clone starts at %d operations, crashed %v", c.Ops(), c.Crashed())
	}
	for _, g := range []*simfs.FS{c, c.Recover()} {
		if got, err := content(g, "synced"); err != nil || got != "kept" {
			t.Fatalf("synced: %q %v", got, err)
		}
	}
	if got, err := content(c, "unsynced"); err != nil || got != "lost" {
		t.Fatalf("unsynced, before a power loss: %q %v", got, err)
	}
	if _, err := content(c.Recover(), "unsynced"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("unsynced, after a power loss: %v", err)
	}
	if err := durable.WriteFile(c, "synced", []byte("the clone's"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Write([]byte(" and more")); err != nil {
		t.Fatal(err)
	}
	if got, err := content(f, "synced"); err != nil || got != "kept" {
		t.Fatalf("the original after the clone wrote: %q %v", got, err)
	}
	if got, err := content(c, "unsynced"); err != nil || got != "lost" {
		t.Fatalf("the clone after the original wrote: %q %v", got, err)
	}
}
