package memory

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/textsafe"
)

func clock(start time.Time) func() time.Time {
	t := start
	return func() time.Time {
		t = t.Add(time.Minute)
		return t
	}
}

// recordLearning is m.RecordLearning as most tests read it: the file name and whether it changed.
func recordLearning(m *Memory, l Learning) (name string, changed bool, err error) {
	rec, err := m.RecordLearning(l)
	return rec.Name, rec.Changed, err
}

func newTestMemory(t *testing.T) (*Memory, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "projects", "-p", "memory")
	return New(Location{Dir: dir, Source: "test"}, Options{Now: clock(time.Date(2026, 11, 22, 17, 0, 0, 0, time.UTC))}), dir
}

// writeTopic writes the topic file in dir by hand, as the model may.
func writeTopic(t *testing.T, dir, topic string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, TopicFile), []byte(topic), 0o644); err != nil {
		t.Fatal(err)
	}
}

// entryTexts is the text of the topic file's lines, oldest first.
func entryTexts(t *testing.T, m *Memory) []string {
	t.Helper()
	entries, err := m.Entries()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Text)
	}
	return got
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRecordWritesTopicAndIndex(t *testing.T) {
	m, dir := newTestMemory(t)
	foreign := "# My memory\r\n- [Prefs](prefs.md) — tabs, not spaces\r\n"
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, IndexFile), []byte(foreign), 0o644); err != nil {
		t.Fatal(err)
	}
	lines := []string{
		"Active APEX workflow: analyze completed, planning login fix",
		"Active APEX workflow: plan completed, implementing login fix",
		"Completed APEX for login fix: merged as abc123",
	}
	for _, l := range lines {
		if err := m.Record(l); err != nil {
			t.Fatalf("Record(%q): %v", l, err)
		}
	}
	index := readFile(t, filepath.Join(dir, IndexFile))
	want := foreign + "- [Cairn workflow](cairn-workflow.md) — Completed APEX for login fix: merged as abc123\r\n"
	if index != want {
		t.Errorf("MEMORY.md\n got %q\nwant %q", index, want)
	}
	if fi, _ := os.Stat(filepath.Join(dir, IndexFile)); fi.Mode().Perm() != 0o644 {
		t.Errorf("MEMORY.md mode changed to %v", fi.Mode().Perm())
	}

	topic := readFile(t, filepath.Join(dir, TopicFile))
	fm, _ := parseMemoryFile(t, []byte(topic))
	if fm.Name != TopicName || fm.Metadata.Type != "project" || !strings.Contains(fm.Description, "Completed APEX") {
		t.Errorf("topic front matter = %+v", fm)
	}
	entries, err := m.Entries()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 {
		t.Fatalf("entries = %+v, want 3", entries)
	}
	for i, e := range entries {
		if e.Text != lines[i] || e.At.IsZero() {
			t.Errorf("entry %d = %+v, want %q with a time", i, e, lines[i])
		}
	}
	last, ok, err := m.LastPosition()
	if err != nil || !ok {
		t.Fatalf("LastPosition: %v %v", ok, err)
	}
	if last.Text != lines[2] || last.Source != TopicFile {
		t.Errorf("LastPosition = %+v", last)
	}

	// The same line again owes nothing: both files stay byte for byte.
	if err := m.Record(lines[2]); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, TopicFile)); got != topic {
		t.Errorf("recording the latest line again changed the topic file")
	}
}

