package store_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/store"
)

// TestArchiveOfALongContextIsIndexedWithItsReason: a workflow whose context is over 64 KiB
// (one an older Cairn started, or a seed's migrated) is archived with its reason, time and
// type in the index, its context there cut short. Before, archive.json, which held the whole
// context, was over the 64 KiB its read allowed, and the index line said only the directory
// and the id: listed without a reason. An archive.json of that size an older Cairn left,
// indexed again when the index lacks it, is read with its reason too.
func TestArchiveOfALongContextIsIndexedWithItsReason(t *testing.T) {
	s, dir := newStore(t)
	long := strings.Repeat("a long context. ", 5000) // 80 KB
	if _, err := s.UpdateWorkflow(setNext(wfID, "plan")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateWorkflow(func(cur []byte) ([]byte, store.Event, error) {
		var m map[string]any
		if err := json.Unmarshal(cur, &m); err != nil {
			return nil, store.Event{}, err
		}
		m["context"], m["revision"] = long, revOf(t, cur)+1
		b, err := json.Marshal(m)
		return b, store.Event{Kind: "note"}, err
	}); err != nil {
		t.Fatal(err)
	}
	info, err := s.ArchiveIf("completed", wfID)
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		list, err := s.ListArchives()
		if err != nil || len(list) != 1 {
			t.Fatalf("%s: archives %+v, %v; want the one", when, list, err)
		}
		a := list[0]
		if a.Reason != "completed" || a.Type != "apex" || a.At.IsZero() || !strings.HasPrefix(a.Context, "a long context.") || len(a.Context) >= 64<<10 {
			t.Fatalf("%s: the archive is listed as %q %q at %v with a context of %d bytes; want completed, apex, its time and the context cut short", when, a.Reason, a.Type, a.At, len(a.Context))
		}
	}
	check("archived")

	// An archive.json of an older Cairn, which held the whole context, and an index that
	// lacks its archive: the next archive's retention indexes it again from that file.
	meta := filepath.Join(dir, "archive", info.Dir, "archive.json")
	data, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m["context"] = long
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(meta, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "archive", "index.jsonl")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateWorkflow(setNext("apex-20261122T173000Z-0002", "plan")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ArchiveIf("completed", ""); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListArchives()
	if err != nil || len(list) != 2 || list[1].Dir != info.Dir || list[1].Reason != "completed" || list[1].Type != "apex" {
		t.Fatalf("archives after the index was rebuilt: %+v, %v; want %s completed (apex) the older", list, err, info.Dir)
	}
}
