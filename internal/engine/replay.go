package engine

import (
	"errors"
	"fmt"

	"github.com/cairn-dev/cairn/internal/workflow"
)

// Replay re-applies on the active workflow one change this machine made on a copy that lost a
// race to another machine's: before and after are this machine's copy around the change (ev,
// the journal's kind of it), base the last revision both copies shared, theirs the other
// copy's tip as it was taken. The change's steps (workflow.Steps) go through the workflow's
// operations, and a move through the project's approval rule, all in one write; a step the
// other copy changed first or that no longer applies is left out and said in skipped (it
// stays in the conflict archive).
func (e *Engine) Replay(base, theirs, before, after *workflow.Record, ev workflow.Event) (res *Result, skipped []string, err error) {
	steps := workflow.Steps(ev, before, after)
	if len(steps) == 0 {
		return &Result{Message: "nothing to replay"}, nil, nil
	}
	res, wres, err := e.change(e.onActive(func(def *workflow.Definition, cur *workflow.Record) (workflow.Result, error) {
		if cur.WorkflowID != before.WorkflowID {
			return workflow.Result{}, fmt.Errorf("workflow %s is active, not %s: nothing was replayed", cur.WorkflowID, before.WorkflowID)
		}
		skipped = skipped[:0]
		out := workflow.Result{Record: cur, Event: workflow.EventNone}
		r := cur
		for _, s := range steps {
			var sres workflow.Result
			err := error(nil)
			if s.Kind == workflow.EventTransition {
				err = e.approvalPolicy(def, r, &s.Transition)
			}
			if err == nil {
				sres, err = s.Apply(def, base, theirs, r, e.exists, e.now(), e.actor())
			}
			switch skip, isSkip := errors.AsType[*workflow.SkipError](err); {
			case isSkip:
				skipped = append(skipped, skip.Error())
			case err != nil:
				skipped = append(skipped, s.String()+": "+err.Error())
			case sres.Changed:
				sres.Warnings = append(out.Warnings, sres.Warnings...)
				out, r = sres, sres.Record
			}
		}
		return out, nil
	}), "replayed after a lost race")
	if err != nil {
		return nil, skipped, err
	}
	res.Message = fmt.Sprintf("replayed %d of %d step%s", len(steps)-len(skipped), len(steps), workflow.Plural(len(steps)))
	if wres.Completed {
		e.archiveCompleted(res, wres)
	}
	return res, skipped, nil
}
