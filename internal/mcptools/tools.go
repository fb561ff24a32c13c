package mcptools

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/jsonx"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// Output schemas of structuredContent. "notice" is present when another process changed the
// workflow since this server's previous call.
const (
	noticeProp   = `"notice":{"type":"string","description":"Set when another process changed the workflow since your previous call."}`
	warningsProp = `"warnings":{"type":"array","items":{"type":"string"}}`

	resultOutput = `{"type":"object","properties":{` +
		`"message":{"type":"string"},"changed":{"type":"boolean"},` +
		`"workflow_id":{"type":"string"},"phase":{"type":"string"},"revision":{"type":"integer"},` +
		`"allowed":{"type":"array","items":{"type":"string"}},` +
		`"data":{"type":"object"},` +
		warningsProp + `,` + noticeProp +
		`},"required":["message","changed"]}`

	resumeOutput = `{"type":"object","properties":{` +
		`"tier":{"type":"string","enum":["Full","Minimal","L2-only","None"]},` +
		`"workflow_id":{"type":"string"},"type":{"type":"string"},"context":{"type":"string"},` +
		`"phase":{"type":"string"},"phase_status":{"type":"string"},"age_seconds":{"type":"integer"},` +
		`"completed":{"type":"array","items":{"type":"string"}},` +
		`"allowed":{"type":"array","items":{"type":"string"}},` +
		`"next":{"type":"string"},"awaiting_approval":{"type":"string"},` +
		warningsProp + `,` +
		`"blocking":{"type":"array","items":{"type":"object","properties":{"code":{"type":"string"},"severity":{"type":"string"},"details":{"type":"string"}}}},` +
		`"notices":{"type":"array","items":{"type":"string"}},` +
		`"l2_line":{"type":"string"},"last_ended":{"type":"string"},"tasks":{"type":"string"},` +
		`"failed_tasks":{"type":"array","items":{"type":"string"}},"checkpoints":{"type":"array","items":{"type":"string"}},` +
		`"system_message":{"type":"string"},` + noticeProp +
		`},"required":["tier"]}`

	checkpointOutput = `{"type":"object","properties":{` +
		`"name":{"type":"string"},"data":{"type":["object","array"],"description":"The saved JSON."},` + noticeProp +
		`},"required":["name","data"]}`

	listOutput = `{"type":"object","properties":{` +
		`"names":{"type":"array","items":{"type":"string"}},` + noticeProp +
		`},"required":["names"]}`

	varsOutput = `{"type":"object","properties":{` +
		`"vars":{"type":"object","additionalProperties":{"type":"string"}},` + noticeProp +
		`},"required":["vars"]}`
)

