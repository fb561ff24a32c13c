package gitremote_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
)

// TestPartialCloneReadsALineInOneFetch: in a partial clone (git clone --filter=blob:none, common
// for large repositories), Cairn's fetch took the clone's filter, so its records' blobs stayed
// on the host and reading a line fetched them one at a time: one round trip to the host per
// revision (and a pack file each), which over a real network outlasts a sync's time for a line
// of a few hundred revisions. The fetch now asks for the blobs (--no-filter): reading the line
// adds one pack, not one per revision.
func TestPartialCloneReadsALineInOneFetch(t *testing.T) {
	bare := bareRepo(t)
	git(t, bare, "config", "uploadpack.allowFilter", "true")
	const n = 20
	w := clone(t, "file://"+bare, gitremote.Refs)
	data := make([][]byte, n)
	for i := range data {
		data[i] = fmt.Appendf(nil, `{"r":%d}`, i+1)
	}
	if _, err := w.Append(bg(t), "wf-1", 0, remote.Slice(data...)); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "partial")
	git(t, filepath.Dir(dir), "clone", "-q", "--filter=blob:none", "file://"+bare, dir)
	git(t, dir, "config", "gc.auto", "0") // every pack stays to be counted
	b, err := gitremote.New(gitremote.Config{Dir: dir, Remote: "origin"})
	if err != nil {
		t.Fatal(err)
	}
	packs := func() int {
		m, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
		return len(m)
	}
	before := packs()
	recs, err := b.Since(bg(t), "wf-1", 0)
	if err != nil || len(recs) != n {
		t.Fatalf("Since = %d records, %v; want %d", len(recs), err, n)
	}
	if got := packs() - before; got > 1 {
		t.Errorf("reading %d revisions added %d packs to the partial clone, one fetch each; want 1", n, got)
	}
}
