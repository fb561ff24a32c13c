package store_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/store/migrate"
	"github.com/cairn-dev/cairn/internal/workflow"
)

const wfID = "apex-20261122T173000Z-3f9a"

func TestWorkflowLifecycle(t *testing.T) {
	s, dir := newStore(t, store.WithClock(clockFrom(fixedNow)))
	if _, err := s.ReadWorkflow(); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("empty store: %v", err)
	}
	for i, state := range []string{"analyze", "plan", "implement"} {
		res, err := s.UpdateWorkflow(setNext(wfID, state))
		if err != nil {
			t.Fatal(err)
		}
		if !res.Changed || res.Revision != int64(i+1) || res.Seq != int64(i+1) || res.ID != wfID {
			t.Fatalf("step %d: %+v", i, res)
		}
	}
	w, err := s.ReadWorkflow()
	if err != nil || w.Revision != 3 || !bytes.Contains(w.Data, []byte(`"implement"`)) || len(w.Notices) != 0 {
		t.Fatalf("read: %+v %v", w, err)
	}
	if !bytes.Contains(w.Data, []byte(`"x_unknown":{"kept":true}`)) {
		t.Errorf("unknown field lost: %s", w.Data)
	}
	// nil next: no change, no journal line.
	res, err := s.UpdateWorkflow(func(cur []byte) ([]byte, store.Event, error) { return nil, store.Event{}, nil })
	if err != nil || res.Changed || res.Revision != 3 {
		t.Fatalf("no-op: %+v %v", res, err)
	}
	// Wrong revision, other workflow, newer version, bad event: refused, nothing changes.
	refusals := map[string]func(cur []byte) ([]byte, store.Event, error){
		"same-revision": func([]byte) ([]byte, store.Event, error) { return record(wfID, 3, "x"), store.Event{Kind: "t"}, nil },
		"skip-revision": func([]byte) ([]byte, store.Event, error) { return record(wfID, 5, "x"), store.Event{Kind: "t"}, nil },
		"other-workflow": func([]byte) ([]byte, store.Event, error) {
			return record("debug-1", 4, "x"), store.Event{Kind: "t"}, nil
		},
		"version-3": func([]byte) ([]byte, store.Event, error) {
			return []byte(`{"version":"3.0","workflow_id":"` + wfID + `","revision":4}`), store.Event{Kind: "t"}, nil
		},
		"no-id": func([]byte) ([]byte, store.Event, error) {
			return []byte(`{"version":"2.0","revision":4}`), store.Event{Kind: "t"}, nil
		},
		"bad-event": func([]byte) ([]byte, store.Event, error) { return record(wfID, 4, "x"), store.Event{Kind: "../x"}, nil },
		"secret-in-event": func([]byte) ([]byte, store.Event, error) {
			return record(wfID, 4, "x"), store.Event{Kind: "t", Detail: "key AKIAABCDEFGHIJKLMNOP"}, nil
		},
	}
	for name, fn := range refusals {
		if _, err := s.UpdateWorkflow(fn); err == nil {
			t.Errorf("%s accepted", name)
		} else if strings.Contains(err.Error(), "AKIAABCDEFGHIJKLMNOP") {
			t.Errorf("%s: error echoes the secret", name)
		}
	}
	if _, err := s.UpdateWorkflow(func([]byte) ([]byte, store.Event, error) {
		return record(wfID, 4, "x"), store.Event{Kind: "t"}, nil
	}); err != nil {
		t.Fatalf("the right next revision: %v", err)
	}
	j, err := s.ReadJournal(wfID)
	if err != nil || len(j.Records) != 4 || j.Torn != 0 || len(j.Problems) != 0 {
		t.Fatalf("journal: %d records %v %v", len(j.Records), j.Problems, err)
	}
	// The first line holds the whole record, the next ones what changed.
	if j.Records[0].Snapshot == nil || j.Records[1].Delta == nil || j.Records[1].Snapshot != nil {
		t.Errorf("journal lines: first %+v, second %+v", j.Records[0], j.Records[1])
	}
	states, err := s.ReadJournalSince(wfID, 0)
	if err != nil || len(states) != 4 {
		t.Fatalf("states: %d, %v", len(states), err)
	}
	for i, r := range states {
		if r.Seq != int64(i+1) || r.Revision != int64(i+1) || r.At.IsZero() || r.Event.Kind == "" || revOf(t, r.Snapshot) != r.Revision {
			t.Errorf("record %d: %+v", i, r)
		}
	}
	if !bytes.Equal(states[3].Snapshot, record(wfID, 4, "x")) {
		t.Errorf("rebuilt state %s", states[3].Snapshot)
	}
	if j.Records[1].Event.Detail != "to plan" {
		t.Errorf("event detail %q", j.Records[1].Event.Detail)
	}
	// A tampered journal line fails its checksum.
	jp := filepath.Join(dir, "journal", wfID+".jsonl")
	b, _ := os.ReadFile(jp)
	os.WriteFile(jp, bytes.Replace(b, []byte(`"plan"`), []byte(`"PLAN"`), 1), 0o600)
	j, _ = s.ReadJournal(wfID)
	if len(j.Records) != 3 || len(j.Problems) != 2 || !strings.Contains(j.Problems[0], "checksum") {
		t.Fatalf("tampered journal: %d records, problems %v", len(j.Records), j.Problems)
	}
}

