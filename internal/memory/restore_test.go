package memory

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// recorded is a memory directory after one Cairn write, with the mark Cairn keeps of it.
func recorded(t *testing.T, foreign string) (*Memory, string, Mark) {
	t.Helper()
	m, dir := newTestMemory(t)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, IndexFile), []byte(foreign), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.Record("Active APEX workflow: analyze completed, planning login fix"); err != nil {
		t.Fatal(err)
	}
	k, err := m.CurrentMark()
	if err != nil {
		t.Fatal(err)
	}
	if k.Index == "" || k.Topic == "" {
		t.Fatalf("mark after a write is %+v, want both parts", k)
	}
	return m, dir, k
}

func writeLock(t *testing.T, dir, content string, mtime time.Time) {
	t.Helper()
	p := filepath.Join(dir, ConsolidateLock)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func TestRestore(t *testing.T) {
	const foreign = "# Memory\n- [Prefs](prefs.md) — tabs\n- [Build](build.md) — make test\n"
	now := time.Now()
	alive := func(pid int) bool { return pid == 4242 }
	for _, tc := range []struct {
		name       string
		index      func(cur string) string // what another writer leaves in MEMORY.md
		topic      func(cur string) string // and in the topic file ("" removes it)
		lock       string                  // .consolidate-lock content, "" for none
		lockAge    time.Duration
		wantIndex  string // MEMORY.md afterwards; "=" for what the writer left
		wantTopic  bool   // the topic file is ours again
		wantDid    Restored
		wantSecond Restored // a second Restore right after
	}{
		{
			name:      "line dropped by a consolidation, order of others kept",
			index:     func(string) string { return "- [Build](build.md) — make test\n- [Prefs](prefs.md) — tabs\n" },
			topic:     func(cur string) string { return cur },
			wantIndex: "- [Build](build.md) — make test\n- [Prefs](prefs.md) — tabs\n<ours>\n",
			wantTopic: true,
			wantDid:   Restored{Index: true},
		},
		{
			name: "line rewritten in place",
			index: func(cur string) string {
				return strings.Replace(cur, "— Active APEX", "— apex wf", 1)
			},
			topic:     func(cur string) string { return cur },
			wantIndex: foreign + "<ours>\n",
			wantTopic: true,
			wantDid:   Restored{Index: true},
		},
		{
			name:      "topic file deleted and line dropped",
			index:     func(string) string { return foreign },
			topic:     func(string) string { return "" },
			wantIndex: foreign + "<ours>\n",
			wantTopic: true,
			wantDid:   Restored{Index: true, Topic: true},
		},
		{
			name:      "topic file rewritten",
			index:     func(cur string) string { return cur },
			topic:     func(string) string { return "---\nname: x\n---\n- merged\n" },
			wantIndex: foreign + "<ours>\n",
			wantTopic: true,
			wantDid:   Restored{Topic: true},
		},
		{
			name:      "fresh lock of a live consolidation: nothing touched",
			index:     func(string) string { return foreign },
			topic:     func(string) string { return "" },
			lock:      "4242",
			lockAge:   time.Minute,
			wantIndex: "=",
			wantDid:   Restored{Deferred: true},
		},
		{
			name:       "lock older than Claude Code honours: restored",
			index:      func(string) string { return foreign },
			topic:      func(cur string) string { return cur },
			lock:       "4242",
			lockAge:    2 * time.Hour,
			wantIndex:  foreign + "<ours>\n",
			wantTopic:  true,
			wantDid:    Restored{Index: true},
			wantSecond: Restored{},
		},
		{
			name:      "lock of a dead holder: restored",
			index:     func(string) string { return foreign },
			topic:     func(cur string) string { return cur },
			lock:      "999999",
			lockAge:   time.Minute,
			wantIndex: foreign + "<ours>\n",
			wantTopic: true,
			wantDid:   Restored{Index: true},
		},
		{
			name:      "empty lock left by a rollback: restored",
			index:     func(string) string { return foreign },
			topic:     func(cur string) string { return cur },
			lock:      "",
			lockAge:   -1, // written, but empty
			wantIndex: foreign + "<ours>\n",
			wantTopic: true,
			wantDid:   Restored{Index: true},
		},
		{
			name:      "nothing changed: nothing written",
			index:     func(cur string) string { return cur },
			topic:     func(cur string) string { return cur },
			wantIndex: foreign + "<ours>\n",
			wantTopic: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, dir, k := recorded(t, foreign)
			idx := filepath.Join(dir, IndexFile)
			top := filepath.Join(dir, TopicFile)
			left := tc.index(readFile(t, idx))
			if err := os.WriteFile(idx, []byte(left), 0o644); err != nil {
				t.Fatal(err)
			}
			if s := tc.topic(readFile(t, top)); s == "" {
				os.Remove(top)
			} else if err := os.WriteFile(top, []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.lockAge < 0:
				writeLock(t, dir, "", now)
			case tc.lock != "":
				writeLock(t, dir, tc.lock, now.Add(-tc.lockAge))
			}
			did, err := m.Restore(k, now, alive)
			if err != nil {
				t.Fatal(err)
			}
			if did != tc.wantDid {
				t.Errorf("Restore did %+v, want %+v", did, tc.wantDid)
			}
			want := strings.ReplaceAll(tc.wantIndex, "<ours>", k.Index)
			if tc.wantIndex == "=" {
				want = left
			}
			if got := readFile(t, idx); got != want {
				t.Errorf("MEMORY.md\n got %q\nwant %q", got, want)
			}
			if tc.wantTopic {
				if got := readFile(t, top); got != k.Topic {
					t.Errorf("topic file\n got %q\nwant %q", got, k.Topic)
				}
			}
			again, err := m.Restore(k, now, alive)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.wantDid.Deferred && again != tc.wantSecond {
				t.Errorf("a second Restore did %+v, want %+v", again, tc.wantSecond)
			}
		})
	}
}

