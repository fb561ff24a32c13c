package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote/claimsync"
	"github.com/cairn-dev/cairn/internal/textsafe"
)

// strs is a repeatable string flag (--output a --output b).
type strs []string

func (s *strs) String() string     { return strings.Join(*s, ",") }
func (s *strs) Set(v string) error { *s = append(*s, v); return nil }

func runStart(a *app, args []string) error {
	fs := a.flags()
	var req engine.StartRequest
	fs.StringVar(&req.WorkflowID, "id", "", "the workflow id (default: generated)")
	fs.StringVar(&req.Scope, "scope", "", "free-text scope, like standard")
	fs.StringVar(&req.TTL, "ttl", "", "inactivity after which it expires, like 24h")
	fs.BoolVar(&req.Replace, "replace", false, "archive an active workflow first")
	pos, e, err := a.open(fs, args, 2, 2)
	if err != nil {
		return err
	}
	req.Type, req.Context = pos[0], pos[1]
	res, err := e.Start(req)
	if err != nil {
		if names := e.Definitions(); !slices.Contains(names, req.Type) {
			return withHint(err, didYouMean(req.Type, names))
		}
		return err
	}
	return a.result(res, nil, false)
}

func runTransition(a *app, args []string) error {
	fs := a.flags()
	var req engine.TransitionRequest
	var outputs strs
	var checkpoint string
	fs.StringVar(&req.From, "from", "", "move only if the workflow is in this phase")
	fs.StringVar(&req.Note, "note", "", "a one-line note for the history")
	fs.Var(&outputs, "output", "an output of the phase being left (repeatable)")
	fs.StringVar(&checkpoint, "checkpoint", "", "a JSON object kept in the metadata of the phase being left")
	pos, err := a.parse(fs, args, 1, 2)
	if err != nil {
		return err
	}
	req.To = pos[len(pos)-1]
	if len(pos) == 2 {
		// sm_transition FROM TO, the seed's two-argument form.
		if req.From != "" && req.From != pos[0] {
			return &usageError{msg: fmt.Sprintf("FROM given twice and different: %q and --from %q", pos[0], req.From),
				cmd: a.name, usage: commands[a.name].usage}
		}
		req.From = pos[0]
	}
	req.Outputs = outputs
	if checkpoint != "" {
		req.Checkpoint = json.RawMessage(checkpoint)
	}
	e, err := a.engine()
	if err != nil {
		return err
	}
	res, err := e.Transition(req)
	if err != nil {
		if d, _ := a.active(); d != nil {
			for _, p := range []string{req.To, req.From} {
				if p != "" && !d.HasPhase(p) {
					return withHint(err, didYouMean(p, d.Phases))
				}
			}
		}
		return err
	}
	if !res.Changed {
		// Seed 003: a same-state transition is a success that says so, on stderr.
		fmt.Fprintf(a.stderr, "INFO: %s\n", textsafe.OneLine(res.Message))
		a.warn(res.Warnings...)
		if a.json {
			return a.printJSON(res)
		}
		return nil
	}
	if len(res.Allowed) > 0 && !a.json {
		res.Message += "; allowed next: " + strings.Join(res.Allowed, ", ")
	}
	return a.result(res, nil, false)
}

func runComplete(a *app, args []string) error {
	pos, err := a.parse(a.flags(), args, 1, 1)
	if err != nil {
		return err
	}
	if strings.TrimSpace(pos[0]) == "" {
		return &usageError{msg: "OUTCOME is empty: say in one line what was achieved", cmd: a.name, usage: commands[a.name].usage}
	}
	e, err := a.engine()
	if err != nil {
		return err
	}
	return a.told(e.Complete(pos[0]))
}

func runApprove(a *app, args []string) error {
	pos, e, err := a.open(a.flags(), args, 0, 1)
	if err != nil {
		return err
	}
	// Claude Code sets CLAUDECODE in every shell it starts: the agent's Bash tool, a slash
	// command's shell block, the hooks. There the agent could approve its own work, so the
	// gate would not gate; a person approves from a terminal of their own.
	if a.getenv("CLAUDECODE") != "" {
		return &codeError{code: ExitRefused, msg: "not approved: this shell was started by Claude Code (CLAUDECODE is set), where the agent could run it too; a person runs cairn approve in a terminal of their own"}
	}
	note := ""
	if len(pos) == 1 {
		note = pos[0]
	}
	return a.told(e.Approve(note))
}

func runTask(a *app, args []string) error {
	fs := a.flags()
	var req engine.TaskRequest
	fs.StringVar(&req.Output, "output", "", "the file the task produced")
	fs.StringVar(&req.Note, "note", "", "a one-line note")
	pos, e, err := a.open(fs, args, 2, 2)
	if err != nil {
		return err
	}
	req.ID, req.Status = pos[0], pos[1]
	// With sharing on, running claims the task on the remote first (claimsync).
	o := claimsync.Options{StateDir: e.StateDir(), Root: e.ProjectRoot(), Getenv: a.getenv}
	return a.told(claimsync.Task(a.ctx, o, req.ID, req.Status, func() (*engine.Result, error) { return e.UpdateTask(req) }))
}