// specs are the tools, in the order tools/list shows them.
//
// Annotations follow one rule. readOnly: the tool never writes. destructive: a call can end,
// replace or overwrite something the agent may still want (the active workflow, the violations
// list, a checkpoint of the same name); updates that only add or move forward, with history
// kept, are not destructive. idempotent: repeating the same call changes nothing more.
// openWorld is false everywhere: the tools touch only the project's own state.
var specs = []*toolSpec{
	{
		name:       "resume_check",
		title:      "Resume check",
		desc:       "Call first at the start of work (and after /clear or a restart): runs the read protocol and returns where the workflow stands, the allowed next phases, warnings and the next step.",
		idempotent: true,
		output:     resumeOutput,
		run:        runResume,
	},
	{
		name:  "start_workflow",
		title: "Start workflow",
		desc:  "Call when beginning a new multi-phase task: creates the workflow in its definition's first phase (replace archives an active one; it is kept, not lost).",
		fields: []field{
			{name: "type", kind: kString, required: true, max: 64, pattern: phasePattern, hint: "a workflow definition name such as apex, debug, brainstorm, dotagent or coordinate",
				desc: "Workflow definition name: apex, debug, brainstorm, dotagent, coordinate or one in .claude/workflows/."},
			{name: "context", kind: kString, required: true, max: 300,
				desc: "One-line summary of what this workflow is for."},
			{name: "workflow_id", kind: kString, max: 64, pattern: wfIDPattern, hint: wfIDHint,
				desc: "Explicit workflow id; generated when omitted."},
			{name: "scope", kind: kString, max: 200,
				desc: "Free-text scope, such as standard or quick."},
			{name: "ttl", kind: kString, max: 32, pattern: ttlPattern, hint: ttlHint,
				desc: "How long the workflow may sit idle before it expires, such as 24h; the definition's default when omitted."},
			{name: "replace", kind: kBool,
				desc: "Archive the currently active workflow (kept in the archive) and start this one instead."},
		},
		destructive: true,
		output:      resultOutput,
		run:         runStart,
	},
	{
		name:  "transition",
		title: "Transition phase",
		desc:  "Call at each phase boundary to move the workflow to its next phase, recording the outputs of the phase you leave.",
		fields: []field{
			{name: "to", kind: kString, required: true, max: 64, pattern: phasePattern, hint: phaseHint,
				desc: "The phase to move to; resume_check lists the allowed ones."},
			{name: "from", kind: kString, max: 64, pattern: phasePattern, hint: phaseHint,
				desc: "The phase you believe the workflow is in; the move is refused if another process moved it."},
			{name: "checkpoint", kind: kObject, max: 256 << 10,
				desc: "A small JSON object of the phase's results, kept as metadata.checkpoint of the phase being left, in the same atomic write as the move."},
			{name: "outputs", kind: kStrings, max: 100, itemMax: 1024,
				desc: "Paths of files the phase being left produced."},
			{name: "note", kind: kString, max: 500,
				desc: "One line on why, recorded in the history."},
		},
		// Repeating a move changes nothing more: the same phase again is a no-op (seed 003).
		idempotent: true,
		output:     resultOutput,
		run:        runTransition,
	},
	{
		name:  "complete_workflow",
		title: "Complete workflow",
		desc:  "Call once when the workflow's work is done, with a one-line outcome; records completion in state and memory.",
		fields: []field{
			{name: "outcome", kind: kString, required: true, max: 500,
				desc: "One line saying what was achieved."},
		},
		destructive: true,
		idempotent:  true,
		output:      resultOutput,
		run:         runComplete,
	},
	{
		name:  "update_task",
		title: "Update task",
		desc:  "Call when a task within the current phase starts, finishes or fails.",
		fields: []field{
			{name: "id", kind: kString, required: true, max: 128, pattern: idPattern, hint: idHint,
				desc: "Task id, such as t1; a new id adds the task."},
			{name: "status", kind: kString, required: true, enum: taskStatuses, fold: true,
				desc: "New status: pending, running, done or failed."},
			{name: "output", kind: kString, max: 1024,
				desc: "Path of the file the task produced."},
			{name: "note", kind: kString, max: 500,
				desc: "One line about the task."},
		},
		idempotent: true, // the same call again changes nothing more
		output:     resultOutput,
		run:        runTask,
	},
	{
		name:  "set_enforcement",
		title: "Set enforcement violations",
		desc:  "Call after a review or check to record its findings; replaces the current list (an empty list clears it), and CRITICAL or HIGH findings block the workflow.",
		fields: []field{
			{name: "violations", kind: kViolations, required: true, max: 200,
				desc: "The findings, each {code, severity, details}; an empty array clears them."},
		},
		destructive: true,
		idempotent:  true,
		output:      resultOutput,
		run:         runEnforcement,
	},
	{
		name:  "expire_ttl",
		title: "Expire idle workflow",
		desc:  "Call to expire the active workflow if its TTL has passed (it is archived, not deleted); dry_run previews without changing anything.",
		fields: []field{
			{name: "dry_run", kind: kBool,
				desc: "Only say what would happen."},
		},
		destructive: true,
		idempotent:  true,
		output:      resultOutput,
		run:         runExpire,
	},
	{
		name:  "save_checkpoint",
		title: "Save checkpoint",
		desc:  "Call to save named JSON state you will need after an interruption; replaces a checkpoint of the same name.",
		fields: []field{
			{name: "name", kind: kString, required: true, max: 64, pattern: namePattern, hint: nameHint,
				desc: "Checkpoint name, such as implement-progress."},
			{name: "data", kind: kJSON, required: true, max: jsonx.MaxSize,
				desc: "The state to save: a JSON object or array of at most 1 MiB."},
		},
		destructive: true,
		idempotent:  true,
		output:      resultOutput,
		run:         runSaveCheckpoint,
	},
	{
		name:  "load_checkpoint",
		title: "Load checkpoint",
		desc:  "Call to read back a checkpoint saved earlier, by name.",
		fields: []field{
			{name: "name", kind: kString, required: true, max: 64, pattern: namePattern, hint: nameHint,
				desc: "Checkpoint name; list_checkpoints shows what exists."},
		},
		readOnly:   true,
		idempotent: true,
		output:     checkpointOutput,
		run:        runLoadCheckpoint,
	},
	{
		name:  "list_checkpoints",
		title: "List checkpoints",
		desc:  "Call to see which checkpoints exist, optionally filtered by a glob pattern.",
		fields: []field{
			{name: "pattern", kind: kString, max: 100, pattern: globPattern, hint: globHint,
				desc: "Glob over names, such as implement-*; all when omitted."},
		},
		readOnly:   true,
		idempotent: true,
		output:     listOutput,
		run:        runListCheckpoints,
	},
	{
		name:  "set_vars",
		title: "Set workflow variables",
		desc:  "Call to record workflow variables (paths, ids, settings) that later phases or shell blocks need; existing names are overwritten.",
		fields: []field{
			{name: "vars", kind: kStringMap, required: true, max: 100, itemMax: 4096, pattern: varKeyPattern, hint: varHint,
				desc: `Names to string values, such as {"PLAN_PATH": "docs/plan.md"}.`},
		},
		idempotent: true,
		output:     resultOutput,
		run:        runSetVars,
	},
	{
		name:  "get_vars",
		title: "Get workflow variables",
		desc:  "Call to read workflow variables: all of them, or the named ones.",
		fields: []field{
			{name: "keys", kind: kStrings, max: 100, itemMax: 64, pattern: varKeyPattern, hint: varHint,
				desc: "Names to read; all when omitted."},
		},
		readOnly:   true,
		idempotent: true,
		output:     varsOutput,
		run:        runGetVars,
	},
	{
		name:  "append_log",
		title: "Append to log",
		desc:  "Call to append one JSON record to a named log (metrics, benchmarks, decisions); earlier records are never changed.",
		fields: []field{
			{name: "name", kind: kString, required: true, max: 64, pattern: namePattern, hint: nameHint,
				desc: "Log name, such as benchmarks."},
			{name: "entry", kind: kObject, required: true, max: 64 << 10,
				desc: "The record: a JSON object of at most 64 KiB."},
		},
		output: resultOutput,
		run:    runAppendLog,
	},
	{
		name:  "record_learning",
		title: "Record learning",
		desc:  "Call when you learn something worth keeping across sessions (a fix, a convention, a pitfall); it becomes its own memory entry.",
		fields: []field{
			{name: "title", kind: kString, required: true, max: 120,
				desc: "Short title of the learning."},
			{name: "body", kind: kString, required: true, max: 4000, multiline: true,
				desc: "The learning itself, a few sentences."},
			{name: "type", kind: kString, enum: []string{"project", "feedback", "reference", "user"}, fold: true,
				desc: "Memory type: project (default), feedback, reference or user."},
		},
		idempotent: true, // the same call again changes nothing more
		output:     resultOutput,
		run:        runLearning,
	},
	{
		name:  "initiative",
		title: "Initiative",
		desc:  "Call to read or update the long-lived initiative: create it, set its status, add or update milestones.",
		fields: []field{
			{name: "action", kind: kString, required: true, enum: initiativeOps, fold: true,
				desc: "get, create (title), set_status (status), add_milestone (milestone) or update_milestone (milestone, status)."},
			{name: "title", kind: kString, max: 200,
				desc: "Initiative title, for create."},
			{name: "status", kind: kString, max: 32, pattern: phasePattern, hint: "a status such as in_progress, blocked or completed",
				desc: "For set_status: created, in_progress, blocked, completed or archived; for update_milestone: the milestone's status."},
			{name: "milestone", kind: kString, max: 200,
				desc: "Milestone name, for add_milestone and update_milestone."},
			{name: "note", kind: kString, max: 500,
				desc: "One line recorded with the change."},
		},
		output: resultOutput,
		run:    runInitiative,
	},
}

