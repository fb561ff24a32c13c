//go:build linux

package store_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSyscallErrorsIntoRealProcess injects errors into the real system calls of a writer
// process with strace (which only injects into the calls it traces, so each case targets a
// file by path or a call by name): the writes fail, say so, and leave the old state intact.
func TestSyscallErrorsIntoRealProcess(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed; the in-process fault injection covers the same paths")
	}
	cases := []struct {
		name   string
		args   func(dir string) []string
		failed []string // operations that must report an error
	}{
		{"fsync-eio-everywhere", func(string) []string { return []string{"-e", "inject=fsync:error=EIO"} }, []string{"wf", "cp", "log"}},
		{"journal-write-enospc", func(dir string) []string {
			return []string{"-P", filepath.Join(dir, "journal", wfID+".jsonl"), "-e", "inject=write:error=ENOSPC"}
		}, []string{"wf"}},
		{"log-fsync-eio", func(dir string) []string {
			return []string{"-P", filepath.Join(dir, "logs", "events.jsonl"), "-e", "inject=fsync:error=EIO"}
		}, []string{"log"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cairn")
			s := mustOpen(t, dir)
			seed(t, s)
			args := append([]string{"-f", "-qq", "-o", "/dev/null"}, c.args(dir)...)
			args = append(args, os.Args[0], "-test.run=^$")
			cmd := exec.Command(strace, args...)
			cmd.Env = append(os.Environ(), helperEnv+"=once", "CAIRN_STORE_TEST_DIR="+dir)
			out, err := cmd.CombinedOutput()
			if err != nil {
				if strings.Contains(string(out), "not permitted") || strings.Contains(string(out), "ptrace") {
					t.Skipf("ptrace is not allowed here: %s", out)
				}
				t.Fatalf("writer under strace: %v\n%s", err, out)
			}
			t.Logf("writer said:\n%s", out)
			for _, what := range []string{"wf", "cp", "log"} {
				failed := strings.Contains(string(out), what+" err ")
				want := false
				for _, f := range c.failed {
					want = want || f == what
				}
				if failed != want {
					t.Errorf("%s failed=%v, want %v:\n%s", what, failed, want, out)
				}
			}
			// What failed kept its old version, whole; what succeeded holds the new one.
			w, err := s.ReadWorkflow()
			wantRev := int64(2)
			if strings.Contains(string(out), "wf err ") {
				wantRev = 1
			}
			if err != nil || w.Revision != wantRev {
				t.Errorf("workflow %+v %v, want revision %d", w, err, wantRev)
			}
			l, err := s.ReadLog("events")
			wantLines := 2
			if strings.Contains(string(out), "log err ") {
				wantLines = 1
			}
			if err != nil || len(l.Lines) != wantLines || l.Torn != 0 || l.Invalid != 0 {
				t.Errorf("log %q torn %d, want %d lines", l.Lines, l.Torn, wantLines)
			}
			// And the next writer, untraced, carries on.
			if _, err := s.UpdateWorkflow(setNext(wfID, "implement")); err != nil {
				t.Errorf("update afterwards: %v", err)
			}
		})
	}
}
