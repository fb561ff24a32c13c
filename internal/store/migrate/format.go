package migrate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Format is a workflow-state format Detect recognises.
type Format int

const (
	// Unknown is anything Cairn does not recognise: foreign JSON, or a document that could be
	// more than one format. It is refused, never guessed at.
	Unknown Format = iota
	// Empty is "{}", the seeds' cleared state: there is no workflow to migrate.
	Empty
	// Current is a schema-2.x workflow record: nothing to do.
	Current
	// Newer is a record from a newer Cairn (version 3 or above): refused, never rewritten.
	Newer
	// Schema1 is a Cairn schema-1.x record ("version": "1.x").
	Schema1
	// Seed001 is seed 001's .claude/workflow-state.json (type, phase, lastUpdated, ttl, ...).
	Seed001
	// Seed002 is seed 002's memory/state/phase.json (current_phase, completed_phases, ...),
	// optionally with its execution.json.
	Seed002
	// Seed003 is seed 003's checkpoint (.claude/checkpoints/<command>.json): its own
	// "version": "2.0" with command, state and phases, but no type.
	Seed003
	// Seed004 is seed 004's .workflow-state/<name>-state.json (workflow, version 1, stages).
	Seed004
)

// formatNames holds each format's short name and its description.
var formatNames = [...][2]string{
	Unknown: {"unknown", "an unrecognised format"},
	Empty:   {"empty", "the empty state {}"},
	Current: {"current", "a schema 2.x Cairn record"},
	Newer:   {"newer", "a record from a newer Cairn"},
	Schema1: {"schema1", "a schema 1.x Cairn record"},
	Seed001: {"seed001", "seed 001 state (.claude/workflow-state.json)"},
	Seed002: {"seed002", "seed 002 state (memory/state/phase.json)"},
	Seed003: {"seed003", "a seed 003 checkpoint (.claude/checkpoints/<command>.json)"},
	Seed004: {"seed004", "seed 004 state (.workflow-state/<name>-state.json)"},
}

// String returns the format's short name ("seed001", "schema1", ...), the one the migrated
// record's legacy.from holds.
func (f Format) String() string {
	if f < 0 || int(f) >= len(formatNames) {
		return "format(" + strconv.Itoa(int(f)) + ")"
	}
	return formatNames[f][0]
}

func (f Format) describe() string {
	if f < 0 || int(f) >= len(formatNames) {
		return f.String()
	}
	return formatNames[f][1]
}

// NeedsMigration reports whether Convert turns f into a new record (and the original should
// be backed up): true for Schema1 and the seed formats.
func (f Format) NeedsMigration() bool { return f >= Schema1 && f <= Seed004 }

var (
	// ErrMalformed: the document is not strict JSON (bad syntax, invalid UTF-8, a duplicate
	// key, over 1 MiB or nested deeper than 64).
	ErrMalformed = errors.New("not strict JSON")
	// ErrUnknownFormat: the document is JSON but none of the formats Cairn can migrate.
	ErrUnknownFormat = errors.New("not a workflow state format Cairn knows")
	// ErrNewer: the record was written by a newer Cairn. Errors that match it are *NewerError.
	ErrNewer = errors.New("written by a newer Cairn")
	// ErrLimit: the document converts, but the record it makes would break a limit of the
	// strict JSON gate (1 MiB, 64 levels), since the fields it keeps under legacy sit two
	// levels deeper than in the original.
	ErrLimit = errors.New("the migrated record, which keeps the original's unmapped fields under legacy, would break a document limit")
	// ErrEmpty: the document is "{}", the cleared state; there is no workflow to convert.
	ErrEmpty = errors.New("empty state {}: no workflow to migrate")
	// ErrForeign: the document is a JSON object of no format Cairn knows, and no workflow
	// record gone wrong either: it has no workflow_id and at most one other field of a record
	// (Cairn's or a seed's). Another tool's file. Errors that match it are *ForeignError and
	// match ErrUnknownFormat too.
	ErrForeign = errors.New("holds no workflow record")
)