func TestCorruptSnapshotIsQuarantinedAndRebuilt(t *testing.T) {
	damage := map[string]func(p string) error{
		"truncated": func(p string) error {
			b, _ := os.ReadFile(p)
			return os.WriteFile(p, b[:len(b)/2], 0o600)
		},
		"not-json":    func(p string) error { return os.WriteFile(p, []byte("<<<<<<< HEAD\n"), 0o600) },
		"empty":       func(p string) error { return os.WriteFile(p, nil, 0o600) },
		"zeroed":      func(p string) error { return os.WriteFile(p, make([]byte, 512), 0o600) },
		"not-record":  func(p string) error { return os.WriteFile(p, []byte(`[1,2,3]`), 0o600) },
		"duplicate":   func(p string) error { return os.WriteFile(p, []byte(`{"version":"2.0","version":"2.0"}`), 0o600) },
		"deleted":     func(p string) error { return os.Remove(p) },
		"over-1mib":   func(p string) error { return os.WriteFile(p, bytes.Repeat([]byte(" "), 2<<20), 0o600) },
		"invalid-utf": func(p string) error { return os.WriteFile(p, []byte("{\"a\":\"\xff\"}"), 0o600) },
	}
	for name, hurt := range damage {
		t.Run(name, func(t *testing.T) {
			s, dir := newStore(t)
			for _, st := range []string{"analyze", "plan"} {
				if _, err := s.UpdateWorkflow(setNext(wfID, st)); err != nil {
					t.Fatal(err)
				}
			}
			p := filepath.Join(dir, store.WorkflowFile)
			if err := hurt(p); err != nil {
				t.Fatal(err)
			}
			damaged, _ := os.ReadFile(p)
			w, err := s.ReadWorkflow()
			if err != nil {
				t.Fatal(err)
			}
			if w.Revision != 2 || !bytes.Contains(w.Data, []byte(`"plan"`)) {
				t.Fatalf("rebuilt %+v", w)
			}
			kinds := ""
			for _, n := range w.Notices {
				kinds += n.Kind + " "
				if n.Message == "" {
					t.Error("notice without a message")
				}
			}
			want := "quarantined rebuilt "
			if name == "deleted" {
				want = "rebuilt "
			}
			if kinds != want {
				t.Fatalf("notices %q, want %q", kinds, want)
			}
			if name != "deleted" {
				q := filepath.Join(dir, w.Notices[0].Path)
				got, err := os.ReadFile(q)
				if err != nil || !bytes.Equal(got, damaged) {
					t.Fatalf("quarantined copy at %s: %v", q, err)
				}
			}
			// The snapshot is whole again, and the journal goes on from there.
			if res, err := s.UpdateWorkflow(setNext(wfID, "implement")); err != nil || res.Revision != 3 || res.Seq != 3 {
				t.Fatalf("update after rebuild: %+v %v", res, err)
			}
			if w, err := s.ReadWorkflow(); err != nil || len(w.Notices) != 0 || w.Revision != 3 {
				t.Fatalf("second read: %+v %v", w, err)
			}
		})
	}
}

func TestCorruptSnapshotWithoutJournalIsKeptAndReported(t *testing.T) {
	s, dir := newStore(t)
	os.WriteFile(filepath.Join(dir, store.WorkflowFile), []byte("garbage"), 0o600)
	w, err := s.ReadWorkflow()
	if !errors.Is(err, store.ErrNotFound) || len(w.Notices) != 1 || w.Notices[0].Kind != "quarantined" {
		t.Fatalf("got %+v, %v", w, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, w.Notices[0].Path)); string(b) != "garbage" {
		t.Fatal("the damaged file was not kept")
	}
}

