package strictjson_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/cairn-dev/cairn/internal/strictjson"
)

// TestExplain: a value of the wrong type is said in JSON's words, with no Go struct or type
// name, and is still the refusal errors.As finds; any other error is left as it is.
func TestExplain(t *testing.T) {
	type inner struct {
		Done bool `json:"done"`
	}
	type doc struct {
		Context string  `json:"context"`
		Rev     int64   `json:"rev"`
		Inner   inner   `json:"inner"`
		Tasks   []inner `json:"tasks"`
		Ratio   float64 `json:"ratio"`
	}
	for _, tc := range []struct{ data, want string }{
		{`{"context":5}`, "context must be a string, not a number"},
		{`{"rev":1.5}`, "rev must be a whole number, not a fraction or a number out of range"},
		{`{"inner":{"done":"yes"}}`, "inner.done must be a boolean, not a string"},
		{`{"tasks":{}}`, "tasks must be an array, not an object"},
		{`[1]`, "the value must be an object, not an array"},
		// A fraction is a number: what it cannot take is this one's size.
		{`{"ratio":1e999}`, "ratio " + strictjson.BeyondFloat},
	} {
		var d doc
		err := strictjson.Explain(json.Unmarshal([]byte(tc.data), &d))
		if err == nil || err.Error() != tc.want {
			t.Errorf("Explain(decoding %s) = %v, want %q", tc.data, err, tc.want)
		}
		if _, ok := errors.AsType[*json.UnmarshalTypeError](err); !ok {
			t.Errorf("Explain(decoding %s): the refusal is no longer found by errors.As", tc.data)
		}
	}
	var d doc
	syntax := json.Unmarshal([]byte(`{`), &d)
	if got := strictjson.Explain(syntax); got != syntax {
		t.Errorf("Explain(%v) = %v, want it as it is", syntax, got)
	}
	if strictjson.Explain(nil) != nil {
		t.Error("Explain(nil) is not nil")
	}
}

// ownDecoding decodes itself, as the stored records' types do: encoding/json then counts the
// offset of a refusal inside it from its own start.
type ownDecoding struct {
	Done bool `json:"done"`
}

func (o *ownDecoding) UnmarshalJSON(b []byte) error {
	type plain ownDecoding
	return json.Unmarshal(b, (*plain)(o))
}

// TestExplainInNamesKeysAndIndices: encoding/json's path leaves out map keys and array indices
// ("vars must be a string" of a map of strings); with the data, the whole path is said.
func TestExplainInNamesKeysAndIndices(t *testing.T) {
	type doc struct {
		Vars   map[string]string      `json:"vars"`
		Phases map[string]ownDecoding `json:"phases"`
		Tasks  []ownDecoding          `json:"tasks"`
		Nested map[string][]int       `json:"nested"`
		Name   string                 `json:"name"`
	}
	for _, tc := range []struct{ data, want string }{
		{`{"vars":{"WF_A":"x","WF_B":3}}`, "vars.WF_B must be a string, not a number"},
		{`{"phases":{"plan":{"done":true},"done":{"done":"yes"}}}`, "phases.done.done must be a boolean, not a string"},
		{`{"tasks":[{"done":true},{"done":1}]}`, "tasks[1].done must be a boolean, not a number"},
		{`{"nested":{"a":[1,2],"b":[3,"4"]}}`, "nested.b[1] must be a whole number, not a string"},
		{` {"name":"x","vars":{"WF_A":{}}}`, "vars.WF_A must be a string, not an object"},
		{`{"name":5}`, "name must be a string, not a number"},
		// A key that is not a short word is not said back: the path is encoding/json's.
		{`{"vars":{"sk-secret value":3}}`, "vars must be a string, not a number"},
	} {
		var d doc
		err := strictjson.ExplainIn([]byte(tc.data), json.Unmarshal([]byte(tc.data), &d))
		if err == nil || err.Error() != tc.want {
			t.Errorf("ExplainIn(decoding %s) = %v, want %q", tc.data, err, tc.want)
		}
	}
}
