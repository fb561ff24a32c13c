package store_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/cairn-dev/cairn/internal/store"
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

// interleaved is a durable.FS that, once quarantine/ is synced (the kept copy of a torn tail
// is on disk), has a writer that takes no lock (an editor, a shell's >>, another tool) append
// more to the log, before the append goes on.
type interleaved struct {
	durable.FS
	log  string
	more []byte
	done bool
}

func (f *interleaved) SyncDir(name string) error {
	err := f.FS.SyncDir(name)
	if name == "quarantine" && !f.done {
		f.done = true
		w, oerr := os.OpenFile(f.log, os.O_WRONLY|os.O_APPEND, 0)
		if oerr != nil {
			return oerr
		}
		defer w.Close()
		if _, werr := w.Write(f.more); werr != nil {
			return werr
		}
	}
	return err
}

// TestAppendLogTornTailWriterBetween checks that what an append cuts off a log is exactly
// what it kept in quarantine/: bytes a lockless writer appends while the torn tail is being
// kept are neither cut unkept nor lost.
func TestAppendLogTornTailWriterBetween(t *testing.T) {
	for _, tc := range []struct{ name, more string }{
		{"the line finished", "ct\"}\n"},
		{"the line finished and another begun", "ct\"}\n{\"phase\":\"re"},
		{"more of the line", "ct\"}{\"x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cairn")
			mustOpen(t, dir).Close()
			p := filepath.Join(dir, "logs", "events.jsonl")
			os.MkdirAll(filepath.Dir(p), 0o700)
			const before, tail = "{\"n\":1}\n", `{"phase":"impl`
			if err := os.WriteFile(p, []byte(before+tail), 0o600); err != nil {
				t.Fatal(err)
			}
			s := mustOpen(t, dir, store.WithFS(&interleaved{FS: openDir(t, dir), log: p, more: []byte(tc.more)}))
			err := s.AppendLog("events", []byte(`{"n":2}`))
			log, _ := os.ReadFile(p)
			var kept []byte
			for _, n := range s.TakeNotices() {
				b, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(n.Path)))
				kept = append(kept, b...)
			}
			// Every byte written is in the log or said to be kept, in order.
			all := before + tail + tc.more
			got := string(log)
			if err == nil {
				got = strings.Replace(got, "{\"n\":2}\n", "", 1)
			}
			if body, cut := got, string(kept); !strings.HasPrefix(all, body) || body+cut != all {
				t.Fatalf("err %v; log %q, kept %q: of %q, some bytes were cut and not kept", err, log, kept, all)
			}
			if err == nil && !bytes.HasSuffix(log, []byte("{\"n\":2}\n")) {
				t.Fatalf("log %q does not end in the entry appended", log)
			}
		})
	}
}

// A log whose last line holds text of a secret's shape (written before a rule found it, or by
// hand) took no entry again: each was refused as making a secret with that line, and told to
// keep in an environment variable a secret it never sent. A clean entry is appended.
func TestLogWithAStoredSecretTakesEntries(t *testing.T) {
	s, dir := newStore(t)
	if err := s.AppendLog("run", []byte(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	q, _ := json.Marshal(secrettest.Shapes()[3].Text)
	if err := os.WriteFile(filepath.Join(dir, "logs", "run.jsonl"), []byte(`{"note":`+string(q)+"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendLog("run", []byte(`{"n":2}`)); err != nil {
		t.Fatal(err)
	}
}

// A last line holding text of a secret's shape alone still refuses an entry that makes a new
// secret with it: a key's first line after the kept text, its body in the entry.
func TestSplitSecretAfterKeptText(t *testing.T) {
	q, _ := json.Marshal(secrettest.Shapes()[3].Text)
	prev := string(q) + ` "-----BEGIN RSA ` + `PRIVATE KEY-----"`
	body := `"MIIEowIBAAKCAQEAx9MIIEowIBAAKCAQEAx9MIIEowIBAAKCAQEAx9MIIEowIBAAKC"`
	if secrets.ScanString(body) != nil {
		t.Fatal("the body is a secret alone")
	}
	if store.SplitSecret([]byte(prev), []byte(body)) == nil {
		t.Error("a key's body after its first line, beside kept text, was taken")
	}
}
