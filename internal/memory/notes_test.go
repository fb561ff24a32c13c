package memory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A note the user or the model added to cairn-workflow.md outside Cairn's data block was
// dropped by the next position line, which rendered the file anew from its lines only, though
// Stop's restore keeps such a note (TestRestoreKeepsWhatWasOnlyAddedToTheTopicFile): the note
// was gone without a word. Every write of a line keeps it, byte for byte, where it was
// relative to the block.
func TestRecordKeepsNotesAddedToTheTopicFile(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(cur string) string
		notes []string // lines that must be in the file after each write, in this order
	}{
		{"a note after the block", func(cur string) string { return cur + "\nNote: staging DB needed for the login fix.\n" },
			[]string{"Note: staging DB needed for the login fix."}},
		{"a note, no final newline", func(cur string) string { return cur + "Note: ask Dana before merging" },
			[]string{"Note: ask Dana before merging"}},
		{"a heading and a paragraph after the block", func(cur string) string {
			return cur + "\n## Open questions\n\nWhy does the login test flake\non Mondays?\n"
		}, []string{"## Open questions", "", "Why does the login test flake", "on Mondays?"}},
		{"a note before the block", func(cur string) string {
			return strings.Replace(cur, "\n\n"+topicData, "\n\nNote: the staging DB is shared.\n\n"+topicData, 1)
		}, []string{"Note: the staging DB is shared."}},
		{"a note, the file in CRLF", func(cur string) string {
			return strings.ReplaceAll(cur, "\n", "\r\n") + "Note: staging DB needed.\r\n"
		}, []string{"Note: staging DB needed."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, dir, k := recorded(t, "- [Build](build.md) — make test\n")
			top := filepath.Join(dir, TopicFile)
			if err := os.WriteFile(top, []byte(tc.edit(k.Topic)), 0o644); err != nil {
				t.Fatal(err)
			}
			check := func(after string) {
				t.Helper()
				got := readFile(t, top)
				lines := strings.Split(strings.ReplaceAll(got, "\r\n", "\n"), "\n")
				i := 0
				for _, l := range lines {
					if i < len(tc.notes) && l == tc.notes[i] {
						i++
					}
				}
				if i < len(tc.notes) {
					t.Errorf("after %s the topic file is\n%s\nwant the note's lines %q kept", after, got, tc.notes)
				}
			}
			if err := m.Record("Active APEX workflow: execute started"); err != nil {
				t.Fatal(err)
			}
			check("a position line")
			if err := m.RecordOlder("Active APEX workflow: plan approved", time.Date(2026, 11, 22, 17, 1, 30, 0, time.UTC)); err != nil {
				t.Fatal(err)
			}
			check("an older line")
			if got := entryTexts(t, m); len(got) != 3 || got[2] != "Active APEX workflow: execute started" {
				t.Errorf("lines = %q, want 3, the latest last", got)
			}
			if l, ok, err := m.LastPosition(); err != nil || !ok || l.Text != "Active APEX workflow: execute started" {
				t.Errorf("LastPosition = %+v, %v, %v", l, ok, err)
			}
			// The file with the note is Cairn's write: the mark kept after it holds, and a
			// restore changes nothing.
			k2, err := m.CurrentMark()
			if err != nil {
				t.Fatal(err)
			}
			if did, err := m.Restore(k2, time.Now(), nil); err != nil || did != (Restored{}) {
				t.Errorf("Restore = %+v, %v; want nothing done", did, err)
			}
		})
	}
}

// A project sharing the memory directory writes its line onto a topic file that holds a note:
// the file stays another Cairn's write, which a Stop's restore keeps, not a rewrite it undoes
// (which would drop that project's line, and the note).
func TestRestoreKeepsAnothersLineOntoATopicFileWithANote(t *testing.T) {
	m, dir, k := recorded(t, "")
	top := filepath.Join(dir, TopicFile)
	if err := os.WriteFile(top, []byte(k.Topic+"\nNote: staging DB needed.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := New(m.Location(), Options{Now: func() time.Time { return time.Date(2026, 11, 22, 18, 0, 0, 0, time.UTC) }})
	if err := other.Record("Active APEX workflow: the other worktree's line"); err != nil {
		t.Fatal(err)
	}
	theirs := readFile(t, top)
	did, err := m.Restore(k, time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, top); got != theirs || did.Topic {
		t.Errorf("Restore did %+v, topic file\n%s\nwant it kept as the other project wrote it:\n%s", did, got, theirs)
	}
}
