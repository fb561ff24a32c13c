package store_test

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/store/migrate"
)

// foreignDocs are JSON objects that hold no workflow record but have a version of 3 or above:
// a package.json whose "type" is a record's field name too, another tool's file, and a document
// with nothing but its version and fields Cairn does not know (a newer Cairn's that moved them,
// or not).
var foreignDocs = map[string]string{
	"package-json": `{"name":"shop","version":"3.2.1","type":"module","main":"index.js","dependencies":{}}`,
	"composer":     `{"name":"acme/shop","type":"library","version":"4.0.0","require":{}}`,
	"unfamiliar":   `{"version":"3.0","wf":"x","steps":["a"]}`,
}

// TestForeignSnapshotIsLeftInPlace: such a document in the state directory's snapshot is
// neither refused as a newer Cairn's record (whose step, installing a newer Cairn, would be
// wrong for a package.json) nor moved to quarantine as damage (it may be a newer Cairn's or
// another tool's: it is not Cairn's to move). Every read refuses it, leaving it where it is,
// with what it is and one step; once it is moved out, the workflow its journal holds is read
// again. Before, the package.json was refused as a newer Cairn's record and the other two
// were quarantined. (One without a version of 3 or above, which no newer Cairn wrote, is
// still quarantined and kept there: TestForeignSnapshotOfNoNewerVersionIsQuarantined.)
func TestForeignSnapshotIsLeftInPlace(t *testing.T) {
	for name, doc := range foreignDocs {
		t.Run(name, func(t *testing.T) {
			s, dir := newStore(t)
			if _, err := s.UpdateWorkflow(setNext(wfID, "plan")); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, store.WorkflowFile)
			if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
				t.Fatal(err)
			}
			for i := range 2 {
				w, err := s.ReadWorkflow()
				if err == nil || errors.Is(err, migrate.ErrNewer) || errors.Is(err, store.ErrNotFound) || len(w.Notices) != 0 {
					t.Fatalf("read %d: %+v %v, want a refusal that is neither newer nor not found", i, w.Notices, err)
				}
				msg := err.Error()
				for _, want := range []string{"holds no workflow record", "left as it is", "move " + filepath.Join(dir, store.WorkflowFile) + " out of the state directory"} {
					if !strings.Contains(msg, want) {
						t.Fatalf("read %d: %q does not say %q", i, msg, want)
					}
				}
				if _, err := s.UpdateWorkflow(setNext(wfID, "implement")); err == nil {
					t.Fatalf("read %d: an update went through over the foreign file", i)
				}
			}
			if b, err := os.ReadFile(p); err != nil || string(b) != doc {
				t.Fatalf("the file was moved or changed: %q %v", b, err)
			}
			if _, err := os.Stat(filepath.Join(dir, "quarantine")); !os.IsNotExist(err) {
				t.Fatalf("quarantine made: %v", err)
			}
			// The step given is enough.
			if err := os.Rename(p, filepath.Join(t.TempDir(), "moved.json")); err != nil {
				t.Fatal(err)
			}
			if w, err := s.ReadWorkflow(); err != nil || w.ID != wfID || w.Revision != 1 {
				t.Fatalf("after moving it out: %+v %v", w, err)
			}
		})
	}
}

// TestForeignSeedFileSaysWhatItIs: the same documents at a seed's place, and one without a
// version, are left as they are with a notice that says they hold no workflow record, not that
// a newer Cairn wrote them, and gives one step that leaves the file to its tool rather than
// asking to rewrite it into a format Cairn knows.
func TestForeignSeedFileSaysWhatItIs(t *testing.T) {
	docs := map[string]string{"no-version": `{"wf":"x","rev":3}`}
	maps.Copy(docs, foreignDocs)
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			s, dir := newStore(t)
			p := filepath.Join(filepath.Dir(dir), "workflow-state.json")
			if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
				t.Fatal(err)
			}
			w, err := s.ReadWorkflow()
			if !errors.Is(err, store.ErrNotFound) || len(w.Notices) != 1 || w.Notices[0].Kind != "legacy-skipped" {
				t.Fatalf("%+v %v, want not found with one legacy-skipped notice", w.Notices, err)
			}
			msg := w.Notices[0].Message
			if strings.Contains(msg, "written by a newer Cairn") || strings.Contains(msg, "correct it") {
				t.Fatalf("%q takes another tool's file for a newer Cairn's or asks to rewrite it", msg)
			}
			for _, want := range []string{"holds no workflow record", "left as it is", "leave it"} {
				if !strings.Contains(msg, want) {
					t.Fatalf("%q does not say %q", msg, want)
				}
			}
			if b, err := os.ReadFile(p); err != nil || string(b) != doc {
				t.Fatalf("the file was moved or changed: %q %v", b, err)
			}
		})
	}
}

// TestForeignSnapshotOfNoNewerVersionIsQuarantined: a document holding no workflow record whose
// version, if it has one, is one this Cairn reads was written by no newer Cairn, so in Cairn's
// own place it is moved to quarantine, kept there byte for byte, and the workflow is rebuilt
// from its journal, as for damage; its notice says what it is, not that it "was damaged".
func TestForeignSnapshotOfNoNewerVersionIsQuarantined(t *testing.T) {
	for _, doc := range []string{`{"wf":"x","rev":3}`, `{"name":"shop","version":"1.0.0","type":"module"}`} {
		t.Run(doc, func(t *testing.T) {
			s, dir := newStore(t)
			if _, err := s.UpdateWorkflow(setNext(wfID, "plan")); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, store.WorkflowFile), []byte(doc), 0o600)
			w, err := s.ReadWorkflow()
			if err != nil || w.ID != wfID || len(w.Notices) != 2 || w.Notices[0].Kind != "quarantined" {
				t.Fatalf("%+v %v, want the workflow rebuilt and the document quarantined", w, err)
			}
			if b, err := os.ReadFile(filepath.Join(dir, w.Notices[0].Path)); err != nil || string(b) != doc {
				t.Fatalf("quarantined copy %q %v", b, err)
			}
			if msg := w.Notices[0].Message; strings.Contains(msg, "damaged") || !strings.HasPrefix(msg, store.WorkflowFile+" is not Cairn's (") ||
				!strings.Contains(msg, "it holds no workflow record") || !strings.HasSuffix(msg, "and was moved to "+w.Notices[0].Path+", where it is kept") {
				t.Errorf("notice %q", msg)
			}
		})
	}
}
