package claimsync

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/durable/simfs"
	"github.com/cairn-dev/cairn/internal/store"
)

// TestRebuildNearPathMax: a damaged claims state in a state directory whose path leaves room
// for claims.json but not for its quarantine name (over PATH_MAX by absolute path) is moved to
// quarantine/ and rebuilt, or refused; it never loops forever looking for a free name.
func TestRebuildNearPathMax(t *testing.T) {
	dir := t.TempDir()
	for len(dir) < 4060-201 {
		dir = filepath.Join(dir, strings.Repeat("d", 200))
	}
	dir = filepath.Join(dir, strings.Repeat("e", 4060-len(dir)-1))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := os.WriteFile(filepath.Join(dir, Doc+".json"), []byte(`{"owner":"a@b#0123ab","line":`), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := rebuild(st)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Logf("refused: %v", err)
		} else if _, err := os.Lstat(filepath.Join(dir, Doc+".json")); err != nil {
			t.Errorf("rebuilt, but no claims state: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("rebuild still looking for a quarantine name after 20s")
	}
}

// TestQuarantineIsDurable: once quarantine returns, a power loss keeps the damaged file in
// quarantine/ and not in its place; a power loss at any moment before leaves it in one of the
// two, never lost.
func TestQuarantineIsDurable(t *testing.T) {
	const name = "claims.json"
	for k := 1; ; k++ {
		f := simfs.New()
		if err := durable.WriteFile(f, name, []byte("{damaged"), 0o600); err != nil {
			t.Fatal(err)
		}
		f.CrashAt = f.Ops() + k
		dst, err := quarantine(f, name)
		after := f.Recover()
		_, inPlace := after.Lstat(name)
		names, _ := after.ReadDirNames(quarantineDir)
		if inPlace != nil && len(names) == 0 {
			t.Fatalf("power lost at operation %d of quarantine (%v): the damaged file is lost", k, err)
		}
		if err == nil {
			if inPlace == nil || len(names) != 1 || path.Base(dst) != names[0] {
				t.Fatalf("quarantine returned %q, then after a power loss: still in place %v, quarantine/ %v", dst, inPlace == nil, names)
			}
		}
		if !f.Crashed() {
			if err != nil {
				t.Fatal(err)
			}
			return
		}
		if k > 50 {
			t.Fatal("quarantine never ran to its end")
		}
	}
}