func TestTornJournalTailIsRepairedOnNextAppend(t *testing.T) {
	s, dir := newStore(t)
	s.UpdateWorkflow(setNext(wfID, "analyze"))
	s.UpdateWorkflow(setNext(wfID, "plan"))
	jp := filepath.Join(dir, "journal", wfID+".jsonl")
	f, _ := os.OpenFile(jp, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":3,"revision":3,"at":"2026-`)
	f.Close()
	j, _ := s.ReadJournal(wfID)
	if len(j.Records) != 2 || j.Torn != 1 {
		t.Fatalf("before: %d records torn %d", len(j.Records), j.Torn)
	}
	if res, err := s.UpdateWorkflow(setNext(wfID, "implement")); err != nil || res.Seq != 3 {
		t.Fatalf("%+v %v", res, err)
	}
	j, _ = s.ReadJournal(wfID)
	if len(j.Records) != 3 || j.Torn != 0 || len(j.Problems) != 0 {
		t.Fatalf("after: %d records torn %d %v", len(j.Records), j.Torn, j.Problems)
	}
}

func TestJournalAheadOfSnapshotRollsForward(t *testing.T) {
	s, dir := newStore(t)
	s.UpdateWorkflow(setNext(wfID, "analyze"))
	p := filepath.Join(dir, store.WorkflowFile)
	old, _ := os.ReadFile(p)
	s.UpdateWorkflow(setNext(wfID, "plan"))
	// As if the writer died between the journal append and the snapshot replace.
	os.WriteFile(p, old, 0o600)
	w, err := s.ReadWorkflow()
	if err != nil || w.Revision != 2 || !strings.Contains(string(w.Data), `"plan"`) {
		t.Fatalf("lock-free read: %+v %v (want revision 2's snapshot, from the journal)", w, err)
	}
	res, err := s.UpdateWorkflow(setNext(wfID, "implement"))
	if err != nil || res.Revision != 3 || len(res.Notices) != 1 || res.Notices[0].Kind != "rolled-forward" {
		t.Fatalf("update: %+v %v", res, err)
	}
}

func TestPlantedFilesInStateDir(t *testing.T) {
	s, dir := newStore(t)
	outside := filepath.Join(t.TempDir(), "secret.json")
	os.WriteFile(outside, []byte(`{"outside":true}`), 0o600)
	inside := filepath.Join(dir, "target.json")
	os.WriteFile(inside, []byte(`{"inside":true}`), 0o600)
	os.MkdirAll(filepath.Join(dir, "checkpoints"), 0o700)
	os.MkdirAll(filepath.Join(dir, "logs"), 0o700)
	plants := []struct {
		name  string
		path  string
		plant func(p string) error
	}{
		{"symlink-out", "initiative.json", func(p string) error { return os.Symlink(outside, p) }},
		{"symlink-in", "checkpoints/cp.json", func(p string) error { return os.Symlink(inside, p) }},
		{"hardlink", "logs/events.jsonl", func(p string) error { return os.Link(inside, p) }},
		{"fifo-snapshot", store.WorkflowFile, mkfifo},
		{"fifo-doc", "interview-state.json", mkfifo},
	}
	for _, pl := range plants {
		if err := pl.plant(filepath.Join(dir, filepath.FromSlash(pl.path))); err != nil {
			t.Logf("%s: cannot plant here: %v", pl.name, err)
		}
	}
	ops := map[string]func() error{
		"read-initiative":  func() error { _, err := s.Read("initiative"); return err },
		"write-initiative": func() error { return s.Write("initiative", []byte(`{"x":1}`)) },
		"load-checkpoint":  func() error { _, err := s.LoadCheckpoint("cp"); return err },
		"append-log":       func() error { return s.AppendLog("events", []byte(`{"x":1}`)) },
		"read-log":         func() error { _, err := s.ReadLog("events"); return err },
		"read-workflow":    func() error { _, err := s.ReadWorkflow(); return err },
		"update-workflow":  func() error { _, err := s.UpdateWorkflow(setNext(wfID, "plan")); return err },
		"read-interview":   func() error { _, err := s.Read("interview-state"); return err },
		"update-interview": func() error {
			_, err := s.Update("interview-state", func([]byte) ([]byte, error) { return []byte(`{}`), nil })
			return err
		},
	}
	for name, op := range ops {
		done := make(chan error, 1)
		go func() { done <- op() }()
		select {
		case err := <-done:
			if err == nil && name != "write-initiative" {
				t.Errorf("%s: planted file accepted", name)
			}
		case <-timeout():
			t.Fatalf("%s hung", name)
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != `{"outside":true}` {
		t.Errorf("file outside changed: %s", b)
	}
	if b, _ := os.ReadFile(inside); string(b) != `{"inside":true}` {
		t.Errorf("link target changed: %s", b)
	}
}

func TestVersions(t *testing.T) {
	t.Run("newer-is-refused-not-rewritten", func(t *testing.T) {
		s, dir := newStore(t)
		doc := []byte(`{"version":"3.1","workflow_id":"` + wfID + `","revision":9,"future":true}`)
		p := filepath.Join(dir, store.WorkflowFile)
		os.WriteFile(p, doc, 0o600)
		_, err := s.ReadWorkflow()
		if !errors.Is(err, migrate.ErrNewer) || !strings.Contains(err.Error(), "3.1") {
			t.Fatalf("read: %v", err)
		}
		if _, err := s.UpdateWorkflow(setNext(wfID, "plan")); !errors.Is(err, migrate.ErrNewer) {
			t.Fatalf("update: %v", err)
		}
		if b, _ := os.ReadFile(p); !bytes.Equal(b, doc) {
			t.Fatal("newer record was rewritten")
		}
	})
	// A newer Cairn's record with no field this Cairn knows but its version (and revision)
	// is refused as newer too, never moved to quarantine as damage. Before, {"version":"3.0"}
	// was quarantined as an unknown format.
	for _, doc := range []string{`{"version":"3.0"}`, `{"version":"3.0","revision":4}`, `{"version":4}`} {
		t.Run("newer-bare-"+doc, func(t *testing.T) {
			s, dir := newStore(t)
			p := filepath.Join(dir, store.WorkflowFile)
			os.WriteFile(p, []byte(doc), 0o600)
			for i := range 2 {
				_, err := s.ReadWorkflow()
				if !errors.Is(err, migrate.ErrNewer) || !strings.Contains(err.Error(), "newer Cairn") || !strings.Contains(err.Error(), "upgrade") {
					t.Fatalf("read %d: %v, want refused as a newer Cairn's", i, err)
				}
			}
			if b, _ := os.ReadFile(p); string(b) != doc {
				t.Fatalf("the snapshot was moved or rewritten: %q", b)
			}
			if _, err := os.Stat(filepath.Join(dir, "quarantine")); !os.IsNotExist(err) {
				t.Fatalf("quarantine made: %v", err)
			}
		})
	}
	t.Run("schema1-in-state-dir", func(t *testing.T) {
		s, dir := newStore(t)
		old := migrateTestdata(t, "schema1/record.json")
		os.WriteFile(filepath.Join(dir, store.WorkflowFile), old, 0o600)
		w, err := s.ReadWorkflow()
		if err != nil || len(w.Notices) != 1 || w.Notices[0].Kind != "migrated" {
			t.Fatalf("%+v %v", w, err)
		}
		if !bytes.Contains(w.Data, []byte(`"version": "2.0"`)) && !bytes.Contains(w.Data, []byte(`"version":"2.0"`)) {
			t.Fatalf("not migrated: %s", w.Data)
		}
		bak, err := os.ReadFile(filepath.Join(dir, "workflow-state.v1.json.bak"))
		if err != nil || !bytes.Equal(bak, old) {
			t.Fatalf("backup: %v", err)
		}
		j, _ := s.ReadJournal(w.ID)
		if len(j.Records) != 1 || j.Records[0].Event.Kind != "migrated" {
			t.Fatalf("journal %+v", j)
		}
	})
	legacy := []struct{ name, fixture, rel, backup string }{
		{"seed001", "migrate/testdata/seed001/apex-implement.json", ".claude/workflow-state.json", ".claude/workflow-state.v1.json.bak"},
		{"seed004", "migrate/testdata/seed004/audit-state.json", ".workflow-state/audit-state.json", ".workflow-state/audit-state.v1.json.bak"},
		{"seed002", "migrate/testdata/seed002/implementation.json", "memory/state/phase.json", "memory/state/phase.v1.json.bak"},
	}
	for _, l := range legacy {
		t.Run(l.name, func(t *testing.T) {
			s, dir := newStore(t)
			root := filepath.Dir(filepath.Dir(dir))
			old, err := os.ReadFile(l.fixture)
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(root, filepath.FromSlash(l.rel))
			os.MkdirAll(filepath.Dir(p), 0o700)
			os.WriteFile(p, old, 0o600)
			var exec []byte
			if l.name == "seed002" {
				exec, _ = os.ReadFile("migrate/testdata/seed002/implementation.execution.json")
				os.WriteFile(filepath.Join(root, "memory", "state", "execution.json"), exec, 0o600)
			}
			w, err := s.ReadWorkflow()
			if err != nil {
				t.Fatal(err)
			}
			if len(w.Notices) != 1 || w.Notices[0].Kind != "migrated" || !strings.Contains(w.Notices[0].Message, l.backup) {
				t.Fatalf("notices %+v", w.Notices)
			}
			if b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(l.backup))); err != nil || !bytes.Equal(b, old) {
				t.Fatalf("original not kept as %s: %v", l.backup, err)
			}
			if _, err := os.Stat(p); !os.IsNotExist(err) {
				t.Fatalf("original still in place: %v", err)
			}
			if exec != nil {
				if b, err := os.ReadFile(filepath.Join(root, "memory", "state", "execution.v1.json.bak")); err != nil || !bytes.Equal(b, exec) {
					t.Fatalf("execution.json not kept: %v", err)
				}
				if !bytes.Contains(w.Data, []byte(`"tasks"`)) {
					t.Errorf("execution.json tasks not migrated: %s", w.Data)
				}
			}
			// From now on it is an ordinary workflow.
			w2, err := s.ReadWorkflow()
			if err != nil || len(w2.Notices) != 0 || w2.Revision != w.Revision {
				t.Fatalf("second read %+v %v", w2, err)
			}
		})
	}
}

// TestNoCreateOpenLeavesLegacyFiles: a store opened WithNoCreate (a reading command, a hook
// without a project) never migrates a seed's state file nor renames it, with or without its
// state directory on disk (a missing one reads from memory, where a migrated workflow would be
// lost); it says the file is there. A creating open then migrates it as before.
func TestNoCreateOpenLeavesLegacyFiles(t *testing.T) {
	old := migrateTestdata(t, "seed001/apex-implement.json")
	for _, exists := range []bool{false, true} {
		t.Run(fmt.Sprintf("state-dir-exists=%v", exists), func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "proj")
			dir := filepath.Join(root, ".claude", "cairn")
			legacy := filepath.Join(root, ".claude", "workflow-state.json")
			os.MkdirAll(filepath.Dir(legacy), 0o700)
			os.WriteFile(legacy, old, 0o600)
			if exists {
				os.MkdirAll(dir, 0o700)
			}
			ro := mustOpen(t, dir, store.WithNoCreate())
			for read := 1; read <= 2; read++ {
				w, err := ro.ReadWorkflow()
				if !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("read %d: %s %+v %v, want not found", read, w.ID, w.Notices, err)
				}
				if len(w.Notices) != 1 || w.Notices[0].Kind != "legacy-pending" || w.Notices[0].Path != ".claude/workflow-state.json" {
					t.Fatalf("read %d: notices %+v", read, w.Notices)
				}
				if b, err := os.ReadFile(legacy); err != nil || !bytes.Equal(b, old) {
					t.Fatalf("read %d: the legacy file was moved or changed: %v", read, err)
				}
				if _, err := os.Stat(filepath.Join(root, ".claude", "workflow-state.v1.json.bak")); !os.IsNotExist(err) {
					t.Fatalf("read %d: a backup was made: %v", read, err)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, store.WorkflowFile)); !os.IsNotExist(err) {
				t.Fatalf("a snapshot was written: %v", err)
			}
			w, err := mustOpen(t, dir).ReadWorkflow()
			if err != nil || len(w.Notices) != 1 || w.Notices[0].Kind != "migrated" {
				t.Fatalf("creating open: %+v %v", w, err)
			}
			if w2, err := mustOpen(t, dir, store.WithNoCreate()).ReadWorkflow(); err != nil || w2.ID != w.ID {
				t.Fatalf("after migration the no-create store reads %+v %v", w2, err)
			}
		})
	}
}

// TestSnapshotAndJournalBothDamagedAreReported: with nothing readable left, the workflow is
// reported as damaged, naming the journal and the quarantined snapshot, on every read, never
// as absent.
func TestSnapshotAndJournalBothDamagedAreReported(t *testing.T) {
	s, dir := newStore(t)
	s.UpdateWorkflow(setNext(wfID, "analyze"))
	s.UpdateWorkflow(setNext(wfID, "plan"))
	os.WriteFile(filepath.Join(dir, store.WorkflowFile), []byte("garbage"), 0o600)
	jp := filepath.Join(dir, "journal", wfID+".jsonl")
	b, _ := os.ReadFile(jp)
	os.WriteFile(jp, bytes.ReplaceAll(b, []byte(`"seq"`), []byte(`"SEQ"`)), 0o600)
	for read := 1; read <= 2; read++ {
		_, err := s.ReadWorkflow()
		var d *store.DamagedError
		if !errors.As(err, &d) || errors.Is(err, store.ErrNotFound) {
			t.Fatalf("read %d: %v, want a DamagedError", read, err)
		}
		if len(d.Journals) != 1 || d.Journals[0] != "journal/"+wfID+".jsonl" || len(d.Quarantined) != 1 ||
			!strings.Contains(err.Error(), d.Quarantined[0]) || !strings.Contains(err.Error(), d.Journals[0]) {
			t.Fatalf("read %d: %+v: %v", read, d, err)
		}
		if q, _ := os.ReadFile(filepath.Join(dir, d.Quarantined[0])); string(q) != "garbage" {
			t.Fatalf("the quarantined copy holds %q", q)
		}
	}
	if _, err := s.UpdateWorkflow(setNext("another-1", "plan")); err == nil {
		t.Fatal("a new workflow was started over a damaged one")
	}
}

// TestRebuildPastABrokenChainGoesOn: a line damaged in the middle of a chain of deltas leaves
// the states after it beyond rebuilding. The workflow goes on from the newest state there is
// (the snapshot, or the last the journal gives when the snapshot is damaged or older): each next
// change is numbered after the journal's last revision (a revision number is never reused) and
// commits, as does every one after it, and the journal keeps every line it held.
func TestRebuildPastABrokenChainGoesOn(t *testing.T) {
	for _, tc := range []struct {
		name      string
		damage    int    // the journal line damaged
		snapshot  []byte // what the snapshot is made to hold
		readFirst bool   // a read repairs the snapshot before the first change
		from      string // the state the first change starts from
	}{
		{"snapshot damaged, read first", 3, []byte("garbage"), true, "b"},
		{"snapshot damaged", 3, []byte("garbage"), false, "b"},
		{"snapshot older than the break", 4, record(wfID, 2, "b"), false, "c"},
		{"snapshot newer than the break", 3, record(wfID, 4, "d"), false, "d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, dir := newStore(t)
			for _, st := range []string{"a", "b", "c", "d", "e"} {
				if _, err := s.UpdateWorkflow(setNext(wfID, st)); err != nil {
					t.Fatal(err)
				}
			}
			jp := filepath.Join(dir, "journal", wfID+".jsonl")
			b, _ := os.ReadFile(jp)
			lines := bytes.SplitAfter(b, []byte("\n"))
			if !bytes.Contains(lines[tc.damage-1], []byte(`"delta":`)) || !bytes.Contains(lines[tc.damage], []byte(`"delta":`)) {
				t.Fatalf("lines %d and %d are not deltas: %s", tc.damage, tc.damage+1, b)
			}
			lines[tc.damage-1] = bytes.Replace(lines[tc.damage-1], []byte(`"transition"`), []byte(`"trAnsition"`), 1)
			damaged := bytes.Join(lines, nil)
			os.WriteFile(jp, damaged, 0o600)
			os.WriteFile(filepath.Join(dir, store.WorkflowFile), tc.snapshot, 0o600)
			if tc.readFirst {
				if w, err := s.ReadWorkflow(); err != nil || w.Revision != 2 || len(w.Notices) != 2 || !strings.Contains(w.Notices[1].Message, "up to 5") {
					t.Fatalf("rebuilt at %d, notices %v (%v)", w.Revision, w.Notices, err)
				}
			}
			for i, state := range []string{"f", "g", "h"} {
				res, err := s.UpdateRecord(func(r *workflow.Record) (*workflow.Record, store.Event, error) {
					if i == 0 && r.State != tc.from {
						t.Errorf("the first change starts from %q, want %q", r.State, tc.from)
					}
					r.State = state
					return r, store.Event{Kind: "transition"}, nil
				})
				if want := int64(6 + i); err != nil || res.Revision != want {
					t.Fatalf("change %d: revision %d (%v), want %d", i+1, res.Revision, err, want)
				}
				if w, err := s.ReadWorkflow(); err != nil || w.Revision != int64(6+i) || !bytes.Contains(w.Data, []byte(`"`+state+`"`)) {
					t.Fatalf("read after change %d: revision %d %s (%v)", i+1, w.Revision, w.Data, err)
				}
			}
			if now, _ := os.ReadFile(jp); !bytes.HasPrefix(now, damaged) {
				t.Fatal("the journal lost lines it held")
			}
		})
	}
}

// TestChangeAfterADamagedLineIsRebuildable: with a line damaged in the middle of a chain of
// deltas and the snapshot intact, the next change was written as one more delta of that chain:
// nothing said so, and once the snapshot was lost, the rebuild stopped at the damaged line and
// that change was gone with the ones before it. The change after the break is a full line, so
// the journal can rebuild it and every change after it.
func TestChangeAfterADamagedLineIsRebuildable(t *testing.T) {
	s, dir := newStore(t)
	for _, st := range []string{"a", "b", "c", "d", "e"} {
		if _, err := s.UpdateWorkflow(setNext(wfID, st)); err != nil {
			t.Fatal(err)
		}
	}
	jp := filepath.Join(dir, "journal", wfID+".jsonl")
	b, _ := os.ReadFile(jp)
	lines := bytes.SplitAfter(b, []byte("\n"))
	if !bytes.Contains(lines[2], []byte(`"delta":`)) || !bytes.Contains(lines[4], []byte(`"delta":`)) {
		t.Fatalf("lines 3 and 5 are not deltas: %s", b)
	}
	lines[2] = bytes.Replace(lines[2], []byte(`"transition"`), []byte(`"trAnsition"`), 1)
	os.WriteFile(jp, bytes.Join(lines, nil), 0o600)
	for _, st := range []string{"f", "g"} {
		if _, err := s.UpdateWorkflow(setNext(wfID, st)); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(filepath.Join(dir, store.WorkflowFile))
	if w, err := s.ReadWorkflow(); err != nil || w.Revision != 7 || !bytes.Contains(w.Data, []byte(`"g"`)) {
		t.Fatalf("rebuilt at revision %d %s (%v), notices %v; want revision 7, state g", w.Revision, w.Data, err, w.Notices)
	}
}

// TestNoStateToRebuildIsDamaged: with the snapshot gone and the journal's full line damaged,
// so that none of its states can be rebuilt, the workflow is reported as damaged, naming the
// journal and saying what to do (not a bare "chain is broken" that names nothing); with sealed
// segments, it is rebuilt from the newest of them and goes on after the journal's last line.
func TestNoStateToRebuildIsDamaged(t *testing.T) {
	damageFirst := func(t *testing.T, jp string) {
		b, _ := os.ReadFile(jp)
		lines := bytes.SplitAfter(b, []byte("\n"))
		if !bytes.Contains(lines[0], []byte(`"snapshot":`)) || !bytes.Contains(lines[1], []byte(`"delta":`)) {
			t.Fatalf("the journal does not start with a full line and a delta: %.200s", b)
		}
		lines[0] = bytes.Replace(lines[0], []byte(`"revision"`), []byte(`"rEvision"`), 1)
		os.WriteFile(jp, bytes.Join(lines, nil), 0o600)
	}
	t.Run("no segments", func(t *testing.T) {
		s, dir := newStore(t)
		for _, st := range []string{"a", "b", "c"} {
			if _, err := s.UpdateWorkflow(setNext(wfID, st)); err != nil {
				t.Fatal(err)
			}
		}
		damageFirst(t, filepath.Join(dir, "journal", wfID+".jsonl"))
		os.Remove(filepath.Join(dir, store.WorkflowFile))
		_, err := s.ReadWorkflow()
		var d *store.DamagedError
		if !errors.As(err, &d) || len(d.Journals) != 1 || !strings.Contains(err.Error(), "journal/"+wfID+".jsonl") {
			t.Fatalf("read: %v, want a DamagedError naming the journal", err)
		}
	})
	t.Run("segments", func(t *testing.T) {
		s, dir := newStore(t, store.WithJournalCompaction(compactAt))
		transitions(t, s, 70)
		j, _ := s.ReadJournal(wfID)
		segs, _ := filepath.Glob(filepath.Join(dir, sealed, "*.jsonl"))
		last, _ := os.ReadFile(segs[len(segs)-1])
		sealedRev := int64(0)
		for _, r := range store.ParseJournal(last).Records {
			sealedRev = r.Revision
		}
		damageFirst(t, filepath.Join(dir, "journal", wfID+".jsonl"))
		os.Remove(filepath.Join(dir, store.WorkflowFile))
		w, err := s.ReadWorkflow()
		if err != nil || w.Revision != sealedRev || !bytes.Equal(w.Data, crashDoc(sealedRev)) || len(w.Notices) != 1 || !strings.Contains(w.Notices[0].Message, "sealed") {
			t.Fatalf("read: revision %d, notices %v (%v), want %d from the segments", w.Revision, w.Notices, err, sealedRev)
		}
		want := j.Records[len(j.Records)-1].Revision + 1
		res, err := s.UpdateWorkflow(func([]byte) ([]byte, store.Event, error) {
			return crashDoc(want), store.Event{Kind: "transition"}, nil
		})
		if err != nil || res.Revision != want {
			t.Fatalf("next change: revision %d (%v), want %d", res.Revision, err, want)
		}
	})
}

// TestUnreadableJournalIsNotPassedOver: with the snapshot gone and the active journal there but
// not readable (here hard-linked, as a backup tool may leave it, which reads refuse), the read
// says which journal cannot be read. It is not passed over for the sealed segments, whose
// states are older than the changes it may hold, and no snapshot is written from them.
func TestUnreadableJournalIsNotPassedOver(t *testing.T) {
	s, dir := newStore(t, store.WithJournalCompaction(compactAt))
	transitions(t, s, 70)
	jp := filepath.Join(dir, "journal", wfID+".jsonl")
	if err := os.Link(jp, filepath.Join(t.TempDir(), "backup.jsonl")); err != nil {
		t.Skip("no hard links here:", err)
	}
	os.Remove(filepath.Join(dir, store.WorkflowFile))
	w, err := s.ReadWorkflow()
	if err == nil || errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "journal/"+wfID+".jsonl") {
		t.Fatalf("read: revision %d, %v; want an error naming the journal", w.Revision, err)
	}
	if _, err := os.Stat(filepath.Join(dir, store.WorkflowFile)); !os.IsNotExist(err) {
		t.Fatalf("a snapshot was written from the segments: %v", err)
	}
}

// journalLine is a journal line as encodeRecord writes it, holding doc (compact) in full.
func journalLine(seq, rev int64, doc string) []byte {
	state := sha256.Sum256([]byte(doc))
	body := fmt.Sprintf(`{"seq":%d,"revision":%d,"at":"2026-11-22T17:30:00Z","event":{"kind":"start"},"snapshot":%s,"state":"%s"`,
		seq, rev, doc, hex.EncodeToString(state[:16]))
	sum := sha256.Sum256([]byte(body))
	return []byte(body + `,"sum":"` + hex.EncodeToString(sum[:]) + "\"}\n")
}

// TestReadOnlyJournalOnlyStateIsNotALockError: with no snapshot and a state directory whose
// lock cannot be taken (a read-only mount), a journal written by a newer Cairn reads as newer
// and one that gives no state as damaged, as they do in a writable directory: never as the
// lock's error, which says the state "can still be read" and leaves the tier None.
func TestReadOnlyJournalOnlyStateIsNotALockError(t *testing.T) {
	s, dir := newStore(t)
	if _, err := s.UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, store.WorkflowFile))
	jf := filepath.Join(dir, "journal", wfID+".jsonl")
	d := openDir(t, dir)
	ro := mustOpen(t, dir, store.WithFS(readOnly{d}))

	os.WriteFile(jf, journalLine(1, 1, `{"version":"3.1","workflow_id":"`+wfID+`","revision":1,"future":true}`), 0o600)
	for _, st := range []*store.Store{s, ro} {
		if _, err := st.ReadWorkflow(); !errors.Is(err, migrate.ErrNewer) {
			t.Fatalf("journal from a newer Cairn: %v", err)
		}
	}
	os.WriteFile(jf, []byte("a damaged line\n"), 0o600)
	if _, err := ro.ReadWorkflow(); !errors.As(err, new(*store.DamagedError)) {
		t.Fatalf("damaged journal, read-only: %v", err)
	}
	os.Remove(jf)
	os.Mkdir(jf, 0o700) // there, but not a file to read
	for _, st := range []*store.Store{s, ro} {
		var ue *store.UnreadableError
		if _, err := st.ReadWorkflow(); !errors.As(err, &ue) || len(ue.IDs) != 1 || ue.IDs[0] != wfID {
			t.Fatalf("unreadable journal: %v", err)
		}
	}
	os.Remove(jf)
	if _, err := os.Stat(filepath.Join(dir, "quarantine")); !os.IsNotExist(err) {
		t.Fatalf("a read-only read moved something: %v", err)
	}
}

