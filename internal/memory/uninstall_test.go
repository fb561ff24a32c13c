package memory

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRemoveCairn: uninstall takes out exactly Cairn's index lines and files, whatever the
// line endings, a byte-order mark or hand edits, and keeps every other byte.
func TestRemoveCairn(t *testing.T) {
	tests := []struct {
		name, index, want string
		files             []string // besides the index
		wantLines         int
	}{
		{"written by Cairn", "", "", nil, 2},
		{"CRLF and foreign lines",
			"# Mine\r\n- [Prefs](prefs.md) — tabs\r\n- [Cairn workflow](cairn-workflow.md) — old\r\nplain cairn-workflow.md text\r\n",
			"# Mine\r\n- [Prefs](prefs.md) — tabs\r\nplain cairn-workflow.md text\r\n", []string{"prefs.md"}, 1},
		{"byte-order mark on our line, no final newline",
			"\ufeff- [Cairn workflow](cairn-workflow.md)\n- [Prefs](prefs.md)",
			"\ufeff- [Prefs](prefs.md)", []string{"prefs.md"}, 1},
		{"hand-edited markers and case", "1. [x](./Cairn-Learning-Foo.md)\n  * [y](<cairn-workflow.md> \"t\")\n- [z](cairn-learning-notes.txt)\n",
			"- [z](cairn-learning-notes.txt)\n", nil, 2},
	}
	setFoldNames(t, true) // the case of "hand-edited markers and case": a file system that folds it (macOS)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, dir := newTestMemory(t)
			if tt.index == "" {
				if err := m.Record("Active APEX workflow: analyze completed, planning x"); err != nil {
					t.Fatal(err)
				}
				if _, _, err := recordLearning(m, Learning{Title: "Retries", Body: "back off"}); err != nil {
					t.Fatal(err)
				}
			} else {
				if err := os.MkdirAll(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				for _, f := range append([]string{IndexFile, TopicFile, "cairn-learning-foo.md"}, tt.files...) {
					data := "x\n"
					switch f {
					case IndexFile:
						data = tt.index
					case "cairn-learning-foo.md":
						// As Cairn writes it: an edited one is kept (TestRemoveCairnKeepsEditedLearnings).
						b, _, _, err := renderLearning(Learning{Title: "Foo", Body: "x"}, f)
						if err != nil {
							t.Fatal(err)
						}
						data = string(b)
					}
					if err := os.WriteFile(filepath.Join(dir, f), []byte(data), 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
			fp, err := m.Footprint()
			if err != nil {
				t.Fatal(err)
			}
			if len(fp.Lines) != tt.wantLines || len(fp.Files) != 2 {
				t.Fatalf("footprint %+v, want %d lines and 2 files", fp, tt.wantLines)
			}
			done, err := m.RemoveCairn(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(done.Lines, fp.Lines) || !slices.Equal(done.Files, fp.Files) {
				t.Errorf("removed %+v, footprint said %+v", done, fp)
			}
			if tt.index == "" {
				// MEMORY.md held only Cairn's lines: it goes with them.
				if _, err := os.Lstat(filepath.Join(dir, IndexFile)); !os.IsNotExist(err) {
					t.Errorf("MEMORY.md of Cairn's lines only is still there, empty (%v)", err)
				}
			} else if got := readFile(t, filepath.Join(dir, IndexFile)); got != tt.want {
				t.Errorf("MEMORY.md = %q, want %q", got, tt.want)
			}
			for _, f := range fp.Files {
				if _, err := os.Lstat(filepath.Join(dir, f)); !os.IsNotExist(err) {
					t.Errorf("%s still there (%v)", f, err)
				}
			}
			for _, f := range tt.files {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Errorf("foreign file %s gone: %v", f, err)
				}
			}
			if after, err := m.Footprint(); err != nil || !after.Empty() {
				t.Errorf("after removal: %+v, %v", after, err)
			}
		})
	}
}

// setFoldNames makes names fold case (or not) for the test, as on a file system that does.
func setFoldNames(t *testing.T, fold bool) {
	t.Helper()
	was := foldNames
	foldNames = fold
	t.Cleanup(func() { foldNames = was })
}

// TestUsersFileOfCairnsNameInAnotherCase: on a file system that tells case apart (Linux), a
// user's own Cairn-Workflow.md or Cairn-Learning-*.md is another file than Cairn's: its index
// line is not rewritten into Cairn's, and uninstall leaves it and its line.
func TestUsersFileOfCairnsNameInAnotherCase(t *testing.T) {
	setFoldNames(t, false)
	const index = "- [My Cairn notes](Cairn-Workflow.md) — how I use it\n- [Mine](CAIRN-LEARNING-RETRIES.md) — mine\n"
	m, dir := newTestMemory(t)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{IndexFile: index, "Cairn-Workflow.md": "my notes\n", "CAIRN-LEARNING-RETRIES.md": "mine\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Record("Active APEX workflow: analyze completed, planning x"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.RecordLearning(Learning{Title: "Retries", Body: "back off"}); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, filepath.Join(dir, IndexFile))
	if !strings.HasPrefix(got, index) {
		t.Fatalf("the user's lines were rewritten:\n%s", got)
	}
	if _, err := m.RemoveCairn(nil); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, IndexFile)); got != index {
		t.Errorf("after uninstall MEMORY.md = %q, want the user's %q", got, index)
	}
	for _, f := range []string{"Cairn-Workflow.md", "CAIRN-LEARNING-RETRIES.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the user's %s is gone: %v", f, err)
		}
	}
}

