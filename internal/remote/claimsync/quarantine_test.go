package claimsync

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
