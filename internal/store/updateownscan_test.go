package store_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets"
)

// TestUpdateOwnNothingWrittenRunsNoScan: UpdateOwn is for the documents Cairn names itself
// (stop-state, l2-state, ...), and a hook's Stop updates them at turns that change nothing.
// It scanned the constant name for secrets each time, the scan's first use costing the hook
// process most of a millisecond with nothing written. A fresh process runs it, since an
// earlier test may have scanned.
func TestUpdateOwnNothingWrittenRunsNoScan(t *testing.T) {
	const childEnv = "CAIRN_TEST_UPDATE_OWN_NO_SCAN"
	if os.Getenv(childEnv) != "" {
		s, _ := newStore(t)
		for range 2 {
			if _, _, err := s.UpdateOwn("stop-state", func(cur []byte) ([]byte, error) { return nil, nil }); err != nil {
				t.Fatal(err)
			}
		}
		if secrets.Scanned() {
			t.Fatal("UpdateOwn of a document Cairn names, writing nothing, ran a secret scan")
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestUpdateOwnNothingWrittenRunsNoScan$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
