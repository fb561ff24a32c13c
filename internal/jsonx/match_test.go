package jsonx_test

import (
	"encoding/json"
	"testing"

	"github.com/cairn-dev/cairn/internal/jsonx"
)

// matchOracle has fields whose names fold to interesting keys: "k" is matched by the Kelvin
// sign U+212A, "s" by the long s U+017F.
type matchOracle struct {
	A int `json:"workflow_id"`
	B int `json:"state"`
	C int `json:"k"`
	D int `json:"s"`
	E int `json:"é"`
	F int `json:"straße"`
	G int `json:"Revision"`
	H int `json:""` // named H by encoding/json
}

var matchNames = []string{"workflow_id", "state", "k", "s", "é", "straße", "Revision", "H"}

func checkMatchField(t *testing.T, key string) {
	t.Helper()
	doc, err := json.Marshal(map[string]int{key: 1})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]int
	if err := json.Unmarshal(doc, &m); err != nil || len(m) != 1 {
		t.Fatalf("%s: %v", doc, err)
	}
	for k := range m {
		key = k // as encoding/json reads it back: invalid UTF-8 is U+FFFD
	}
	var o matchOracle
	if err := json.Unmarshal(doc, &o); err != nil {
		t.Fatal(err)
	}
	want := ""
	for i, v := range []int{o.A, o.B, o.C, o.D, o.E, o.F, o.G, o.H} {
		if v != 0 {
			want = matchNames[i]
		}
	}
	if got := jsonx.MatchField(key, matchNames); got != want {
		t.Errorf("MatchField(%q) = %q, encoding/json filled %q", key, got, want)
	}
}

var matchSeeds = []string{"workflow_id", "Workflow_ID", "WORKFLOW_ID", "workflow_iD", "workflowid", "state", "ſtate", "STATE",
	"k", "K", "\u212a", "s", "S", "ſ", "é", "É", "straße", "STRASSE", "STRAẞE", "revision", "REVISION", "Revision", "H", "h",
	"", "x", "\xff", "state ", " state", "stat\u0065"}

func TestMatchFieldMatchesEncodingJSON(t *testing.T) {
	for _, k := range matchSeeds {
		checkMatchField(t, k)
	}
}

func FuzzMatchField(f *testing.F) {
	for _, k := range matchSeeds {
		f.Add(k)
	}
	f.Fuzz(checkMatchField)
}
