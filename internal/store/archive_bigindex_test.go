package store_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/store"
)

// TestRetentionSaysWhenTheIndexIsTooLarge: an archive/index.jsonl over 16 MiB (archive_retention
// set very high, or lines a newer Cairn made long) cannot be read, so retention cannot know the
// order of the archives and removes none. It did that silently, at every archive from then on;
// it now says so, and how to let retention go on.
func TestRetentionSaysWhenTheIndexIsTooLarge(t *testing.T) {
	s, dir := newStore(t, store.WithRetention(1), store.WithClock(clockFrom(fixedNow)))
	for i, id := range []string{"wf-a", "wf-b"} {
		if _, err := s.UpdateWorkflow(setNext(id, "analyze")); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			index := filepath.Join(dir, "archive", "index.jsonl")
			b, err := os.ReadFile(index)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(index, append([]byte(strings.Repeat(" ", 17<<20)+"\n"), b...), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		info, err := s.Archive("completed")
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			continue
		}
		if len(info.Pruned) != 0 || info.PruneErr == nil ||
			!strings.Contains(info.PruneErr.Error(), "too large") ||
			!strings.Contains(info.PruneErr.Error(), "move "+filepath.Join(dir, "archive", "index.jsonl")+" out of the state directory") {
			t.Fatalf("retention with an index too large to read: pruned %v, %v", info.Pruned, info.PruneErr)
		}
	}
	// The step it gives works: with the index moved out, the next archive prunes again.
	if err := os.Rename(filepath.Join(dir, "archive", "index.jsonl"), filepath.Join(t.TempDir(), "index.jsonl")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateWorkflow(setNext("wf-c", "analyze")); err != nil {
		t.Fatal(err)
	}
	info, err := s.Archive("completed")
	if err != nil || info.PruneErr != nil || len(info.Pruned) != 2 {
		t.Fatalf("retention with the index moved out: pruned %v, %v, %v", info.Pruned, info.PruneErr, err)
	}
	archives, err := s.ListArchives()
	if err != nil || len(archives) != 1 || archives[0].WorkflowID != "wf-c" {
		t.Fatalf("archives listed after: %+v, %v", archives, err)
	}
}
