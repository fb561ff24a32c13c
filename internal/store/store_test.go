package store_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/strictjson"
)

func TestOpenCreatesPrivateDirWithGitignore(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "a", "b", "cairn")
	s := mustOpen(t, dir)
	if s.Dir() != dir {
		t.Errorf("Dir() = %s", s.Dir())
	}
	b, err := os.ReadFile(filepath.Join(dir, ".gitignore"))
	if err != nil || string(b) != "*\n" {
		t.Fatalf(".gitignore = %q, %v", b, err)
	}
	if runtime.GOOS != "windows" {
		for _, d := range []string{dir, filepath.Join(base, "a", "b"), filepath.Join(base, "a")} {
			fi, _ := os.Stat(d)
			if fi.Mode().Perm() != 0o700 {
				t.Errorf("%s mode %v, want 0700", d, fi.Mode().Perm())
			}
		}
		if err := s.SaveCheckpoint("plan_v2", []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(filepath.Join(dir, "checkpoints", "plan_v2.json"))
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("checkpoint mode %v, want 0600", fi.Mode().Perm())
		}
		fi, _ = os.Stat(filepath.Join(dir, "checkpoints"))
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("checkpoints dir mode %v, want 0700", fi.Mode().Perm())
		}
	}
}

func TestOpenRefusesSymlinkedStateDir(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "cairn")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	_, err := store.Open(link)
	if !errors.Is(err, durable.ErrSymlinkDir) || !strings.Contains(err.Error(), link) {
		t.Fatalf("got %v, want ErrSymlinkDir naming %s", err, link)
	}
	if _, err := os.Stat(filepath.Join(real, ".gitignore")); err == nil {
		t.Error("wrote through the symlink")
	}
}

func TestValidName(t *testing.T) {
	good := []string{"workflow-state", "initiative", "interview-state", "plan_v2", "a", "0", "x.y",
		"supervisor_metadata", strings.Repeat("a", 64), "console", "nul1", "com10"}
	for _, n := range good {
		if err := store.ValidName(n); err != nil {
			t.Errorf("%q refused: %v", n, err)
		}
	}
	bad := map[string]string{
		"":                      "empty",
		"..":                    "..",
		"a..b":                  "..",
		"../x":                  "..",
		"a/b":                   "separator",
		`a\b`:                   "separator",
		"a\x00b":                "NUL",
		".hidden":               "starts with '.'",
		"-rf":                   "starts with '-'",
		"_x":                    "starts with '_'",
		"trail.":                "ends with '.'",
		"con":                   "device",
		"NUL":                   "upper case",
		"nul":                   "device",
		"com1":                  "device",
		"lpt9.json":             "device",
		"aux.txt":               "device",
		"Plan":                  "upper case",
		"a b":                   "contains",
		"é":                     "contains a non-ASCII character at byte 0",
		"cafe\u0301":            "contains a non-ASCII character at byte 4",
		"a\xffb":                "contains a non-ASCII character at byte 1",
		strings.Repeat("a", 65): "over 64",
		"a*":                    "contains",
		"x:y":                   "contains",
	}
	for n, want := range bad {
		err := store.ValidName(n)
		var ne *store.NameError
		if !errors.As(err, &ne) {
			t.Errorf("%q accepted", n)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q: message %q lacks %q", n, err, want)
		}
	}
	if err := store.ValidWorkflowID("apex-20261122T173000Z-3f9a"); err != nil {
		t.Errorf("workflow id refused: %v", err)
	}
	if err := store.ValidWorkflowID("../apex"); err == nil {
		t.Error("workflow id with .. accepted")
	}
}

func FuzzValidName(f *testing.F) {
	for _, s := range []string{"plan_v2", "..", "a/b", "con", "COM1.txt", "x\x00", ".a", "a.", strings.Repeat("z", 65), "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		for _, err := range []error{store.ValidName(name), store.ValidWorkflowID(name)} {
			if err != nil {
				continue
			}
			if len(name) == 0 || len(name) > 64 || strings.Contains(name, "..") || strings.ContainsAny(name, "/\\\x00:") ||
				name[0] == '.' || name[0] == '-' || filepath.Base(name) != name || filepath.Clean(name) != name {
				t.Fatalf("accepted unsafe name %q", name)
			}
			stem, _, _ := strings.Cut(strings.ToLower(name), ".")
			switch stem {
			case "con", "nul", "aux", "prn", "com1", "lpt1":
				t.Fatalf("accepted device name %q", name)
			}
		}
	})
}