// ForeignError is an unknown format's error for a document that holds no workflow record.
type ForeignError struct {
	// Newer is set when its version is 3 or above: it may yet be a newer Cairn's record that
	// moved its fields, which this Cairn cannot judge, so it is never to be taken for damage.
	Newer bool
	err   error
}

func (e *ForeignError) Error() string {
	return e.err.Error() + "; it " + ErrForeign.Error() + ": no workflow_id, and not two of a record's other fields"
}

// Is makes errors.Is(err, ErrForeign) true.
func (e *ForeignError) Is(target error) bool { return target == ErrForeign }

func (e *ForeignError) Unwrap() error { return e.err }

// NewerError refuses a record whose version is above what this Cairn reads. Like unknown's
// errors it does not say what became of the file: a seed's notice says it was left as it is.
type NewerError struct {
	Version string // the version as written, e.g. "3.0"
}

func (e *NewerError) Error() string {
	return fmt.Sprintf("workflow record version %s was written by a newer Cairn (this one reads schema 2.x): "+
		"use that newer Cairn, or upgrade this one, to resume it", e.Version)
}

// Is makes errors.Is(err, ErrNewer) true.
func (e *NewerError) Is(target error) bool { return target == ErrNewer }

// unknown says what is wrong with the document, not what becomes of its file: the caller does
// that (a seed's file is left as it is, a damaged snapshot is moved to quarantine).
func unknown(format string, args ...any) error {
	return fmt.Errorf("%w (%s)", ErrUnknownFormat, fmt.Sprintf(format, args...))
}

// Detect tells which format data is in. Newer comes with a *NewerError, Unknown with an error
// matching ErrMalformed or ErrUnknownFormat; every other format with a nil error.
func Detect(data []byte) (Format, error) {
	f, _, err := detect(data)
	return f, err
}

func detect(data []byte) (Format, map[string]any, error) {
	obj, err := decodeObject(data)
	if err != nil {
		return Unknown, nil, err
	}
	f, err := classify(obj)
	return f, obj, err
}

func has(obj map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := obj[k]; ok {
			return true
		}
	}
	return false
}

func isString(obj map[string]any, key string) bool {
	_, ok := obj[key].(string)
	return ok
}

// The shapes below are decided by exact field names only: a near miss is Unknown, not a guess.

func seed004Shape(o map[string]any) bool {
	return has(o, "stages", "current_stage") && !has(o, "type")
}

// seed003Phases reports whether any phase entry has seed 003's own keys.
func seed003Phases(o map[string]any) bool {
	phases, _ := o["phases"].(map[string]any)
	for _, p := range phases {
		if m, ok := p.(map[string]any); ok && has(m, "reports", "plan_path") {
			return true
		}
	}
	return false
}

// recordLike reports whether o has what tells a workflow record, Cairn's or a seed's, from
// another tool's file: a workflow_id, or two of a record's other fields. One is not enough: a
// package.json has a "type", a status file a "status".
func recordLike(o map[string]any) bool {
	if has(o, "workflow_id") {
		return true
	}
	n := 0
	for _, k := range [...]string{"type", "state", "status", "revision", "phase_status", "phases",
		"history", "approvals", "tasks", "created_at", "updated_at", "ttl", "context",
		"phase", "lastUpdated", "completedAt", "completedPhases", "startedAt", "current_phase",
		"completed_phases", "user_checkpoints", "command", "topic_path", "stages", "current_stage", "workflow"} {
		if _, ok := o[k]; ok {
			n++
		}
	}
	return n >= 2
}

func classify(o map[string]any) (Format, error) {
	f, err := classifyShape(o)
	if _, done := errors.AsType[*ForeignError](err); f == Unknown && !done && !recordLike(o) {
		err = &ForeignError{err: err}
	}
	return f, err
}

