//go:build linux

package store_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/store/storetest"
)

// mountOrSkip mounts, or skips the test saying why the machine does not allow it.
func mountOrSkip(t *testing.T, src, dst, fstype string, flags uintptr, data string) {
	t.Helper()
	if err := syscall.Mount(src, dst, fstype, flags, data); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
			t.Skipf("mounting is not allowed here (%v); run as root or under `unshare -rm` to exercise this", err)
		}
		t.Fatalf("mount %s: %v", dst, err)
	}
	t.Cleanup(func() { syscall.Unmount(dst, syscall.MNT_DETACH) })
}

func seed(t *testing.T, s *store.Store) {
	t.Helper()
	if _, err := s.UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveCheckpoint("cp", []byte(`{"v":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendLog("events", []byte(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.Write("initiative", []byte(`{"v":1}`)); err != nil {
		t.Fatal(err)
	}
}

func checkOld(t *testing.T, s *store.Store) {
	t.Helper()
	if w, err := s.ReadWorkflow(); err != nil || w.Revision != 1 {
		t.Errorf("workflow: %+v %v", w, err)
	}
	if b, err := s.LoadCheckpoint("cp"); err != nil || string(b) != `{"v":1}` {
		t.Errorf("checkpoint: %s %v", b, err)
	}
	if l, err := s.ReadLog("events"); err != nil || len(l.Lines) != 1 || l.Torn != 0 {
		t.Errorf("log: %q torn %d %v", l.Lines, l.Torn, err)
	}
	if b, err := s.Read("initiative"); err != nil || string(b) != `{"v":1}` {
		t.Errorf("document: %s %v", b, err)
	}
}

func tryWrites(s *store.Store) map[string]error {
	_, wf := s.UpdateWorkflow(setNext(wfID, "plan"))
	_, ar := s.Archive("completed")
	return map[string]error{
		"transition": wf,
		"checkpoint": s.SaveCheckpoint("cp", []byte(`{"v":2,"pad":"`+strings.Repeat("x", 64<<10)+`"}`)),
		"log":        s.AppendLog("events", []byte(`{"n":2,"pad":"`+strings.Repeat("x", 60<<10)+`"}`)),
		"document":   s.Write("initiative", []byte(`{"v":2,"pad":"`+strings.Repeat("x", 64<<10)+`"}`)),
		"archive":    ar,
	}
}

func TestReadOnlyStateDir(t *testing.T) {
	src := filepath.Join(t.TempDir(), "cairn")
	seed(t, mustOpen(t, src))
	ro := filepath.Join(t.TempDir(), "ro")
	os.Mkdir(ro, 0o700)
	mountOrSkip(t, src, ro, "", syscall.MS_BIND, "")
	mountOrSkip(t, "", ro, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, "")
	s := mustOpen(t, ro)
	checkOld(t, s)
	for what, err := range tryWrites(s) {
		var we *store.WriteError
		if !errors.As(err, &we) || !strings.Contains(err.Error(), ro) || !strings.Contains(err.Error(), "read-only") {
			t.Errorf("%s on a read-only dir: %v", what, err)
		}
		if strings.Contains(err.Error(), "delete") || strings.Contains(err.Error(), "rm ") {
			t.Errorf("%s: message steers toward deleting: %v", what, err)
		}
	}
	checkOld(t, s)
	// A damaged snapshot cannot be repaired here, but the read still answers from the journal.
	syscall.Unmount(ro, syscall.MNT_DETACH)
	os.WriteFile(filepath.Join(src, store.WorkflowFile), []byte("{broken"), 0o600)
	mountOrSkip(t, src, ro, "", syscall.MS_BIND, "")
	mountOrSkip(t, "", ro, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, "")
	s = mustOpen(t, ro)
	if w, err := s.ReadWorkflow(); err != nil || w.Revision != 1 || len(w.Notices) != 1 || !strings.Contains(w.Notices[0].Message, "not repaired") {
		t.Errorf("damaged snapshot on a read-only dir: %+v %v", w, err)
	}
	if b, _ := os.ReadFile(filepath.Join(src, store.WorkflowFile)); string(b) != "{broken" {
		t.Error("the read-only directory was changed")
	}
	// A read-only directory without a .gitignore still opens, and reads say "not found".
	empty := filepath.Join(t.TempDir(), "empty")
	os.Mkdir(empty, 0o700)
	ro2 := filepath.Join(t.TempDir(), "ro2")
	os.Mkdir(ro2, 0o700)
	mountOrSkip(t, empty, ro2, "", syscall.MS_BIND, "")
	mountOrSkip(t, "", ro2, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, "")
	s2 := mustOpen(t, ro2)
	if _, err := s2.ReadWorkflow(); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("read on empty read-only dir: %v", err)
	}
}

// seededMount mounts a tmpfs with options data, opens a store in it and seeds it.
func seededMount(t *testing.T, data string) (s *store.Store, mnt string) {
	t.Helper()
	mnt = t.TempDir()
	mountOrSkip(t, "tmpfs", mnt, "tmpfs", 0, data)
	s = mustOpen(t, filepath.Join(mnt, "cairn"))
	seed(t, s)
	return s, mnt
}

// keptDocuments checks that the seeded checkpoint and document are as seed wrote them.
func keptDocuments(t *testing.T, s *store.Store, when string) {
	t.Helper()
	if b, err := s.LoadCheckpoint("cp"); err != nil || string(b) != `{"v":1}` {
		t.Errorf("checkpoint %s: %.20s %v", when, b, err)
	}
	if b, err := s.Read("initiative"); err != nil || string(b) != `{"v":1}` {
		t.Errorf("document %s: %.20s %v", when, b, err)
	}
}

// writesWork checks that every write but an archive's works again, after what was freed.
func writesWork(t *testing.T, s *store.Store, after string) {
	t.Helper()
	for what, err := range tryWrites(s) {
		if err != nil && what != "archive" {
			t.Errorf("%s after %s: %v", what, after, err)
		}
	}
}

func TestDiskFull(t *testing.T) {
	s, mnt := seededMount(t, "size=1m,mode=0700")
	filler := durabletest.FillDisk(t, mnt)
	for what, err := range tryWrites(s) {
		t.Logf("%s on a full disk: %v", what, err)
		if err == nil {
			// A write small enough to fit in the last free blocks is fine; the rest must fail.
			continue
		}
		if !strings.Contains(err.Error(), "disk is full") && !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("%s on a full disk: %v", what, err)
		}
	}
	// Whatever failed left the old version; nothing is torn.
	if w, err := s.ReadWorkflow(); err != nil || (w.Revision != 1 && w.Revision != 2) {
		t.Errorf("workflow after ENOSPC: %+v %v", w, err)
	}
	keptDocuments(t, s, "after ENOSPC")
	if l, err := s.ReadLog("events"); err != nil || len(l.Lines) != 1 || l.Torn != 0 {
		t.Errorf("log after ENOSPC: %d lines torn %d %v", len(l.Lines), l.Torn, err)
	}
	// Space back: everything works again.
	os.Remove(filler)
	writesWork(t, s, "freeing space")
}

// TestPruneSessionsReadOnlyMount: on a read-only mount the records of exited clients stay, and
// the caller hears why.
func TestPruneSessionsReadOnlyMount(t *testing.T) {
	s, dir := newStore(t)
	pid := storetest.ExitedPID(t)
	if err := s.WriteSession(strconv.Itoa(pid), sessionDoc(pid)); err != nil {
		t.Fatal(err)
	}
	sessions := filepath.Join(dir, "sessions")
	rec := filepath.Join(sessions, strconv.Itoa(pid)+".json")
	age(t, rec, 2*time.Hour, false)
	mountOrSkip(t, sessions, sessions, "", syscall.MS_BIND, "")
	mountOrSkip(t, "", sessions, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, "")
	n, err := s.PruneSessions(0, 1000)
	if n != 0 || !errors.Is(err, syscall.EROFS) {
		t.Errorf("removed %d, error %v; want 0 and EROFS", n, err)
	}
	if _, err := os.Stat(rec); err != nil {
		t.Errorf("the record on a read-only mount: %v", err)
	}
}

// TestLegacyInReadOnlyDir: a seed file in a directory that cannot be written (a read-only
// mount) is migrated, and its rename failing is said in a notice rather than failing the read
// of the workflow just committed; the file is left in place, and later starts take it for the
// workflow's own origin, not for a second copy. Before, the read that migrated it returned an
// error.
func TestLegacyInReadOnlyDir(t *testing.T) {
	old := migrateTestdata(t, "seed004/audit-state.json")
	dir := filepath.Join(t.TempDir(), "proj", ".claude", "cairn")
	root := filepath.Dir(filepath.Dir(dir))
	seeds := filepath.Join(root, ".workflow-state")
	os.MkdirAll(seeds, 0o700)
	os.WriteFile(filepath.Join(seeds, "audit-state.json"), old, 0o600)
	mountOrSkip(t, seeds, seeds, "", syscall.MS_BIND, "")
	mountOrSkip(t, "", seeds, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, "")
	w, err := mustOpen(t, dir).ReadWorkflow()
	if err != nil {
		t.Fatalf("the read that migrated the seed file failed: %v", err)
	}
	if len(w.Notices) != 1 || w.Notices[0].Kind != "migrated" || !strings.Contains(w.Notices[0].Message, "could not be renamed") {
		t.Fatalf("notices %+v, want one migrated notice saying the original stays in place", w.Notices)
	}
	s := mustOpen(t, dir)
	w2, err := s.ReadWorkflow()
	if err != nil || w2.ID != w.ID || w2.Revision != w.Revision {
		t.Fatalf("second read: %+v %v", w2, err)
	}
	if l, _, ok := s.FindLegacy(); ok {
		t.Fatalf("the seed file the workflow was migrated from is reported as a second copy: %s", l.Name)
	}
	if b, _ := os.ReadFile(filepath.Join(seeds, "audit-state.json")); !bytes.Equal(b, old) {
		t.Fatal("the seed file changed")
	}
}

// TestReadOnlyStateDirOpenToOthers: a state directory whose mode lets others write but which
// is on a read-only mount (a project mounted read-only into a container) cannot be written
// by anyone, nor made private: it opens for reading, as any read-only state directory does.
// Before, it was refused with "chmod 700 it", which fails there as Cairn's chmod did.
func TestReadOnlyStateDirOpenToOthers(t *testing.T) {
	src := filepath.Join(t.TempDir(), "cairn")
	seed(t, mustOpen(t, src))
	if err := os.Chmod(src, 0o777); err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(t.TempDir(), "ro")
	os.Mkdir(ro, 0o700)
	mountOrSkip(t, src, ro, "", syscall.MS_BIND, "")
	mountOrSkip(t, "", ro, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, "")
	s, err := store.Open(ro)
	if err != nil {
		t.Fatalf("a read-only state directory open to others: %v", err)
	}
	defer s.Close()
	checkOld(t, s)
}

// TestInodesExhausted: a file system with room for data but no free inode refuses every new
// file with ENOSPC, which the refusal called a full disk ("the disk is full ...; free some
// space"), though df -h shows free space and freeing data does not help. It now says the file
// system has no free inodes, and the step, and the writes refused leave the old versions.
func TestInodesExhausted(t *testing.T) {
	s, mnt := seededMount(t, "size=4m,nr_inodes=64,mode=0700")
	fill := durabletest.FillInodes(t, mnt)
	failed := 0
	for what, err := range tryWrites(s) {
		if err == nil || what == "archive" {
			continue // an append needs no new inode; an archive's refusal is its own
		}
		failed++
		if msg := err.Error(); !errors.Is(err, syscall.ENOSPC) || strings.Contains(msg, "disk is full") ||
			!strings.Contains(msg, "no free inodes") || !strings.Contains(msg, store.FreeInodesStep) {
			t.Errorf("%s with no free inode: %v; want the inodes named and their step", what, err)
		}
	}
	if failed == 0 {
		t.Fatal("no write failed with every inode taken")
	}
	// The writes refused left the old versions (the journal and a log only append).
	keptDocuments(t, s, "with no free inode")
	os.RemoveAll(fill)
	writesWork(t, s, "freeing inodes")
}

// TestSnapshotStaleOnAFullDisk: a change whose journal line fit but whose snapshot a full
// file system refused succeeded with "revision 2 is in the journal but the snapshot could not
// be replaced (openat .tmp-workflow-state.json-…: no space left on device); it will be on the
// next update": the bare errno, and the next update was refused for the same want of room. The
// notice says the change is saved, that the file system has no free inodes (or the disk is
// full) as a refused write says, and that the next write after that brings the snapshot up to
// date.
func TestSnapshotStaleOnAFullDisk(t *testing.T) {
	s, mnt := seededMount(t, "size=4m,nr_inodes=64,mode=0700")
	fill := durabletest.FillInodes(t, mnt)
	res, err := s.UpdateWorkflow(setNext(wfID, "plan"))
	if err != nil {
		t.Fatalf("the journal line needs no new inode: %v", err)
	}
	if len(res.Notices) != 1 || res.Notices[0].Kind != "snapshot-stale" {
		t.Fatalf("notices %+v, want the stale snapshot's", res.Notices)
	}
	msg := res.Notices[0].Message
	for _, want := range []string{"revision 2 is saved in the journal", "cannot write workflow-state.json", "no free inodes", "df -i", "brings the snapshot up to date"} {
		if !strings.Contains(msg, want) {
			t.Errorf("notice %q: want %q", msg, want)
		}
	}
	// Not the refused write's words: nothing was left as it was, and there is nothing to try again.
	if strings.Contains(msg, "left as it was") || strings.Contains(msg, "try again") {
		t.Errorf("notice %q says the change was not made", msg)
	}
	os.RemoveAll(fill)
	if w, err := s.ReadWorkflow(); err != nil || w.Revision != 2 {
		t.Errorf("after freeing inodes: %+v %v", w, err)
	}
}
