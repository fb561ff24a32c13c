package cli_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/cli"
)

// fullWriter is stdout on a full disk: every write fails.
type fullWriter struct{ writes int }

func (w *fullWriter) Write([]byte) (int, error) {
	w.writes++
	return 0, errors.New("no space left on device")
}

// Output that could not be written is a failure, in the text form as in --json: cairn
// log show > saved.jsonl on a full disk must not exit 0 with the entries lost. It is exit 3,
// something broke, not 1: a script reads 1 from checkpoint load as "missing".
func TestStdoutWriteFails(t *testing.T) {
	p := newCLIProject(t)
	mustRun(t, p, "", "start", "apex", "output check")
	mustRun(t, p, "", "checkpoint", "save", "plan", `{"a":1}`)
	mustRun(t, p, "", "log", "append", "bench", `{"ms":1}`)
	mustRun(t, p, "", "vars", "set", "WF_A", "b")
	for _, args := range [][]string{
		{"status"}, {"status", "--json"}, {"show"}, {"list"}, {"history"}, {"types"}, {"help"},
		{"help", "status"}, {"version"}, {"checkpoint", "list"}, {"checkpoint", "load", "plan"},
		{"log", "show", "bench"}, {"vars", "get", "WF_A"}, {"vars", "export"},
		{"transition", "plan"},
	} {
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			var w fullWriter
			var stderr bytes.Buffer
			code := cli.Main(args, strings.NewReader(""), &w, &stderr, p.getenv)
			if w.writes == 0 {
				t.Fatalf("cairn %v wrote nothing (exit %d: %s)", args, code, stderr.String())
			}
			if code != cli.ExitInternal || !strings.Contains(stderr.String(), "no space left on device") {
				t.Errorf("cairn %v with its output lost: exit %d, stderr %q; want exit 3 (not 1, refused or not found) and why", args, code, stderr.String())
			}
		})
	}
}
