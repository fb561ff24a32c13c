// Package hook is Cairn's Claude Code hooks (SessionStart, Stop, the other events), each run
// by its thin binary under hooks/: it reads the event Claude Code writes on stdin (bounded in
// size and in time, parsed tolerantly), asks internal/engine for the work, and prints the JSON
// Claude Code reads, capped far under its limits whatever the engine hands it. Nothing here
// fails the session: bad input is an empty field and a note on stderr, and the exit is 0.
package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/strictjson"
)

// MaxInput bounds what a hook reads from stdin. Claude Code's events are a few hundred bytes;
// the Stop event carries last_assistant_message, which can be long but is never needed.
const MaxInput = 1 << 20

// maxField bounds one string field of the event; a session id is a UUID, a path a few hundred
// bytes. Longer values are dropped with a note.
const maxField = 4096

// ErrInputTooLarge reports stdin longer than the limit a read was given.
var ErrInputTooLarge = errors.New("stdin is larger than the limit")

// ErrInputTimeout reports stdin that was neither closed nor complete before the wait ran out.
var ErrInputTimeout = errors.New("stdin was not closed in time")

// ReadStarted reads r to EOF, at most limit bytes, from a writer that writes all it sends at
// once (Claude Code's statusLine JSON): wait bounds the wait for its first bytes only, and
// once they have come the read goes on for up to whole in all, so that a loaded machine does
// not cut the input short (a terminal that sends nothing still gets its answer after wait).
// It returns what it read and nil, or nil and ErrInputTooLarge, or what it read so far and
// ErrInputTimeout.
func ReadStarted(r io.Reader, limit int64, wait, whole time.Duration) ([]byte, error) {
	return readWhole(readInput(r, limit, after(wait), after(whole)))
}

// after is ready once d has passed; without a d (<= 0) it is nil, never ready.
func after(d time.Duration) <-chan time.Time {
	if d <= 0 {
		return nil
	}
	return time.After(d)
}

// readWhole is what ReadStarted returns of readInput's answer: nothing of stdin over the limit.
func readWhole(data []byte, err error) ([]byte, error) {
	if errors.Is(err, ErrInputTooLarge) {
		return nil, err
	}
	return data, err
}

// readInput reads r to EOF, at most limit bytes, until timeout is ready, or first if no byte
// has come by then, except that stdin over the limit comes with its first limit+1 bytes (for
// eventOf). The read runs in a goroutine that a timeout abandons: the process exits soon
// after, and the blocked read dies with it.
func readInput(r io.Reader, limit int64, first, timeout <-chan time.Time) ([]byte, error) {
	done := make(chan error, 1)
	var partial chunkBuffer
	go func() {
		n, err := io.Copy(&partial, io.LimitReader(r, limit+1))
		switch {
		case n > limit:
			err = fmt.Errorf("%w of %d bytes", ErrInputTooLarge, limit)
		case err != nil:
			err = fmt.Errorf("reading stdin: %w", err)
		}
		done <- err
	}()
	for {
		select {
		case err := <-done:
			return partial.snapshot(), err
		case <-first:
			if data := partial.snapshot(); len(data) == 0 {
				return data, ErrInputTimeout
			}
			first = nil
		case <-timeout:
			return partial.snapshot(), ErrInputTimeout
		}
	}
}

// Event is what a hook learns from Claude Code's stdin: the fields a hook reads, no others
// (transcript_path, cwd, prompt_id and the like are ignored as unknown fields are). Absent or
// unusable fields are zero.
type Event struct {
	SessionID     string
	HookEventName string
	Source        string // SessionStart: startup, resume, clear, compact, fork
	// TaskCreated, TaskCompleted: Claude Code's task; PreCompact: what started it.
	TaskID, TaskSubject, TaskDescription, Trigger string
	// StopHookActive is true when this Stop follows one that made the agent continue. A value
	// of the wrong type counts as true: not blocking is the safe side of a loop.
	StopHookActive bool
	// Read is true when stdin held a JSON object. A caller that needs a field to decide
	// something risky (a Stop hook blocking) should not guess when it is false.
	Read bool
}

