package mcptools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/textsafe"
	"github.com/cairn-dev/cairn/internal/workflow"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// approvalWait bounds how long a transition waits for the person's answer (a variable for
// tests).
var approvalWait = 15 * time.Minute

// maxApprovalNote is the note's maxLength in approvalSchema. A client's form may not hold to
// it, and the note is shown in every resume report, so a longer one is cut.
const maxApprovalNote = 500

// approvalSchema is the form the person answers: a yes or no, and an optional note.
var approvalSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"approve": map[string]any{"type": "boolean", "title": "Approve", "description": "Yes lets the agent move on."},
		"note":    map[string]any{"type": "string", "title": "Note", "description": "Optional; recorded with the approval.", "maxLength": maxApprovalNote},
	},
	"required": []string{"approve"},
}

// askApproval asks the person, through MCP elicitation, to approve leaving an approval phase,
// and returns their yes. refused is the engine's refusal, whose ApprovalError is ae: without a
// To it refused complete_workflow, whose own text stands where no person can be asked. Where
// no person can be asked (a client without elicitation, or one that cancels at once, as
// claude -p does) the error is one line saying how a person approves.
func askApproval(c *call, refused error, ae *workflow.ApprovalError) (*workflow.Approval, error) {
	phase := textsafe.Line(ae.Phase, 64)
	tool, wants := "transition", "move on to "+textsafe.Line(ae.To, 64)
	cannot := fmt.Errorf("leaving phase %s needs a person's approval and no person could be asked here: %s, then call transition again", phase, engine.UserApproves)
	if ae.To == "" {
		tool, wants, cannot = "complete_workflow", "complete the workflow there", refused
	}
	sess := server.ClientSessionFromContext(c.live) // nil (no session) satisfies neither interface
	info, declared := sess.(server.SessionWithClientInfo)
	if _, ok := sess.(server.SessionWithElicitation); !ok || declared && info.GetClientCapabilities().Elicitation == nil {
		return nil, cannot
	}
	ctx, cancel := context.WithTimeout(c.live, approvalWait)
	defer cancel()
	req := mcp.ElicitationRequest{}
	req.Params.Message = fmt.Sprintf("Cairn: the agent has finished phase %s of workflow %s and wants to %s. Do you approve?",
		phase, textsafe.Line(ae.WorkflowID, 120), wants)
	req.Params.RequestedSchema = approvalSchema
	// The person may take minutes: other calls go on meanwhile. The move is then made only
	// from the approval phase (runTransition, CompleteApproved), whatever they did.
	var res *mcp.ElicitationResult
	var err error
	if !c.unlocked(func() { res, err = c.srv.RequestElicitation(ctx, req) }) || errors.Is(err, errClientGone) {
		return nil, fmt.Errorf("leaving phase %s: cairn-mcp shut down or reopened the workflow state before the person's answer came; nothing was changed: call %s again", phase, tool)
	}
	if errors.Is(err, context.DeadlineExceeded) && c.live.Err() == nil {
		return nil, fmt.Errorf("leaving phase %s needs a person's approval; they were asked but did not answer within %s, so nothing was changed: call %s again to ask again, or %s", phase, workflow.Age(approvalWait), tool, engine.UserApproves)
	}
	if err != nil || res == nil {
		return nil, cannot
	}
	content, _ := res.Content.(map[string]any)
	yes, answered := content["approve"].(bool)
	switch {
	case res.Action == mcp.ElicitationResponseActionAccept && yes:
		note, _ := content["note"].(string)
		if f := secrets.ScanString(note); f != nil {
			// The person wrote it, not the agent: no advice on keeping secrets.
			return nil, fmt.Errorf("the person approved leaving phase %s, but %s; nothing was changed: call %s again and the person is asked again", phase, f.Refusal("the note they wrote"), tool)
		}
		note = secrets.Clip(strings.TrimSpace(note), maxApprovalNote)
		return &workflow.Approval{Phase: ae.Phase, Source: workflow.ApprovalElicitation, Note: note}, nil
	case res.Action == mcp.ElicitationResponseActionCancel:
		// claude -p answers every elicitation so, at once: no person saw it.
		return nil, fmt.Errorf("leaving phase %s needs a person's approval and the prompt was cancelled (claude -p cancels every prompt): %s, then call %s again", phase, engine.UserApproves, tool)
	case res.Action != mcp.ElicitationResponseActionDecline && (res.Action != mcp.ElicitationResponseActionAccept || !answered):
		// No answer a person gives (a null result, an unknown action, a form of the wrong type).
		return nil, fmt.Errorf("leaving phase %s needs a person's approval and the client's answer to the prompt could not be read, so nothing was changed: %s, then call %s again", phase, engine.UserApproves, tool)
	}
	// A no's note says what to change: the agent is given it, unless it has a secret's shape.
	if note, _ := content["note"].(string); strings.TrimSpace(note) != "" && secrets.ScanString(note) == nil {
		return nil, fmt.Errorf("the user did not approve leaving phase %s and wrote: “%s”; stay in it: do what they ask, and ask again once it is done",
			phase, secrets.Line(note, maxApprovalNote))
	}
	return nil, fmt.Errorf("the user did not approve leaving phase %s; stay in it: ask the user what to change, and ask again once it is done", phase)
}
