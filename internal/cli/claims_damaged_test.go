//go:build unix

package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDamagedClaimsStateIsRebuilt: a damaged claims.json is moved to quarantine/ (never
// deleted) and rebuilt by the next task call, keeping this clone's identity when the damaged
// file still shows it; claims and syncs go on without anyone deleting the file.
func TestDamagedClaimsStateIsRebuilt(t *testing.T) {
	t.Parallel()
	file, _ := sharedRepo(t)
	a := team(t, file, 1, nil)[0]
	a.must("task", "t1", "running")
	owner := a.owner()
	state := filepath.Join(a.dir, ".claude", "cairn")
	good, err := os.ReadFile(filepath.Join(state, "claims.json"))
	if err != nil {
		t.Fatal(err)
	}
	damaged := good[:len(good)-3] // torn: the owner is still there, the JSON is not whole
	if err := os.WriteFile(filepath.Join(state, "claims.json"), damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errb := a.cairn("task", "t2", "running")
	if code != 0 || strings.Contains(errb, "not claimed") || !strings.Contains(errb, "quarantine") {
		t.Fatalf("task call on a damaged claims.json: exit %d, stderr %q", code, errb)
	}
	if got := a.owner(); got != owner {
		t.Fatalf("the rebuilt claims.json names %q, want the clone's identity %q kept", got, owner)
	}
	kept, _ := filepath.Glob(filepath.Join(state, "quarantine", "claims.json-*"))
	if len(kept) != 1 {
		t.Fatalf("quarantine holds %v, want the damaged claims.json", kept)
	}
	if b, err := os.ReadFile(kept[0]); err != nil || string(b) != string(damaged) {
		t.Fatalf("quarantined copy: %q %v", b, err)
	}
	a.must("sync")
	a.must("task", "t1", "done") // still this clone's claim

	// Damaged past reading the identity: rebuilt all the same, and the loss said plainly.
	if err := os.WriteFile(filepath.Join(state, "claims.json"), []byte("\x00garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errb := a.cairn("sync")
	if code != 0 || !strings.Contains(out+errb, "new identity") {
		t.Fatalf("sync on an unreadable claims.json: exit %d\n%s%s", code, out, errb)
	}
	if a.owner() == owner {
		t.Fatal("an identity nobody could read was kept")
	}
}
