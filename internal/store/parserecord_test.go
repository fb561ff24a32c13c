package store

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/strictjson"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// ParseRecord calls the record's UnmarshalJSON itself (it skips json.Unmarshal's own passes
// over the bytes): what it decodes and the errors it gives stay json.Unmarshal's, a value of
// the wrong type said in JSON's words (strictjson.ExplainIn).
func TestParseRecordAsJSONUnmarshal(t *testing.T) {
	for _, data := range []string{
		``, ` `, `x`, `null`, ` null `, `[1]`, `"s"`, `7`, `{`, `{} x`, `{}{}`, "{}\n",
		` {"version":"2.0","workflow_id":"apex-20261122T173000Z-3f9a","revision":2} `,
		`{"version":"2.0","revision":"x"}`, `{"phases":{"a":{"completed":"yes"}}}`,
		`{"phases":{"a":{"completed":true,"later":1}},"later":[1,{"b":2}],"Revision":3}`,
		`{"owner":{"session_id":"s","heartbeat":"not a time"}}`, "{\"context\":\"\xff\"}",
	} {
		var want workflow.Record
		wantErr := json.Unmarshal([]byte(data), &want)
		if wantErr != nil {
			wantErr = fmt.Errorf("reading the workflow record: %w", strictjson.ExplainIn([]byte(data), wantErr))
		}
		got, err := ParseRecord([]byte(data))
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Errorf("ParseRecord(%q) error = %v, want %v", data, err, wantErr)
			continue
		}
		if err == nil && !reflect.DeepEqual(*got, want) {
			t.Errorf("ParseRecord(%q) = %+v, want %+v", data, *got, want)
		}
	}
}

// TestParseRecordNamesTheWholePath: a hand-edited record whose value is of the wrong type deep
// in a map or a list was said by encoding/json's path, without the key or the index ("vars
// must be a string", "phases.completed"), and the model and the person were sent to the wrong
// place; the error names the value itself.
func TestParseRecordNamesTheWholePath(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{`{"version":"2.0","workflow_id":"w","vars":{"WF_A":"ok","WF_B":3}}`, "vars.WF_B must be a string, not a number"},
		{`{"version":"2.0","workflow_id":"w","phases":{"plan":{"completed":true},"fix":{"completed":"yes"}}}`, "phases.fix.completed must be a boolean, not a string"},
		{`{"version":"2.0","workflow_id":"w","tasks":[{"id":"a"},{"id":5}]}`, "tasks[1].id must be a string, not a number"},
		{`{"version":"2.0","workflow_id":"w","phases":{"plan":{"outputs":["a",1]}}}`, "phases.plan.outputs[1] must be a string, not a number"},
	} {
		_, err := ParseRecord([]byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseRecord(%s) error = %v, want it to say %q", tc.data, err, tc.want)
		}
	}
}
