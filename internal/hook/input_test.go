package hook_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/hook"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  hook.Event
		notes []string // substrings, one per expected note, in order
	}{
		{
			name: "session-start",
			in:   `{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/p","hook_event_name":"SessionStart","source":"resume","seconds_since_last_response":12}`,
			want: hook.Event{SessionID: "s1", HookEventName: "SessionStart", Source: "resume", Read: true},
		},
		{
			name: "stop",
			in:   `{"session_id":"s1","hook_event_name":"Stop","stop_hook_active":true,"last_assistant_message":"done","prompt_id":"p9","permission_mode":"default"}`,
			want: hook.Event{SessionID: "s1", HookEventName: "Stop", StopHookActive: true, Read: true},
		},
		{name: "empty", in: "", notes: []string{"stdin was empty"}},
		{name: "blank", in: " \n\t", notes: []string{"stdin was empty"}},
		{name: "not-json", in: "hello", notes: []string{"not a JSON object"}},
		{name: "array", in: `[1,2]`, notes: []string{"not a JSON object"}},
		{name: "null", in: `null`, notes: []string{"not a JSON object (null)"}},
		{name: "truncated", in: `{"session_id":"s1"`, notes: []string{"not a JSON object"}},
		{name: "trailing-garbage", in: `{"session_id":"s1"} x`, notes: []string{"not a JSON object"}},
		{
			name:  "wrong-types",
			in:    `{"session_id":42,"source":["startup"],"cwd":{"a":1},"hook_event_name":true,"task_id":"7"}`,
			want:  hook.Event{TaskID: "7", Read: true},
			notes: []string{"session_id is a number", "hook_event_name is a boolean", "source is an array"},
		},
		{name: "nulls", in: `{"session_id":null,"stop_hook_active":null}`, want: hook.Event{Read: true}},
		{
			name:  "stop-active-string-true",
			in:    `{"stop_hook_active":"true"}`,
			want:  hook.Event{StopHookActive: true, Read: true},
			notes: []string{`stop_hook_active is the string "true"`},
		},
		{
			name:  "stop-active-string-false",
			in:    `{"stop_hook_active":"false"}`,
			want:  hook.Event{Read: true},
			notes: []string{`stop_hook_active is the string "false"`},
		},
		{
			name:  "stop-active-number-counts-as-true",
			in:    `{"stop_hook_active":0}`,
			want:  hook.Event{StopHookActive: true, Read: true},
			notes: []string{"stop_hook_active is a number, not a boolean; read as true"},
		},
		{
			name:  "source-not-a-word",
			in:    `{"source":"start up\n; rm"}`,
			want:  hook.Event{Read: true},
			notes: []string{"is not a plain word"},
		},
		{name: "source-future-word", in: `{"source":"teleport"}`, want: hook.Event{Source: "teleport", Read: true}},
		{
			// A plain word with a secret's shape was repeated on stderr (source=sk_live_...).
			name:  "source-secret",
			in:    `{"source":"sk_live_q7k3xq7k3xq7k3xq"}`,
			want:  hook.Event{Read: true},
			notes: []string{"source has a secret's shape; ignored (not repeated here)"},
		},
		{
			name:  "trigger-secret",
			in:    `{"trigger":"ctx-sk_live_q7k3xq7k3xq7k3xq"}`,
			want:  hook.Event{Read: true},
			notes: []string{"trigger has a secret's shape; ignored (not repeated here)"},
		},
		{
			name:  "oversized-field",
			in:    `{"session_id":"` + strings.Repeat("a", 5000) + `","trigger":"auto"}`,
			want:  hook.Event{Trigger: "auto", Read: true},
			notes: []string{"session_id is 5000 bytes"},
		},
		{
			// A task's subject, the model's words, keeps its start: dropped, the task would be
			// mirrored as "task 3", and not known again by its subject in a later session.
			name:  "oversized-subject",
			in:    `{"task_id":"3","task_subject":"` + strings.Repeat("é", 2049) + `"}`,
			want:  hook.Event{TaskID: "3", TaskSubject: strings.Repeat("é", 2048), Read: true},
			notes: []string{"task_subject is 4098 bytes, over 4096; cut there"},
		},
		{
			name:  "oversized-subject-split-character",
			in:    `{"task_subject":"x` + strings.Repeat("é", 2048) + `"}`,
			want:  hook.Event{TaskSubject: "x" + strings.Repeat("é", 2047), Read: true},
			notes: []string{"task_subject is 4097 bytes, over 4096; cut there"},
		},
		{name: "unknown-fields", in: `{"x":{"y":[1]},"session_id":"s"}`, want: hook.Event{SessionID: "s", Read: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, notes := hook.Parse([]byte(tt.in))
			if got != tt.want {
				t.Errorf("event = %+v, want %+v", got, tt.want)
			}
			if len(notes) != len(tt.notes) {
				t.Fatalf("notes = %q, want %d matching %q", notes, len(tt.notes), tt.notes)
			}
			for i := range notes {
				if !strings.Contains(notes[i], tt.notes[i]) {
					t.Errorf("note %d = %q, want it to contain %q", i, notes[i], tt.notes[i])
				}
			}
		})
	}
}

