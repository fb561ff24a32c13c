package workflow_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/compattest"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// TestCompatFixtures is the on-disk contract for the workflow record and the initiative: each
// testdata/compat/*.in.json (unknown members at every level, and a hand-edited record with
// folded keys, nulls and odd spacing) reads to the values in its .values file, and encodes to
// the bytes in its .out.json file, which an earlier Cairn wrote. Re-reading the .out.json gives
// the same values and the same bytes again, so unknown members survive any number of updates.
func TestCompatFixtures(t *testing.T) {
	ins, _ := filepath.Glob("testdata/compat/*.in.json")
	if len(ins) == 0 {
		t.Fatal("no fixtures")
	}
	for _, in := range ins {
		base := strings.TrimSuffix(in, ".in.json")
		t.Run(filepath.Base(base), func(t *testing.T) {
			if strings.HasPrefix(filepath.Base(base), "initiative") {
				compatRoundTrip[workflow.Initiative](t, in, base)
			} else {
				compatRoundTrip[workflow.Record](t, in, base)
			}
		})
	}
}

func compatRoundTrip[T any](t *testing.T, in, base string) {
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	compattest.Golden(t, base+".values", []byte(compattest.Dump(v)))
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	compattest.Golden(t, base+".out.json", out)
	var again T
	if err := json.Unmarshal(out, &again); err != nil {
		t.Fatal(err)
	}
	out2, err := json.Marshal(again)
	if err != nil {
		t.Fatal(err)
	}
	if string(out2) != string(out) {
		t.Errorf("re-encoding changed the bytes:\n%s\n%s", out, out2)
	}
}
