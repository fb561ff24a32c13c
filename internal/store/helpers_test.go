package store_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/store"
)

func mustOpen(t testing.TB, dir string, opts ...store.Option) *store.Store {
	t.Helper()
	s, err := store.Open(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// migrateTestdata is the file name below migrate/testdata: the old formats' samples.
func migrateTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("migrate", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// openDir opens dir as a durable.FS, for a test to wrap (store.WithFS); it is closed when the
// test ends, after the stores opened on it.
func openDir(t testing.TB, dir string) *durable.Dir {
	t.Helper()
	d, err := durable.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// openNoSync is mustOpen through durabletest.NoSync, for the checks and the work that follow a
// fault run: no power is cut there, so what a sync would keep is never looked at.
func openNoSync(t testing.TB, dir string, opts ...store.Option) *store.Store {
	t.Helper()
	return mustOpen(t, dir, append([]store.Option{store.WithFS(durabletest.NoSync{FS: openDir(t, dir)})}, opts...)...)
}

// noSync makes a store opened by its path sync nothing, for a test that cuts no power and
// whose many writes would otherwise wait on the disk's fsyncs (templates, long lines).
var noSync = store.WithWrapFS(func(fsys durable.FS) durable.FS { return durabletest.NoSync{FS: fsys} })

func newStore(t testing.TB, opts ...store.Option) (*store.Store, string) {
	dir := filepath.Join(t.TempDir(), "proj", ".claude", "cairn")
	return mustOpen(t, dir, opts...), dir
}

// record makes a schema-2.0 workflow record.
func record(id string, rev int64, state string) []byte {
	b, _ := json.Marshal(map[string]any{
		"version": "2.0", "workflow_id": id, "type": "apex", "state": state,
		"status": "active", "revision": rev, "x_unknown": map[string]any{"kept": true},
	})
	return b
}

// setNext returns an UpdateWorkflow callback that moves to state with the next revision.
func setNext(id, state string) func(cur []byte) ([]byte, store.Event, error) {
	return func(cur []byte) ([]byte, store.Event, error) {
		rev := int64(1)
		if cur != nil {
			var m struct {
				Revision int64 `json:"revision"`
			}
			if err := json.Unmarshal(cur, &m); err != nil {
				return nil, store.Event{}, err
			}
			rev = m.Revision + 1
		}
		return record(id, rev, state), store.Event{Kind: "transition", Detail: "to " + state}, nil
	}
}

func revOf(t testing.TB, doc []byte) int64 {
	t.Helper()
	var m struct {
		Revision int64 `json:"revision"`
	}
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatalf("revision of %q: %v", doc, err)
	}
	return m.Revision
}

var fixedNow = time.Date(2026, 11, 22, 17, 30, 0, 0, time.UTC)

func clockFrom(start time.Time) func() time.Time {
	n := 0
	return func() time.Time {
		n++
		return start.Add(time.Duration(n) * time.Second)
	}
}

var _ = fmt.Sprint

// seedProject makes a project with the seed 001 state file fixture (a migrate testdata name)
// in its place, and returns the state directory to open, the project root and the file's bytes.
func seedProject(t testing.TB, fixture string) (dir, root string, seed []byte) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "proj", ".claude", "cairn")
	root = filepath.Dir(filepath.Dir(dir))
	seed = migrateTestdata(t, fixture)
	if err := os.MkdirAll(filepath.Join(root, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".claude", "workflow-state.json"), seed, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, root, seed
}
