package memory

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A MEMORY.md (or topic file) its owner made read-only, which Claude Code's own writers
// then cannot write, was replaced all the same: Cairn swaps a new file in by name, which a
// file's mode does not stop. Every write now leaves it as it is and says how to let Cairn in;
// reading it goes on.
func TestReadOnlyFileIsLeftAlone(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a file's mode does not say read-only here")
	}
	for _, name := range []string{IndexFile, TopicFile} {
		t.Run(name, func(t *testing.T) {
			m, dir := newTestMemory(t)
			if err := m.Record("Active APEX workflow: analyze completed, planning login fix"); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, name)
			before := readFile(t, p)
			if err := os.Chmod(p, 0o444); err != nil {
				t.Fatal(err)
			}
			for what, err := range map[string]error{
				"Record":         m.Record("Active APEX workflow: plan completed, implementing login fix"),
				"RecordLearning": func() error { _, _, err := recordLearning(m, Learning{Title: "t", Body: "b"}); return err }(),
			} {
				if name == TopicFile && what == "RecordLearning" {
					continue // a learning does not touch the topic file
				}
				if !IsUnavailable(err) || !LeftAlone(err) || !strings.Contains(err.Error(), p+" is read-only") {
					t.Errorf("%s: %v; want it left alone, as read-only", what, err)
				}
				if step := LeftAloneStep(err); !strings.Contains(step, "writable") {
					t.Errorf("%s: step %q", what, step)
				}
			}
			if got := readFile(t, p); got != before {
				t.Errorf("%s changed:\n%s", name, got)
			}
			if _, ok, err := m.LastPosition(); err != nil || !ok {
				t.Errorf("LastPosition = %v, %v; want it read", ok, err)
			}
		})
	}
}

// A MEMORY.md Cairn leaves as it is (read-only, a symbolic link, too large) failed a learning
// only after its file was written: a learning of the same title had its body replaced, and
// the error, which came back in place of what was replaced, said it was not recorded; a new
// one was left in a file MEMORY.md does not index. Nothing is written now.
func TestLearningNotWrittenWhereItsIndexLineCannotGo(t *testing.T) {
	for name, leave := range map[string]func(t *testing.T, index string){
		"read-only": func(t *testing.T, index string) {
			if runtime.GOOS == "windows" {
				t.Skip("a file's mode does not say read-only here")
			}
			if err := os.Chmod(index, 0o444); err != nil {
				t.Fatal(err)
			}
		},
		"a symbolic link": func(t *testing.T, index string) {
			kept := filepath.Join(t.TempDir(), IndexFile)
			if err := os.Rename(index, kept); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(kept, index); err != nil {
				t.Skip(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			m, dir := newTestMemory(t)
			first, _, err := recordLearning(m, Learning{Title: "Flaky tests", Body: "Run them with -count=3."})
			if err != nil {
				t.Fatal(err)
			}
			before := readFile(t, filepath.Join(dir, first))
			leave(t, filepath.Join(dir, IndexFile))
			for _, l := range []Learning{{Title: "Flaky tests", Body: "Quarantine them."}, {Title: "Build", Body: "make all"}} {
				if _, err := m.RecordLearning(l); !LeftAlone(err) {
					t.Errorf("%q: %v; want MEMORY.md left alone", l.Title, err)
				}
			}
			if got := readFile(t, filepath.Join(dir, first)); got != before {
				t.Errorf("the learning of the same title was replaced:\n%s", got)
			}
			if _, err := os.Lstat(filepath.Join(dir, LearningFile("Build"))); !os.IsNotExist(err) {
				t.Errorf("a learning MEMORY.md does not index was written: %v", err)
			}
		})
	}
}