func TestDocuments(t *testing.T) {
	s, dir := newStore(t)
	for _, name := range []string{"initiative", "interview-state", "my.doc_1"} {
		if _, err := s.Read(name); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("read missing %s: %v", name, err)
		}
		doc := []byte(`{"name":"` + name + `","n":1}`)
		if err := s.Write(name, doc); err != nil {
			t.Fatal(err)
		}
		got, err := s.Read(name)
		if err != nil || !bytes.Equal(got, doc) {
			t.Fatalf("read back %q, %v", got, err)
		}
		if _, err := os.Stat(filepath.Join(dir, name+".json")); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Update("initiative", func(cur []byte) ([]byte, error) {
		if !bytes.Contains(cur, []byte(`"n":1`)) {
			t.Errorf("update saw %q", cur)
		}
		return []byte(`{"n":2}`), nil
	})
	if err != nil || string(got) != `{"n":2}` {
		t.Fatalf("update: %s, %v", got, err)
	}
	// nil leaves it; an error aborts.
	if _, err := s.Update("initiative", func([]byte) ([]byte, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if _, err := s.Update("initiative", func([]byte) ([]byte, error) { return nil, boom }); err != boom {
		t.Fatalf("got %v", err)
	}
	if b, _ := s.Read("initiative"); string(b) != `{"n":2}` {
		t.Fatalf("after aborted updates: %s", b)
	}
	if err := s.Write("workflow-state", []byte(`{}`)); !errors.Is(err, store.ErrReserved) {
		t.Fatalf("write workflow-state directly: %v", err)
	}
	// ReadJSON: absent is not an error; a document of another shape is, once found.
	var v struct{ N int }
	for _, c := range []struct {
		name      string
		found, ok bool
		n         int
	}{{"absent", false, true, 0}, {"initiative", true, true, 2}, {"my.doc_1", true, false, 2}} {
		if c.name == "my.doc_1" {
			s.Write(c.name, []byte(`{"N":"two"}`))
		}
		found, err := s.ReadJSON(c.name, &v)
		if found != c.found || (err == nil) != c.ok || v.N != c.n {
			t.Errorf("ReadJSON(%s) = %t, %v, N=%d; want %t, ok %t, N=%d", c.name, found, err, v.N, c.found, c.ok, c.n)
		}
	}
}

func TestBadInputIsRefusedAndNothingIsLost(t *testing.T) {
	s, dir := newStore(t)
	if err := s.Write("doc", []byte(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveCheckpoint("cp", []byte(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	ghToken := "ghp_" + strings.Repeat("a1B2", 9)
	cases := []struct {
		name string
		doc  string
		kind strictjson.Kind
		rule string
	}{
		{"huge", `{"a":"` + strings.Repeat("x", strictjson.MaxSize) + `"}`, strictjson.TooLarge, ""},
		{"deep", strings.Repeat(`{"a":`, 65) + `1` + strings.Repeat(`}`, 65), strictjson.TooDeep, ""},
		{"invalid-utf8", "{\"a\":\"\xc3\x28\"}", strictjson.InvalidUTF8, ""},
		{"duplicate-keys", `{"a":1,"b":{"c":1,"c":2}}`, strictjson.DuplicateKey, ""},
		{"two-values", `{}{}`, strictjson.Trailing, ""},
		{"not-json", `hello`, strictjson.Syntax, ""},
		{"github-token", `{"vars":{"TOKEN":"` + ghToken + `"}}`, "", "github"},
		{"url-credentials", `{"db":["postgres://admin:hunter2secret@db.example.com/x"]}`, "", "url"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			writes := map[string]func() error{
				"write":      func() error { return s.Write("doc", []byte(c.doc)) },
				"checkpoint": func() error { return s.SaveCheckpoint("cp", []byte(c.doc)) },
				"log":        func() error { return s.AppendLog("events", []byte(c.doc)) },
			}
			for what, write := range writes {
				err := write()
				if err == nil {
					t.Fatalf("%s accepted %s", what, c.name)
				}
				if c.kind != "" {
					var je *strictjson.Error
					if !errors.As(err, &je) || je.Kind != c.kind {
						t.Fatalf("%s: got %v, want %s", what, err, c.kind)
					}
				} else {
					var f *secrets.Finding
					if !errors.As(err, &f) || !strings.Contains(f.Rule, c.rule) || !strings.Contains(err.Error(), "$.") {
						t.Fatalf("%s: got %v, want a %s finding with a JSON path", what, err, c.rule)
					}
					if strings.Contains(err.Error(), ghToken) || strings.Contains(err.Error(), "hunter2") {
						t.Fatalf("%s: the error echoes the secret: %v", what, err)
					}
				}
			}
		})
	}
	if b, _ := s.Read("doc"); string(b) != `{"ok":true}` {
		t.Errorf("document changed to %.40q", b)
	}
	if b, _ := s.LoadCheckpoint("cp"); string(b) != `{"ok":true}` {
		t.Errorf("checkpoint changed to %.40q", b)
	}
	if _, err := s.ReadLog("events"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("log was created: %v", err)
	}
	for _, name := range []string{"../x", "a/b", "con", ".x", strings.Repeat("a", 65), "x\x00"} {
		var ne *store.NameError
		if err := s.Write(name, []byte(`{}`)); !errors.As(err, &ne) {
			t.Errorf("write %q: %v", name, err)
		}
		if err := s.SaveCheckpoint(name, []byte(`{}`)); !errors.As(err, &ne) {
			t.Errorf("checkpoint %q: %v", name, err)
		}
		if err := s.AppendLog(name, []byte(`{}`)); !errors.As(err, &ne) {
			t.Errorf("log %q: %v", name, err)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	for _, e := range entries {
		if e.Name() != "cairn" {
			t.Errorf("something escaped the state directory: %s", e.Name())
		}
	}
}

func TestCheckpoints(t *testing.T) {
	s, _ := newStore(t)
	if _, err := s.LoadCheckpoint("supervisor_metadata"); !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "supervisor_metadata") {
		t.Fatalf("missing: %v", err)
	}
	if b, err := s.LoadCheckpointOrEmpty("supervisor_metadata"); err != nil || string(b) != "{}" {
		t.Fatalf("graceful default: %s, %v", b, err)
	}
	if l, err := s.ListCheckpoints(""); err != nil || len(l) != 0 {
		t.Fatalf("empty list: %v %v", l, err)
	}
	for _, n := range []string{"plan_v2", "plan_v1", "implement", "coordinate", "plan.backup"} {
		if err := s.SaveCheckpoint(n, []byte(`{"name":"`+n+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := s.LoadCheckpoint("plan_v2")
	if err != nil || string(b) != `{"name":"plan_v2"}` {
		t.Fatalf("load: %s %v", b, err)
	}
	for pattern, want := range map[string]string{
		"":        "coordinate implement plan.backup plan_v1 plan_v2",
		"plan_*":  "plan_v1 plan_v2",
		"plan*":   "plan.backup plan_v1 plan_v2",
		"?mpl*":   "implement",
		"[a-d]*":  "coordinate",
		"nothing": "",
	} {
		got, err := s.ListCheckpoints(pattern)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("list %q = %v, %v; want %s", pattern, got, err, want)
		}
	}
	if _, err := s.ListCheckpoints("[a-"); err == nil || !strings.Contains(err.Error(), `"[a-"`) {
		t.Errorf("bad pattern: %v", err)
	}
	// A path matches no name: refused as a bad pattern, not listed as none.
	if _, err := s.ListCheckpoints("../*"); !errors.Is(err, path.ErrBadPattern) || !strings.Contains(err.Error(), "no '/'") {
		t.Errorf("pattern with a '/': %v", err)
	}
	// A malformed pattern holding a secret is refused without repeating it.
	const token = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
	if _, err := s.ListCheckpoints(token + "["); err == nil || strings.Contains(err.Error(), "ghp_0123") {
		t.Errorf("bad pattern with a secret: %v", err)
	}
	// A temp file left by a writer killed mid-save is removed once it is surely stale.
	dir := s.Dir()
	stale := filepath.Join(dir, "checkpoints", ".tmp-plan_v2.json-0123456789ab")
	fresh := filepath.Join(dir, "checkpoints", ".tmp-plan_v1.json-0123456789ab")
	os.WriteFile(stale, []byte(`{"half`), 0o600)
	os.WriteFile(fresh, []byte(`{"half`), 0o600)
	old := time.Now().Add(-2 * store.StaleTempAge)
	os.Chtimes(stale, old, old)
	if l, _ := s.ListCheckpoints(""); len(l) != 5 {
		t.Errorf("temp files listed: %v", l)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Error("stale temp file kept")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error("a temp file a writer may still be using was removed")
	}
}

func TestLogs(t *testing.T) {
	s, dir := newStore(t)
	if err := s.AppendLog("benchmarks", []byte("{\n  \"phase\": \"research\",\n  \"duration_ms\": 12500\n}")); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendLog("benchmarks", []byte(`{"phase":"plan"}`)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "logs", "benchmarks.jsonl")
	b, _ := os.ReadFile(p)
	if string(b) != "{\"phase\":\"research\",\"duration_ms\":12500}\n{\"phase\":\"plan\"}\n" {
		t.Fatalf("log holds %q", b)
	}
	// A writer killed mid-line leaves a torn tail: the reader skips and counts it, the next
	// append cuts it off.
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"phase":"impl`)
	f.Close()
	l, err := s.ReadLog("benchmarks")
	if err != nil || len(l.Lines) != 2 || l.Torn != 1 {
		t.Fatalf("read: %d lines, torn %d, %v", len(l.Lines), l.Torn, err)
	}
	if err := s.AppendLog("benchmarks", []byte(`{"phase":"test"}`)); err != nil {
		t.Fatal(err)
	}
	l, _ = s.ReadLog("benchmarks")
	if len(l.Lines) != 3 || l.Torn != 0 || string(l.Lines[2]) != `{"phase":"test"}` {
		t.Fatalf("after repair: %q torn %d", l.Lines, l.Torn)
	}
	big := `{"a":"` + strings.Repeat("x", store.MaxLogLine) + `"}`
	var je *strictjson.Error
	if err := s.AppendLog("benchmarks", []byte(big)); !errors.As(err, &je) || je.Kind != strictjson.TooLarge {
		t.Fatalf("65 KiB line: %v", err)
	}
	// Refused for its size, which it says, not as invalid JSON; an entry over strictjson's
	// limit (stdin is read only that far) is not given a size it does not have, nor sent to
	// a checkpoint, which holds no more than that.
	for _, c := range []struct{ entry, want string }{
		{big, fmt.Sprintf(`log "benchmarks" entry not appended: it is %d bytes on one line, over the %d a log line may hold; keep large data in a checkpoint and log its name`, len(big), store.MaxLogLine)},
		{big + strings.Repeat(" ", strictjson.MaxSize), fmt.Sprintf(`log "benchmarks" entry not appended: it is over %d bytes, and a log line may hold %d; keep the data in a file and log its path`, strictjson.MaxSize, store.MaxLogLine)},
	} {
		if err := s.AppendLog("benchmarks", []byte(c.entry)); err == nil || err.Error() != c.want || !errors.As(err, &je) || je.Kind != strictjson.TooLarge {
			t.Errorf("too large an entry:\n got %v\nwant %s", err, c.want)
		}
	}
	if _, err := s.ReadLog("nope"); !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
}

// A log grown past MaxLogSize (append never refuses one) is still read: its newest whole
// lines, from the last MaxLogSize bytes, with the bytes before them counted as not read. A
// region that starts exactly at a line keeps that line.
func TestReadLogPastMaxLogSize(t *testing.T) {
	s, dir := newStore(t)
	if err := s.AppendLog("big", []byte(`{"oldest":1}`)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "logs", "big.jsonl")
	grow := func(to int64, tail string) {
		t.Helper()
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		// A hole reads as NUL bytes: one long line, part of it outside the region read.
		if err := f.Truncate(to); err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte(tail), to); err != nil {
			t.Fatal(err)
		}
	}
	tail := "\n{\"n\":1}\n{\"n\":2}\n"
	grow(store.MaxLogSize, tail)
	l, err := s.ReadLog("big")
	if err != nil {
		t.Fatalf("a log over MaxLogSize cannot be read: %v", err)
	}
	if len(l.Lines) != 2 || string(l.Lines[1]) != `{"n":2}` || l.Invalid != 0 || l.Torn != 0 {
		t.Fatalf("read %q, invalid %d, torn %d", l.Lines, l.Invalid, l.Torn)
	}
	if want := int64(store.MaxLogSize) + 1; l.Older != want {
		t.Fatalf("older = %d, want %d", l.Older, want)
	}
	// Appends stop at the limit: the log is read as it is, and added to under a new name.
	if err := s.AppendLog("big", []byte(`{"n":3}`)); err == nil || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("an append to a log past MaxLogSize: %v", err)
	}
	if l, err = s.ReadLog("big"); err != nil || len(l.Lines) != 2 {
		t.Fatalf("after a refused append: %q, %v", l.Lines, err)
	}

	// The byte before the region is a newline: the region's first line is whole.
	prefix, first := `{"old":1}`+"\n", `{"n":0}`+"\n"
	region := first + strings.Repeat(" ", store.MaxLogSize-len(first)-1) + "\n"
	if err := os.WriteFile(p, []byte(prefix+region), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err = s.ReadLog("big")
	if err != nil || len(l.Lines) != 1 || string(l.Lines[0]) != `{"n":0}` || l.Invalid != 1 || l.Older != int64(len(prefix)) {
		t.Fatalf("region at a line start: %q, invalid %d, older %d, %v", l.Lines, l.Invalid, l.Older, err)
	}
}

func TestParseLines(t *testing.T) {
	cases := []struct {
		name                 string
		in                   string
		lines, torn, invalid int
	}{
		{"empty", "", 0, 0, 0},
		{"two", "{}\n[1]\n", 2, 0, 0},
		{"torn", "{}\n{\"a\":", 1, 1, 0},
		{"invalid-middle", "{}\nnot json\n{}\n", 2, 0, 1},
		{"blank-line", "{}\n\n{}\n", 2, 0, 1},
		{"duplicate-key-line", "{\"a\":1,\"a\":2}\n", 0, 0, 1},
		{"zeroed-tail", "{}\n\x00\x00\x00", 1, 1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := store.ParseLines([]byte(c.in), store.MaxLogLine)
			if len(l.Lines) != c.lines || l.Torn != c.torn || l.Invalid != c.invalid {
				t.Fatalf("got %d/%d/%d, want %d/%d/%d", len(l.Lines), l.Torn, l.Invalid, c.lines, c.torn, c.invalid)
			}
		})
	}
}

func FuzzParseLines(f *testing.F) {
	for _, s := range []string{"{}\n", "{}\n{\"a\":", "x\n{}\n", "\n\n", "[1,2]\n\"s\"\n3"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l := store.ParseLines(data, 1024)
		total := bytes.Count(data, []byte("\n"))
		if len(l.Lines)+l.Invalid != total {
			t.Fatalf("%d lines + %d invalid != %d newlines", len(l.Lines), l.Invalid, total)
		}
		if (l.Torn == 1) != (len(data) > 0 && data[len(data)-1] != '\n') {
			t.Fatalf("torn %d for %q", l.Torn, data)
		}
		for _, line := range l.Lines {
			if strictjson.Check(line) != nil || bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("returned bad line %q", line)
			}
		}
		j := store.ParseJournal(data)
		for i := 1; i < len(j.Records); i++ {
			if j.Records[i].Seq <= j.Records[i-1].Seq {
				t.Fatal("journal records out of sequence")
			}
		}
	})
}

func TestWriteOverDamagedDocumentKeepsItInQuarantine(t *testing.T) {
	s, dir := newStore(t)
	os.WriteFile(filepath.Join(dir, "initiative.json"), []byte(`{"half":`), 0o600)
	if _, err := s.Read("initiative"); err == nil || !strings.Contains(err.Error(), "left as it is") {
		t.Fatalf("read damaged: %v", err)
	}
	if _, err := s.Update("initiative", func(cur []byte) ([]byte, error) { return []byte(`{}`), nil }); err == nil {
		t.Fatal("update built on a damaged document")
	}
	if err := s.Write("initiative", []byte(`{"v":2}`)); err != nil {
		t.Fatal(err)
	}
	q, _ := filepath.Glob(filepath.Join(dir, "quarantine", "initiative.json-*"))
	if len(q) != 1 {
		t.Fatalf("quarantine holds %v", q)
	}
	if b, _ := os.ReadFile(q[0]); string(b) != `{"half":` {
		t.Fatalf("quarantined %q", b)
	}
}

// A state directory others may write (0777) is made private when it is opened, not only
// reported by doctor.
func TestOpenMakesStateDirPrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no mode bits")
	}
	for _, mode := range []os.FileMode{0o777, 0o775, 0o755, 0o700} {
		dir := filepath.Join(t.TempDir(), "state")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
		s, err := store.Open(dir)
		if err != nil {
			t.Fatalf("%04o: %v", mode, err)
		}
		s.Close()
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%04o: now %v, want 0700", mode, fi.Mode().Perm())
		}
	}
}

// TestLogAppendCloseFailureAfterSync: a close(2) that fails after the line was fsynced does
// not fail the append, so the caller does not retry and duplicate the line.
func TestLogAppendCloseFailureAfterSync(t *testing.T) {
	s, dir := newStore(t)
	if err := s.AppendLog("events", []byte(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	// Find the close of the log file in a clean append, then fail exactly that one.
	probe := func(failAt int) (*durabletest.Faulty, error) {
		d := openDir(t, dir)
		ff := &durabletest.Faulty{FS: d, FailAt: failAt}
		fs := mustOpen(t, dir, store.WithFS(ff))
		return ff, fs.AppendLog("events", []byte(`{"n":2}`))
	}
	ff, err := probe(0)
	if err != nil {
		t.Fatal(err)
	}
	closeAt := 0
	for i, op := range ff.Trace() {
		if strings.Contains(op, "close logs/events.jsonl") {
			closeAt = i + 1
		}
	}
	if closeAt == 0 {
		t.Fatalf("no close of the log in %v", ff.Trace())
	}
	ff, err = probe(closeAt)
	if err != nil {
		t.Fatalf("append reported %v though its line was fsynced", err)
	}
	l, _ := s.ReadLog("events")
	if len(l.Lines) != 3 {
		t.Fatalf("%d lines, want 3 (no duplicate, none lost): %s", len(l.Lines), ff.Trace())
	}
}

// A large document is checked on two cores, its escaped strings split between them: a secret
// only its decoded text shows is found wherever it is, with the path a one-core scan gives.
func TestCheckDocumentLarge(t *testing.T) {
	item := func(i int, note string) string {
		return fmt.Sprintf(`{"id":%d,"path":"/work/reports/%03d.md","note":"%s"}`, i, i, note)
	}
	doc := func(secretAt int, secret string) []byte {
		var b strings.Builder
		b.WriteString(`{"items":[`)
		for i := range 2000 {
			if i > 0 {
				b.WriteByte(',')
			}
			note := `checked \u00e9 and \"quoted\"`
			if i == secretAt {
				note = secret
			}
			b.WriteString(item(i, note))
		}
		b.WriteString(`]}`)
		return []byte(b.String())
	}
	gh := `\u0067hp_` + strings.Repeat("a1B2", 9) // ghp_..., written with an escape
	cases := []struct {
		name string
		doc  []byte
		rule string
	}{
		{"clean", doc(-1, ""), ""},
		{"escaped-first", doc(0, gh), "github"},
		{"escaped-middle", doc(1000, gh), "github"},
		{"escaped-last", doc(1999, gh), "github"},
		{"plain-last", doc(1999, "ghp_"+strings.Repeat("a1B2", 9)), "github"},
		{"split-by-escape", doc(1500, `AKIA\u0051\u0052STUVWXYZ234567`), "aws"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if len(c.doc) < 64<<10 {
				t.Fatalf("the document is %d bytes: too small for the two-core check", len(c.doc))
			}
			err := store.CheckDocument(c.doc)
			want := secrets.ScanJSON(c.doc)
			if c.rule == "" {
				if err != nil || want != nil {
					t.Fatalf("CheckDocument = %v, ScanJSON = %v, want neither to find anything", err, want)
				}
				return
			}
			var f *secrets.Finding
			if !errors.As(err, &f) || !strings.Contains(f.Rule, c.rule) || want == nil || *f != *want {
				t.Fatalf("CheckDocument = %v, want what ScanJSON finds: %v", err, want)
			}
		})
	}
	bad := doc(-1, "")
	bad = append(bad[:len(bad)-1], ',')
	var je *strictjson.Error
	if err := store.CheckDocument(bad); !errors.As(err, &je) || je.Kind != strictjson.Syntax {
		t.Errorf("CheckDocument(truncated) = %v, want a syntax error", err)
	}
}

// TestOpenWhereAFileIsInTheWay: a regular file where the state directory, or a directory on
// the way to it, belongs is said plainly: which file is in the way, that it was left untouched,
// and that the person moves it aside; never that anything is to be deleted, nor a command to
// run again where hooks show it.
func TestOpenWhereAFileIsInTheWay(t *testing.T) {
	for _, c := range []struct{ name, file string }{
		{"state directory", ".claude/cairn"},
		{"parent", ".claude"},
	} {
		for _, noCreate := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/nocreate=%v", c.name, noCreate), func(t *testing.T) {
				root := t.TempDir()
				file := filepath.Join(root, filepath.FromSlash(c.file))
				os.MkdirAll(filepath.Dir(file), 0o700)
				if err := os.WriteFile(file, []byte("the user's notes\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				before, _ := os.Stat(file)
				var opts []store.Option
				if noCreate {
					opts = append(opts, store.WithNoCreate())
				}
				s, err := store.Open(filepath.Join(root, ".claude", "cairn"), opts...)
				if err == nil {
					s.Close()
					t.Fatal("opened a state directory where a file is")
				}
				msg := err.Error()
				for _, want := range []string{file + " is a file, not a directory", "left it untouched", "move"} {
					if !strings.Contains(msg, want) {
						t.Errorf("error %q does not say %q", msg, want)
					}
				}
				for _, bad := range []string{"not a regular file", "delete", "remove", "rm ", "run the command"} {
					if strings.Contains(strings.ToLower(msg), bad) {
						t.Errorf("error %q says %q", msg, bad)
					}
				}
				// Hooks show it to the user, who has no command to run again: the CLI puts its step
				// in place of this one.
				if !strings.HasSuffix(msg, "; "+store.InTheWayStep) {
					t.Errorf("error %q does not end with the step %q", msg, store.InTheWayStep)
				}
				if b, err := os.ReadFile(file); err != nil || string(b) != "the user's notes\n" {
					t.Fatalf("the file was changed: %q %v", b, err)
				}
				if after, err := os.Stat(file); err != nil || after.Mode() != before.Mode() {
					t.Fatalf("the file's mode changed from %v: %v %v", before.Mode(), after.Mode(), err)
				}
			})
		}
	}
}

// UpdateOwn, for a document Cairn rebuilds, sets a damaged one aside in quarantine/ (kept
// byte for byte), gives fn nil and says where it went; Update still refuses it.
func TestUpdateOwnQuarantinesADamagedDocument(t *testing.T) {
	s, dir := newStore(t)
	os.WriteFile(filepath.Join(dir, "l2-state.json"), []byte(`{"half":`), 0o600)
	if _, err := s.Update("l2-state", func([]byte) ([]byte, error) { return []byte(`{}`), nil }); err == nil || !strings.Contains(err.Error(), "left as it is") {
		t.Fatalf("Update over a damaged document: %v", err)
	}
	var got []byte = []byte("unset")
	doc, n, err := s.UpdateOwn("l2-state", func(cur []byte) ([]byte, error) { got = cur; return []byte(`{"v":1}`), nil })
	if err != nil || string(doc) != `{"v":1}` || got != nil {
		t.Fatalf("UpdateOwn: %q, fn got %q, %v", doc, got, err)
	}
	q, _ := filepath.Glob(filepath.Join(dir, "quarantine", "l2-state.json-*"))
	if len(q) != 1 || n == nil || n.Kind != "quarantined" || filepath.Base(q[0]) != filepath.Base(n.Path) || !strings.Contains(n.Message, "l2-state.json was damaged") {
		t.Fatalf("quarantine holds %v, notice %+v", q, n)
	}
	if b, _ := os.ReadFile(q[0]); string(b) != `{"half":` {
		t.Fatalf("quarantined %q", b)
	}
	if _, n, err := s.UpdateOwn("l2-state", func(cur []byte) ([]byte, error) { return nil, nil }); n != nil || err != nil {
		t.Fatalf("UpdateOwn over a sound document: notice %+v, %v", n, err)
	}
}

// TestFileWhereAStoreDirectoryBelongs: a regular file where one of the state directory's own
// directories belongs (sessions/, checkpoints/, logs/) is said as what it is, a file where a
// directory belongs; not as a "not a regular file" with a symlink, FIFO or directory in its
// place, which sent the person looking for something that is not there.
func TestFileWhereAStoreDirectoryBelongs(t *testing.T) {
	for _, c := range []struct {
		dir   string
		write func(s *store.Store) error
	}{
		{"sessions", func(s *store.Store) error { return s.WriteSession("42", []byte(`{}`)) }},
		{"checkpoints", func(s *store.Store) error { return s.SaveCheckpoint("plan", []byte(`{}`)) }},
		{"logs", func(s *store.Store) error { return s.AppendLog("decisions", []byte(`{}`)) }},
	} {
		t.Run(c.dir, func(t *testing.T) {
			s, dir := newStore(t)
			if err := os.WriteFile(filepath.Join(dir, c.dir), []byte("notes\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			err := c.write(s)
			if err == nil {
				t.Fatal("written where a file is in the way")
			}
			msg := err.Error()
			if want := "a file is in its place, not a directory"; !strings.Contains(msg, want) {
				t.Errorf("error %q does not say %q", msg, want)
			}
			if strings.Contains(msg, "not a regular file") {
				t.Errorf("error %q says it is not a regular file", msg)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, c.dir)); string(b) != "notes\n" {
				t.Errorf("the file now holds %q", b)
			}
		})
	}
}

// TestListCheckpointsOnlyFiles: a directory or FIFO named like a checkpoint is none (loading
// it is refused), so it is not listed; the listing reads the directory once, not a stat per
// entry.
func TestListCheckpointsOnlyFiles(t *testing.T) {
	s, dir := newStore(t)
	for _, n := range []string{"plan", "review"} {
		if err := s.SaveCheckpoint(n, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	cp := filepath.Join(dir, "checkpoints")
	if err := os.Mkdir(filepath.Join(cp, "adir.json"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := mkfifo(filepath.Join(cp, "fifo.json")); err != nil && runtime.GOOS != "windows" {
		t.Fatal(err)
	}
	f := &durabletest.Faulty{FS: openDir(t, dir)}
	counted := mustOpen(t, dir, store.WithFS(f))
	before := f.Ops()
	got, err := counted.ListCheckpoints("")
	if err != nil || strings.Join(got, " ") != "plan review" {
		t.Errorf("listed %v, %v; want plan review", got, err)
	}
	if ops := f.Ops() - before; ops != 1 {
		t.Errorf("listing took %d operations, want 1 (the directory read): %v", ops, f.Trace()[before:])
	}
}
