package memory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sharedMemory is a memory directory dir under base that projects share: open gives the
// Memory of the project whose state is in state, its clock stopped at at.
func sharedMemory(t *testing.T) (base, dir string, at time.Time, open func(state string) *Memory) {
	base = t.TempDir()
	dir = filepath.Join(base, "memory")
	at = time.Date(2026, 11, 22, 17, 0, 0, 0, time.UTC)
	return base, dir, at, func(state string) *Memory {
		return New(Location{Dir: dir, Source: "test"}, Options{Now: clock(at), StateDir: state})
	}
}

// Two projects' Cairns sharing one memory directory tell their lines apart by the state
// directory the topic file names (Last.Another). An older line one of them settles into the
// history (RecordOlder) does not become the latest, so it does not make the file name its
// state: it named it, and the project read the other's latest line as its own.
func TestLastPositionTellsAnothersLine(t *testing.T) {
	base, _, at, open := sharedMemory(t)
	a, b := open(filepath.Join(base, "a", ".claude", "cairn")), open(filepath.Join(base, "b", ".claude", "cairn"))
	another := func(step string, m *Memory, want bool) {
		t.Helper()
		last, ok, err := m.LastPosition()
		if err != nil || !ok || last.Another != want {
			t.Errorf("%s: LastPosition = %+v, %v, %v; want Another %v", step, last, ok, err, want)
		}
	}
	if err := a.RecordAt("Active APEX workflow: analyze completed, planning a's work", at.Add(2*time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	another("a's line, read by a", a, false)
	another("a's line, read by b", b, true)
	if err := b.RecordOlder("Active APEX workflow: analyze completed, planning b's older work", at.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	another("a's line after b's older one, read by b", b, true)
	another("a's line after b's older one, read by a", a, false)
	if err := b.Record("Active APEX workflow: plan completed, implementing b's work"); err != nil {
		t.Fatal(err)
	}
	another("b's latest, read by b", b, false)
	another("b's latest, read by a", a, true)
}

// The state directory named in the topic file is the same directory spelled another way (a
// symlink, a bind mount, a drive letter's case): the line is this project's own. The place is
// written escaped (textsafe: a backslash, a bracket), so it was compared escaped with the
// directory and never found the same, and a project read its own line as another's.
func TestLastPositionOwnLineSpelledAnotherWay(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real[1]")
	if err := os.MkdirAll(filepath.Join(real, ".claude", "cairn"), 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link[1]")
	if err := os.Symlink(real, link); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	dir := filepath.Join(base, "memory")
	at := time.Date(2026, 11, 22, 17, 0, 0, 0, time.UTC)
	open := func(root string) *Memory {
		return New(Location{Dir: dir, Source: "test"}, Options{Now: clock(at), StateDir: filepath.Join(root, ".claude", "cairn")})
	}
	if err := open(real).Record("Active APEX workflow: analyze completed, planning the work"); err != nil {
		t.Fatal(err)
	}
	if last, ok, err := open(link).LastPosition(); err != nil || !ok || last.Another {
		t.Errorf("LastPosition through %s = %+v, %v, %v; want its own line", link, last, ok, err)
	}
}

// A topic file two projects share holds both projects' lines, and the model of either reads
// it (its description, for recall, too): it claims to be no one project's, and names the state
// directory of its latest line. One in the words of the Cairn before still reads its place.
func TestSharedTopicFileClaimsNoProject(t *testing.T) {
	base, dir, _, open := sharedMemory(t)
	stateA, stateB := filepath.Join(base, "a", ".claude", "cairn"), filepath.Join(base, "b", ".claude", "cairn")
	a, b := open(stateA), open(stateB)
	if err := a.Record("Active APEX workflow: analyze completed, planning a's work"); err != nil {
		t.Fatal(err)
	}
	if err := b.Record("Active APEX workflow: analyze completed, planning b's work"); err != nil {
		t.Fatal(err)
	}
	topic := readFile(t, filepath.Join(dir, TopicFile))
	if strings.Contains(topic, "this project") || !strings.Contains(topic, "its full state is in "+stateB+".") {
		t.Errorf("the topic file of two projects:\n%s", topic)
	}

	// As the Cairn before wrote it.
	const before = "Recent workflow events recorded by Cairn for this project, oldest first; the last line is the latest. Cairn rewrites this file; its full state is in "
	old := renderMemoryFile(TopicName, "Cairn workflow position for this project: Active APEX workflow: planning b's work", "project",
		before+stateB+".\n\n"+topicData+"\n\n"+topicFence+"\n2026-11-22T17:00:00Z Active APEX workflow: planning b's work\n```\n")
	if got := topicPlace(old); got != stateB {
		t.Errorf("the place of a topic file in the words before = %q, want %q", got, stateB)
	}
	// Another Cairn's write still, not a background memory writer's rewrite to undo.
	if _, ok := rendered(old); !ok {
		t.Errorf("a topic file in the words before is not taken for Cairn's rendering:\n%s", old)
	}
}

// A's topic file, edited by a writer that kept every line of Cairn's: saved in CRLF, or with
// a heading put above its intro. topicPlace read the body's first line only, as split at "\n",
// so it found no place (a "\r" after the "." of the CRLF line, a heading first) and b read a's
// latest line as its own (Last.Another false), to resume from.
func TestLastPositionTellsAnothersLineInAnEditedFile(t *testing.T) {
	base, dir, at, open := sharedMemory(t)
	a, b := open(filepath.Join(base, "a", ".claude", "cairn")), open(filepath.Join(base, "b", ".claude", "cairn"))
	if err := a.RecordAt("Active APEX workflow: analyze completed, planning a's work", at, nil); err != nil {
		t.Fatal(err)
	}
	top := filepath.Join(dir, TopicFile)
	written := readFile(t, top)
	_, body, _ := splitMemoryFile([]byte(written))
	for _, tc := range []struct{ name, file string }{
		{"in CRLF", strings.ReplaceAll(written, "\n", "\r\n")},
		{"a heading above the intro", strings.Replace(written, string(body), "\n# Where the work is\n"+strings.TrimLeft(string(body), "\n"), 1)},
	} {
		if err := os.WriteFile(top, []byte(tc.file), 0o644); err != nil {
			t.Fatal(err)
		}
		if last, ok, err := b.LastPosition(); err != nil || !ok || !last.Another {
			t.Errorf("%s: LastPosition read by b = %+v, %v, %v; want a's line, Another", tc.name, last, ok, err)
		}
		if last, ok, err := a.LastPosition(); err != nil || !ok || last.Another {
			t.Errorf("%s: LastPosition read by a = %+v, %v, %v; want its own line", tc.name, last, ok, err)
		}
	}
}
