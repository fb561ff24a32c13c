package cli_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"slices"
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
// something broke, not 1: a script reads 1 from checkpoint load as "missing". cairn
// statusline alone, run by Claude Code's status bar, says why and exits 0 as it promises.
func TestStdoutWriteFails(t *testing.T) {
	t.Parallel()
	p := newCLIProject(t)
	mustRun(t, p, "", "start", "apex", "output check")
	mustRun(t, p, "", "checkpoint", "save", "plan", `{"a":1}`)
	mustRun(t, p, "", "log", "append", "bench", `{"ms":1}`)
	mustRun(t, p, "", "vars", "set", "WF_A", "b")
	if code, out := p.run("", "doctor"); code != cli.ExitRefused {
		t.Fatalf("cairn doctor: exit %d: %s; want a check failed here", code, out)
	}
	for _, args := range [][]string{
		{"status"}, {"status", "--json"}, {"show"}, {"list"}, {"history"}, {"types"}, {"help"},
		{"help", "status"}, {"version"}, {"checkpoint", "list"}, {"checkpoint", "load", "plan"},
		{"log", "show", "bench"}, {"vars", "get", "WF_A"}, {"vars", "export"},
		{"transition", "plan"}, {"statusline"}, {"statusline", "--json"},
		// doctor's report, lost, is no "check failed" (exit 1) either: here a check fails
		// (no plugin is installed), and which one is in the report.
		{"doctor"}, {"doctor", "--json"},
	} {
		want := cli.ExitInternal
		if args[0] == "statusline" {
			want = cli.ExitOK
		}
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			var w fullWriter
			var stderr bytes.Buffer
			code := cli.Main(args, strings.NewReader(""), &w, &stderr, p.getenv)
			if w.writes == 0 {
				t.Fatalf("cairn %v wrote nothing (exit %d: %s)", args, code, stderr.String())
			}
			if code != want || !strings.Contains(stderr.String(), "the output could not be written: no space left on device") {
				t.Errorf("cairn %v with its output lost: exit %d, stderr %q; want exit %d (3, not 1, refused or not found; statusline 0) and why", args, code, stderr.String(), want)
			}
		})
	}
}

// A working directory removed under the shell (rm -rf of the directory it stands in) is
// said as that: what failed is finding the working directory, not some state file.
func TestWorkingDirectoryRemoved(t *testing.T) {
	dir := t.TempDir() + "/gone"
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"status"}, {"start", "apex", "work"}} {
		var stdout, stderr bytes.Buffer
		code := cli.Main(args, strings.NewReader(""), &stdout, &stderr, func(string) string { return "" })
		if code != cli.ExitInternal || !strings.Contains(stderr.String(), "finding the working directory") ||
			!strings.Contains(stderr.String(), "cd into the project") || strings.Contains(stderr.String(), "state directory") {
			t.Errorf("cairn %v in a removed directory: exit %d, stderr %q; want exit 3 saying the working directory is not found, and to cd into the project", args, code, stderr.String())
		}
	}
	// doctor says the same as its check: what failed, then the one step, not the refusal's step
	// followed by a fix about the state directory, which is not at fault.
	var stdout, stderr bytes.Buffer
	cli.Main([]string{"doctor", "--json"}, strings.NewReader(""), &stdout, &stderr, func(string) string { return "" })
	var rep struct {
		Checks []struct{ Name, Detail, Fix string }
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("doctor --json in a removed directory: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	i := slices.IndexFunc(rep.Checks, func(c struct{ Name, Detail, Fix string }) bool { return c.Name == "state directory" })
	if i < 0 {
		t.Fatalf("doctor in a removed directory has no state directory check: %+v", rep.Checks)
	}
	if c := rep.Checks[i]; !strings.HasPrefix(c.Detail, "finding the working directory: ") || strings.Contains(c.Detail, "cd into") ||
		c.Fix != "cd into the project, then run cairn doctor again" {
		t.Errorf("doctor in a removed directory: detail %q, fix %q; want what failed, then the one step, cd into the project", c.Detail, c.Fix)
	}
}

// TestLostOutputSaysTheChangeWasMade: a change whose report could not be written (a full
// disk) was made all the same; exit 3 and "the output could not be written" alone left a
// person or a script to guess, and to run it again into a refusal. The error says it was made.
func TestLostOutputSaysTheChangeWasMade(t *testing.T) {
	t.Parallel()
	p := newCLIProject(t)
	mustRun(t, p, "", "start", "apex", "output check")
	for _, tc := range []struct {
		args []string
		said string
	}{
		{[]string{"transition", "plan"}, "moved analyze -> plan"},
		{[]string{"task", "t1", "running", "--json"}, "task t1 is running"},
	} {
		var w fullWriter
		var stderr bytes.Buffer
		code := cli.Main(tc.args, strings.NewReader(""), &w, &stderr, p.getenv)
		if code != cli.ExitInternal || !strings.Contains(stderr.String(), "the output could not be written: no space left on device") ||
			!strings.Contains(stderr.String(), "the change was made ("+tc.said) {
			t.Errorf("cairn %v with its output lost: exit %d, stderr %q; want exit 3 saying the change was made (%s)", tc.args, code, stderr.String(), tc.said)
		}
	}
	if code, out := p.run("", "status", "--json"); code != 0 || !strings.Contains(out, `"phase": "plan"`) {
		t.Fatalf("status after: exit %d\n%s", code, out)
	}
}
