//go:build linux

package claimsync

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/store"
)

// A damaged claims state is moved to quarantine/ and written anew. When the new one cannot be
// written (a full disk), the damaged one was left in quarantine/ with nothing in its place,
// the error said "the previous version was kept", and the next call, finding no claims state,
// gave this clone a new identity without a word (the one the damaged file still showed was
// lost). The damaged file now goes back in its place, and once there is space the rebuild
// keeps its identity.
func TestRebuildOnAFullDiskKeepsTheDamagedState(t *testing.T) {
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=256k,mode=0700"); err != nil {
		t.Skipf("mounting is not allowed here (%v); run as root or under `unshare -rm` to exercise this", err)
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })
	dir := filepath.Join(mnt, "cairn")
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	doc := filepath.Join(dir, Doc+".json")
	damaged := []byte(`{"owner":"a@b#0123ab","line":`)
	if err := os.WriteFile(doc, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	filler := durabletest.FillDisk(t, mnt)
	if _, _, err := rebuild(st); err == nil || !strings.Contains(err.Error(), "disk is full") {
		t.Fatalf("rebuild on a full disk: %v; want the disk named full", err)
	}
	if b, err := os.ReadFile(doc); err != nil || string(b) != string(damaged) {
		t.Fatalf("%s after the failed rebuild: %q %v; want the damaged state back in its place", doc, b, err)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	cur, notice, err := rebuild(st)
	if err != nil || cur.Owner != "a@b#0123ab" || !strings.Contains(notice, "rebuilt") {
		t.Errorf("rebuild with space again: %+v %q %v; want the identity the damaged state shows", cur, notice, err)
	}
}
