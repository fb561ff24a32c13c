package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/store"
)

// TestRemoveMarkBesideAStoppedRestore: a session's Stop stopped (Ctrl-Z) while it restored
// Cairn's auto-memory lines holds the mark's lock until it is resumed; cairn uninstall said it
// was held and to run it again, which finds it held the same way. It says how to resume it.
func TestRemoveMarkBesideAStoppedRestore(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "cairn")
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	mark := filepath.Join(dir, l2MarkFile)
	if err := os.WriteFile(mark, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	holder := durabletest.StoppedHolder(t, dir, ".lock-"+l2MarkDoc)
	if err := removeMark(mark); err == nil || !strings.Contains(err.Error(), "kill -CONT "+strconv.Itoa(holder)) {
		t.Fatalf("removeMark beside a stopped restore = %v, want the step that resumes pid %d", err, holder)
	}
}
