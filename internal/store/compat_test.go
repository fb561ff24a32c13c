package store_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/compattest"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// compatState is a state directory an earlier Cairn's store wrote: a workflow record with
// unknown members at every level, its journal of three full-snapshot records, checkpoints,
// named documents and a log. CAIRN_UPDATE_COMPAT=1 writes it again (only when a format
// change is meant: old directories must keep reading).
const compatState = "testdata/compat/state"

func writeCompatState(t *testing.T) {
	if err := os.RemoveAll(compatState); err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	s, err := store.Open(compatState, store.WithClock(func() time.Time { clock = clock.Add(time.Second); return clock }))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base, err := os.ReadFile("../workflow/testdata/compat/record-unknown.out.json")
	if err != nil {
		t.Fatal(err)
	}
	for rev := 1; rev <= 3; rev++ {
		var r workflow.Record
		if err := json.Unmarshal(base, &r); err != nil {
			t.Fatal(err)
		}
		r.Revision = int64(rev)
		next, _ := json.Marshal(r)
		if _, err := s.UpdateWorkflow(func([]byte) ([]byte, store.Event, error) {
			return next, store.Event{Kind: "transition", Detail: fmt.Sprintf(`{"to":"p%d"}`, rev)}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	for name, doc := range map[string]string{
		"plan-v1":   `{"phase":"plan","notes":"<b>&</b> \u00e9","n":[1,2.5,null],"nested":{"deep":{"x":true}}}`,
		"empty-obj": `{}`,
	} {
		if err := s.SaveCheckpoint(name, []byte(doc)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Write("l2-state", []byte(`{"workflow_id":"wf-compat","revision":3}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendLog("events", []byte(`{"at":"2026-11-20T10:00:00Z","kind":"note","text":"x"}`)); err != nil {
		t.Fatal(err)
	}
	// Not state: the store makes them again, and the .gitignore would hide the fixture from git.
	for _, n := range []string{".gitignore", ".lock-workflow", ".lock-l2-state", ".lock-log-events"} {
		if err := os.Remove(filepath.Join(compatState, n)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCompatStateDirectory reads that directory with today's store: the workflow record, its
// journal, the checkpoints, documents and log read back to the values committed beside it, and
// an update through the domain type keeps every unknown member.
func TestCompatStateDirectory(t *testing.T) {
	if os.Getenv("CAIRN_UPDATE_COMPAT") == "1" {
		writeCompatState(t)
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(compatState)); err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out bytes.Buffer
	w, err := s.ReadWorkflow()
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&out, "workflow %s rev %d notices %d\n%s\n", w.ID, w.Revision, len(w.Notices), w.Data)
	j, err := s.ReadJournal(w.ID)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&out, "journal torn %d problems %q\n", j.Torn, j.Problems)
	for _, r := range j.Records {
		fmt.Fprintf(&out, "seq %d rev %d at %s event %s %s\n%s\n", r.Seq, r.Revision, r.At.Format(time.RFC3339Nano), r.Event.Kind, r.Event.Detail, r.Snapshot)
	}
	names, err := s.ListCheckpoints("*")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		doc, err := s.LoadCheckpoint(n)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "checkpoint %s %s\n", n, doc)
	}
	doc, err := s.Read("l2-state")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&out, "l2-state %s\n", doc)
	lines, err := s.ReadLog("events")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&out, "log %d lines %s\n", len(lines.Lines), lines.Lines)
	compattest.Golden(t, "testdata/compat/state.values", out.Bytes())

	// An update through the domain type keeps what this version does not know.
	res, err := s.UpdateRecord(func(r *workflow.Record) (*workflow.Record, store.Event, error) {
		r.State, r.Revision = "review", 0 // the store numbers it
		return r, store.Event{Kind: "transition"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Revision != w.Revision+1 || !res.Changed {
		t.Fatalf("UpdateRecord: revision %d changed %v, want %d true", res.Revision, res.Changed, w.Revision+1)
	}
	var before, after map[string]any
	if err := json.Unmarshal(w.Data, &before); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(res.Data, &after); err != nil {
		t.Fatal(err)
	}
	before["state"], before["revision"] = "review", float64(w.Revision+1)
	b1, _ := json.Marshal(before)
	b2, _ := json.Marshal(after)
	if !bytes.Equal(b1, b2) {
		t.Errorf("an update lost or changed members:\nwant %s\n got %s", b1, b2)
	}
}
