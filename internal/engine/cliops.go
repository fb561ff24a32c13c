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
	res, gone, err := e.changeVars(keys, func(r *workflow.Record, k string) (workflow.Result, error) {
		return workflow.UnsetVar(r, k, e.now(), e.actor())
	})
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

// changeVars applies step to each key in turn, all in one write, and returns the keys it
// changed; with none changed nothing is written.
func (e *Engine) changeVars(keys []string, step func(r *workflow.Record, k string) (workflow.Result, error)) (*Result, []string, error) {
	var changed []string
	res, _, err := e.change(needActive(func(cur *workflow.Record) (workflow.Result, error) {
		changed = changed[:0]
		var out workflow.Result
		r := cur
		for _, k := range keys {
			s, err := step(r, k)
			if err != nil {
				return workflow.Result{}, err
			}
			if s.Changed {
				out, r = s, s.Record
				changed = append(changed, k)
			}
		}
		if !out.Changed {
			return workflow.Result{Record: cur, Event: workflow.EventNone}, nil
		}
		return out, nil
	}), "")
	return res, changed, err
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

// ReadLogTail is ReadLog for the newest n entries: it reads the log backward from its end,
// only as far as they go.
func (e *Engine) ReadLogTail(name string, n int) (store.Lines, error) {
	return e.st.ReadLogTail(name, n)
}