func runResume(c *call) (*outcome, error) {
	r, err := c.eng.Resume(c.ctx, engine.ResumeOptions{Apply: true})
	if err != nil {
		return nil, err
	}
	return resumeOutcome(r), nil
}

func runStart(c *call) (*outcome, error) {
	return resultOf(c.eng.Start(c.ctx, engine.StartRequest{
		Type: c.str("type"), Context: c.str("context"), WorkflowID: c.str("workflow_id"),
		Scope: c.str("scope"), TTL: c.str("ttl"), Replace: c.bool("replace"),
	}))
}

func runTransition(c *call) (*outcome, error) {
	req := engine.TransitionRequest{
		To: c.str("to"), From: c.str("from"), Checkpoint: c.raw("checkpoint"),
		Outputs: c.strs("outputs"), Note: c.str("note"),
	}
	res, err := c.eng.Transition(c.ctx, req)
	var ae *workflow.ApprovalError
	if !errors.As(err, &ae) {
		return resultOf(res, err)
	}
	// Leaving an approval phase needs a person's yes: ask the person through the client.
	note, err := askApproval(c, ae)
	if err != nil {
		return nil, err
	}
	req.Approval = &workflow.Approval{Source: workflow.ApprovalElicitation, Note: note}
	return resultOf(c.eng.Transition(c.ctx, req))
}