// TestNewerJournalTailIsNotHiddenByTheSnapshot: a newer Cairn that committed a change to the
// journal and was cut short before replacing the snapshot leaves the snapshot one revision behind,
// in a format this Cairn reads. The lock-free read must not show that older state as the
// workflow to resume (every write then refuses it as newer): it reads as newer, as the locked
// read does.
func TestNewerJournalTailIsNotHiddenByTheSnapshot(t *testing.T) {
	s, dir := newStore(t)
	if _, err := s.UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "journal", wfID+".jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(journalLine(2, 2, `{"version":"3.0","workflow_id":"`+wfID+`","revision":2,"future":true}`))
	f.Close()
	if _, err := s.ReadWorkflow(); !errors.Is(err, migrate.ErrNewer) {
		t.Fatalf("read: %v", err)
	}
	if _, err := s.UpdateWorkflow(setNext(wfID, "plan")); !errors.Is(err, migrate.ErrNewer) {
		t.Fatalf("update: %v", err)
	}
}

// TestTornFirstJournalLineIsNoWorkflow: a writer killed while appending the first line of a
// new workflow's journal leaves a journal holding only a torn line, and no snapshot. Nothing
// was acknowledged, so nothing is on record: the store reads as empty rather than damaged, and
// the next write starts the workflow (cutting the torn line off), instead of every write
// failing until someone moves the journal.
func TestTornFirstJournalLineIsNoWorkflow(t *testing.T) {
	s, dir := newStore(t)
	os.MkdirAll(filepath.Join(dir, "journal"), 0o700)
	jf := filepath.Join(dir, "journal", wfID+".jsonl")
	if err := os.WriteFile(jf, []byte(`{"seq":1,"revision":1,"at":"2026-`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadWorkflow(); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("read: %v, want no workflow", err)
	}
	if _, err := s.UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
		t.Fatalf("first write after the torn line: %v", err)
	}
	if w, err := s.ReadWorkflow(); err != nil || w.Revision != 1 {
		t.Fatalf("after: %+v %v", w, err)
	}
}

