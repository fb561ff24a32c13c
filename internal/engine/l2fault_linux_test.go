//go:build linux

package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/engine"
)

// An L2 line that cannot be written is owed in l2-state.json, and the warning says Cairn
// retries it. When l2-state.json cannot be written either (here its rename fails: a file is
// mounted on it; a full disk holding both is the same), nothing keeps the line: the warning
// said it was retried, and no Stop ever wrote it (a completion's line, which no journal
// gives again). It now says the line could not be kept to be retried, and why; a settling's
// lines, which stay owed in the l2-state.json it could not replace, are still said retried.
func TestL2LineNotOwedWhenL2StateCannotBeWritten(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	unblock := e.blockMemory(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "owed"}))(t)
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t) // owes a line: l2-state.json is there
	st := filepath.Join(en.StateDir(), "l2-state.json")
	other := filepath.Join(t.TempDir(), "l2-state.json")
	b, err := os.ReadFile(st)
	noErr(t, err)
	noErr(t, os.WriteFile(other, b, 0o600))
	unmount := durabletest.Mount(t, other, st, "", syscall.MS_BIND, "", false)
	// A settling whose lines stay owed in the l2-state.json it could not replace says they
	// are retried, as they are.
	if out := must(en.Stop(engine.StopInput{SessionID: "s1"}))(t); !strings.Contains(out.SystemMessage, "Cairn retries after the next turn") || strings.Contains(out.SystemMessage, "nor could it") {
		t.Errorf("stop said %q; want the owed line retried", out.SystemMessage)
	}
	res := must(en.CompleteByPerson("shipped"))(t)
	w := strings.Join(res.Warnings, "\n")
	if !strings.Contains(w, "auto-memory line not written") || strings.Contains(w, "retries") ||
		!strings.Contains(w, "nor could it be kept to be retried") || !strings.Contains(w, "l2-state.json") {
		t.Errorf("warnings %q: want the line not written, not promised a retry, and l2-state.json named", res.Warnings)
	}
	unmount()
	unblock()
	if out := must(en.Stop(engine.StopInput{SessionID: "s1"}))(t); len(out.Wrote) != 1 || !strings.Contains(out.Wrote[0], "planning") {
		t.Errorf("stop wrote %q once it could; want the line owed since the move to plan", out.Wrote)
	}
}