func runComplete(c *call) (*outcome, error) {
	return resultOf(c.eng.Complete(c.ctx, c.str("outcome")))
}

func runTask(c *call) (*outcome, error) {
	return resultOf(c.eng.UpdateTask(c.ctx, engine.TaskRequest{
		ID: c.str("id"), Status: c.str("status"), Output: c.str("output"), Note: c.str("note"),
	}))
}

func runEnforcement(c *call) (*outcome, error) {
	v, _ := c.args["violations"].([]engine.Violation)
	return resultOf(c.eng.SetEnforcement(c.ctx, v))
}

func runExpire(c *call) (*outcome, error) {
	return resultOf(c.eng.ExpireTTL(c.ctx, c.bool("dry_run")))
}

func runSaveCheckpoint(c *call) (*outcome, error) {
	return resultOf(c.eng.SaveCheckpoint(c.ctx, c.str("name"), c.raw("data")))
}

func runLoadCheckpoint(c *call) (*outcome, error) {
	name := c.str("name")
	data, err := c.eng.LoadCheckpoint(c.ctx, name)
	if err != nil {
		return nil, err
	}
	if k := jsonKindOf(data); k != "an object" && k != "an array" {
		return nil, fmt.Errorf("checkpoint %s holds %s, not a JSON object or array; it was left as it is", name, k)
	}
	return &outcome{
		text:       fmt.Sprintf("Checkpoint %s (%d bytes):\n%s", name, len(data), data),
		structured: map[string]any{"name": name, "data": json.RawMessage(data)},
	}, nil
}

func runListCheckpoints(c *call) (*outcome, error) {
	names, err := c.eng.ListCheckpoints(c.ctx, c.str("pattern"))
	if err != nil {
		return nil, err
	}
	if names == nil {
		names = []string{}
	}
	sort.Strings(names)
	text := "No checkpoints."
	if len(names) > 0 {
		text = fmt.Sprintf("%d checkpoint(s): %s", len(names), strings.Join(names, ", "))
	} else if p := c.str("pattern"); p != "" {
		text = fmt.Sprintf("No checkpoints match %s.", p)
	}
	return &outcome{text: text, structured: map[string]any{"names": names}}, nil
}

func runSetVars(c *call) (*outcome, error) {
	return resultOf(c.eng.SetVars(c.ctx, c.vars("vars")))
}

func runGetVars(c *call) (*outcome, error) {
	vars, err := c.eng.GetVars(c.ctx, c.strs("keys"))
	if err != nil {
		return nil, err
	}
	if vars == nil {
		vars = map[string]string{}
	}
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	if len(keys) == 0 {
		b.WriteString("No workflow variables set.")
	}
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s=%s", k, vars[k])
	}
	return &outcome{text: b.String(), structured: map[string]any{"vars": vars}}, nil
}

func runAppendLog(c *call) (*outcome, error) {
	return resultOf(c.eng.AppendLog(c.ctx, c.str("name"), c.raw("entry")))
}

func runLearning(c *call) (*outcome, error) {
	return resultOf(c.eng.RecordLearning(c.ctx, engine.LearningRequest{
		Title: c.str("title"), Body: c.str("body"), Type: c.str("type"),
	}))
}

func runInitiative(c *call) (*outcome, error) {
	ie, ok := c.eng.(initiativeEngine)
	if !ok {
		return nil, errors.New("initiative is not available in this build of cairn; nothing was changed (the workflow tools work as usual)")
	}
	return resultWithData(ie.Initiative(c.ctx, engine.InitiativeRequest{
		Action: c.str("action"), Title: c.str("title"), Status: c.str("status"),
		Milestone: c.str("milestone"), Note: c.str("note"),
	}))
}
