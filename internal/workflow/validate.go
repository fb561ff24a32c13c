package workflow

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Valid reports whether s is one of the known workflow statuses.
func (s Status) Valid() bool {
	return slices.Contains([]Status{StatusActive, StatusCompleted, StatusExpired, StatusArchived}, s)
}

// Validate checks that r is a well-formed record, as every record Cairn writes is: schema 2.x,
// a valid id, type and phase names, known statuses, dated history entries between named
// phases, tasks with an id and a known status, a TTL that parses, creation and update times,
// a revision. It does not check r against its definition (Check does). Migration holds its
// output to it.
func (r *Record) Validate() error {
	in := func(where string, err error) error { return fmt.Errorf("%s: %w", where, err) }
	switch {
	case !strings.HasPrefix(r.Version, "2."):
		return fmt.Errorf("version is %q, not 2.x", r.Version)
	case ValidID(r.WorkflowID) != nil:
		return in("workflow_id", ValidID(r.WorkflowID))
	case ValidName(r.Type) != nil:
		return in("type", ValidName(r.Type))
	case ValidName(r.State) != nil:
		return in("state", ValidName(r.State))
	case !r.PhaseStatus.Valid():
		return fmt.Errorf("phase_status %q is not a known status", r.PhaseStatus)
	case !r.Status.Valid():
		return fmt.Errorf("status %q is not a known status", r.Status)
	case r.CreatedAt.IsZero() || r.UpdatedAt.IsZero():
		return errors.New("created_at and updated_at must be set")
	case r.Revision < 1:
		return fmt.Errorf("revision %d is below 1", r.Revision)
	}
	if _, err := ParseTTL(r.TTL); err != nil {
		return in("ttl", err)
	}
	for _, name := range slices.Sorted(maps.Keys(r.Phases)) {
		if err := ValidName(name); err != nil {
			return in("phases", err)
		}
	}
	for i, h := range r.History {
		switch {
		case h.From != "" && ValidName(h.From) != nil:
			return in(fmt.Sprintf("history[%d].from", i), ValidName(h.From))
		case ValidName(h.To) != nil:
			return in(fmt.Sprintf("history[%d].to", i), ValidName(h.To))
		case h.At.IsZero():
			return fmt.Errorf("history[%d]: no time", i)
		}
	}
	for i, t := range r.Tasks {
		switch {
		case t.ID == "":
			return fmt.Errorf("tasks[%d]: empty id", i)
		case !t.Status.Valid():
			return fmt.Errorf("tasks[%d]: status %q is not a known status", i, t.Status)
		case t.Attempts < 0:
			return fmt.Errorf("tasks[%d]: attempts %d is below 0", i, t.Attempts)
		}
	}
	for i, a := range r.Approvals {
		if err := ValidName(a.Phase); err != nil {
			return in(fmt.Sprintf("approvals[%d].phase", i), err)
		}
	}
	if r.Owner != nil && r.Owner.PID < 0 {
		return fmt.Errorf("owner.pid %d is below 0", r.Owner.PID)
	}
	return nil
}
