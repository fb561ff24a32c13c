package mcptools_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSaveCheckpointSameDataAgain: saving a checkpoint with the data it already holds says that
// nothing changed, as set_vars and update_task do; changed: true would tell the model that an
// earlier save had not landed.
func TestSaveCheckpointSameDataAgain(t *testing.T) {
	_, c := realServer(t)
	for i, tc := range []struct {
		data    string
		changed bool
	}{{`{"a":1}`, true}, {`{"a":1}`, false}, {`{"a":2}`, true}} {
		res := mustOK(t, c, "save_checkpoint", `{"name":"plan","data":`+tc.data+`}`)
		s := structured(t, res)
		if s["changed"] != tc.changed {
			t.Errorf("save %d of %s: changed %v, want %v (%s)", i+1, tc.data, s["changed"], tc.changed, text(res))
		}
		if got := text(res); strings.Contains(got, "nothing changed") == tc.changed {
			t.Errorf("save %d of %s: text %q", i+1, tc.data, got)
		}
	}
}

// TestWritesEndWithTheNextStep: every write that succeeds ends its first line with the one step
// that follows, also under "next" in the structured content (which Claude Code shows the model
// instead of the text); complete_workflow names the workflow it ended. No tool reads a log
// back: append_log names the cairn command, on the agent's PATH, that does.
func TestWritesEndWithTheNextStep(t *testing.T) {
	_, c := realServer(t)
	id := structured(t, mustOK(t, c, "start_workflow", `{"type":"debug","context":"steps"}`))["workflow_id"].(string)
	for _, tc := range []struct{ tool, args, want string }{
		{"save_checkpoint", `{"name":"plan","data":{"a":1}}`, "load_checkpoint"},
		{"append_log", `{"name":"decisions","entry":{"a":1}}`, "`cairn log show decisions` in your Bash tool"},
		{"record_learning", `{"title":"Build cache","body":"kept"}`, "auto-memory"},
		{"complete_workflow", `{"outcome":"fixed"}`, "start_workflow"},
	} {
		res := mustOK(t, c, tc.tool, tc.args)
		next, _ := structured(t, res)["next"].(string)
		first, _, _ := strings.Cut(text(res), "\n")
		// The model is given tool names, and a command for its Bash tool where no tool does it.
		if next == "" || !strings.Contains(next, tc.want) || !strings.HasSuffix(first, " "+next) || strings.Contains(next, "`cairn") && !strings.Contains(next, "in your Bash tool") {
			t.Errorf("%s: next %q, first line %q: want the step (naming %s) at the end of both", tc.tool, next, first, tc.want)
		}
		if tc.tool == "complete_workflow" && !strings.Contains(first, id) {
			t.Errorf("complete_workflow: %q does not name workflow %s", first, id)
		}
	}
}

// TestInitiativeRefusesArgumentsItWouldDrop: an argument the action does not use (note outside
// add_milestone, title outside create, ...) is refused naming it, and nothing is changed;
// dropped without a word, the model would believe its note or title was kept.
func TestInitiativeRefusesArgumentsItWouldDrop(t *testing.T) {
	_, c := realServer(t)
	mustOK(t, c, "initiative", `{"action":"create","title":"Ship it"}`)
	mustOK(t, c, "initiative", `{"action":"add_milestone","milestone":"m1","note":"Design"}`)
	before := text(mustOK(t, c, "initiative", `{"action":"get"}`))
	for _, tc := range []struct{ args, arg string }{
		{`{"action":"set_status","status":"in_progress","note":"waiting on review"}`, "note"},
		{`{"action":"update_milestone","milestone":"m1","status":"in_progress","note":"started"}`, "note"},
		{`{"action":"create","title":"Another","note":"why"}`, "note"},
		{`{"action":"get","note":"why"}`, "note"},
		{`{"action":"add_milestone","milestone":"m2","title":"Build"}`, "title"},
		{`{"action":"set_status","status":"in_progress","milestone":"m1"}`, "milestone"},
		{`{"action":"get","status":"completed"}`, "status"},
	} {
		mustFail(t, c, "initiative", tc.args, "initiative was not run (nothing was changed)", `does not take argument "`+tc.arg+`"`)
	}
	if after := text(mustOK(t, c, "initiative", `{"action":"get"}`)); after != before {
		t.Errorf("a refused call changed the initiative:\nbefore %s\nafter  %s", before, after)
	}
}

// TestStoreNoticesReachTheModel: a damaged snapshot, which the store sets aside in quarantine
// and rebuilds from the journal, is told in the result of the call that found it, whatever the
// tool and whether it succeeds. The server's own look at the workflow before each call read it
// first and dropped what the store said, so no result ever told it: the files were in
// quarantine while every result read as if nothing had happened.
func TestStoreNoticesReachTheModel(t *testing.T) {
	p, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"debug","context":"vars"}`)
	mustOK(t, c, "set_vars", `{"vars":{"PLAN_PATH":"docs/plan.md"}}`)
	for _, tc := range []struct{ tool, args string }{
		{"get_vars", `{}`},
		{"set_vars", `{"vars":{"PLAN_PATH":"docs/plan-2.md"}}`},
		{"resume_check", `{}`},
		{"list_checkpoints", `{}`},
		{"transition", `{"to":"nowhere"}`},
	} {
		if err := os.WriteFile(filepath.Join(p.state, "workflow-state.json"), []byte("{{{"), 0o600); err != nil {
			t.Fatal(err)
		}
		res := callRaw(t, c, tc.tool, tc.args)
		if got := text(res); !strings.Contains(got, "\nWarning: ") || !strings.Contains(got, "quarantine") {
			t.Errorf("%s over a snapshot set aside says nothing of it: %q", tc.tool, got)
		}
		if res.IsError {
			continue
		}
		if ws, _ := structured(t, res)["warnings"].([]any); len(ws) == 0 {
			t.Errorf("%s over a snapshot set aside: no warnings in the structured content", tc.tool)
		}
	}
	if got := text(mustOK(t, c, "get_vars", `{}`)); got != "PLAN_PATH=docs/plan-2.md" {
		t.Errorf("get_vars after the rebuilds: %q", got)
	}
}