func TestReadInput(t *testing.T) {
	t.Run("whole", func(t *testing.T) {
		got, err := hook.ReadInput(strings.NewReader(`{"a":1}`), 100, time.Second)
		if err != nil || string(got) != `{"a":1}` {
			t.Fatalf("ReadInput = %q, %v", got, err)
		}
	})
	t.Run("exactly-the-limit", func(t *testing.T) {
		in := strings.Repeat("x", 100)
		got, err := hook.ReadInput(strings.NewReader(in), 100, 0)
		if err != nil || len(got) != 100 {
			t.Fatalf("ReadInput = %d bytes, %v; want 100, nil", len(got), err)
		}
	})
	t.Run("over-the-limit", func(t *testing.T) {
		got, err := hook.ReadInput(strings.NewReader(strings.Repeat("x", 101)), 100, time.Second)
		if !errors.Is(err, hook.ErrInputTooLarge) || got != nil {
			t.Fatalf("ReadInput = %d bytes, %v; want nil, ErrInputTooLarge", len(got), err)
		}
	})
	t.Run("huge-stops-early", func(t *testing.T) {
		// An endless stdin: the read must stop at the limit, not at EOF.
		_, err := hook.ReadInput(endless{}, hook.MaxInput, 5*time.Second)
		if !errors.Is(err, hook.ErrInputTooLarge) {
			t.Fatalf("err = %v, want ErrInputTooLarge", err)
		}
	})
	t.Run("never-closed", func(t *testing.T) {
		in := newOpenStdin(t, `{"session_id":"s1"}`)
		got, err := hook.ReadInputUntil(in, 100, in.drained)
		if !errors.Is(err, hook.ErrInputTimeout) {
			t.Fatalf("err = %v, want ErrInputTimeout", err)
		}
		if string(got) != `{"session_id":"s1"}` {
			t.Fatalf("partial = %q, want what was written before the wait ran out", got)
		}
	})
	t.Run("read-error", func(t *testing.T) {
		boom := errors.New("boom")
		_, err := hook.ReadInput(io.MultiReader(strings.NewReader("ab"), errReader{boom}), 100, time.Second)
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v, want boom", err)
		}
	})
}

