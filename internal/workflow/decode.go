package workflow

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/jsonx"
)

// The record and the types in it decode in one pass over the document, without reflection:
// every hook process decodes the active record once, cold, and encoding/json's reflection
// (type walks, field caches, two decodes per level to find the unknown members) was most of
// that cost. The result is exactly what encoding/json gives when it decodes into the field
// types, with the members no field matches kept in Extra; the differential fuzz test in
// decode_test.go holds the two to that. The rules kept, all encoding/json's:
//
//   - a key matches a field exactly, else case-insensitively (Unicode simple folding), and a
//     key that matches a field either way is never kept in Extra;
//   - for a repeated key the last value wins, but a repeated map merges into the earlier one
//     and a repeated []string reuses the earlier backing array (so null leaves an element);
//   - null leaves a string, number, bool or time as it was, sets a pointer, map or slice to
//     nil, and zeroes a struct that has its own UnmarshalJSON (Phase, Task, ...);
//   - numbers into integers refuse fractions, exponents and overflow;
//   - json.RawMessage values (Metadata, Extra) keep the value's bytes, copied;
//   - time.Time decodes with its own UnmarshalJSON.

// The JSON names of each type's fields, in field order (encoding/json's order of preference
// for case-insensitive matches). TestDecodeFieldLists checks them against the struct tags.
var (
	recordFields = []string{"version", "workflow_id", "type", "context", "scope", "state",
		"phase_status", "status", "phases", "history", "tasks", "approvals", "artifacts", "vars",
		"enforcement", "ttl", "created_at", "updated_at", "changed_at", "completed_at", "outcome", "owner",
		"interruption_safe", "revision"}
	phaseFields        = []string{"completed", "completed_at", "outputs", "metadata"}
	historyEntryFields = []string{"from", "to", "at", "session_id", "note", "checkpoint"}
	taskFields         = []string{"id", "phase", "status", "attempts", "output", "note",
		"started_at", "completed_at", "updated_at"}
	approvalFields    = []string{"phase", "requested_at", "approved_at", "source", "note"}
	ownerFields       = []string{"session_id", "pid", "heartbeat"}
	enforcementFields = []string{"violations", "blocking", "summary"}
	violationFields   = []string{"code", "severity", "details"}
)

// decodeInto decodes b, which must hold exactly one JSON value, with read, and stores the
// result in *p only on success, as the encoding/json-based methods did.
func decodeInto[T any](b []byte, p *T, read func(*jsonx.Reader, *T) error) error {
	d := jsonx.NewReader(b)
	var v T
	if err := read(d, &v); err != nil {
		return err
	}
	if err := d.End(); err != nil {
		return err
	}
	*p = v
	return nil
}

// pathError locates an error in a decoded document by the path of members and elements
// leading to it, such as phases.plan.completed_at or tasks[2].attempts.
type pathError struct {
	path string
	err  error
}

func (e *pathError) Error() string { return e.path + ": " + e.err.Error() }
func (e *pathError) Unwrap() error { return e.err }

// errNoDecoder means a name in a field list has no case in its type's switch: a bug that
// TestDecodeFieldLists and the full-record tests catch.
func errNoDecoder(name string) error { return fmt.Errorf("no decoder for field %q", name) }

// inMember puts err inside the member key, prefixing the path as the error propagates out.
func inMember(key string, err error) error {
	if !plainKey(key) {
		key = strconv.Quote(key)
	}
	return within(key, err)
}

func inElement(i int, err error) error { return within("["+strconv.Itoa(i)+"]", err) }

func within(step string, err error) error {
	if pe, ok := err.(*pathError); ok {
		if !strings.HasPrefix(pe.path, "[") {
			step += "."
		}
		pe.path = step + pe.path
		return pe
	}
	return &pathError{path: step, err: err}
}

