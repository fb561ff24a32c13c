package store_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/store"
)

// An append that would take a log past MaxLogSize, all ReadLog reads, is refused under the
// log's lock with the limit, nothing changed and a step that loses nothing.
func TestAppendLogStopsAtMaxLogSize(t *testing.T) {
	s, dir := newStore(t)
	if err := s.AppendLog("events", []byte(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "logs", "events.jsonl")
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A log 10 bytes short of the limit, its last line whole.
	if _, err := f.WriteAt([]byte("\n"), store.MaxLogSize-11); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	err = s.AppendLog("events", []byte(`{"n":"twelve bytes"}`))
	if err == nil || !strings.Contains(err.Error(), "64 MiB") || !strings.Contains(err.Error(), "nothing was changed") ||
		!strings.Contains(err.Error(), "new log name") {
		t.Errorf("append past the limit: %v", err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Size() != store.MaxLogSize-10 {
		t.Errorf("log after a refused append: %v, %v", fi.Size(), err)
	}
	if err := s.AppendLog("events", []byte(`{"n":2}`)); err != nil {
		t.Errorf("an append that fits: %v", err)
	}
}

// The new log name a full log's refusal proposes is one an append takes, whatever the full
// log's name: "NAME-2" was over MaxNameLen for a name of 63 or 64 bytes.
func TestFullLogProposesANameThatTakesTheAppend(t *testing.T) {
	for _, name := range []string{"events", strings.Repeat("l", store.MaxNameLen-1), strings.Repeat("l", store.MaxNameLen), strings.Repeat("l", store.MaxNameLen-2) + "-2"} {
		s, dir := newStore(t)
		if err := s.AppendLog(name, []byte(`{"n":1}`)); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(filepath.Join(dir, "logs", name+".jsonl"), store.MaxLogSize); err != nil {
			t.Fatal(err)
		}
		err := s.AppendLog(name, []byte(`{"n":2}`))
		if err == nil {
			t.Fatalf("%s: an append to a full log was taken", name)
		}
		_, next, _ := strings.Cut(err.Error(), "such as ")
		if next == "" || next == name {
			t.Errorf("%s: refusal %q names no other log", name, err)
			continue
		}
		if err := s.AppendLog(next, []byte(`{"n":2}`)); err != nil {
			t.Errorf("%s: the log the refusal names, %s: %v", name, next, err)
		}
	}
}

// TestAppendLogKeepsAWholeLastEntry: a log whose last line is a whole entry without its
// newline (written by a person's editor or another tool, or a writer stopped just before the
// newline) keeps that entry when the next one is appended; only a line cut short is cut off. A
// number is not taken for whole: it may be the start of a longer one.
func TestAppendLogKeepsAWholeLastEntry(t *testing.T) {
	for _, c := range []struct {
		name, tail string
		kept       bool
	}{
		{"object", `{"step":"review","ok":true}`, true},
		{"array", `[1,2]`, true},
		{"string", `"done"`, true},
		{"literal", `true`, true},
		{"crlf", "{\"step\":\"crlf\"}\r", true},
		{"cut-object", `{"step":"rev`, false},
		{"number", `12`, false},
		{"cut-in-a-string", `{"k":"`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, dir := newStore(t)
			if err := s.AppendLog("events", []byte(`{"n":1}`)); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, "logs", "events.jsonl")
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(c.tail)
			f.Close()
			// Readers show what the next append keeps.
			for _, n := range []int{1, 2, math.MaxInt} {
				l, err := s.ReadLogTail("events", n)
				if err != nil {
					t.Fatal(err)
				}
				if n == math.MaxInt {
					if l2, err := s.ReadLog("events"); err != nil || !reflect.DeepEqual(l2, l) {
						t.Fatalf("ReadLog %+v, ReadLogTail %+v, %v", l2, l, err)
					}
				}
				if got := string(l.Lines[len(l.Lines)-1]); c.kept && (got != c.tail || l.Torn != 0) || !c.kept && (got != `{"n":1}` || l.Torn != 1) {
					t.Fatalf("read the last %d: %q, torn %d", n, l.Lines, l.Torn)
				}
			}
			if err := s.AppendLog("events", []byte(`{"n":2}`)); err != nil {
				t.Fatal(err)
			}
			want := `{"n":1}` + "\n" + `{"n":2}` + "\n"
			if c.kept {
				want = `{"n":1}` + "\n" + c.tail + "\n" + `{"n":2}` + "\n"
			}
			if b, _ := os.ReadFile(p); string(b) != want {
				t.Fatalf("the log holds\n%q\nwant\n%q", b, want)
			}
		})
	}
}

// TestAppendLogFailingKeepsAWholeLastEntry fails each file system operation of an append to
// a log whose last line is a whole entry without its newline, once and from there on (what a
// kill at that operation leaves): the entry, which readers showed, is never lost, and the
// new one is there when the append said so.
func TestAppendLogFailingKeepsAWholeLastEntry(t *testing.T) {
	template := filepath.Join(t.TempDir(), "template")
	mustOpen(t, template)
	if err := os.MkdirAll(filepath.Join(template, "logs"), 0o700); err != nil {
		t.Fatal(err)
	}
	const tail = `{"step":"review"}`
	if err := os.WriteFile(filepath.Join(template, "logs", "events.jsonl"), []byte(`{"n":1}`+"\n"+tail), 0o600); err != nil {
		t.Fatal(err)
	}
	s, ff, _, done := faultyCopy(t, template, 0, false)
	if err := s.AppendLog("events", []byte(`{"n":2}`)); err != nil {
		t.Fatal(err)
	}
	done()
	for _, persistent := range []bool{false, true} {
		for k := 1; k <= ff.Ops(); k++ {
			s, ff, dir, done := faultyCopy(t, template, k, persistent)
			err := s.AppendLog("events", []byte(`{"n":2}`))
			done()
			l, rerr := mustOpen(t, dir).ReadLog("events")
			var got []string
			for _, line := range l.Lines {
				got = append(got, string(line))
			}
			want := []string{`{"n":1}`, tail}
			if err == nil {
				want = append(want, `{"n":2}`)
			}
			if rerr != nil || !slices.Equal(got[:min(len(got), len(want))], want) || len(got) > 3 {
				t.Fatalf("k=%d persistent=%v: append said %v; the log reads %q (%v), want %q first\n%s", k, persistent, err, got, rerr, want, strings.Join(ff.Trace(), "\n"))
			}
		}
	}
}

// A private key appended a line at a time (a script reading a key file into a log) is clean
// entry by entry, but the log file holds the key and cairn log show prints it, each entry
// scanned alone. An entry that, on the line after the log's last one, makes a secret's shape
// is refused as one holding it would be, the entry before it where the log last ended with a
// newline or not, and the log is left as it was.
func TestAppendLogRefusesASecretSplitOverTwoEntries(t *testing.T) {
	begin := `"-----BEGIN RSA ` + `PRIVATE KEY-----"`
	body := `"` + strings.Repeat("MIIEowIBAAKCAQEAx9", 4)[:64] + `"`
	for _, tc := range []struct{ name, before string }{
		{"the last line ended", begin + "\n"},
		{"the last line without its newline", begin},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if secrets.ScanString(begin) != nil || secrets.ScanString(body) != nil || secrets.ScanString(begin+"\n"+body+"\n") == nil {
				t.Fatal("the key's lines are secrets alone, or not joined: the test needs lines that are only joined")
			}
			s, dir := newStore(t)
			file := filepath.Join(dir, "logs", "keys.jsonl")
			if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(`{"n":1}`+"\n"+tc.before), 0o600); err != nil {
				t.Fatal(err)
			}
			err := s.AppendLog("keys", []byte(body))
			if f, ok := errors.AsType[*secrets.Finding](err); !ok || strings.Contains(err.Error(), "MIIE") || strings.Contains(err.Error(), "BEGIN") {
				t.Fatalf("appending the key's body after its first line: err = %v (%v), want a refusal naming the rule, not the text", err, f)
			}
			if got, _ := os.ReadFile(file); string(got) != `{"n":1}`+"\n"+tc.before {
				t.Errorf("the log was changed: %q", got)
			}
			// What follows something else is appended.
			if err := s.AppendLog("other", []byte(body)); err != nil {
				t.Errorf("the key's body alone: %v", err)
			}
		})
	}
}