func TestReadEvent(t *testing.T) {
	t.Run("ok", func(t *testing.T) {
		ev, notes := hook.ReadEvent(strings.NewReader(`{"session_id":"s","source":"clear"}`), time.Second)
		if ev.SessionID != "s" || ev.Source != "clear" || len(notes) != 0 {
			t.Fatalf("ReadEvent = %+v, %q", ev, notes)
		}
	})
	t.Run("huge", func(t *testing.T) {
		// The fields before the one that runs past the limit are read; the event is not
		// whole, so Read stays false.
		big := `{"session_id":"s","pad":"` + strings.Repeat("x", hook.MaxInput) + `","source":"clear"}`
		ev, notes := hook.ReadEvent(strings.NewReader(big), time.Second)
		if ev != (hook.Event{SessionID: "s"}) || len(notes) != 1 || !strings.Contains(notes[0], "larger than the limit") {
			t.Fatalf("ReadEvent = %+v, %q", ev, notes)
		}
	})
	t.Run("never-closed-but-complete", func(t *testing.T) {
		in := newOpenStdin(t, `{"session_id":"s2","source":"fork"}`)
		ev, notes := hook.ReadEventUntil(in, 200*time.Millisecond, in.drained)
		if ev.SessionID != "s2" || ev.Source != "fork" {
			t.Fatalf("event = %+v, want the complete object read before the wait ran out", ev)
		}
		if len(notes) != 1 || !strings.Contains(notes[0], "not closed within") {
			t.Fatalf("notes = %q", notes)
		}
	})
	t.Run("never-closed-empty", func(t *testing.T) {
		// Nothing is ever written: whenever the real timer fires, there is nothing to have read.
		ev, notes := hook.ReadEvent(newOpenStdin(t, ""), 50*time.Millisecond)
		if ev != (hook.Event{}) || len(notes) != 1 || !strings.Contains(notes[0], "held nothing") {
			t.Fatalf("ReadEvent = %+v, %q", ev, notes)
		}
	})
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "{}", `{"session_id":"s","stop_hook_active":"x"}`, `{"source":1}`, "\xff{", `{"cwd":"\u0000"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, notes := hook.Parse(data)
		for _, n := range notes {
			if n == "" {
				t.Fatal("empty note")
			}
		}
		for _, s := range []string{ev.SessionID, ev.HookEventName, ev.Source, ev.TaskID, ev.TaskSubject, ev.TaskDescription, ev.Trigger} {
			if len(s) > 4096 {
				t.Fatalf("field of %d bytes passed the cap", len(s))
			}
		}
		if !bytes.Contains(data, []byte("source")) && ev.Source != "" {
			t.Fatalf("source %q from input without one", ev.Source)
		}
	})
}

// openStdin is a stdin that is never closed: it gives data, then blocks until the test ends.
// drained is closed when the reader asks for more after data, that is, once all of data is
// taken: as a timeout, it ends the wait at that point, whatever the machine's load.
type openStdin struct {
	data    []byte
	drained chan time.Time
	told    bool
	release chan struct{}
}

func newOpenStdin(t *testing.T, data string) *openStdin {
	in := &openStdin{data: []byte(data), drained: make(chan time.Time), release: make(chan struct{})}
	t.Cleanup(func() { close(in.release) })
	return in
}

func (in *openStdin) Read(p []byte) (int, error) {
	if len(in.data) > 0 {
		n := copy(p, in.data)
		in.data = in.data[n:]
		return n, nil
	}
	if !in.told {
		in.told = true
		close(in.drained)
	}
	<-in.release
	return 0, io.EOF
}

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// TestReadStarted: statusline waited 300 ms for all of Claude Code's JSON, so on a loaded
// machine a JSON whose first bytes had come was cut short and said not to be JSON. The short
// wait is for the first bytes (a terminal sends none); once they come, the read goes on.
func TestReadStarted(t *testing.T) {
	t.Run("slow-after-the-first-bytes", func(t *testing.T) {
		r, w := io.Pipe()
		go func() {
			w.Write([]byte(`{"cwd":`))
			time.Sleep(150 * time.Millisecond) // past the wait for the first bytes below
			w.Write([]byte(`"/p"}`))
			w.Close()
		}()
		got, err := hook.ReadStarted(r, 100, 50*time.Millisecond, 10*time.Second)
		if err != nil || string(got) != `{"cwd":"/p"}` {
			t.Fatalf("ReadStarted = %q, %v; want the whole JSON", got, err)
		}
	})
	t.Run("nothing-comes", func(t *testing.T) {
		r, w := io.Pipe()
		defer w.Close()
		start := time.Now()
		got, err := hook.ReadStarted(r, 100, 50*time.Millisecond, time.Minute)
		if !errors.Is(err, hook.ErrInputTimeout) || len(got) != 0 {
			t.Fatalf("ReadStarted = %q, %v; want nothing and ErrInputTimeout", got, err)
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Fatalf("ReadStarted of a stdin that sends nothing took %v; want about its first wait", d)
		}
	})
	t.Run("begun-never-closed", func(t *testing.T) {
		r, w := io.Pipe()
		defer w.Close()
		go w.Write([]byte(`{"cwd":`))
		got, err := hook.ReadStarted(r, 100, time.Minute, 200*time.Millisecond)
		if !errors.Is(err, hook.ErrInputTimeout) || string(got) != `{"cwd":` {
			t.Fatalf("ReadStarted = %q, %v; want what came and ErrInputTimeout", got, err)
		}
	})
	t.Run("over-the-limit", func(t *testing.T) {
		got, err := hook.ReadStarted(strings.NewReader(strings.Repeat("x", 101)), 100, time.Second, time.Second)
		if !errors.Is(err, hook.ErrInputTooLarge) || got != nil {
			t.Fatalf("ReadStarted = %d bytes, %v; want nil, ErrInputTooLarge", len(got), err)
		}
	})
}