// plainKey reports whether key can stand in a path unquoted.
func plainKey(key string) bool {
	if key == "" {
		return false
	}
	for _, c := range []byte(key) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Readers for one value each, in the form func(*jsonx.Reader, *T) error so that the generic
// slice, map and pointer readers can take them.

func readString[T ~string](d *jsonx.Reader, p *T) error {
	if d.Null() {
		return nil
	}
	s, err := d.String()
	if err != nil {
		return err
	}
	*p = T(s)
	return nil
}

func readBool(d *jsonx.Reader, p *bool) error {
	if d.Null() {
		return nil
	}
	b, err := d.Bool()
	if err != nil {
		return err
	}
	*p = b
	return nil
}

func readInt64(d *jsonx.Reader, p *int64) error {
	if d.Null() {
		return nil
	}
	n, err := d.Int64()
	if err != nil {
		return err
	}
	*p = n
	return nil
}

func readInt(d *jsonx.Reader, p *int) error {
	if d.Null() {
		return nil
	}
	start := d.Offset()
	n, err := d.Int64()
	if err != nil {
		return err
	}
	if int64(int(n)) != n {
		return &jsonx.Error{Kind: jsonx.WrongType, Offset: start, Reason: fmt.Sprintf("number %d does not fit in an int", n)}
	}
	*p = int(n)
	return nil
}

// readTime hands the value, whatever its type, to time.Time's UnmarshalJSON, as encoding/json
// does: null leaves the time as it was, anything but an RFC 3339 string is an error.
func readTime(d *jsonx.Reader, p *time.Time) error {
	b, err := d.Raw()
	if err != nil {
		return err
	}
	return p.UnmarshalJSON(b)
}

// readRaw keeps the value's bytes, null included, as json.RawMessage's UnmarshalJSON does.
func readRaw(d *jsonx.Reader, p *json.RawMessage) error {
	b, err := d.Raw()
	if err != nil {
		return err
	}
	*p = append(json.RawMessage(nil), b...)
	return nil
}

// readExtra keeps an unknown member.
func readExtra(d *jsonx.Reader, m *map[string]json.RawMessage, key string) error {
	var v json.RawMessage
	if err := readRaw(d, &v); err != nil {
		return err
	}
	if *m == nil {
		*m = map[string]json.RawMessage{}
	}
	(*m)[key] = v
	return nil
}

// readSlice decodes an array into *s the way encoding/json does: into the existing backing
// array (which matters for a repeated key, since an element that elem leaves alone keeps the
// earlier value), growing it as append would, and an empty array gives an empty, non-nil slice.
func readSlice[T any](d *jsonx.Reader, s *[]T, elem func(*jsonx.Reader, *T) error) error {
	if d.Null() {
		*s = nil
		return nil
	}
	if err := d.Array(); err != nil {
		return err
	}
	v := (*s)[:0]
	for i := 0; ; i++ {
		more, err := d.Element()
		if err != nil {
			return err
		}
		if !more {
			break
		}
		if i < cap(v) {
			v = v[:i+1]
		} else {
			var zero T
			v = append(v, zero)
		}
		if err := elem(d, &v[i]); err != nil {
			return inElement(i, err)
		}
	}
	if len(v) == 0 {
		v = []T{}
	}
	*s = v
	return nil
}

// readMap decodes an object into *m, adding to the map already there (encoding/json merges a
// repeated key's maps); each value starts from zero.
func readMap[T any](d *jsonx.Reader, m *map[string]T, elem func(*jsonx.Reader, *T) error) error {
	if d.Null() {
		*m = nil
		return nil
	}
	if err := d.Object(); err != nil {
		return err
	}
	if *m == nil {
		*m = map[string]T{}
	}
	for {
		key, more, err := d.Member()
		if err != nil || !more {
			return err
		}
		var v T
		if err := elem(d, &v); err != nil {
			return inMember(key, err)
		}
		(*m)[key] = v
	}
}

// readPointer sets *p to nil for null, else to a new value decoded by elem.
func readPointer[T any](d *jsonx.Reader, p **T, elem func(*jsonx.Reader, *T) error) error {
	if d.Null() {
		*p = nil
		return nil
	}
	v := new(T)
	if err := elem(d, v); err != nil {
		return err
	}
	*p = v
	return nil
}

// readObject resets *p (null leaves it zero, as the types' UnmarshalJSON did) and calls member
// for each member of the object with the name it matched ("" for an unknown one), leaving
// *extra nil when every member was known.
func readObject[T any](d *jsonx.Reader, p *T, names []string, extra func(*T) *map[string]json.RawMessage, member func(d *jsonx.Reader, v *T, name string) error) error {
	var zero T
	*p = zero
	if d.Null() {
		return nil
	}
	if err := d.Object(); err != nil {
		return err
	}
	for {
		key, more, err := d.Member()
		if err != nil || !more {
			return err
		}
		if name := jsonx.MatchField(key, names); name != "" {
			err = member(d, p, name)
		} else {
			err = readExtra(d, extra(p), key)
		}
		if err != nil {
			return inMember(key, err)
		}
	}
}

func readRecord(d *jsonx.Reader, p *Record) error {
	return readObject(d, p, recordFields, func(r *Record) *map[string]json.RawMessage { return &r.Extra },
		func(d *jsonx.Reader, r *Record, name string) error {
			switch name {
			case "version":
				return readString(d, &r.Version)
			case "workflow_id":
				return readString(d, &r.WorkflowID)
			case "type":
				return readString(d, &r.Type)
			case "context":
				return readString(d, &r.Context)
			case "scope":
				return readString(d, &r.Scope)
			case "state":
				return readString(d, &r.State)
			case "phase_status":
				return readString(d, &r.PhaseStatus)
			case "status":
				return readString(d, &r.Status)
			case "phases":
				return readMap(d, &r.Phases, readPhase)
			case "history":
				return readSlice(d, &r.History, readHistoryEntry)
			case "tasks":
				return readSlice(d, &r.Tasks, readTask)
			case "approvals":
				return readSlice(d, &r.Approvals, readApproval)
			case "artifacts":
				return readSlice(d, &r.Artifacts, readString[string])
			case "vars":
				return readMap(d, &r.Vars, readString[string])
			case "enforcement":
				return readPointer(d, &r.Enforcement, readEnforcement)
			case "ttl":
				return readString(d, &r.TTL)
			case "created_at":
				return readTime(d, &r.CreatedAt)
			case "updated_at":
				return readTime(d, &r.UpdatedAt)
			case "changed_at":
				return readTime(d, &r.ChangedAt)
			case "completed_at":
				return readTime(d, &r.CompletedAt)
			case "outcome":
				return readString(d, &r.Outcome)
			case "owner":
				return readPointer(d, &r.Owner, readOwner)
			case "interruption_safe":
				return readPointer(d, &r.InterruptionSafe, readBool)
			case "revision":
				return readInt64(d, &r.Revision)
			}
			return errNoDecoder(name)
		})
}

func readPhase(d *jsonx.Reader, p *Phase) error {
	return readObject(d, p, phaseFields, func(p *Phase) *map[string]json.RawMessage { return &p.Extra },
		func(d *jsonx.Reader, p *Phase, name string) error {
			switch name {
			case "completed":
				return readBool(d, &p.Completed)
			case "completed_at":
				return readTime(d, &p.CompletedAt)
			case "outputs":
				return readSlice(d, &p.Outputs, readString[string])
			case "metadata":
				return readMap(d, &p.Metadata, readRaw)
			}
			return errNoDecoder(name)
		})
}

func readHistoryEntry(d *jsonx.Reader, p *HistoryEntry) error {
	return readObject(d, p, historyEntryFields, func(h *HistoryEntry) *map[string]json.RawMessage { return &h.Extra },
		func(d *jsonx.Reader, h *HistoryEntry, name string) error {
			switch name {
			case "from":
				return readString(d, &h.From)
			case "to":
				return readString(d, &h.To)
			case "at":
				return readTime(d, &h.At)
			case "session_id":
				return readString(d, &h.SessionID)
			case "note":
				return readString(d, &h.Note)
			case "checkpoint":
				return readString(d, &h.Checkpoint)
			}
			return errNoDecoder(name)
		})
}

func readTask(d *jsonx.Reader, p *Task) error {
	return readObject(d, p, taskFields, func(t *Task) *map[string]json.RawMessage { return &t.Extra },
		func(d *jsonx.Reader, t *Task, name string) error {
			switch name {
			case "id":
				return readString(d, &t.ID)
			case "phase":
				return readString(d, &t.Phase)
			case "status":
				return readString(d, &t.Status)
			case "attempts":
				return readInt(d, &t.Attempts)
			case "output":
				return readString(d, &t.Output)
			case "note":
				return readString(d, &t.Note)
			case "started_at":
				return readTime(d, &t.StartedAt)
			case "completed_at":
				return readTime(d, &t.CompletedAt)
			case "updated_at":
				return readTime(d, &t.UpdatedAt)
			}
			return errNoDecoder(name)
		})
}

func readApproval(d *jsonx.Reader, p *Approval) error {
	return readObject(d, p, approvalFields, func(a *Approval) *map[string]json.RawMessage { return &a.Extra },
		func(d *jsonx.Reader, a *Approval, name string) error {
			switch name {
			case "phase":
				return readString(d, &a.Phase)
			case "requested_at":
				return readTime(d, &a.RequestedAt)
			case "approved_at":
				return readTime(d, &a.ApprovedAt)
			case "source":
				return readString(d, &a.Source)
			case "note":
				return readString(d, &a.Note)
			}
			return errNoDecoder(name)
		})
}

func readOwner(d *jsonx.Reader, p *Owner) error {
	return readObject(d, p, ownerFields, func(o *Owner) *map[string]json.RawMessage { return &o.Extra },
		func(d *jsonx.Reader, o *Owner, name string) error {
			switch name {
			case "session_id":
				return readString(d, &o.SessionID)
			case "pid":
				return readInt(d, &o.PID)
			case "heartbeat":
				return readTime(d, &o.Heartbeat)
			}
			return errNoDecoder(name)
		})
}

func readEnforcement(d *jsonx.Reader, p *Enforcement) error {
	return readObject(d, p, enforcementFields, func(e *Enforcement) *map[string]json.RawMessage { return &e.Extra },
		func(d *jsonx.Reader, e *Enforcement, name string) error {
			switch name {
			case "violations":
				return readSlice(d, &e.Violations, readViolation)
			case "blocking":
				return readBool(d, &e.Blocking)
			case "summary":
				return readString(d, &e.Summary)
			}
			return errNoDecoder(name)
		})
}

func readViolation(d *jsonx.Reader, p *Violation) error {
	return readObject(d, p, violationFields, func(v *Violation) *map[string]json.RawMessage { return &v.Extra },
		func(d *jsonx.Reader, v *Violation, name string) error {
			switch name {
			case "code":
				return readString(d, &v.Code)
			case "severity":
				return readString(d, &v.Severity)
			case "details":
				return readString(d, &v.Details)
			}
			return errNoDecoder(name)
		})
}
