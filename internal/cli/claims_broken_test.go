//go:build unix

package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote/remotesync"
)

// TestEnableOverABrokenJournalSaysTheRestore: cairn remote enable, its workflow synced before
// and a damaged line in its journal ahead of a run set here, could not learn whether the run
// was this clone's and told the person to run cairn remote enable again, which fails alike
// every time. It names the step that helps: restoring the journal.
func TestEnableOverABrokenJournalSaysTheRestore(t *testing.T) {
	t.Parallel()
	file, _ := sharedRepo(t)
	a := newMachine(t, file)
	a.must("start", "apex", "claims", "--id", "wf-1")
	a.must("remote", "enable", "--yes")
	a.must("sync")
	a.must("remote", "disable")
	for i := range 6 {
		a.must("vars", "set", "WF_N", fmt.Sprint(i))
	}
	jf := filepath.Join(a.dir, ".claude", "cairn", "journal", "wf-1.jsonl")
	data, err := os.ReadFile(jf)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	bad := len(lines) - 4
	lines[bad] = bytes.Replace(lines[bad], []byte(`"sum":"`), []byte(`"sum":"0`), 1)
	if err := os.WriteFile(jf, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
	a.must("task", "t1", "running")
	_, _, errb := a.cairn("remote", "enable", "--yes")
	if !strings.Contains(errb, "is broken): "+remotesync.RestoreStep+", then run cairn remote enable origin again") {
		t.Fatalf("enable over a broken journal says to run it again, which fails alike: %q", errb)
	}
}
