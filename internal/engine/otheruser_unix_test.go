//go:build unix

package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/vars"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// TestResumeOverAnotherUsersJournal: after cairn run with sudo, the snapshot gone and the
// journal root's (0600, in a journal/ of root's), this user's resume_check and cairn status
// warned only "reading journal ...: permission denied" and said to "make it a readable file
// again, or restore it": no command that works, and a restore is no step for an agent. With
// journal/ root's 0700 they said the state is missing and to start the work again. They
// say whose the journal is and give the chown that gives the state directory back. cairn
// doctor's fix for the root's journal was to mv it into quarantine/ (a move of state, which
// the root's journal/ refuses anyway): it is the chown.
func TestResumeOverAnotherUsersJournal(t *testing.T) {
	t.Parallel()
	for _, mode := range []os.FileMode{0o755, 0o700} {
		t.Run(mode.String(), func(t *testing.T) { resumeOverAnotherUsersJournal(t, mode) })
	}
}

func resumeOverAnotherUsersJournal(t *testing.T, journalMode os.FileMode) {
	t.Helper()
	if p := os.Getenv("CAIRN_TEST_RESUME_AS_OTHER"); p != "" {
		en, err := engine.Open(engine.Config{Getenv: func(k string) string {
			return map[string]string{"HOME": filepath.Join(p, "home"), "CLAUDE_PROJECT_DIR": p}[k]
		}, WorkDir: p, SessionID: "s2", Actor: "test", YAML: yamldoc.Codec{}})
		if err != nil {
			fmt.Print(err)
			os.Exit(0)
		}
		for _, person := range []bool{false, true} {
			r := en.Resume(engine.ResumeOptions{Person: person})
			fmt.Printf("next: %s\nwarnings: %s\n", r.Next, strings.Join(r.Warnings, " | "))
		}
		for _, c := range en.Doctor(engine.DoctorOptions{}) {
			if c.Name == "workflow state" && !c.OK {
				fmt.Printf("doctor: %s\nfix: %s\n", c.Detail, c.Fix)
			}
		}
		os.Exit(0)
	}
	base, asNobody := durabletest.AsNobody(t)
	e := newEnv(t)
	e.project, e.home = filepath.Join(base, "proj"), filepath.Join(base, "proj", "home")
	e.vars = map[string]string{"HOME": e.home, "CLAUDE_PROJECT_DIR": e.project}
	for _, d := range []string{filepath.Join(e.project, ".git"), e.home} {
		noErr(t, os.MkdirAll(d, 0o755))
	}
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "under sudo"}))(t)
	noErr(t, en.Close())
	state := filepath.Join(e.project, ".claude", "cairn")
	noErr(t, os.Remove(filepath.Join(state, "workflow-state.json")))
	noErr(t, filepath.Walk(e.project, func(f string, _ os.FileInfo, err error) error {
		if err != nil || strings.Contains(f, "journal") {
			return err // journal/ and its files stay root's
		}
		return os.Lchown(f, durabletest.NobodyUID, durabletest.NobodyUID)
	}))
	noErr(t, os.Chmod(filepath.Join(state, "journal"), journalMode))
	got := asNobody("CAIRN_TEST_RESUME_AS_OTHER=" + e.project)
	for _, want := range []string{"belongs to uid 0", "sudo chown -R 65534 " + vars.Quote(state)} {
		if !strings.Contains(got, want) {
			t.Errorf("as nobody: %q; want %q", got, want)
		}
	}
	for _, line := range strings.Split(got, "\n") {
		if strings.HasPrefix(line, "fix: ") && (strings.Contains(line, "mv ") || !strings.Contains(line, "sudo chown -R 65534 "+vars.Quote(state))) {
			t.Errorf("doctor's fix: %q; want the chown, no move", line)
		}
		if strings.HasPrefix(line, "next: ") && (strings.Contains(line, "restore") || !strings.Contains(line, "chown")) {
			t.Errorf("next step: %q; want the chown, no restore", line)
		}
		if strings.HasPrefix(line, "next: ") && (strings.Contains(line, "missing") || strings.Contains(line, "start it again")) {
			t.Errorf("as nobody: %q; the state is there", line)
		}
	}
}