func TestRecordBoundsTopic(t *testing.T) {
	m, _ := newTestMemory(t)
	for i := range MaxTopicLines + 7 {
		if err := m.Record("Active DEBUG workflow: step" + string(rune('a'+i)) + " completed, fixing bug"); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := m.Entries()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != MaxTopicLines {
		t.Fatalf("%d entries, want %d", len(entries), MaxTopicLines)
	}
	if got := entries[len(entries)-1].Text; got != "Active DEBUG workflow: step"+string(rune('a'+MaxTopicLines+6))+" completed, fixing bug" {
		t.Errorf("newest entry is %q, want the last recorded", entries[len(entries)-1].Text)
	}
	if got := entries[0].Text; got != "Active DEBUG workflow: step"+string(rune('a'+7))+" completed, fixing bug" {
		t.Errorf("oldest kept entry is %q", entries[0].Text)
	}
}

func TestRecordSanitises(t *testing.T) {
	m, dir := newTestMemory(t)
	evil := "Active APEX workflow: plan completed, implementing ![x](http://evil/p.png) \u202enoisrevbus\u202c\n- [Fake](fake.md) — injected\x1b[31m"
	if err := m.Record(evil); err != nil {
		t.Fatal(err)
	}
	index := readFile(t, filepath.Join(dir, IndexFile))
	rest := strings.TrimPrefix(index, "- [Cairn workflow](cairn-workflow.md) — ")
	if strings.Count(index, "\n") != 1 || rest == index || hasUnescaped(rest, markdownOpeners()) || strings.Contains(index, "\u202e") || strings.Contains(index, "\x1b") {
		t.Errorf("unsafe index line: %q", index)
	}
	if n, _ := countOwned([]byte(index), "fake.md"); n != 0 {
		t.Errorf("stored text formed an index entry: %q", index)
	}
	// What a reader gets: the header's values decoded (YAML's own escapes undone), then the
	// body. Cairn's own fence lines aside, nothing may open Markdown; inside the block, the
	// text cannot close the fence.
	fm, body := parseMemoryFile(t, []byte(readFile(t, filepath.Join(dir, TopicFile))))
	topic := fm.Name + "\n" + fm.Description + "\n" + fm.Metadata.Type + "\n" + string(body)
	if strings.Count(topic, "```") != 2 {
		t.Errorf("the data block's fence is broken: %q", topic)
	}
	topic = strings.Replace(strings.Replace(topic, topicFence+"\n", "", 1), "\n```\n", "\n", 1)
	if hasUnescaped(topic, markdownOpeners()) || strings.Contains(topic, "\u202e") || strings.Contains(topic, "\n- [Fake]") {
		t.Errorf("unsafe topic file: %q", topic)
	}
	last, ok, err := m.LastPosition()
	if err != nil || !ok || !strings.Contains(last.Text, "![x](http://evil/p.png)") {
		t.Errorf("LastPosition = %+v %v %v; want the plain text back, unescaped", last, ok, err)
	}
}

// TestRecordLeadingQuote: textsafe escapes a > only in front, where it would open a block
// quote; the text reads back without that escape, and recording it again changes nothing.
func TestRecordLeadingQuote(t *testing.T) {
	m, dir := newTestMemory(t)
	text := "> quoted " + strings.Repeat("x", maxLineRunes) // cut at the cap, escape included
	if err := m.Record(text); err != nil {
		t.Fatal(err)
	}
	topic := readFile(t, filepath.Join(dir, TopicFile))
	if !strings.Contains(topic, `Z \> quoted x`) {
		t.Errorf("topic file line not escaped:\n%s", topic)
	}
	entries, err := m.Entries()
	want := unescape(textsafe.Line(text, maxLineRunes))
	if err != nil || len(entries) != 1 || entries[0].Text != want || !strings.HasPrefix(want, "> quoted x") {
		t.Fatalf("entries = %+v %v, want %q", entries, err, want)
	}
	if err := m.Record(entries[0].Text); err != nil {
		t.Fatal(err)
	}
	if again := readFile(t, filepath.Join(dir, TopicFile)); again != topic {
		t.Errorf("recording the text read back changed the topic file:\n%s", again)
	}
}

// markdownOpeners are the characters textsafe escapes so stored text cannot open a link,
// image, code span or HTML.
func markdownOpeners() string {
	var b strings.Builder
	for _, r := range "[]<>`" {
		if textsafe.Escaped(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// hasUnescaped reports whether s holds one of chars not preceded by a backslash (escaped
// backslashes counted).
func hasUnescaped(s, chars string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if strings.IndexByte(chars, s[i]) >= 0 {
			return true
		}
	}
	return false
}

func TestSecretsRefused(t *testing.T) {
	m, dir := newTestMemory(t)
	token := "ghp_" + strings.Repeat("aB3dE6gH9j", 3) + "kLmNoP"
	if secrets.ScanString(token) == nil {
		t.Skip("the secrets scanner does not flag this token shape")
	}
	var f *secrets.Finding
	if err := m.Record("Active APEX workflow: plan completed, implementing with " + token); !errors.As(err, &f) {
		t.Errorf("Record with a token: err = %v, want a *secrets.Finding", err)
	}
	if _, _, err := recordLearning(m, Learning{Title: "Deploy key", Body: "use " + token}); !errors.As(err, &f) {
		t.Errorf("RecordLearning with a token: err = %v, want a *secrets.Finding", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused write created files: %v", err)
	}
}

func TestLearnings(t *testing.T) {
	m, dir := newTestMemory(t)
	name, _, err := recordLearning(m, Learning{Title: "Run migrations first!", Body: "The test DB needs `make migrate`\nbefore go test.\n", Type: "feedback"})
	if err != nil {
		t.Fatal(err)
	}
	if name != "cairn-learning-run-migrations-first.md" {
		t.Errorf("file = %s", name)
	}
	if err := m.Record("Active APEX workflow: plan completed, implementing x"); err != nil {
		t.Fatal(err)
	}
	// The same title again updates the file and its line; a different title adds one.
	if _, _, err := recordLearning(m, Learning{Title: "run migrations FIRST", Body: "Use make migrate-test now."}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := recordLearning(m, Learning{Title: "Prefer table tests", Body: "Name cases like plan->implement.", Type: "user"}); err != nil {
		t.Fatal(err)
	}
	index := readFile(t, filepath.Join(dir, IndexFile))
	if n, _ := countOwned([]byte(index), name); n != 1 {
		t.Errorf("%d index lines for %s in\n%s", n, name, index)
	}
	if got, _ := FindEntry([]byte(index), name); got != "- [“run migrations FIRST”](cairn-learning-run-migrations-first.md) — “Use make migrate-test now.”" {
		t.Errorf("learning line = %q", got)
	}
	if n := strings.Count(index, "\n"); n != 3 {
		t.Errorf("index has %d lines, want 3:\n%s", n, index)
	}
	content := readFile(t, filepath.Join(dir, name))
	fm, body := parseMemoryFile(t, []byte(content))
	if fm.Name != "cairn-learning-run-migrations-first" || fm.Metadata.Type != "project" || strings.TrimLeft(string(body), "\n") != "Use make migrate-test now.\n" {
		t.Errorf("learning file = %+v %q", fm, body)
	}
	if _, _, err := recordLearning(m, Learning{Title: "x", Body: "y", Type: "secret-type"}); err == nil || IsUnavailable(err) {
		t.Errorf("bad type: err = %v, want an input error", err)
	}
	if _, _, err := recordLearning(m, Learning{Title: " \u200b ", Body: "y"}); err == nil {
		t.Error("invisible title accepted")
	}
}

func TestSlug(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Run migrations first!", "run-migrations-first"},
		{"  --Hello__World--  ", "hello-world"},
		{strings.Repeat("abcdefghij ", 10), "abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcd"},
	}
	for _, tc := range tests {
		if got := Slug(tc.in); got != tc.want {
			t.Errorf("Slug(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if a, b := Slug("日本語"), Slug("中文"); a == b || !strings.HasPrefix(a, "l") || len(a) != 9 {
		t.Errorf("non-ASCII titles: %q %q, want distinct hashed slugs", a, b)
	}
}

func TestLastPositionToleratesHandEdits(t *testing.T) {
	m, dir := newTestMemory(t)
	m.opt.Now = clock(time.Date(2026, 11, 22, 19, 0, 0, 0, time.UTC)) // every line below is past
	// The model rewrote the topic file: no front matter, extra prose, an untimed line, and
	// lines out of order.
	topic := "Some notes the model added.\n\n" +
		"- 2026-11-22T18:00:00Z Active DEBUG workflow: troubleshoot completed, fixing the \\[flaky\\] test\n" +
		"* 2026-11-22T17:00:00Z Active DEBUG workflow: reproduce completed, troubleshooting it\n" +
		"- a note without a time\n" +
		"not a list item\n"
	writeTopic(t, dir, topic)
	last, ok, err := m.LastPosition()
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if last.Text != "Active DEBUG workflow: troubleshoot completed, fixing the [flaky] test" || last.Source != TopicFile {
		t.Errorf("LastPosition = %+v", last)
	}

	// Only the index line is left: it still says where things stood.
	os.Remove(filepath.Join(dir, TopicFile))
	idx := "# mem\n- [B](b.md) — x\n*  [Cairn](cairn-workflow.md) – Expired workflow: APEX at plan for old work\n"
	if err := os.WriteFile(filepath.Join(dir, IndexFile), []byte(idx), 0o644); err != nil {
		t.Fatal(err)
	}
	last, ok, err = m.LastPosition()
	if err != nil || !ok || last.Text != "Expired workflow: APEX at plan for old work" || last.Source != IndexFile {
		t.Errorf("LastPosition from index = %+v %v %v", last, ok, err)
	}

	os.Remove(filepath.Join(dir, IndexFile))
	if _, ok, err := m.LastPosition(); ok || err != nil {
		t.Errorf("nothing recorded: ok=%v err=%v", ok, err)
	}
}

// With only the index line left, its hook is what follows the link, however the line was
// rewritten (Claude Code's consolidation writes its own titles): a title with parentheses or
// a link title in quotes is no part of it.
func TestLastPositionFromARewrittenIndexLine(t *testing.T) {
	const want = "Active APEX workflow: plan completed, implementing x"
	for _, line := range []string{
		"- [Cairn workflow (position)](cairn-workflow.md) — " + want,
		"* [Cairn](<cairn-workflow.md> \"the (latest) position\"): " + want,
		"1. [Cairn) workflow](./cairn-workflow.md) - " + want,
	} {
		m, dir := newTestMemory(t)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, IndexFile), []byte("# Memory\n"+line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if last, ok, err := m.LastPosition(); err != nil || !ok || last.Text != want || last.Source != IndexFile {
			t.Errorf("LastPosition from %q = %q %v %v, want %q", line, last.Text, ok, err, want)
		}
	}
}

func TestDegradation(t *testing.T) {
	// Disabled: a typed answer, nothing written.
	m := New(Location{Disabled: true, Reason: "auto-memory is disabled by CLAUDE_CODE_DISABLE_AUTO_MEMORY=1"}, Options{})
	err := m.Record("Active APEX workflow: a completed, b c")
	var u *UnavailableError
	if !errors.As(err, &u) || !u.Disabled || !strings.Contains(u.Error(), "CLAUDE_CODE_DISABLE_AUTO_MEMORY") {
		t.Errorf("disabled Record: %v", err)
	}
	if _, _, err := m.LastPosition(); !IsUnavailable(err) {
		t.Errorf("disabled LastPosition: %v", err)
	}

	// A memory dir that cannot be created (a file is in the way): a warning, after one try
	// each, not a retry.
	base := t.TempDir()
	blocker := filepath.Join(base, "file")
	if err := os.WriteFile(blocker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tries := 0
	makeDir = func(d string, perm os.FileMode) error {
		tries++
		return durable.MkdirAll(d, perm)
	}
	t.Cleanup(func() { makeDir = durable.MkdirAll })
	m = New(Location{Dir: filepath.Join(blocker, "memory")}, Options{})
	err = m.Record("Active APEX workflow: a completed, b c")
	if !errors.As(err, &u) || u.Disabled || !strings.HasPrefix(u.Error(), UnavailableMessage) {
		t.Errorf("uncreatable dir: %v", err)
	}
	if _, _, err := recordLearning(m, Learning{Title: "t", Body: "b"}); !IsUnavailable(err) {
		t.Errorf("uncreatable dir learning: %v", err)
	}
	if tries != 2 {
		t.Errorf("two writes tried to make the directory %d times, want once each", tries)
	}

	// MEMORY.md replaced by something Cairn will not touch.
	m2, dir := newTestMemory(t)
	if err := os.MkdirAll(filepath.Join(dir, IndexFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := m2.Record("Active APEX workflow: a completed, b c"); !IsUnavailable(err) {
		t.Errorf("MEMORY.md a directory: %v", err)
	}
}

func TestWriterLockSerialises(t *testing.T) {
	dir := t.TempDir()
	unlock, err := dirLock(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	m := New(Location{Dir: dir}, Options{LockWait: 50 * time.Millisecond})
	if err := m.Record("x y"); !IsUnavailable(err) || !strings.Contains(err.Error(), "another Cairn process holds the memory lock") {
		t.Errorf("Record while another writer holds the lock: %v", err)
	}
	unlock()
	if err := m.Record("x y"); err != nil {
		t.Errorf("Record after unlock: %v", err)
	}
	fi, err := os.Stat(filepath.Join(dir, LockFile))
	if err != nil || fi.Size() != 0 {
		t.Errorf("lock file after use: %v size %d, want empty", err, fi.Size())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("memory dir holds %v, want MEMORY.md, the topic file and the lock only", entries)
	}
}

func TestOpen(t *testing.T) {
	f := newFixture(t)
	f.write(t, "proj/.git/HEAD", "x")
	env := Env{Getenv: func(k string) string { return f.env[k] }, WorkDir: f.path("proj"), ManagedSettings: f.path("none.json")}
	m, err := Open(env, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := defaultDir(filepath.Join(f.home, ".claude"), f.path("proj")); m.Location().Dir != want {
		t.Errorf("Open dir = %s, want %s", m.Location().Dir, want)
	}

	f.env["CLAUDE_CODE_DISABLE_AUTO_MEMORY"] = "1"
	m, err = Open(env, Options{})
	if err != nil || !m.Location().Disabled {
		t.Fatalf("Open disabled: %+v %v", m.Location(), err)
	}
	var u *UnavailableError
	if err := m.Record("x y"); !errors.As(err, &u) || !u.Disabled {
		t.Errorf("Record disabled: %v", err)
	}

	// No home at all: Open says so, and the Memory it returns says the same on every call.
	m, err = Open(Env{Getenv: func(string) string { return "" }, WorkDir: f.path("proj"), ManagedSettings: f.path("none.json")}, Options{})
	if !IsUnavailable(err) || m == nil {
		t.Fatalf("Open without a home: %v", err)
	}
	if err := m.Record("x y"); !IsUnavailable(err) {
		t.Errorf("Record after a failed Open: %v", err)
	}

	// A file where the directory should be.
	blocker := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := New(Location{Dir: filepath.Join(blocker, "m")}, Options{}).Record("x y"); !IsUnavailable(err) {
		t.Errorf("Record into an uncreatable dir: %v", err)
	}
}

func TestReadOnlyDir(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: permission bits do not stop writes; TestDegradation covers an uncreatable dir")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, IndexFile), []byte("# mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	m := New(Location{Dir: dir}, Options{})
	if err := m.Record("x y"); !IsUnavailable(err) {
		t.Errorf("Record into a read-only dir: %v", err)
	}
	if got := readFile(t, filepath.Join(dir, IndexFile)); got != "# mine\n" {
		t.Errorf("MEMORY.md changed to %q", got)
	}
}

func TestSweepsStaleTemps(t *testing.T) {
	m, dir := newTestMemory(t)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	for _, name := range []string{".tmp-MEMORY.md-dead", ".tmp-cairn-workflow.md-dead", ".tmp-MEMORY.md-fresh", ".tmp-someone-elses"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(name, "fresh") {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := m.Record("x y"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{".tmp-MEMORY.md-dead": false, ".tmp-cairn-workflow.md-dead": false, ".tmp-MEMORY.md-fresh": true, ".tmp-someone-elses": true} {
		_, err := os.Stat(filepath.Join(dir, name))
		if got := err == nil; got != want {
			t.Errorf("%s present = %v, want %v", name, got, want)
		}
	}
}

// A line stamped in the future (written while the clock was set wrong) does not outrank the
// lines written after it: otherwise, after a workflow completes, every session would be told
// the stale position line as the last one, and that its workflow state is missing.
func TestLastPositionIgnoresFutureTimes(t *testing.T) {
	for name, topic := range map[string]string{
		"data block": "```text\n" +
			"2027-06-01T09:00:00Z Active APEX workflow: analyze completed, planning “x”\n" +
			"2026-11-22T16:30:00Z Completed APEX for “x”: “shipped”\n" +
			"```\n",
		// Lines edited by hand are ranked by their times: the one in the future is passed over.
		"edited by hand": "- 2027-06-01T09:00:00Z Active APEX workflow: analyze completed, planning “x”\n" +
			"- 2026-11-22T16:30:00Z Completed APEX for “x”: “shipped”\n",
	} {
		m, dir := newTestMemory(t) // now is 2026-11-22T17:01
		writeTopic(t, dir, topic)
		last, ok, err := m.LastPosition()
		if err != nil || !ok || last.Text != "Completed APEX for “x”: “shipped”" {
			t.Errorf("%s: LastPosition = %+v %v %v, want the completion line", name, last, ok, err)
		}
	}
}

// A line stamped by a clock ahead (another machine's, a container's) outranks no line Cairn
// wrote after it, once that time has passed too: Cairn keeps its data block in the order of
// the changes, so its last line is the latest, whatever the stamps say.
func TestLastPositionTrustsCairnsOrderOverSkewedStamps(t *testing.T) {
	m, _ := newTestMemory(t)
	at := time.Date(2026, 11, 22, 17, 0, 0, 0, time.UTC)
	if err := m.RecordAt("Active APEX workflow: analyze completed, planning “x”", at.Add(10*time.Minute), nil); err != nil {
		t.Fatal(err) // stamped by a clock 10 minutes ahead
	}
	if err := m.RecordAt("Completed APEX for “x”: “shipped”", at.Add(2*time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	m.opt.Now = func() time.Time { return at.Add(time.Hour) } // both stamps are past now
	last, ok, err := m.LastPosition()
	if err != nil || !ok || last.Text != "Completed APEX for “x”: “shipped”" {
		t.Errorf("LastPosition = %+v %v %v, want the completion line, written last", last, ok, err)
	}
}

// Claude Code asks for MEMORY.md entries "under ~150 characters" (2.1.330's memory
// instructions) and its consolidation rewrites longer ones; Cairn's own lines keep to that,
// whatever the stored text.
func TestIndexLinesKeepUnder150(t *testing.T) {
	m, dir := newTestMemory(t)
	long := strings.Repeat("word ", 80)
	if err := m.Record("Active APEX workflow: analyze completed, planning “" + long + "”"); err != nil {
		t.Fatal(err)
	}
	name, _, err := recordLearning(m, Learning{Title: strings.Repeat("title ", 20), Body: long})
	if err != nil {
		t.Fatal(err)
	}
	index := readFile(t, filepath.Join(dir, IndexFile))
	for _, target := range []string{TopicFile, name} {
		line, ok := FindEntry([]byte(index), target)
		if !ok {
			t.Fatalf("no entry for %s in\n%s", target, index)
		}
		if n := utf8.RuneCountInString(line); n > 150 || !strings.Contains(line, " — ") {
			t.Errorf("entry for %s has %d runes (or no hook): %s", target, n, line)
		}
	}
}

// A MEMORY.md that is a symlink or a directory is one Cairn leaves as it is, and says so in
// the words it always used; a held lock is not.
func TestLeftAlone(t *testing.T) {
	for _, kind := range []string{"symlink", "directory"} {
		m, dir := newTestMemory(t)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, IndexFile)
		var err error
		if kind == "symlink" {
			err = os.Symlink("elsewhere.md", p)
		} else {
			err = os.Mkdir(p, 0o700)
		}
		if err != nil {
			t.Fatal(err)
		}
		err = m.Record("Active APEX workflow: plan completed")
		if !IsUnavailable(err) || !LeftAlone(err) || !strings.HasSuffix(err.Error(), "; Cairn leaves it as it is") {
			t.Errorf("%s: Record = %v, want it left alone", kind, err)
		}
	}
	m, dir := newTestMemory(t)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	unlock, err := dirLock(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	m.opt.LockWait = 10 * time.Millisecond
	if err := m.Record("Active APEX workflow: plan completed"); !IsUnavailable(err) || LeftAlone(err) {
		t.Errorf("Record under a held lock = %v, want unavailable for now only", err)
	}
}

// Claude Code reads MEMORY.md's lines as ending at "\n" only (2.1.330 splits it on "\n"): a
// carriage return alone is part of its line. Cairn reads them so too: its entry is a line of
// its own in Claude Code's reading, a user's line holding a carriage return is never taken
// apart (nor what follows the return taken for Cairn's entry and rewritten), and taking Cairn
// out again gives back the user's file byte for byte.
func TestBareCarriageReturnEndsNoLine(t *testing.T) {
	for _, tc := range []struct{ name, index string }{
		{"a return inside a line", "# Memory\n- [Notes](notes.md) — see\r[Cairn](cairn-workflow.md) for status\n"},
		{"returns only", "# Memory\r- [A](a.md) — x\r"},
		{"returns only, an entry after one", "# Memory\r- [Cairn workflow](cairn-workflow.md) — old\r"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, dir := newTestMemory(t)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, IndexFile), []byte(tc.index), 0o600); err != nil {
				t.Fatal(err)
			}
			const line = "Active APEX workflow: analyze completed, planning x"
			if err := m.Record(line); err != nil {
				t.Fatal(err)
			}
			index := readFile(t, filepath.Join(dir, IndexFile))
			if !slices.ContainsFunc(strings.Split(index, "\n"), func(l string) bool { return strings.TrimSuffix(l, "\r") == topicEntry(line) }) {
				t.Errorf("Cairn's entry is not a line of its own as Claude Code reads MEMORY.md: %q", index)
			}
			if _, err := m.RemoveCairn(nil); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, filepath.Join(dir, IndexFile)); got != tc.index {
				t.Errorf("MEMORY.md after Cairn is taken out = %q, want the user's %q", got, tc.index)
			}
		})
	}
}

// A topic file or MEMORY.md that is a symlink is one Cairn leaves as it is when it reads as
// well as when it writes: the position is not read from wherever the link points (a file
// Cairn never wrote and no longer updates), and the error says so in the write's words.
func TestSymlinkedFilesAreNotReadThrough(t *testing.T) {
	elsewhere := renderTopic([]Entry{{At: time.Date(2026, 11, 22, 16, 0, 0, 0, time.UTC), Text: "Active APEX workflow: another project's position"}}, topicHome)
	for _, name := range []string{TopicFile, IndexFile} {
		t.Run(name, func(t *testing.T) {
			m, dir := newTestMemory(t)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			target := filepath.Join(t.TempDir(), name)
			content := elsewhere
			if name == IndexFile {
				content = []byte(topicEntry("Active APEX workflow: another project's position") + "\n")
			}
			if err := os.WriteFile(target, content, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
			if name == TopicFile {
				entries, err := m.Entries()
				if !LeftAlone(err) || len(entries) > 0 {
					t.Errorf("Entries = %v, %v; want the symlink left alone", entries, err)
				}
			}
			last, ok, err := m.LastPosition()
			if !LeftAlone(err) || ok {
				t.Fatalf("LastPosition = %+v, %v, %v; want the symlink left alone", last, ok, err)
			}
			want := "Auto-memory unavailable — learnings will not persist: reading " + name + ": "
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("LastPosition's error %q does not start as a write's, %q", err, want)
			}
			if werr := m.Record("Active APEX workflow: plan completed"); werr == nil || werr.Error() != err.Error() {
				t.Errorf("the write says %v, the read %v; want the same words", werr, err)
			}
		})
	}
}

// The first write makes the memory directory and the parents it lacks durably (each parent
// fsynced once the directory is in it): a power loss must not lose the directory and the
// MEMORY.md written inside it.
func TestFirstWriteMakesTheDirectoryDurably(t *testing.T) {
	m, dir := newTestMemory(t)
	var made []string
	makeDir = func(d string, perm os.FileMode) error {
		made = append(made, d)
		return durable.MkdirAll(d, perm)
	}
	t.Cleanup(func() { makeDir = durable.MkdirAll })
	if err := m.Record("Active APEX workflow: plan completed"); err != nil {
		t.Fatal(err)
	}
	if len(made) == 0 || made[0] != dir {
		t.Fatalf("the memory directory was made by %q, not durable.MkdirAll(%s)", made, dir)
	}
	if _, err := os.Stat(filepath.Join(dir, IndexFile)); err != nil {
		t.Fatal(err)
	}
}

// A learning recorded again as it is (an agent retrying record_learning) changes nothing and
// says so; the same title with another body, or an index line lost since, is a change.
func TestLearningAgainChangesNothing(t *testing.T) {
	m, dir := newTestMemory(t)
	l := Learning{Title: "Run migrations first", Body: "make migrate before go test"}
	name, changed, err := recordLearning(m, l)
	if err != nil || !changed {
		t.Fatalf("first: changed %v, err %v", changed, err)
	}
	path := filepath.Join(dir, name)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if _, changed, err := recordLearning(m, l); err != nil || changed {
		t.Fatalf("again: changed %v, err %v; want no change", changed, err)
	}
	if fi, err := os.Stat(path); err != nil || !fi.ModTime().Equal(old) {
		t.Errorf("the learning file was rewritten: %v %v", fi.ModTime(), err)
	}
	if _, changed, err := recordLearning(m, Learning{Title: l.Title, Body: "make migrate-test"}); err != nil || !changed {
		t.Errorf("another body: changed %v, err %v; want a change", changed, err)
	}
	if err := os.WriteFile(filepath.Join(dir, IndexFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, changed, err := recordLearning(m, Learning{Title: l.Title, Body: "make migrate-test"}); err != nil || !changed {
		t.Errorf("its index line lost: changed %v, err %v; want a change", changed, err)
	}
}

// An older line goes into the topic file's history where its time puts it, never after the
// latest line, and leaves MEMORY.md as it is; the same line at the same time again changes
// nothing.
func TestRecordOlder(t *testing.T) {
	m, dir := newTestMemory(t)
	for _, s := range []string{"one", "two", "three"} { // at 17:01, 17:02, 17:03
		if err := m.Record(s); err != nil {
			t.Fatal(err)
		}
	}
	index := readFile(t, filepath.Join(dir, IndexFile))
	base := time.Date(2026, 11, 22, 17, 0, 0, 0, time.UTC)
	for _, o := range []struct {
		text string
		at   time.Time
	}{{"between", base.Add(90 * time.Second)}, {"late", base.Add(time.Hour)}, {"between", base.Add(90 * time.Second)}} {
		if err := m.RecordOlder(o.text, o.at); err != nil {
			t.Fatal(err)
		}
	}
	got := entryTexts(t, m)
	if want := []string{"one", "between", "two", "late", "three"}; !slices.Equal(got, want) {
		t.Errorf("topic lines = %q, want %q", got, want)
	}
	if after := readFile(t, filepath.Join(dir, IndexFile)); after != index {
		t.Errorf("MEMORY.md changed:\n%s\nwas:\n%s", after, index)
	}
	if last, _, _ := m.LastPosition(); last.Text != "three" {
		t.Errorf("LastPosition = %q, want the latest line", last.Text)
	}
}

// Stamps that drop from one line to the next in the history say the clock was set back
// between those two changes: an older line stamped after the drop goes no further back than
// it, whatever the stamps before it say. It went before every line stamped ahead (here past the
// oldest kept, so it was lost as the file was cut to its newest MaxTopicLines).
func TestRecordOlderAcrossAClockSetBack(t *testing.T) {
	m, _ := newTestMemory(t)
	var want []string
	for i := range MaxTopicLines {
		at := time.Date(2026, 11, 22, 10, i, 0, 0, time.UTC) // 10:00 to 10:09,
		if i >= MaxTopicLines/2 {
			at = at.Add(-70 * time.Minute) // then the clock is set back: 09:00 to 09:09
		}
		text := fmt.Sprintf("line %d", i)
		if err := m.RecordAt(text, at, nil); err != nil {
			t.Fatal(err)
		}
		if i == MaxTopicLines/2 {
			want = append(want, "owed") // its change came between the drop and line 10
		}
		if i > 0 {
			want = append(want, text)
		}
	}
	if err := m.RecordOlder("owed", time.Date(2026, 11, 22, 8, 59, 30, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	got := entryTexts(t, m)
	if !slices.Equal(got, want) {
		t.Errorf("topic lines = %q, want %q", got, want)
	}
}

// MEMORY.md keeps pointing at the latest line when an older one is written: an index line of
// Cairn's that another writer dropped meanwhile is put back with the latest line, not left
// out (the write's mark would otherwise take the drop for Cairn's own).
func TestRecordOlderKeepsTheIndexLine(t *testing.T) {
	m, dir := newTestMemory(t)
	for _, s := range []string{"one", "two"} {
		if err := m.Record(s); err != nil {
			t.Fatal(err)
		}
	}
	const foreign = "- [Notes](notes.md) — kept\n"
	if err := os.WriteFile(filepath.Join(dir, IndexFile), []byte(foreign), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := m.RecordOlder("between", time.Date(2026, 11, 22, 17, 1, 30, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	if got, want := readFile(t, filepath.Join(dir, IndexFile)), foreign+topicEntry("two")+"\n"; got != want {
		t.Errorf("MEMORY.md =\n%s\nwant\n%s", got, want)
	}
}

// RecordAt takes a line for written when the history holds it at its time followed only by
// the lines to be written after it (a settling killed before noting them written), and adds
// it when anything else follows it: the same position again later in the same second (A, B,
// A) is a new line, and MEMORY.md shows it.
func TestRecordAtWrittenBefore(t *testing.T) {
	// b as given, and as written: a line whose quoted part (a context cut after a glued
	// token's body) is a secret is written without it.
	for _, bs := range [][2]string{{"b", "b"}, {
		"Active APEX workflow: analyze completed, planning “ghp_" + strings.Repeat("aB3dE6gH9j", 4) + "…”",
		"Active APEX workflow: analyze completed, planning …",
	}} {
		m, dir := newTestMemory(t)
		at := time.Date(2026, 11, 22, 16, 0, 0, 0, time.UTC)
		a, b := Entry{At: at, Text: "a"}, Entry{At: at, Text: bs[0]}
		texts := func() []string { return entryTexts(t, m) }
		for range 2 { // the second time, as the settling after a crash
			if err := m.RecordAt(a.Text, a.At, []Entry{b}); err != nil {
				t.Fatal(err)
			}
			if err := m.RecordAt(b.Text, b.At, nil); err != nil {
				t.Fatal(err)
			}
			if got, want := texts(), []string{"a", bs[1]}; !slices.Equal(got, want) {
				t.Fatalf("topic lines = %q, want %q", got, want)
			}
			if index := readFile(t, filepath.Join(dir, IndexFile)); !strings.Contains(index, topicEntry(bs[1])) {
				t.Fatalf("MEMORY.md does not show the latest line %s:\n%s", bs[1], index)
			}
		}
		if err := m.RecordAt(a.Text, a.At, nil); err != nil {
			t.Fatal(err)
		}
		if got, want := texts(), []string{"a", bs[1], "a"}; !slices.Equal(got, want) {
			t.Errorf("topic lines = %q, want %q", got, want)
		}
		if index := readFile(t, filepath.Join(dir, IndexFile)); !strings.Contains(index, topicEntry("a")) {
			t.Errorf("MEMORY.md does not show the latest line a:\n%s", index)
		}
	}
}

// A move stamps its line a little after the journal's time of its change, from which a
// settling recovers it: RecordAt at the journal's time, with the lines after it, finds the
// line written up to stampSlack later, and no line stamped before it or longer after.
func TestRecordAtFindsTheMovesOwnStamp(t *testing.T) {
	at := time.Date(2026, 11, 22, 16, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		late  time.Duration // how much after at the move stamped its line
		lines int           // topic lines after the settling
	}{{0, 2}, {2 * time.Second, 2}, {stampSlack, 2}, {stampSlack + time.Second, 4}, {-time.Second, 4}} {
		m, _ := newTestMemory(t)
		for _, s := range []string{"a", "b"} { // the moves, each at its own stamp
			if err := m.RecordAt(s, at.Add(c.late), nil); err != nil {
				t.Fatal(err)
			}
		}
		b := Entry{At: at, Text: "b"}
		if err := m.RecordAt("a", at, []Entry{b}); err != nil { // the settling
			t.Fatal(err)
		}
		if err := m.RecordAt(b.Text, b.At, nil); err != nil {
			t.Fatal(err)
		}
		if entries, err := m.Entries(); err != nil || len(entries) != c.lines {
			t.Errorf("stamped %v late: topic lines = %+v (%v), want %d", c.late, entries, err, c.lines)
		}
	}
}

// The same text as the latest line at another time is another change's line (a move back to
// where the work was before) and is added; only a line of no known time (Record) is taken for
// the latest line of its text.
func TestRecordAtSameTextLaterIsANewLine(t *testing.T) {
	m, _ := newTestMemory(t)
	at := time.Date(2026, 11, 22, 16, 0, 0, 0, time.UTC)
	for _, d := range []time.Duration{0, time.Minute} {
		if err := m.RecordAt("a", at.Add(d), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Record("a"); err != nil {
		t.Fatal(err)
	}
	entries, err := m.Entries()
	if err != nil || len(entries) != 2 || !entries[1].At.Equal(at.Add(time.Minute)) {
		t.Errorf("topic lines = %+v (%v), want a at 16:00 and at 16:01", entries, err)
	}
}

// A directory in MEMORY.md's place was named by its mode's type bits, "(d---------)", which
// reads as a directory no one may open, whatever its mode: it is named "a directory".
func TestDirectoryInPlaceOfTheIndexIsNamed(t *testing.T) {
	m, dir := newTestMemory(t)
	if err := os.MkdirAll(filepath.Join(dir, IndexFile), 0o755); err != nil {
		t.Fatal(err)
	}
	err := m.Record("Active APEX workflow: plan completed")
	if !LeftAlone(err) || !strings.Contains(err.Error(), "is a directory, not a regular file") || strings.Contains(err.Error(), "d---------") {
		t.Errorf("Record with a directory in MEMORY.md's place: %v", err)
	}
}
