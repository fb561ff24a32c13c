package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

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
				// A later key's step runs on this caller's own copy: the first's warnings
				// (another live session) are kept.
				s.Warnings = append(out.Warnings, s.Warnings...)
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

// DeleteCheckpoint removes a named checkpoint. One that this command deleted already is
// answered as that delete, nothing changed: a person or a script runs it again unsure the
// first took, and "not found" (with the CLI's "did you mean" a near name) would steer toward
// deleting another. Any other missing one is a store.ErrNotFound error.
func (e *Engine) DeleteCheckpoint(name string) (*Result, error) {
	err := e.st.DeleteCheckpoint(name)
	if errors.Is(err, store.ErrNotFound) {
		if at := e.CheckpointDeleted(name); at != "" {
			return &Result{Message: fmt.Sprintf("checkpoint %s was already deleted (%s); nothing changed", name, at)}, nil
		}
	}
	if err != nil {
		return nil, err
	}
	e.noteCheckpointDeleted(name)
	return &Result{Changed: true, Message: "deleted checkpoint " + name}, nil
}

// deletedDoc names the checkpoints DeleteCheckpoint deleted last, with when, so that the
// delete run again is told it was made. A checkpoint leaves no other trace once deleted.
const deletedDoc = "deleted-checkpoints"

// deletedKept bounds the names deletedDoc keeps, the oldest dropped first.
const deletedKept = 32

type deletedCheckpoint struct {
	Name string    `json:"name"`
	At   time.Time `json:"at"`
}

// noteCheckpointDeleted records that checkpoint name was deleted now. Failing to record it
// costs only the answer to a repeat, so it is not an error.
func (e *Engine) noteCheckpointDeleted(name string) {
	now := e.now().UTC()
	_, _, _ = e.st.UpdateOwn(deletedDoc, func(cur []byte) ([]byte, error) {
		var ds []deletedCheckpoint
		if cur != nil && json.Unmarshal(cur, &ds) != nil {
			ds = nil
		}
		ds = slices.DeleteFunc(ds, func(d deletedCheckpoint) bool { return d.Name == name })
		ds = append(ds, deletedCheckpoint{Name: name, At: now})
		return json.Marshal(ds[max(len(ds)-deletedKept, 0):])
	})
}

// CheckpointDeleted says when DeleteCheckpoint last deleted checkpoint name ("2026-11-29
// 22:17 UTC"), or "" if it did not (or that is no longer known).
func (e *Engine) CheckpointDeleted(name string) string {
	data, err := e.st.Read(deletedDoc)
	var ds []deletedCheckpoint
	if err != nil || json.Unmarshal(data, &ds) != nil {
		return ""
	}
	if i := slices.IndexFunc(ds, func(d deletedCheckpoint) bool { return d.Name == name }); i >= 0 {
		return ds[i].At.UTC().Format(minuteUTC)
	}
	return ""
}

// CheckpointDeletedNote says of checkpoint name, not found, that DeleteCheckpoint deleted it,
// when, and that it kept no copy; "" if it did not (or that is no longer known).
func (e *Engine) CheckpointDeletedNote(name string) string {
	if at := e.CheckpointDeleted(name); at != "" {
		return "it was deleted (" + at + "), and cairn checkpoint delete keeps no copy"
	}
	return ""
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
