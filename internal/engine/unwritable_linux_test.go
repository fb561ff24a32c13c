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

// A state directory this user cannot write (another user's, a read-only mount) was reported
// with the warning "Cannot write state files — workflow state will not persist" and the step
// "Continue phase analyze": every change the model then made was refused. The step is now the
// one that helps: cairn doctor, which names the cause and its fix; no work before.
func TestUnwritableStateStep(t *testing.T) {
	t.Parallel()
	e, _ := startApex(t)
	dir := filepath.Join(e.project, ".claude", "cairn")
	durabletest.Mount(t, dir, dir, "", syscall.MS_BIND, "", true)
	for _, c := range []struct {
		person bool
		want   string
	}{
		{false, "The workflow state cannot be written (see the warning), so no change to it would be kept: ask the user to run `cairn doctor`, which says what to fix, then call " + engine.ToolPrefix + "resume_check again; start no new work before."},
		{true, "The workflow state cannot be written, so no change to it would be kept: run `cairn doctor`, which says what to fix; start no new work before."},
	} {
		r := e.open("s2").Resume(engine.ResumeOptions{Apply: true, Person: c.person})
		if r.Next != c.want || r.WorkflowID == "" || !strings.Contains(r.Report, "Cannot write state files") {
			t.Errorf("person %v: next %q\nwant %q\n%s", c.person, r.Next, c.want, r.Report)
		}
	}
}

// With no workflow and a state directory this user cannot write, the session start said
// "Nothing to resume; go on with the user's request." beside "Cannot write state files": the
// user was never told, and a workflow the model then started was refused. Like a full disk,
// it says no workflow can be recorded, with the one step: cairn doctor, which names the fix.
func TestUnwritableStateStepWithoutWorkflow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.open("s1").Close() // the state directory made, with no workflow
	dir := filepath.Join(e.project, ".claude", "cairn")
	durabletest.Mount(t, dir, dir, "", syscall.MS_BIND, "", true)
	for _, c := range []struct {
		person bool
		want   string
	}{
		{false, "No workflow can be recorded (see the warning): ask the user to run `cairn doctor`, which says what to fix. Then go on with the user's request; a workflow can be started once the state directory is writable."},
		{true, "No workflow can be recorded: run `cairn doctor`, which says what to fix."},
	} {
		r := e.open("s2").Resume(engine.ResumeOptions{Apply: true, Person: c.person})
		if r.Next != c.want || !strings.Contains(r.Report, "Cannot write state files") {
			t.Errorf("person %v: next %q\nwant %q\n%s", c.person, r.Next, c.want, r.Report)
		}
	}
}

// With only memory's position line and a state directory this user cannot write, the session
// start told the model to call start_workflow if the work goes on, which would be refused. It
// says, as with nothing at all, that no workflow can be recorded and the step that helps.
func TestUnwritableStateStepWithOnlyMemory(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "gone"}))(t)
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	state := en.StateDir()
	for _, f := range []string{"workflow-state.json", "journal"} {
		noErr(t, os.RemoveAll(filepath.Join(state, f)))
	}
	durabletest.Mount(t, state, state, "", syscall.MS_BIND, "", true)
	r := e.open("s2").Resume(engine.ResumeOptions{Apply: true})
	if r.Tier != "L2-only" || strings.Contains(r.Next, "start_workflow") || !strings.Contains(r.Next, "cairn doctor") {
		t.Errorf("tier %s, next %q", r.Tier, r.Next)
	}
}