// Uninstall removed every cairn-learning-*.md, one the model had since rewritten with its
// Write tool or the user had edited too: their words went with Cairn. A learning file that is
// no longer as Cairn wrote it is theirs now: it stays, with its index line, and the footprint
// names it (Edited); learnings as Cairn wrote them go, whatever they hold.
func TestRemoveCairnKeepsEditedLearnings(t *testing.T) {
	m, dir := newTestMemory(t)
	if err := m.Record("Active APEX workflow: analyze completed, planning x"); err != nil {
		t.Fatal(err)
	}
	for _, l := range []Learning{
		{Title: "Retries", Body: "back off"},
		{Title: "Markdown: *stars* and `ticks`", Body: "> quoted\n# heading\n\n- item [link](x.md)\nC:\\path\\to", Type: "reference"},
		{Title: "Ünïcödé title ---", Body: "line one: with colon\nline two"},
		{Title: "Model rewrote", Body: "old fact"},
		{Title: "User edited", Body: "first line\nsecond line"},
		{Title: "User added", Body: "first line\nsecond line"},
		{Title: "User changed", Body: "first line\nsecond line"},
	} {
		if _, _, err := recordLearning(m, l); err != nil {
			t.Fatal(err)
		}
	}
	rewrite := func(name, from, to string) {
		p := filepath.Join(dir, name)
		data := readFile(t, p)
		if !strings.Contains(data, from) {
			t.Fatalf("%s holds no %q:\n%s", name, from, data)
		}
		if err := os.WriteFile(p, []byte(strings.Replace(data, from, to, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The model's Write tool, in Claude Code's own header format; a person's edit of the first line.
	if err := os.WriteFile(filepath.Join(dir, LearningFile("Model rewrote")), []byte("---\nname: cairn-learning-model-rewrote\ndescription: Model rewrote: new fact\nmetadata:\n  type: project\n---\n\nnew fact\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rewrite(LearningFile("User edited"), "\nfirst line\n", "\nfirst line, and more\n")
	// Past the first line, which the description does not show: a line added, a line changed.
	rewrite(LearningFile("User added"), "\nsecond line\n", "\nsecond line\nthird line, the user's\n")
	rewrite(LearningFile("User changed"), "\nsecond line\n", "\nsecond line, changed\n")

	fp, err := m.Footprint()
	if err != nil {
		t.Fatal(err)
	}
	edited := []string{LearningFile("Model rewrote"), LearningFile("User edited"), LearningFile("User added"), LearningFile("User changed")}
	slices.Sort(edited)
	if !slices.Equal(fp.Edited, edited) || len(fp.Files) != 4 || len(fp.Lines) != 4 {
		t.Fatalf("footprint %+v, want 4 lines, 4 files and edited %v", fp, edited)
	}
	before := map[string]string{}
	for _, n := range edited {
		before[n] = readFile(t, filepath.Join(dir, n))
	}
	if _, err := m.RemoveCairn(nil); err != nil {
		t.Fatal(err)
	}
	index := readFile(t, filepath.Join(dir, IndexFile))
	for _, n := range edited {
		if got := readFile(t, filepath.Join(dir, n)); got != before[n] {
			t.Errorf("%s after RemoveCairn:\n%s\nwant it as edited", n, got)
		}
		if !strings.Contains(index, "("+n+")") {
			t.Errorf("MEMORY.md after RemoveCairn lost the line of %s:\n%s", n, index)
		}
	}
	for _, f := range fp.Files {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s as Cairn wrote it is still there after RemoveCairn", f)
		}
	}
}

// cairn uninstall shows what it removes and asks; a session that recorded a learning while
// the question waited had it removed too, never shown. RemoveCairn given the footprint shown
// removes only what it holds: the new learning stays, with its line, and is named (Later).
func TestRemoveCairnRemovesOnlyWhatWasShown(t *testing.T) {
	m, dir := newTestMemory(t)
	if err := m.Record("Active APEX workflow: analyze completed, planning x"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := recordLearning(m, Learning{Title: "Retries", Body: "back off"}); err != nil {
		t.Fatal(err)
	}
	shown, err := m.Footprint()
	if err != nil {
		t.Fatal(err)
	}
	// Meanwhile a session moves on (the line shown changes) and records a learning.
	if err := m.Record("Active APEX workflow: plan approved"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := recordLearning(m, Learning{Title: "Later", Body: "recorded while uninstall asked"}); err != nil {
		t.Fatal(err)
	}
	done, err := m.RemoveCairn(&shown)
	if err != nil {
		t.Fatal(err)
	}
	later := LearningFile("Later")
	if !slices.Equal(done.Files, shown.Files) || len(done.Lines) != 2 || !slices.Equal(done.Later, []string{later}) {
		t.Errorf("removed %+v; shown %+v; want what was shown removed and %s later", done, shown, later)
	}
	if _, err := os.Stat(filepath.Join(dir, later)); err != nil {
		t.Errorf("the learning recorded after the footprint was shown: %v; want it kept", err)
	}
	if index := readFile(t, filepath.Join(dir, IndexFile)); !strings.Contains(index, "("+later+")") || strings.Contains(index, "("+TopicFile+")") {
		t.Errorf("MEMORY.md after RemoveCairn:\n%s\nwant the later learning's line only", index)
	}
	if after, err := m.Footprint(); err != nil || !slices.Equal(after.Files, []string{later}) {
		t.Errorf("after removal: %+v, %v; want the later learning only", after, err)
	}
}

// A learning an older Cairn wrote, which kept no record of what it wrote (writtenFile): one
// whose description shows its whole body is still proven Cairn's and removed; one with more
// lines may have been added to or changed past its first line unseen, so it is kept, and
// named (Unproven). Once nothing of Cairn's is left, its record goes too.
func TestRemoveCairnKeepsALearningItCannotProve(t *testing.T) {
	m, dir := newTestMemory(t)
	for _, l := range []Learning{{Title: "One line", Body: "back off"}, {Title: "Two lines", Body: "first line\nsecond line"}} {
		if _, _, err := recordLearning(m, l); err != nil {
			t.Fatal(err)
		}
	}
	record := filepath.Join(dir, writtenFile)
	if err := os.Remove(record); err != nil {
		t.Fatalf("no record of the learnings written: %v", err)
	}
	two := filepath.Join(dir, LearningFile("Two lines"))
	before := readFile(t, two)
	fp, err := m.Footprint()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(fp.Files, []string{LearningFile("One line")}) || !slices.Equal(fp.Unproven, []string{LearningFile("Two lines")}) {
		t.Fatalf("footprint %+v, want %s removed and %s unproven", fp, LearningFile("One line"), LearningFile("Two lines"))
	}
	if _, err := m.RemoveCairn(nil); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, two); got != before {
		t.Errorf("%s after RemoveCairn:\n%s\nwant it kept", LearningFile("Two lines"), got)
	}
	if !strings.Contains(readFile(t, filepath.Join(dir, IndexFile)), "("+LearningFile("Two lines")+")") {
		t.Errorf("MEMORY.md lost the line of the learning kept")
	}

	// With the record, the same learning is Cairn's, and the record goes with the last of it.
	if _, _, err := recordLearning(m, Learning{Title: "Two lines", Body: "first line\nsecond line"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.RemoveCairn(nil); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{two, record} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there after RemoveCairn (%v)", filepath.Base(p), err)
		}
	}
}

// A write of the learnings' record killed before its swap leaves a temp file named for it,
// which the next writer settles as it settles one of any memory file of Cairn's: parseTemp
// knows it by that name.
func TestParseTempKnowsTheRecord(t *testing.T) {
	for _, tc := range []struct{ base, name string }{
		{strings.Replace(tempPattern(writtenFile, nil, []byte("{}")), "*", "123", 1), writtenFile},
		{strings.Replace(tempPattern(IndexFile, nil, []byte("x")), "*", "123", 1), IndexFile},
		{".tmp-.cairn-written.json.bak-0123456789abcdef-0123456789abcdef-1", ""},
	} {
		name, _, _, ok := parseTemp(tc.base)
		if name != tc.name || ok != (tc.name != "") {
			t.Errorf("parseTemp(%q) = %q, %t; want %q", tc.base, name, ok, tc.name)
		}
	}
}

// RemoveCairn read a learning file, found it as Cairn wrote it, and removed it by name: what the
// model wrote there in between (its Write tool takes no lock of Cairn's) went with it. The
// removal compares and swaps: a file written meanwhile stays with the writer's content and its
// index line, and is named in Edited.
func TestRemoveCairnKeepsAWriteBeforeTheRemoval(t *testing.T) {
	m, dir := newTestMemory(t)
	if err := m.Record("Active APEX workflow: analyze completed, planning x"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.RecordLearning(Learning{Title: "Retries", Body: "back off"}); err != nil {
		t.Fatal(err)
	}
	const name = "cairn-learning-retries.md"
	p := filepath.Join(dir, name)
	line, ok := FindEntry([]byte(readFile(t, filepath.Join(dir, IndexFile))), name)
	if !ok {
		t.Fatalf("no index line for %s", name)
	}
	const theirs = "---\nname: retries\ndescription: mine now\n---\nback off, with jitter\n"
	removeHook = func(path string) {
		if filepath.Base(path) == name {
			if err := os.WriteFile(path, []byte(theirs), 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(func() { removeHook = nil })
	done, err := m.RemoveCairn(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p); got != theirs {
		t.Errorf("%s after RemoveCairn = %q, want what was written meanwhile, %q", name, got, theirs)
	}
	if _, ok := FindEntry([]byte(readFile(t, filepath.Join(dir, IndexFile))), name); !ok {
		t.Errorf("the index line of the kept %s is gone (it was %q)", name, line)
	}
	if !slices.Contains(done.Edited, name) || slices.Contains(done.Files, name) {
		t.Errorf("RemoveCairn = files %q, edited %q; want %s edited, not removed", done.Files, done.Edited, name)
	}
	if _, err := os.Stat(filepath.Join(dir, TopicFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("cairn-workflow.md, unchanged, was not removed: %v", err)
	}
}

// A learning file written meanwhile keeps its index line, but RemoveCairn put the line back
// where SetEntry adds a missing one (the end), not where the user had it: their MEMORY.md's
// order changed under an uninstall that removed nothing of theirs. It goes back where it was.
func TestRemoveCairnKeptLineKeepsItsPlace(t *testing.T) {
	for _, tc := range []struct{ name, head, tail string }{
		{"between lines of theirs", "# Mine\n- [Prefs](prefs.md) — tabs\n", "- [Notes](notes.md) — more\n"},
		{"first, with a byte-order mark", "\ufeff", "# Mine\n- [Prefs](prefs.md) — tabs\n"},
		{"last, without a final newline", "# Mine\n- [Prefs](prefs.md) — tabs\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, dir := newTestMemory(t)
			if err := m.Record("Active APEX workflow: analyze completed, planning x"); err != nil {
				t.Fatal(err)
			}
			if _, err := m.RecordLearning(Learning{Title: "Retries", Body: "back off"}); err != nil {
				t.Fatal(err)
			}
			const name = "cairn-learning-retries.md"
			idx := filepath.Join(dir, IndexFile)
			line, ok := FindEntry([]byte(readFile(t, idx)), name)
			if !ok {
				t.Fatalf("no index line for %s", name)
			}
			end := "\n"
			if tc.tail == "" {
				end = ""
			}
			index := tc.head + line + end + tc.tail
			if err := os.WriteFile(idx, []byte(index), 0o600); err != nil {
				t.Fatal(err)
			}
			removeHook = func(path string) {
				if filepath.Base(path) == name {
					if err := os.WriteFile(path, []byte("---\nname: retries\ndescription: mine now\n---\nx\n"), 0o644); err != nil {
						t.Error(err)
					}
				}
			}
			t.Cleanup(func() { removeHook = nil })
			done, err := m.RemoveCairn(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(done.Edited, name) || slices.ContainsFunc(done.Lines, func(l string) bool { return strings.Contains(l, name) }) {
				t.Fatalf("edited %q lines %q: want %s kept, its line not removed", done.Edited, done.Lines, name)
			}
			if got := readFile(t, idx); got != index {
				t.Errorf("MEMORY.md = %q, want it as it was, %q", got, index)
			}
		})
	}
}
