package store_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/cairn-dev/cairn/internal/store"
)

// TestScanCheckpointFileIsBounded: a checkpoint's file the load cannot read was scanned
// whole for text of a secret's shape, however large: a 1 GB file placed by hand took
// `cairn checkpoint load` 86 s before it refused. A file over store.ScanLimit is now refused
// unread (no read at all), one at the limit is still scanned to its end, and a read that
// fails part way says so rather than passing the file as clean.
func TestScanCheckpointFileIsBounded(t *testing.T) {
	sh := secrettest.Shapes()[3]
	_, dir := newStore(t)
	cp := filepath.Join(dir, "checkpoints")
	if err := os.MkdirAll(cp, 0o700); err != nil {
		t.Fatal(err)
	}
	// huge: past the limit, sparse so it costs no disk; at: the limit exactly, the secret last.
	if err := os.WriteFile(filepath.Join(cp, "huge.json"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(cp, "huge.json"), store.ScanLimit+1); err != nil {
		t.Fatal(err)
	}
	at := strings.Repeat(" ", store.ScanLimit-len(sh.Text)) + sh.Text
	if err := os.WriteFile(filepath.Join(cp, "at.json"), []byte(at), 0o600); err != nil {
		t.Fatal(err)
	}
	// end: past the 1 MiB a load reads, the secret last, for a read that fails part way.
	end := strings.Repeat(" ", 3<<20) + sh.Text
	if err := os.WriteFile(filepath.Join(cp, "end.json"), []byte(end), 0o600); err != nil {
		t.Fatal(err)
	}
	reads := func(f *durabletest.Faulty, from int) int {
		n := 0
		for _, op := range f.Trace()[from:] {
			if strings.Contains(op, " read ") {
				n++
			}
		}
		return n
	}

	f := &durabletest.Faulty{FS: openDir(t, dir)}
	s := mustOpen(t, dir, store.WithFS(f))
	before := f.Ops()
	found, err := s.ScanCheckpointFile("huge")
	if found != nil || err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("a file over the limit: %v, %v; want it refused as too large to check", found, err)
	}
	if n := reads(f, before); n != 0 {
		t.Errorf("a file over the limit was read %d times, want none: %v", n, f.Trace()[before:])
	}
	found, err = s.ScanCheckpointFile("at")
	if err != nil || found == nil || found.Rule != sh.Rule {
		t.Errorf("a file at the limit with a secret last: %v, %v; want %s found", found, err, sh.Rule)
	}
	// Each step of a scan failing in turn (EIO part way) is an error, never "no secret"; a
	// close that fails after the whole file was read changes nothing.
	before = f.Ops()
	if found, err := s.ScanCheckpointFile("end"); err != nil || found == nil {
		t.Fatalf("a file with a secret last: %v, %v", found, err)
	}
	total := f.Ops() - before
	for k := 1; k < total; k++ {
		ff := &durabletest.Faulty{FS: openDir(t, dir)}
		fs := mustOpen(t, dir, store.WithFS(ff))
		ff.FailAt = ff.Ops() + k
		found, err := fs.ScanCheckpointFile("end")
		if ff.Injected() > 0 && found == nil && err == nil {
			t.Errorf("operation %d failed and the file passed as clean: %v", k, ff.Trace())
		}
	}
}
