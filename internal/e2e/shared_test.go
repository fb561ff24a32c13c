package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/e2e/mockapi"
)

// Issue 17 in the real client: two machines (two Worlds, each its own clone, HOME and state)
// share a workflow through a bare repository over file://. Machine A's agent claims task t1
// through update_task; machine B's session is told the workflow is shared, and its agent's
// claim of the same task is refused in one line naming A's owner, with B's state unchanged.
func TestCairnSharedClaimAcrossMachines(t *testing.T) {
	t.Parallel()
	a, b, _ := sharedPair(t, "wf-shared")

	claim := func(w *World, marker string) *Run {
		w.Mock.Script(
			mockapi.On(mockapi.All(mockapi.IsMain, mockapi.LastUserContains(marker)),
				mockapi.ToolUse(cairnTool("update_task"), map[string]any{"id": "t1", "status": "running"})).Named("claim t1"),
			mockapi.On(afterToolResult, mockapi.Text("claimed or not")).Named("after"),
		)
		r := w.runScript(t, RunOptions{Prompt: marker + ": take task t1"})
		return r
	}

	ra := claim(a, "CLAIM-A")
	trs := requireToolResultsOK(t, ra, 1)
	if st := a.readState(t); len(st.Tasks) != 1 || st.Tasks[0].Status != "running" {
		t.Fatalf("machine A's claim did not set t1 running: %+v (result %s)", st.Tasks, trs[0].Text)
	}
	owner := readFile(t, filepath.Join(a.stateDir(), "claims.json"))

	rb := claim(b, "CLAIM-B")
	if report := cairnReport(t, rb.FirstMain(t)); !strings.Contains(report, "shared via origin:") {
		t.Errorf("machine B's report does not say the workflow is shared:\n%s", report)
	}
	res := rb.ToolResults()
	if len(res) != 1 || !res[0].IsError {
		t.Fatalf("machine B's claim of a task A holds was not refused: %+v", res)
	}
	// The refusal is the first line that is not a notice: B's background sync may have pulled
	// A's revision just before the call, and a result then starts with "Notice: another
	// machine moved workflow ..." (see mcptools.Instructions).
	var line string
	for l := range strings.Lines(res[0].Text) {
		if !strings.HasPrefix(l, "Notice: ") {
			line = strings.TrimSuffix(l, "\n")
			break
		}
	}
	t.Logf("machine B was told: %s", res[0].Text)
	if !strings.Contains(line, "task t1 is held by ") || !strings.Contains(line, "nothing was changed") {
		t.Errorf("the refusal does not name the holder and say nothing changed: %q", line)
	}
	if i := strings.Index(line, "held by "); i < 0 || !strings.Contains(owner, strings.Fields(line[i+len("held by "):])[0]) {
		t.Errorf("the refusal %q does not name A's owner (A's claims.json: %s)", line, owner)
	}
	// B's refused claim changes nothing: t1 stays pending as B pulled it, unless B's
	// background sync pulled A's claim first, in which case B's t1 is A's to the nanosecond
	// (a claim of B's own would carry B's start time).
	if st := b.readState(t); len(st.Tasks) != 1 || st.Tasks[0].Status != "pending" {
		if got, want := tasksOf(t, b), tasksOf(t, a); got != want {
			t.Errorf("machine B's refused claim changed its task: %s (A holds %s)", got, want)
		}
	}
}

// sharedPair makes two machines (two Worlds, each its own clone, HOME and state) sharing
// through a bare repository over file:// (bare): A starts workflow id with a pending task t1
// and pushes it, and B pulls it.
func sharedPair(t *testing.T, id string) (a, b *World, bare string) {
	t.Helper()
	bare = filepath.Join(t.TempDir(), "shared.git")
	gitIn(t, "", "init", "-q", "--bare", bare)
	a, b = newWorld(t, cairnPlugin), newWorld(t, cairnPlugin)
	for _, w := range []*World{a, b} {
		gitIn(t, w.Project, "remote", "add", "origin", "file://"+bare)
		w.cairn(t, "remote", "enable")
	}
	a.cairn(t, "start", "debug", "flaky upload test", "--id", id)
	a.cairn(t, "task", "t1", "pending")
	a.cairn(t, "sync")
	if out := b.cairn(t, "sync"); !strings.Contains(out, id+": pulled") {
		t.Fatalf("machine B did not pull the workflow: %s", out)
	}
	return a, b, bare
}

// tasksOf returns the active record's tasks on w as JSON.
func tasksOf(t *testing.T, w *World) string {
	t.Helper()
	var r struct{ Tasks json.RawMessage }
	readJSON(t, filepath.Join(w.stateDir(), "workflow-state.json"), &r)
	return string(r.Tasks)
}

// cairn runs the plugin's own cairn binary in the World's project, as a person would, and
// returns its stdout; a failure fails the test.
func (w *World) cairn(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(w.Plugin, "bin", "cairn"), args...)
	cmd.Dir = w.Project
	cmd.Env = w.env([]string{"CLAUDE_PROJECT_DIR=" + w.Project})
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cairn %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// gitIn runs git in dir (or here, when dir is ""); a failure fails the test.
func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
