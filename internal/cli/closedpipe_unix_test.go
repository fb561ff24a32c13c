//go:build unix

package cli_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReaderLeftEarly: a reader that leaves before cairn has written (cairn history | head -1
// once head has its line) ends cairn as it ends any Unix tool: by SIGPIPE (exit 141 in a
// shell, which set -o pipefail sees), with nothing on stderr. The help and the README said
// exit 3 for any output that could not be written; they now say this. watch and statusline,
// which promise exit 0 then, are TestClosedPipe's.
func TestReaderLeftEarly(t *testing.T) {
	t.Parallel()
	dir, env := project(t)
	run(t, dir, env, "start", "apex", "piped")
	for _, args := range [][]string{{"status"}, {"show"}, {"history"}, {"list", "--json"}, {"help"}} {
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			r.Close()
			cmd := cairnCmd(t, dir, env, args...)
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = w, &stderr
			err = cmd.Run()
			w.Close()
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if _, exited := err.(*exec.ExitError); !exited && err != nil || !ws.Signaled() || ws.Signal() != syscall.SIGPIPE || stderr.Len() > 0 {
				t.Errorf("cairn %v with its reader gone: %v, stderr %q; want it ended by SIGPIPE, nothing said", args, cmd.ProcessState, stderr.String())
			}
		})
	}
	help, err := cairnCmd(t, dir, env, "help").Output()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for where, text := range map[string]string{"cairn help": string(help), "README.md": string(readme)} {
		if !strings.Contains(strings.Join(strings.Fields(text), " "), "ends cairn by SIGPIPE") {
			t.Errorf("%s does not say that a reader leaving early ends cairn by SIGPIPE", where)
		}
	}
}