func classifyShape(o map[string]any) (Format, error) {
	if len(o) == 0 {
		return Empty, nil
	}
	v, versioned := o["version"]
	if !versioned {
		var found []Format
		for f, ok := range [...]bool{
			Seed001: isString(o, "type") && has(o, "phase", "lastUpdated", "completedAt", "completedPhases", "startedAt") &&
				!has(o, "current_phase", "completed_phases", "user_checkpoints", "workflow", "stages", "command"),
			Seed002: !has(o, "type") && has(o, "current_phase", "completed_phases", "user_checkpoints"),
			Seed003: !has(o, "type") && isString(o, "command") && has(o, "state"),
			Seed004: seed004Shape(o),
		} {
			if ok {
				found = append(found, Format(f))
			}
		}
		switch len(found) {
		case 1:
			return found[0], nil
		case 0:
			return Unknown, unknown("no version and not the fields of any known format")
		default:
			return Unknown, unknown("no version, and it has fields of both %s and %s", found[0].describe(), found[1].describe())
		}
	}
	major, label, ok := versionMajor(v)
	if !ok {
		return Unknown, unknown("version %s is not a version number", describeValue(v))
	}
	_, numeric := v.(json.Number)
	switch {
	case seed004Shape(o):
		if major == 1 {
			return Seed004, nil
		}
		return Unknown, unknown("seed 004 style state with version %s; Cairn migrates its version 1 only", label)
	case major >= 3:
		// Nothing but a version (and revision) is a newer record too: one that has moved every
		// other field is never taken for damage. Other fields (package.json's) are foreign.
		_, rev := o["revision"]
		if recordLike(o) || len(o) == 1 || (len(o) == 2 && rev) {
			return Newer, &NewerError{Version: label}
		}
		// Whether a newer Cairn wrote it cannot be told: its text says only what is known.
		return Unknown, &ForeignError{Newer: true, err: unknown("version %s, newer than this Cairn reads", label)}
	case major == 2:
		if has(o, "type") {
			if numeric {
				return Unknown, unknown("version is the number %s; Cairn writes the string \"2.0\"", label)
			}
			return Current, nil
		}
		if has(o, "command", "topic_path", "state") || seed003Phases(o) {
			return Seed003, nil
		}
		return Unknown, unknown("version %s but no type, and not a seed 003 checkpoint", label)
	case major == 1:
		if has(o, "type", "command") && has(o, "state", "phase", "current_phase") {
			return Schema1, nil
		}
		return Unknown, unknown("version %s but not the fields of a schema 1 record (type and state)", label)
	}
	return Unknown, unknown("version %s is older than any format Cairn knows", label)
}

// NewerVersion is a *NewerError when version, the "version" member of a state document
// other than the workflow record (the initiative's), says a newer Cairn wrote it: a major
// number of 3 or more. Else nil, also when it is absent or not a version number.
func NewerVersion(version json.RawMessage) *NewerError {
	dec := json.NewDecoder(bytes.NewReader(version))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	if major, label, ok := versionMajor(v); ok && major >= 3 {
		return &NewerError{Version: label}
	}
	return nil
}

// versionMajor reads a version written as a string ("2.0", "1.x", "v1", "3") or a number (1,
// 2.0) and returns its major number and how it was written.
func versionMajor(v any) (major int, label string, ok bool) {
	switch t := v.(type) {
	case string:
		s := strings.TrimSpace(t)
		s = strings.TrimPrefix(strings.TrimPrefix(s, "v"), "V")
		n := 0
		for n < len(s) && s[n] >= '0' && s[n] <= '9' {
			n++
		}
		if n == 0 || n > 9 || (n < len(s) && s[n] != '.' && s[n] != '-') {
			return 0, strconv.Quote(t), false
		}
		major, _ = strconv.Atoi(s[:n])
		return major, strconv.Quote(t), true
	case json.Number:
		f, err := t.Float64()
		if err != nil || f < 0 || math.IsInf(f, 0) || f >= 1e9 {
			return 0, t.String(), false
		}
		return int(f), t.String(), true
	}
	return 0, "", false
}

// describeValue names a value for an error message without quoting much of it.
func describeValue(v any) string {
	switch t := v.(type) {
	case string:
		if len(t) > 20 {
			return "a long string"
		}
		return strconv.Quote(t)
	case json.Number:
		return t.String()
	}
	return "a JSON " + jsonKind(v)
}
