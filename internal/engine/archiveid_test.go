package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// An archived workflow's id is not given to a new one however archive/index.jsonl fares: lost,
// emptied, cut short before the archive's line, or too large to read, the archive's directory
// is still there and still that workflow's (its journal, `cairn show ID`).
func TestArchivedIDIsTakenWithoutItsIndexLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		index func(t *testing.T, file string)
	}{
		{"lost", func(t *testing.T, file string) {
			if err := os.Remove(file); err != nil {
				t.Fatal(err)
			}
		}},
		{"emptied", func(t *testing.T, file string) {
			if err := os.WriteFile(file, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"cut short", func(t *testing.T, file string) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(string(b), "\n")
			if err := os.WriteFile(file, []byte(first+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"too large to read", growIndex},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			en := e.open("s1")
			for _, id := range []string{"apex-a", "apex-b"} {
				must(en.Start(engine.StartRequest{Type: "apex", Context: id, WorkflowID: id}))(t)
				must(en.Archive("abandoned"))(t)
			}
			tc.index(t, filepath.Join(en.StateDir(), "archive", "index.jsonl"))
			res, err := en.Start(engine.StartRequest{Type: "apex", Context: "again", WorkflowID: "apex-b"})
			if res != nil {
				t.Fatalf("a start with the archived id apex-b: %s", res.Message)
			}
			if err == nil || !strings.Contains(err.Error(), "id apex-b is an archived workflow's (archive/apex-b-") {
				t.Fatalf("a start with the archived id apex-b: %v, %v", res, err)
			}
		})
	}
}

// archivedOne opens a new env as session s1, starts an apex workflow id with context there and
// archives it (abandoned); it returns the engine and the path of archive/index.jsonl.
func archivedOne(t *testing.T, id, context string) (*engine.Engine, string) {
	t.Helper()
	en := newEnv(t).open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: context, WorkflowID: id}))(t)
	must(en.Archive("abandoned"))(t)
	return en, filepath.Join(en.StateDir(), "archive", "index.jsonl")
}

// growIndex puts a line of 17 MiB at the front of archive/index.jsonl: too large to read whole.
func growIndex(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, append([]byte(strings.Repeat(" ", 17<<20)+"\n"), b...), 0o600); err != nil {
		t.Fatal(err)
	}
}

// show and history of an archived workflow read its archive's directory when
// archive/index.jsonl is too large to read, and say why the index was not used.
func TestShowAndHistoryReadAnArchiveWhenTheIndexIsTooLarge(t *testing.T) {
	t.Parallel()
	en, index := archivedOne(t, "apex-a", "kept")
	growIndex(t, index)
	data, notices, _, err := en.ShowNotices("apex-a")
	if err != nil || !strings.Contains(string(data), `"context":"kept"`) {
		t.Fatalf("show apex-a: %s, %v", data, err)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "too large") || !strings.Contains(notices[0], "read from its directory archive/apex-a-") {
		t.Fatalf("show's notices: %q", notices)
	}
	evs, _, _, err := en.HistoryNotices("apex-a")
	if err != nil || len(evs) == 0 || evs[0].Kind != "start" {
		t.Fatalf("history apex-a: %+v, %v", evs, err)
	}
	// An id no archive has is still not found, and the index is named.
	if _, err := en.Show("apex-z"); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Fatalf("show apex-z: %v", err)
	}
}

// A listing of every archive with archive/index.jsonl too large to read says so with the step
// that mends it, not only the read's own words, and lists the archives from their
// directories all the same (it failed, listing nothing).
func TestListAllWithAnIndexTooLargeGivesTheStep(t *testing.T) {
	t.Parallel()
	en, index := archivedOne(t, "apex-a", "kept")
	growIndex(t, index)
	list, _, notices, err := en.ListRecentNotices(0)
	if err != nil || len(list) != 1 || list[0].WorkflowID != "apex-a" || list[0].Context != "kept" {
		t.Fatalf("list: %+v, %v; want apex-a from its directory", list, err)
	}
	if !strings.Contains(strings.Join(notices, "\n"), index) || !strings.Contains(strings.Join(notices, "\n"), engine.IndexTooLargeStep) {
		t.Fatalf("list's notices %q; want the step", notices)
	}
}

// An archive made while archive/index.jsonl is too large to read warns that retention did not
// run, with the step that mends it as the user's: the model reads the warning, and the file
// may be someone's. Before, it read "move INDEX out of the state directory", the model's step.
func TestArchiveWithAnIndexTooLargeAsksTheUser(t *testing.T) {
	t.Parallel()
	en, index := archivedOne(t, "apex-a", "kept")
	growIndex(t, index)
	must(en.Start(engine.StartRequest{Type: "apex", Context: "b", WorkflowID: "apex-b"}))(t)
	res, err := en.Archive("abandoned")
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(res.Warnings, "\n")
	if !strings.Contains(w, index) || !strings.Contains(w, engine.IndexTooLargeStep) || strings.Contains(w, ": move ") {
		t.Fatalf("the archive's warnings %q; want the user's step", res.Warnings)
	}
}

// A workflow whose id begins with "conflict-" has an archive directory whose name reads as a
// conflict archive of the rest of its id. With the index's line for it lost, it is found all
// the same: listed, shown, and not taken for a directory that is no archive.
func TestArchiveOfAnIDThatBeginsWithConflict(t *testing.T) {
	t.Parallel()
	en, index := archivedOne(t, "conflict-a", "odd")
	if err := os.Remove(index); err != nil {
		t.Fatal(err)
	}
	data, err := en.Show("conflict-a")
	if err != nil || !strings.Contains(string(data), `"context":"odd"`) {
		t.Fatalf("show conflict-a: %s, %v", data, err)
	}
	list := must(en.List())(t)
	if len(list) != 1 || list[0].WorkflowID != "conflict-a" || list[0].Status != "abandoned" {
		t.Fatalf("list: %+v", list)
	}
}