// A memory of the user's own that took the topic file's place after Cairn wrote it (the model
// names memory files after their subject) was written over by the mark at the next Stop, its
// words lost for good, though a line's write leaves it as it is. Restore leaves it too, with
// the same step, and touches no index line: the user's own, which points at it, stays.
func TestRestoreLeavesUsersOwnFileAtTheTopicFilesName(t *testing.T) {
	const mine = "---\nname: cairn-workflow\ndescription: How this team runs Cairn workflows\n---\n\nWe always run analyze before plan.\n"
	m, dir, k := recorded(t, "# Memory\n")
	writeTopic(t, dir, mine)
	index := "# Memory\n- [How we run Cairn](cairn-workflow.md) — analyze before plan\n"
	if err := os.WriteFile(filepath.Join(dir, IndexFile), []byte(index), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := m.Restore(k, time.Now(), nil)
	if !LeftAlone(err) || !strings.Contains(LeftAloneStep(err), "rename it, and its link in "+IndexFile) {
		t.Errorf("Restore = %+v, %v; want the file left alone, with the step that keeps it", res, err)
	}
	if got := readFile(t, filepath.Join(dir, TopicFile)); got != mine {
		t.Errorf("the user's file after Restore:\n%s", got)
	}
	if got := readFile(t, filepath.Join(dir, IndexFile)); got != index {
		t.Errorf("MEMORY.md after Restore = %q, want %q", got, index)
	}
}

func TestConsolidationHeld(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	live := strconv.Itoa(os.Getpid())
	if ConsolidationHeld(dir, now, nil) {
		t.Fatal("no lock file, yet held")
	}
	writeLock(t, dir, live+"\n", now.Add(-30*time.Minute))
	if !ConsolidationHeld(dir, now, func(int) bool { return true }) {
		t.Error("a 30-minute-old lock of a live pid is not held")
	}
	if ConsolidationHeld(dir, now.Add(31*time.Minute), func(int) bool { return true }) {
		t.Error("a lock over an hour old is still held")
	}
	if ConsolidationHeld(dir, now, func(int) bool { return false }) {
		t.Error("a lock of a dead pid is held")
	}
}

// Claude Code loads only the first 200 lines of MEMORY.md: a line of Cairn's that the model
// pushed below them by adding lines above it is as good as dropped. The mark of what is there
// says so, and Restore moves the line back up, every other line kept.
func TestRestoreMovesALinePushedOutOfReach(t *testing.T) {
	m, dir, k := recorded(t, "# Memory\n")
	path := filepath.Join(dir, IndexFile)
	var added strings.Builder
	for i := range 200 {
		fmt.Fprintf(&added, "- [Note %d](note-%d.md) — a memory the model added\n", i, i)
	}
	pushed := strings.Replace(readFile(t, path), "# Memory\n", "# Memory\n"+added.String(), 1)
	if err := os.WriteFile(path, []byte(pushed), 0o644); err != nil {
		t.Fatal(err)
	}
	if now, err := m.CurrentMark(); err != nil || now == k {
		t.Errorf("CurrentMark = %+v, %v: want it to differ from the mark, the line being out of reach", now, err)
	}
	res, err := m.Restore(k, time.Now(), nil)
	// The line wins, and says what it pushed past the limit: the last of the notes.
	if p, ok := errors.AsType[*PushedError](err); !ok || p.N != 1 || !res.Index {
		t.Fatalf("Restore = %+v, %v, want the index line restored, and one line said pushed past the limit", res, err)
	}
	got := readFile(t, path)
	ls := strings.Split(got, "\n")
	if i := slices.Index(ls, k.Index); i < 0 || i >= 190 {
		t.Errorf("Cairn's line is at line %d of %d, want it among the first 190", i, len(ls))
	}
	if string(stripOwned([]byte(got), TopicFile)) != string(stripOwned([]byte(pushed), TopicFile)) {
		t.Errorf("another line changed:\n%s", got)
	}
	if again, err := m.Restore(k, time.Now(), nil); err != nil || again.Index {
		t.Errorf("a second Restore = %+v, %v, want nothing to do", again, err)
	}
}

// Another Cairn's write onto the topic file as marked (a project that shares the memory
// directory) is told from a background memory writer's rewrite, which Restore undoes.
func TestExtendsTopic(t *testing.T) {
	at := func(i int) time.Time { return time.Date(2026, 11, 22, 10, i, 0, 0, time.UTC) }
	lines := func(from, to int) []Entry {
		var es []Entry
		for i := from; i < to; i++ {
			es = append(es, Entry{At: at(i), Text: fmt.Sprintf("Active APEX workflow: line %d", i)})
		}
		return es
	}
	ours := renderTopic(lines(0, 3), topicHome)
	edited := lines(0, 4)
	edited[1].Text = "Active APEX workflow: line 1, edited"
	for _, tc := range []struct {
		name  string
		topic []byte
		want  bool
	}{
		{"a line added", renderTopic(lines(0, 4), topicHome), true},
		{"a line added by a Cairn whose state is elsewhere", renderTopic(lines(0, 4), "/srv/cairn-state"), true},
		{"a line added by one that names no place", bytes.Replace(renderTopic(lines(0, 4), "/srv/cairn-state"), []byte(" /srv/cairn-state."), []byte(" ."), 1), false},
		{"a line put into the history", renderTopic(slices.Insert(lines(0, 3), 1, Entry{At: at(0), Text: "older"}), topicHome), true},
		{"the oldest dropped for a full file", renderTopic(lines(1, 1+MaxTopicLines), topicHome), true},
		{"the oldest dropped, the file not full", renderTopic(lines(1, 5), topicHome), false},
		{"a line of ours edited", renderTopic(edited, topicHome), false},
		{"the same lines", ours, false},
		{"emptied", renderTopic(nil, topicHome), false},
		{"rewritten in other words", append(slices.Clone(ours), "- a note\n"...), false},
	} {
		if _, got := extendsTopic(ours, tc.topic); got != tc.want {
			t.Errorf("%s: extendsTopic = %t, want %t", tc.name, got, tc.want)
		}
	}
}

// A note the user or the model adds to Cairn's topic file, every line of Cairn's kept, was
// undone by the next Stop's restore, which logged it only: the note was gone without a word.
// Restore puts back what a writer dropped or changed of Cairn's, never what one only added: such
// a file stands, and is the mark to keep (Kept), the index line still Cairn's. A rewrite that
// drops a line of Cairn's is still undone, but a note the same writer added was dropped with
// it: Cairn's lines are put back and the note kept.
func TestRestoreKeepsWhatWasOnlyAddedToTheTopicFile(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name    string
		edit    func(cur string) string
		restore bool // the topic file is put back as marked
	}{
		{"a note after the block", func(cur string) string { return cur + "\nNote: staging DB needed for the login fix.\n" }, false},
		{"a list item, no final newline", func(cur string) string { return cur + "- ask Dana before merging" }, false},
		{"a line at the end of the block", func(cur string) string {
			i := strings.LastIndex(cur, "```")
			return cur[:i] + "check the flaky test first\n" + cur[i:]
		}, false},
		{"a note, the file in CRLF", func(cur string) string {
			return strings.ReplaceAll(cur, "\n", "\r\n") + "Note: staging DB needed.\r\n"
		}, false},
		{"a note, a line of Cairn's dropped", func(cur string) string {
			i := strings.LastIndex(cur, ", planning login fix")
			return cur[:i] + cur[i+len(", planning login fix"):] + "Note: staging DB needed.\n"
		}, true},
		{"a note above the block, a line of Cairn's changed", func(cur string) string {
			cur = strings.Replace(cur, "\n\n"+topicData, "\n\nNote: staging DB needed.\n\n"+topicData, 1)
			return strings.Replace(cur, "planning login fix", "planning the logout fix", 1)
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, dir, k := recorded(t, "- [Build](build.md) — make test\n")
			top := filepath.Join(dir, TopicFile)
			edited := tc.edit(k.Topic)
			if err := os.WriteFile(top, []byte(edited), 0o644); err != nil {
				t.Fatal(err)
			}
			did, err := m.Restore(k, now, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := readFile(t, top)
			if tc.restore {
				// Cairn's lines put back, in their order, and the note kept, byte for byte.
				if !did.Topic || !onlyAdded([]byte(k.Topic), []byte(got)) || !strings.Contains(got, "\nNote: staging DB needed.\n") {
					t.Errorf("Restore did %+v, topic file\n%q\nwant Cairn's lines put back and the note kept", did, got)
				}
				if did.Kept != (Mark{Index: k.Index, Topic: got}) {
					t.Errorf("Restore's mark to keep = %+v, want the file it wrote", did.Kept)
				}
				if again, err := m.Restore(did.Kept, now, nil); err != nil || again != (Restored{}) {
					t.Errorf("Restore with the kept mark did %+v, %v; want nothing", again, err)
				}
				return
			}
			if got != edited || did.Topic || did.Kept != (Mark{Index: k.Index, Topic: edited}) {
				t.Errorf("Restore did %+v, topic file\n%q\nwant it kept as edited, and the mark to keep", did, got)
			}
			if again, err := m.Restore(did.Kept, now, nil); err != nil || again != (Restored{}) {
				t.Errorf("Restore with the kept mark did %+v, %v; want nothing", again, err)
			}
		})
	}
}

// Holds answers as a comparison with CurrentMark does, whatever another writer left: it only
// finds Cairn's own line by equality where that gives the same answer. HeldMark reads what
// CurrentMark reads, and only where Cairn's own line is the one loaded.
func TestHoldsIsCurrentMarkEqual(t *testing.T) {
	const foreign = "# Memory\n- [Prefs](prefs.md) — tabs\n"
	deep := strings.Repeat("- [Filler](filler.md) — a line other writers keep\n", maxIndexLine+5)
	m, dir, k := recorded(t, foreign)
	ours := k.Index
	other := "- [Cairn](" + TopicFile + ") — a hand edit of our line"
	for _, tc := range []struct {
		name  string
		index string // MEMORY.md, "-" for none
		topic string // the topic file, "=" for Cairn's, "-" for none
		mark  Mark   // Index "=": ours; Topic "=": Cairn's
	}{
		{"as written", foreign + ours + "\n", "=", Mark{Index: "=", Topic: "="}},
		{"byte-order mark", "\ufeff" + ours + "\n" + foreign, "=", Mark{Index: "=", Topic: "="}},
		{"CRLF", "# Memory\r\n" + ours + "\r\n", "=", Mark{Index: "=", Topic: "="}},
		{"line rewritten", foreign + other + "\n", "=", Mark{Index: "=", Topic: "="}},
		{"another entry first", other + "\n" + ours + "\n", "=", Mark{Index: "=", Topic: "="}},
		{"ours twice", ours + "\n" + ours + "\n", "=", Mark{Index: "=", Topic: "="}},
		{"line dropped", foreign, "=", Mark{Index: "=", Topic: "="}},
		{"line out of reach", deep + ours + "\n", "=", Mark{Index: "=", Topic: "="}},
		{"no MEMORY.md", "-", "=", Mark{Index: "=", Topic: "="}},
		{"topic rewritten", foreign + ours + "\n", "---\nname: x\n---\nrewritten\n", Mark{Index: "=", Topic: "="}},
		{"topic removed", foreign + ours + "\n", "-", Mark{Index: "=", Topic: "="}},
		{"marked a hand edit, kept", foreign + other + "\n", "=", Mark{Index: other, Topic: "="}},
		{"marked a hand edit, ours back", foreign + ours + "\n", "=", Mark{Index: other, Topic: "="}},
		{"marked no line, none", foreign, "=", Mark{Topic: "="}},
		{"marked no line, ours there", foreign + ours + "\n", "=", Mark{Topic: "="}},
		{"marked a line not an entry", "# Memory\n" + ours + "\n", "=", Mark{Index: "# Memory", Topic: "="}},
		{"marked our line's shape, not linked", "- [Cairn workflow](" + TopicFile + ")x\n", "=", Mark{Index: "- [Cairn workflow](" + TopicFile + ")x", Topic: "="}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			write := func(name, content, cairns string) {
				p := filepath.Join(dir, name)
				switch content {
				case "-":
					if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
						t.Fatal(err)
					}
					return
				case "=":
					content = cairns
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write(IndexFile, tc.index, "")
			write(TopicFile, tc.topic, k.Topic)
			mark := tc.mark
			if mark.Index == "=" {
				mark.Index = ours
			}
			if mark.Topic == "=" {
				mark.Topic = k.Topic
			}
			now, err := m.CurrentMark()
			want := err == nil && now == mark
			if got := m.Holds(mark); got != want {
				t.Errorf("Holds = %v, want %v (CurrentMark = %+v, %v)", got, want, now, err)
			}
			// HeldMark answers as CurrentMark does, and surely when our own line is the one loaded.
			held, ok := m.HeldMark()
			if ok && (err != nil || held != now) || !ok && err == nil && now.Index == ours {
				t.Errorf("HeldMark = %+v, %v; want CurrentMark's %+v, %v", held, ok, now, err)
			}
		})
	}
}

// renderTopic is renderTopicIn in today's words, with no notes.
func renderTopic(entries []Entry, place string) []byte {
	return renderTopicIn(entries, place, topicNow, topicNotes{})
}