// Parse reads a hook event from data, tolerantly: empty input, input that is not a JSON
// object, and fields of the wrong type or size give zero fields and a note each, never an
// error. Notes are lowercase phrases for stderr. Unknown fields are ignored; keys match
// exactly ("Session_ID" is not session_id).
func Parse(data []byte) (Event, []string) {
	var ev Event
	if len(strings.TrimSpace(string(data))) == 0 {
		return ev, []string{"stdin was empty; going on without the event"}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil || fields == nil {
		why := "null"
		if err != nil {
			why = err.Error()
		}
		return ev, []string{fmt.Sprintf("stdin is not a JSON object (%s); going on without the event", why)}
	}
	ev, notes := fromFields(fields)
	ev.Read = true
	return ev, notes
}

// fromFields is the event of a JSON object's members, with a note for each unusable one.
func fromFields(fields map[string]json.RawMessage) (Event, []string) {
	var ev Event
	var notes []string
	// text: a field of the model's words (a task's subject), whose start still says what it
	// is, cut at the limit; an id or a name cut would name something else, so it is dropped.
	str := func(key string, dst *string, text bool) {
		raw, ok := fields[key]
		if !ok || isNull(raw) {
			return
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			notes = append(notes, fmt.Sprintf("%s is %s, not a string; ignored", key, strictjson.KindOf(raw)))
			return
		}
		if len(s) > maxField {
			if !text {
				notes = append(notes, fmt.Sprintf("%s is %d bytes, over %d; ignored", key, len(s), maxField))
				return
			}
			notes = append(notes, fmt.Sprintf("%s is %d bytes, over %d; cut there", key, len(s), maxField))
			s = strings.ToValidUTF8(s[:maxField], "") // a character the cut split goes
		}
		*dst = s
	}
	str("session_id", &ev.SessionID, false)
	str("hook_event_name", &ev.HookEventName, false)
	str("source", &ev.Source, false)
	str("task_id", &ev.TaskID, false)
	str("task_subject", &ev.TaskSubject, true)
	str("task_description", &ev.TaskDescription, true)
	str("trigger", &ev.Trigger, false)
	if raw, ok := fields["stop_hook_active"]; ok && !isNull(raw) {
		var b bool
		var s string
		switch {
		case json.Unmarshal(raw, &b) == nil:
			ev.StopHookActive = b
		case json.Unmarshal(raw, &s) == nil && (s == "true" || s == "false"):
			ev.StopHookActive = s == "true"
			notes = append(notes, fmt.Sprintf("stop_hook_active is the string %q, not a boolean; read as %s", s, s))
		default:
			ev.StopHookActive = true
			notes = append(notes, fmt.Sprintf("stop_hook_active is %s, not a boolean; read as true so the hook does not block", strictjson.KindOf(raw)))
		}
	}
	// Words Claude Code chooses from a few, repeated on stderr: anything else is not.
	for _, f := range []struct {
		key string
		dst *string
	}{{"source", &ev.Source}, {"trigger", &ev.Trigger}} {
		switch w := *f.dst; {
		case w != "" && !plainWord(w):
			notes = append(notes, f.key+" is not a plain word; ignored (not repeated here)")
			*f.dst = ""
		case engine.KnownSource(w) || w == "manual" || w == "auto":
			// Claude Code's words need no scan: the common path stays without one.
		case secrets.ScanString(w) != nil:
			// A future word is kept and repeated on stderr; a secret's shape is neither.
			notes = append(notes, f.key+" has a secret's shape; ignored (not repeated here)")
			*f.dst = ""
		}
	}
	return ev, notes
}

// ReadEvent reads and parses stdin in one step, for the hook mains. It never fails: every
// problem becomes a note.
func ReadEvent(r io.Reader, wait time.Duration) (Event, []string) {
	data, err := readInput(r, MaxInput, nil, after(wait))
	return eventOf(data, err, wait)
}

// eventOf is the event and notes ReadEvent makes of what readInput returned after a wait.
func eventOf(data []byte, err error, wait time.Duration) (Event, []string) {
	switch {
	case errors.Is(err, ErrInputTooLarge):
		// A huge field (a task's description, the last message) need not cost the event:
		// the members before it are read. Not all of it, so Read stays false.
		ev, notes := fromFields(leadingMembers(data))
		return ev, append([]string{err.Error() + "; going on with the fields that came whole within it"}, notes...)
	case errors.Is(err, ErrInputTimeout):
		if len(data) == 0 {
			return Event{}, []string{fmt.Sprintf("stdin was not closed within %s and held nothing; going on without the event", wait)}
		}
		ev, notes := Parse(data)
		return ev, append([]string{fmt.Sprintf("stdin was not closed within %s; parsed the %d bytes read", wait, len(data))}, notes...)
	case err != nil:
		ev, notes := Parse(data)
		return ev, append([]string{err.Error()}, notes...)
	}
	return Parse(data)
}

// event reads the hook's event from stdin, logging every note. An open stdin gets at most half
// of the deadline: the rest is for the work.
func (r *Runner) event(stdin io.Reader) Event {
	ev, notes := ReadEvent(stdin, min(StdinWait, r.Deadline/2))
	r.eventName.Store(&ev.HookEventName)
	for _, n := range notes {
		r.Logf("%s", n)
	}
	return ev
}

// leadingMembers returns the members of the JSON object data begins with that come whole
// before data ends or stops being valid: the readable start of an event cut at the size limit.
func leadingMembers(data []byte) map[string]json.RawMessage {
	fields := map[string]json.RawMessage{}
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fields
	}
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		var raw json.RawMessage
		if err != nil || !ok || dec.Decode(&raw) != nil {
			break
		}
		fields[key] = raw
	}
	return fields
}

// A member's raw value from encoding/json starts at its first byte and ends at its last: no
// space around it, never empty.
func isNull(raw []byte) bool { return string(raw) == "null" }

// plainWord is what a SessionStart source or a PreCompact trigger looks like: startup,
// resume, clear, compact, fork; manual, auto; or a future word of the same shape.
func plainWord(s string) bool {
	return len(s) <= 32 && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	})
}

// chunkBuffer is the bytes read so far, shared between the reading goroutine and a caller
// that gave up waiting.
type chunkBuffer struct {
	mu   sync.Mutex
	data []byte
}

func (b *chunkBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.data = append(b.data, p...)
	return len(p), nil
}

func (b *chunkBuffer) snapshot() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.data...)
}