// TestDamagedNamesTheNewestQuarantinedSnapshot: a workflow on record that cannot be read named
// as "the damaged snapshot" every snapshot quarantine/ had ever kept, oldest first: earlier
// workflows' (each rebuilt then from its journal) went before the one this read set aside,
// and the step at the end of the text, which the user's one line cuts at a few hundred
// characters, was cut off. It names the newest, and says how many older ones are kept there.
func TestDamagedNamesTheNewestQuarantinedSnapshot(t *testing.T) {
	s, dir := newStore(t)
	s.UpdateWorkflow(setNext(wfID, "analyze"))
	if err := os.MkdirAll(filepath.Join(dir, "quarantine"), 0o700); err != nil {
		t.Fatal(err)
	}
	var old []string
	for i := range 6 {
		n := store.QuarantineName(store.WorkflowFile, time.Date(2025, 1, 1+i, 0, 0, 0, 0, time.UTC))
		old = append(old, n)
		if err := os.WriteFile(filepath.Join(dir, n), []byte("an earlier workflow's"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, store.WorkflowFile), []byte("garbage"), 0o600)
	jp := filepath.Join(dir, "journal", wfID+".jsonl")
	b, _ := os.ReadFile(jp)
	os.WriteFile(jp, bytes.ReplaceAll(b, []byte(`"seq"`), []byte(`"SEQ"`)), 0o600)
	_, err := s.ReadWorkflow()
	var d *store.DamagedError
	if !errors.As(err, &d) {
		t.Fatalf("read: %v, want a DamagedError", err)
	}
	if q, _ := os.ReadFile(filepath.Join(dir, d.Quarantined[0])); string(q) != "garbage" || !strings.Contains(err.Error(), "kept in "+d.Quarantined[0]) {
		t.Fatalf("%v: the snapshot named first holds %q, want the one this read set aside", err, q)
	}
	for _, n := range old {
		if strings.Contains(err.Error(), n) {
			t.Errorf("%v: names %s, an earlier snapshot", err, n)
		}
	}
	if !strings.Contains(err.Error(), "6 older") {
		t.Errorf("%v: does not say 6 older snapshots are kept", err)
	}
}

// TestReadNeedingARepairUnderAHeldLockReadsTheJournal: a read whose snapshot needs a repair
// while another process holds the workflow lock past the wait (a stopped hook, a long write)
// answers from the journal, as it does when it waits for none. Before, it failed with the
// lock's timeout, and the session start, the hooks and resume_check showed no workflow. Its
// notice names the lock's holder, as every other refusal of a held lock does.
func TestReadNeedingARepairUnderAHeldLockReadsTheJournal(t *testing.T) {
	s, dir := newStore(t, noSync)
	if _, err := s.UpdateWorkflow(setNext(wfID, "analyze")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, store.WorkflowFile)); err != nil {
		t.Fatal(err)
	}
	d := openDir(t, dir)
	unlock, err := d.Lock(".lock-workflow", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	w, err := mustOpen(t, dir, store.WithLockWait(time.Millisecond)).ReadWorkflow()
	if err != nil || w.ID != wfID || len(w.Notices) != 1 || !strings.Contains(w.Notices[0].Message, fmt.Sprintf("the workflow lock is held by pid %d (", os.Getpid())) {
		t.Fatalf("read: %q %+v %v; want %s from its journal, said", w.ID, w.Notices, err, wfID)
	}
}
