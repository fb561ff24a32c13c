package engine_test

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// Auto-memory switched off by the user is a choice, not a fault. The session start of a project
// with nothing to resume printed a report all the same, at every session of every project,
// warning "Auto-memory unavailable — learnings will not persist": a fault's words, naming no
// setting, with no step. It now says nothing there, and a workflow's report carries no such
// warning; memory that cannot be used for a fault is still warned of.
func TestAutoMemoryOffIsNoWarning(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		set      func(e *env)
		workflow bool
		warned   bool
	}{
		{"off by the variable, nothing to resume", func(e *env) { e.vars["CLAUDE_CODE_DISABLE_AUTO_MEMORY"] = "1" }, false, false},
		{"off by the variable, a workflow", func(e *env) { e.vars["CLAUDE_CODE_DISABLE_AUTO_MEMORY"] = "1" }, true, false},
		{"off by the setting, nothing to resume", func(e *env) {
			writeFiles(e.t, e.home, map[string]string{".claude/settings.json": `{"autoMemoryEnabled": false}`})
		}, false, false},
		{"off in --bare, a workflow", func(e *env) { e.vars["CLAUDE_CODE_SIMPLE"] = "1" }, true, false},
		{"a repository's directory Cairn refuses, nothing to resume", func(e *env) {
			writeFiles(e.t, e.project, map[string]string{".claude/settings.json": `{"autoMemoryDirectory": "/elsewhere/memory"}`})
		}, false, true},
		{"a directory that cannot be named, nothing to resume", func(e *env) { e.vars["CAIRN_MEMORY_DIR"] = "~" }, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			c.set(e)
			if c.workflow {
				must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "the work"}))(t)
			}
			r := e.open("s2").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
			warned := strings.Contains(r.Report, "Auto-memory unavailable") || containsAny(r.Warnings, "Auto-memory unavailable")
			if warned != c.warned {
				t.Errorf("warned %v, want %v: warnings %q, report:\n%s", warned, c.warned, r.Warnings, r.Report)
			}
			if !c.workflow && !c.warned && r.Report != "" {
				t.Errorf("nothing to resume, yet a report:\n%s", r.Report)
			}
			if c.workflow && r.Tier != "Minimal" {
				t.Errorf("tier %s, want Minimal", r.Tier)
			}
		})
	}
}

// TestAutoMemoryOffMovesWarnNothing: with auto-memory switched off by the user, every move
// that owes an L2 line told the model "Auto-memory is off (…): Cairn writes no L2 lines", in
// each result, for a choice that is no fault; the moves say nothing of it.
func TestAutoMemoryOffMovesWarnNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.vars["CLAUDE_CODE_DISABLE_AUTO_MEMORY"] = "1"
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "the work"}))(t)
	res := must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	if containsAny(res.Warnings, "Auto-memory") {
		t.Errorf("the move warns %q", res.Warnings)
	}
}
