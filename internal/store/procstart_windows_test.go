package store_test

import (
	"os"
	"testing"

	"github.com/cairn-dev/cairn/internal/store"
)

// Windows reuses pids as Linux does: a session record's client start is what tells a reused
// pid from the client that recorded it (PIDTaken), so ProcessStart must tell it there too.
func TestProcessStartWindows(t *testing.T) {
	a, ok := store.ProcessStart(os.Getpid())
	if !ok || a == 0 {
		t.Fatalf("ProcessStart(own pid) = %d, %v: want this process's start", a, ok)
	}
	if b, ok := store.ProcessStart(os.Getpid()); !ok || b != a {
		t.Errorf("ProcessStart(own pid) again = %d, %v; want %d", b, ok, a)
	}
	if store.PIDTaken(os.Getpid(), a) {
		t.Error("PIDTaken says this process's own pid was taken by another")
	}
	if !store.PIDTaken(os.Getpid(), a+1) {
		t.Error("PIDTaken does not tell a record of another start of this pid")
	}
	if _, ok := store.ProcessStart(-1); ok {
		t.Error("ProcessStart(-1) tells a start")
	}
}
