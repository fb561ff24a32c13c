package engine

import (
	"fmt"
	"strings"

	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// UnsetVars removes workflow variables, all in one write; keys that are not set are no
// change.
func (e *Engine) UnsetVars(keys []string) (*Result, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("unset needs at least one variable name")
	}
	var gone []string
	res, _, err := e.change(func(cur *workflow.Record) (workflow.Result, error) {
		if cur == nil {
			return workflow.Result{}, errNoActive()
		}
		gone = gone[:0]
		var out workflow.Result
		r := cur
		for _, k := range keys {
			step, err := workflow.UnsetVar(r, k, e.now(), e.actor())
			if err != nil {
				return workflow.Result{}, err
			}
			if step.Changed {
				out, r = step, step.Record
				gone = append(gone, k)
			}
		}
		if !out.Changed {
			return workflow.Result{Record: cur, Event: workflow.EventNone}, nil
		}
		return out, nil
	}, "")
	if err != nil {
		return nil, err
	}
	if res.Changed {
		res.Message = "unset " + strings.Join(gone, ", ")
	} else {
		res.Message = "not set; nothing changed"
	}
	return res, nil
}

// DeleteCheckpoint removes a named checkpoint; a missing one is a store.ErrNotFound error.
func (e *Engine) DeleteCheckpoint(name string) (*Result, error) {
	if err := e.st.DeleteCheckpoint(name); err != nil {
		return nil, err
	}
	return &Result{Changed: true, Message: "deleted checkpoint " + name}, nil
}

// ReadLog returns the complete lines of a log, with counts of torn and invalid lines; a
// missing log is a store.ErrNotFound error.
func (e *Engine) ReadLog(name string) (store.Lines, error) {
	return e.st.ReadLog(name)
}
