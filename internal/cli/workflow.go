package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote/claimsync"
	"github.com/cairn-dev/cairn/internal/textsafe"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// strs is a repeatable string flag (--output a --output b).
type strs []string

func (s *strs) String() string     { return strings.Join(*s, ",") }
func (s *strs) Set(v string) error { *s = append(*s, v); return nil }

func runStart(a *app, pos []string, _ *engine.Engine) error {
	req := engine.StartRequest{Type: pos[0], Context: pos[1], WorkflowID: a.opt.id, Scope: a.opt.scope, TTL: a.opt.ttl,
		Replace: a.opt.replace}
	e, err := a.engineChecked(func(e *engine.Engine) error { return startRefused(e, req, e.CheckStart(req)) })
	if err != nil {
		return err
	}
	res, err := e.Start(req)
	if err != nil {
		return startRefused(e, req, err)
	}
	return a.told(res, nil)
}

// startRefused is start's refusal err; for a type that is none, said as cairn types says it,
// with the definitions that do not load, as the engine's refusal names them.
func startRefused(e *engine.Engine, req engine.StartRequest, err error) error {
	if err == nil {
		return nil
	}
	if names := e.Definitions(); !slices.Contains(names, workflow.NormalizeName(req.Type)) {
		return e.WithDefinitionErrors(noType(req.Type, names))
	}
	return err
}

// noType refuses name, which is no workflow type of names: named when plain enough to
// repeat, with the nearest types, or all of them.
func noType(name string, names []string) error {
	return fmt.Errorf("no workflow type%s%s", named(name), hint(name, names, "known types are "+strings.Join(names, ", ")))
}

func runTransition(a *app, pos []string, _ *engine.Engine) error {
	req := engine.TransitionRequest{To: pos[len(pos)-1], From: a.opt.from, Note: a.opt.note, Outputs: a.opt.outputs,
		Checkpoint: json.RawMessage(a.opt.checkpoint)} // empty: no checkpoint
	if len(pos) == 2 {
		// sm_transition FROM TO, the seed's two-argument form.
		if req.From != "" && req.From != pos[0] {
			if named(pos[0]) == "" || named(req.From) == "" {
				return a.usageErr("FROM given twice and different: as an argument and as --from")
			}
			return a.usageErr("FROM given twice and different: %q and --from %q", pos[0], req.From)
		}
		req.From = pos[0]
	}
	if len(req.Checkpoint) > 0 {
		// Said here in the command's words: the engine's would call [1] invalid JSON.
		const like = `give one JSON object, like '{"tests": "pass"}'`
		var v any
		if err := json.Unmarshal(req.Checkpoint, &v); err != nil {
			return fmt.Errorf("--checkpoint is not JSON%s: %s", wrongAt(err), like)
		}
		if _, ok := v.(map[string]any); !ok {
			return fmt.Errorf("--checkpoint is JSON but not an object: %s", like)
		}
	}
	e, err := a.engine()
	if err != nil {
		return err
	}
	res, err := e.Transition(req)
	if err != nil {
		if d, _ := a.active(); d != nil {
			for _, p := range []string{req.To, req.From} {
				if p == "" || d.HasPhase(p) {
					continue
				}
				near := d.Phases
				if te, ok := errors.AsType[*workflow.TransitionError](err); ok && p == req.To {
					// A phase the move may not go to would be refused too.
					near = te.Allowed
				}
				return fmt.Errorf("%w%s", err, hint(p, near, ""))
			}
		}
		return err
	}
	if !res.Changed {
		// Seed 003: a same-state transition is a success that says so, on stderr.
		fmt.Fprintf(a.stderr, "INFO: %s\n", textsafe.OneLine(res.Message))
		if !a.json {
			a.next(a.stderr, res) // stdout stays clean, as seed 003 has it
		}
		return a.wrote(res, nil)
	}
	if len(res.Allowed) > 0 && !a.json {
		res.Message += "; " + workflow.NextPhases + ": " + strings.Join(res.Allowed, ", ")
	}
	return a.told(res, nil)
}

func runComplete(a *app, pos []string, _ *engine.Engine) error {
	if strings.TrimSpace(pos[0]) == "" {
		// Checked before the engine opens, so it creates no state; refused (exit 1) as an
		// empty CONTEXT for start is: the command line is right, its value is not.
		return errors.New("OUTCOME is empty: say in one line what was achieved")
	}
	e, err := a.engine()
	if err != nil {
		return err
	}
	if a.inClaudeCode() {
		// The agent's Bash: as complete_workflow, refused in a phase waiting for a yes.
		return a.told(e.Complete(pos[0]))
	}
	// A person is the approver: they may end a workflow waiting for their yes.
	return a.told(e.CompleteByPerson(pos[0]))
}

// inClaudeCode reports whether cairn runs in a shell Claude Code started: Claude Code 2.1.330
// gives every one (the agent's Bash tool, a slash command's shell block, the hooks) CLAUDECODE
// and its session in CLAUDE_CODE_SESSION_ID and CLAUDE_CODE_CHILD_SESSION. There the agent
// could give a person's yes itself, so the gate would not gate; a person does from a terminal
// of their own.
func (a *app) inClaudeCode() bool { return a.claudeCodeVar() != "" }

// claudeCodeVar names the first of Claude Code's variables set here, "" when none is.
func (a *app) claudeCodeVar() string {
	for _, k := range []string{"CLAUDECODE", "CLAUDE_CODE_SESSION_ID", "CLAUDE_CODE_CHILD_SESSION"} {
		if a.getenv(k) != "" {
			return k
		}
	}
	return ""
}

func runApprove(a *app, pos []string, e *engine.Engine) error {
	if k := a.claudeCodeVar(); k != "" {
		return &codeError{code: ExitRefused, msg: "not approved: this shell was started by Claude Code (" + k + " is set), where the agent could run it too; a person runs cairn approve in a terminal of their own"}
	}
	return a.told(e.Approve(optional(pos, "")))
}

func runTask(a *app, pos []string, e *engine.Engine) error {
	if n := len(a.opt.outputs); n > 1 {
		return a.usageErr("--output given %d times: a task records one output (transition takes several)", n)
	}
	req := engine.TaskRequest{ID: pos[0], Status: pos[1], Output: optional(a.opt.outputs, ""), Note: a.opt.note}
	// With sharing on, running claims the task on the remote first (claimsync).
	o := claimsync.Options{StateDir: e.StateDir(), Root: e.ProjectRoot(), Getenv: a.getenv}
	// Its git, in a session of its own, ends with cairn on Ctrl-C, SIGTERM or SIGHUP. With
	// sharing off no git runs: a signal ends cairn at once, as it does a transition, not after
	// the change is made; with it on, so does one while the change is made (local).
	ctx, done := a.ctx, func() {}
	st, s, err := remoteSettings(e)
	if err == nil {
		st.Close()
	}
	if err != nil || s.Enabled {
		ctx, done = a.remoteContext(syncTimeout)
	}
	defer done()
	res, err := claimsync.Task(ctx, o, req.ID, req.Status, func(rerun bool) (res *engine.Result, err error) {
		req.Rerun = rerun
		if !a.local(func() { res, err = e.UpdateTask(req) }) {
			return nil, ctx.Err() // ended by the signal (remoteContext)
		}
		return res, err
	})
	if errors.Is(err, workflow.ErrTaskStatus) {
		names := make([]string, len(workflow.TaskStatuses))
		for i, s := range workflow.TaskStatuses {
			names[i] = string(s)
		}
		err = fmt.Errorf("%w%s", err, hint(req.Status, names, ""))
	}
	return a.told(res, err)
}
