package workflow_test

import (
	"encoding/json"
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
	compattest.Each(t, "*.in.json", func(t *testing.T, in string, data []byte) {
		base := strings.TrimSuffix(in, ".in.json")
		if strings.HasPrefix(filepath.Base(base), "initiative") {
			compatRoundTrip[workflow.Initiative](t, data, base)
		} else {
			compatRoundTrip[workflow.Record](t, data, base)
		}
	})
}

func compatRoundTrip[T any](t *testing.T, data []byte, base string) {
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
