package store

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/cairn-dev/cairn/internal/strictjson"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// ParseRecord calls the record's UnmarshalJSON itself (it skips json.Unmarshal's own passes
// over the bytes): what it decodes and the errors it gives stay json.Unmarshal's, a value of
// the wrong type said in JSON's words (strictjson.Explain).
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
			wantErr = fmt.Errorf("reading the workflow record: %w", strictjson.Explain(wantErr))
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
