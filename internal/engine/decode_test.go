package engine

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/workflow"
)

// decode calls Record.UnmarshalJSON directly; the oracle is json.Unmarshal, which it replaced:
// it checks the whole input with encoding/json's scanner and then calls the same method. The
// record's decoder is proven equal to encoding/json's rules by workflow's FuzzRecordDecode;
// what this adds is that going around json.Unmarshal refuses what it refused (trailing data,
// input that is not JSON) and accepts what it accepted.
func checkDecode(t *testing.T, data []byte) {
	t.Helper()
	got, gerr := decode(data)
	var want workflow.Record
	werr := json.Unmarshal(data, &want)
	switch {
	case (gerr == nil) != (werr == nil):
		t.Errorf("decode(%q): error %v, json.Unmarshal's %v", data, gerr, werr)
	case gerr == nil && !reflect.DeepEqual(*got, want):
		t.Errorf("decode(%q) = %+v, json.Unmarshal gives %+v", data, *got, want)
	case gerr != nil && !strings.HasPrefix(gerr.Error(), "reading the workflow record: "):
		t.Errorf("decode(%q): error %q does not say what was being read", data, gerr)
	}
}

var decodeSeeds = []string{
	`{"version":"2.0","workflow_id":"apex-20261122T194441Z-d361","type":"apex","state":"plan","phases":{"analyze":{"completed":true,"completed_at":"2026-11-22T19:44:41.593046543Z"}},"revision":2,"x":[1]}`,
	`{}`, `null`, ` {"revision":1} `, `{"revision":1} x`, `{"revision":1}{}`, `{"revision":1} null`, `{"revision":1`,
	`[]`, `"x"`, `1`, ``, ` `, `{"revision":"1"}`, `{"created_at":"yesterday"}`, `{"a":1,"a":2}`, "{\"context\":\"\xff\"}",
	"\xef\xbb\xbf{}", `{"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
}

func TestDecodeMatchesJSONUnmarshal(t *testing.T) {
	for _, s := range decodeSeeds {
		checkDecode(t, []byte(s))
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkDecode)
}
