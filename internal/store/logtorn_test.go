package store_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAppendLogKeepsTornTail checks that the unfinished last line an append cuts off is kept
// in quarantine/, and that the store says so once: nothing Cairn stores is deleted unsaid.
func TestAppendLogKeepsTornTail(t *testing.T) {
	for _, tc := range []struct{ name, before, tail string }{
		{"after lines", "{\"n\":1}\n", `{"phase":"impl`},
		{"alone", "", `{"half`},
		{"a number", "{\"n\":1}\n", `12`}, // may be the start of a longer one: not a whole entry
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, dir := newStore(t)
			p := filepath.Join(dir, "logs", "events.jsonl")
			os.MkdirAll(filepath.Dir(p), 0o700)
			if err := os.WriteFile(p, []byte(tc.before+tc.tail), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := s.AppendLog("events", []byte(`{"n":2}`)); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(p); string(b) != tc.before+"{\"n\":2}\n" {
				t.Fatalf("log holds %q", b)
			}
			notes := s.TakeNotices()
			if len(notes) != 1 || notes[0].Kind != "quarantined" || !strings.HasPrefix(notes[0].Path, "quarantine/events.jsonl-") ||
				!strings.Contains(notes[0].Message, notes[0].Path) || strings.Contains(notes[0].Message, "\n") {
				t.Fatalf("notices %+v", notes)
			}
			if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(notes[0].Path))); err != nil || string(b) != tc.tail {
				t.Fatalf("kept %q, %v; want %q", b, err, tc.tail)
			}
			if again := s.TakeNotices(); len(again) != 0 {
				t.Fatalf("said twice: %+v", again)
			}
			// A clean append cuts nothing and says nothing.
			if err := s.AppendLog("events", []byte(`{"n":3}`)); err != nil {
				t.Fatal(err)
			}
			if n := s.TakeNotices(); len(n) != 0 {
				t.Fatalf("clean append said %+v", n)
			}
		})
	}
}

// TestAppendLogTornTailFaults fails each file system operation of an append to a log with an
// unfinished last line, and checks that its bytes are always somewhere: still in the log, or
// in quarantine/ with a notice.
func TestAppendLogTornTailFaults(t *testing.T) {
	template := filepath.Join(t.TempDir(), "template")
	mustOpen(t, template).Close()
	os.MkdirAll(filepath.Join(template, "logs"), 0o700)
	const tail = `{"phase":"impl`
	if err := os.WriteFile(filepath.Join(template, "logs", "events.jsonl"), []byte("{\"n\":1}\n"+tail), 0o600); err != nil {
		t.Fatal(err)
	}
	for k := 1; ; k++ {
		s, ff, dir, done := faultyCopy(t, template, k, true)
		err := s.AppendLog("events", []byte(`{"n":2}`))
		notes := s.TakeNotices()
		done()
		log, _ := os.ReadFile(filepath.Join(dir, "logs", "events.jsonl"))
		kept := bytes.HasSuffix(log, []byte(tail))
		for _, n := range notes {
			if b, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(n.Path))); string(b) == tail {
				kept = true
			}
		}
		if !kept {
			t.Fatalf("fault at op %d (err %v): the unfinished line is gone; log %q, notices %+v", k, err, log, notes)
		}
		if ff.Injected() == 0 {
			if err != nil {
				t.Fatal(err)
			}
			break
		}
	}
}
