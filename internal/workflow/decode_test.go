package workflow_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/workflow"
)

// engineRecord is a record as the engine writes it (three transitions into apex).
const engineRecord = `{"version":"2.0","workflow_id":"apex-20261122T194441Z-d361","type":"apex","context":"benchmark: add retries to the uploader","state":"implement","phase_status":"in_progress","status":"active","phases":{"analyze":{"completed":true,"completed_at":"2026-11-22T19:44:41.593046543Z"},"implement":{"completed":false},"plan":{"completed":true,"completed_at":"2026-11-22T19:44:41.595833471Z"}},"history":[{"from":"analyze","to":"plan","at":"2026-11-22T19:44:41.593046543Z"},{"from":"plan","to":"implement","at":"2026-11-22T19:44:41.595833471Z"}],"approvals":[{"phase":"plan","requested_at":"2026-11-22T19:44:41.593046543Z","approved_at":"2026-11-22T19:44:41.595833471Z"}],"ttl":"24h","created_at":"2026-11-22T19:44:41.591764682Z","updated_at":"2026-11-22T19:44:41.595833471Z","owner":{"session_id":"","heartbeat":"2026-11-22T19:44:41.591764682Z"},"interruption_safe":true,"revision":3}`

// trickySeeds are documents at the edges of encoding/json's rules, for the fuzz corpus and
// the differential test.
var trickySeeds = []string{
	// Case-insensitive keys, Unicode folding included (U+212A KELVIN SIGN, U+017F LONG S).
	`{"Workflow_ID":"b","workflow_id":"a","STATE":"x","ſtate":"y","worKflow_id":"k","Extra":1,"-":2}`,
	`{"phases":{"A":{"COMPLETED":true,"Metadata":{"K":1},"OUTPUTS":["o"]}},"Owner":{"PID":7,"Session_Id":"s"}}`,
	// Repeated keys: maps merge, []string reuses its backing array, structs are replaced.
	`{"phases":{"a":{"completed":true}},"phases":{"b":{}},"vars":{"x":"1"},"vars":{"y":"2","x":"3"},"artifacts":["a","b","c"],"artifacts":["x"],"artifacts":["y",null,null],"state":"a","state":null,"revision":1,"revision":2}`,
	`{"owner":{"pid":1,"x":1},"owner":{"session_id":"s"},"tasks":[{"id":"a","note":"n"},{"id":"b"}],"tasks":[{"id":"c"},null],"x":1,"x":[2]}`,
	`{"phases":{"a":{"outputs":["1","2","3","4","5"],"outputs":["6"],"outputs":[null,null,null,null,null,null],"metadata":{"k":1},"metadata":{"j":2}}}}`,
	// null everywhere.
	`{"version":null,"phases":null,"history":null,"tasks":[null],"approvals":[null,{"phase":null}],"artifacts":[null],"vars":{"a":null},"enforcement":null,"owner":null,"interruption_safe":null,"created_at":null,"revision":null}`,
	`{"phases":{"a":null,"b":{"metadata":{"k":null},"outputs":[null],"completed":null,"completed_at":null}},"enforcement":{"violations":null,"blocking":null},"owner":{"pid":null,"heartbeat":null}}`,
	`{"revision":5,"revision":null,"created_at":"2026-11-22T17:30:00Z","created_at":null,"interruption_safe":true,"interruption_safe":null}`,
	`null`, ` null `, `{}`, `{"enforcement":{}}`,
	// Empty containers are not nil.
	`{"history":[],"tasks":[],"approvals":[],"artifacts":[],"vars":{},"phases":{"p":{"outputs":[],"metadata":{}}},"enforcement":{"violations":[]}}`,
	// Escapes, surrogates, invalid UTF-8 (raw and escaped), in values and keys.
	`{"context":"\u00e9\ud83d\ude00\ud800x\udc00\"\\\/\b\f\n\r\t\u0000","vars":{"\u006b":"v","\ud800":"lone"},"st\u0061te":"s","x\u0000":1,"\u0057orkflow_id":"w"}`,
	"{\"context\":\"a\xffb\xed\xa0\x80c\xc3\",\"vars\":{\"\xff\":\"\xfe\"},\"x\xff\":\"\xff\"}",
	`{"context":"\udc00\ud800\ud800\udc00\uDBFF\uDFFF\ud800\\u0041"}`,
	// Numbers.
	`{"revision":9223372036854775807,"owner":{"pid":-9223372036854775808}}`,
	`{"revision":9223372036854775808}`, `{"revision":1e3}`, `{"revision":1.0}`, `{"revision":-0}`,
	`{"tasks":[{"attempts":1.5}]}`, `{"tasks":[{"attempts":-1}]}`, `{"x":1e400,"y":-0.0e-0,"z":[0,1.5E+3]}`,
	// Wrong types, at every level.
	`{"revision":"1"}`, `{"phases":[]}`, `{"history":{}}`, `{"owner":"x"}`, `{"owner":[]}`,
	`{"enforcement":{"violations":{}}}`, `{"enforcement":{"violations":[1]}}`, `{"interruption_safe":"true"}`,
	`{"created_at":1}`, `{"created_at":"yesterday"}`, `{"created_at":{}}`, `{"vars":{"a":1}}`,
	`{"phases":{"a":{"metadata":[]}}}`, `{"phases":{"a":5}}`, `{"tasks":[1]}`, `{"artifacts":[1]}`,
	`{"phases":{"a":{"completed":"yes"}}}`, `{"state":true}`, `{"status":{}}`,
	`[]`, `"x"`, `5`, `true`,
	// Times.
	`{"created_at":"2026-11-22T19:44:41.593046543+01:00","updated_at":"2026-11-22t19:44:41z","completed_at":"\u0032026-11-22T19:44:41Z"}`,
	`{"owner":{"heartbeat":"2026-11-22T19:44:41Z "}}`, `{"history":[{"at":"2026-02-30T00:00:00Z"}]}`,
	// Syntax errors.
	`{"a":1,}`, `{"a" 1}`, `{"a":01}`, `{"a":[1,]}`, `{"a":"\x"}`, `{"a":"\u12"}`, `{"a":nul}`,
	`{} x`, ``, ` `, `{"a":1 "b":2}`, `{"a":{"b":1]}`, "{\"a\":\"x\ty\"}", `{"a":-}`, `{"a":.5}`,
	`{"a":1.}`, `{"a":1e}`, `{"a":tru}`, `{"a":nullx}`, `{"state":"a"`, `{"state"`, `{`, `{"phases":{"a":{}`,
	"\xef\xbb\xbf{}", `{'a':1}`, `{"a":[}`, `{,}`, `[,]`,
	// White space everywhere; unknown values keep their inner white space.
	" \n{ \"revision\" :\t1 ,\r\"x\" : [ 1 , { } ] , \"phases\" : { \"a\" : { \"metadata\" : { \"k\" : { \"a\" : 1 } } } } } \n",
}

// decodeSeeds returns the seed documents: real records (the package's fixtures, an engine's
// record, and the migrator's schema-2.0 goldens and their legacy inputs) and the tricky ones.
func decodeSeeds(tb testing.TB) []string {
	tb.Helper()
	seeds := []string{fullRecord, engineRecord}
	files, err := filepath.Glob(filepath.Join("..", "store", "migrate", "testdata", "*", "*"))
	if err != nil || len(files) < 10 {
		tb.Fatalf("the migrator's test records are missing (%d found, %v)", len(files), err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, string(b))
	}
	return append(seeds, trickySeeds...)
}

// decodePairs are the types with their own decoder and their oracle twins.
var decodePairs = []struct {
	name          string
	fresh, oracle func() json.Unmarshaler
}{
	{"Record", func() json.Unmarshaler { return new(workflow.Record) }, func() json.Unmarshaler { return new(oRecord) }},
	{"Phase", func() json.Unmarshaler { return new(workflow.Phase) }, func() json.Unmarshaler { return new(oPhase) }},
	{"HistoryEntry", func() json.Unmarshaler { return new(workflow.HistoryEntry) }, func() json.Unmarshaler { return new(oHistoryEntry) }},
	{"Task", func() json.Unmarshaler { return new(workflow.Task) }, func() json.Unmarshaler { return new(oTask) }},
	{"Approval", func() json.Unmarshaler { return new(workflow.Approval) }, func() json.Unmarshaler { return new(oApproval) }},
	{"Owner", func() json.Unmarshaler { return new(workflow.Owner) }, func() json.Unmarshaler { return new(oOwner) }},
	{"Enforcement", func() json.Unmarshaler { return new(workflow.Enforcement) }, func() json.Unmarshaler { return new(oEnforcement) }},
	{"Violation", func() json.Unmarshaler { return new(workflow.Violation) }, func() json.Unmarshaler { return new(oViolation) }},
}

// checkDecode decodes data with each type's decoder and with its oracle and fails unless both
// refuse it or both give the same value.
func checkDecode(t *testing.T, data []byte) {
	t.Helper()
	for _, p := range decodePairs {
		got, want := p.fresh(), p.oracle()
		gerr, werr := got.UnmarshalJSON(data), want.UnmarshalJSON(data)
		compareDecoded(t, p.name+".UnmarshalJSON", data, got, gerr, want, werr)
	}
	// As the engine decodes it: json.Unmarshal validates first, then calls the method.
	var got workflow.Record
	var want oRecord
	gerr, werr := json.Unmarshal(data, &got), json.Unmarshal(data, &want)
	compareDecoded(t, "json.Unmarshal into a Record", data, &got, gerr, &want, werr)
	// Decoding into a record that holds values replaces them all.
	full := decodeFull(t)
	compareDecoded(t, "UnmarshalJSON into a full Record", data, full, full.UnmarshalJSON(data), &want, werr)
}

func decodeFull(t *testing.T) *workflow.Record {
	t.Helper()
	var r workflow.Record
	if err := json.Unmarshal([]byte(fullRecord), &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

func compareDecoded(t *testing.T, what string, data []byte, got any, gerr error, want any, werr error) {
	t.Helper()
	switch {
	case werr != nil && gerr == nil:
		t.Errorf("%s accepted what encoding/json refuses (%v):\n%q", what, werr, data)
	case werr == nil && gerr != nil:
		t.Errorf("%s refused what encoding/json accepts: %v\n%q", what, gerr, data)
	case werr == nil:
		conv := reflect.New(reflect.TypeOf(got).Elem())
		if msg := convertOracle(conv.Elem(), reflect.ValueOf(want).Elem()); msg != "" {
			t.Fatalf("the oracle does not mirror the workflow types: %s", msg)
		}
		if !reflect.DeepEqual(got, conv.Interface()) {
			t.Errorf("%s differs from encoding/json for %q:\n got %+v\nwant %+v", what, data, got, conv.Interface())
		}
	}
}

func TestDecodeMatchesEncodingJSON(t *testing.T) {
	for _, s := range decodeSeeds(t) {
		checkDecode(t, []byte(s))
	}
	// encoding/json's nesting limit, counted from the record's own brace.
	for _, depth := range []int{9999, 10000} {
		doc := `{"x":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`
		checkDecode(t, []byte(doc))
	}
}

// FuzzRecordDecode holds the one-pass decoders to encoding/json's behaviour (the oracle) on
// any input: the same error-or-not, and on success the same value, nil and empty apart.
func FuzzRecordDecode(f *testing.F) {
	for _, s := range decodeSeeds(f) {
		f.Add([]byte(s))
	}
	f.Fuzz(checkDecode)
}

// The rules spelled out, with the values encoding/json gives (checkDecode confirms each).
func TestRecordDecodeRules(t *testing.T) {
	str := func(s ...string) []string { return s }
	for _, c := range []struct {
		name string
		in   string
		ok   func(r *workflow.Record) bool
	}{
		{"case-folded-keys", `{"Workflow_ID":"b","STATE":"x","ſtate":"y","worKflow_id":"k"}`, func(r *workflow.Record) bool {
			return r.WorkflowID == "k" && r.State == "y" && r.Extra == nil
		}},
		{"exact-and-folded-last-wins", `{"workflow_id":"a","WORKFLOW_ID":"b"}`, func(r *workflow.Record) bool { return r.WorkflowID == "b" }},
		{"unknown-keys-kept-at-every-level", `{"x":1,"phases":{"a":{"y":[ 1 ]}},"owner":{"z":{}},"enforcement":{"violations":[{"v":"w"}],"s":null}}`, func(r *workflow.Record) bool {
			return string(r.Extra["x"]) == "1" && string(r.Phases["a"].Extra["y"]) == "[ 1 ]" && string(r.Owner.Extra["z"]) == "{}" &&
				string(r.Enforcement.Violations[0].Extra["v"]) == `"w"` && string(r.Enforcement.Extra["s"]) == "null"
		}},
		{"extra-and-dash-are-unknown", `{"Extra":1,"-":2}`, func(r *workflow.Record) bool { return len(r.Extra) == 2 }},
		{"repeated-maps-merge", `{"vars":{"x":"1"},"vars":{"y":"2","x":"3"},"phases":{"a":{}},"phases":{"b":{}}}`, func(r *workflow.Record) bool {
			return reflect.DeepEqual(r.Vars, map[string]string{"x": "3", "y": "2"}) && len(r.Phases) == 2
		}},
		{"repeated-strings-reuse-the-array", `{"artifacts":["a","b","c"],"artifacts":["x"],"artifacts":["y",null,null]}`, func(r *workflow.Record) bool {
			return reflect.DeepEqual(r.Artifacts, str("y", "b", "c"))
		}},
		{"repeated-struct-replaced", `{"owner":{"pid":1,"x":1},"owner":{"session_id":"s"},"tasks":[{"id":"a","note":"n"},{"id":"b"}],"tasks":[{"id":"c"},null]}`, func(r *workflow.Record) bool {
			return reflect.DeepEqual(*r.Owner, workflow.Owner{SessionID: "s"}) && len(r.Tasks) == 2 && r.Tasks[0].ID == "c" && r.Tasks[0].Note == "" && r.Tasks[1].ID == ""
		}},
		{"null-leaves-scalars", `{"state":"a","state":null,"revision":2,"revision":null,"created_at":"2026-11-22T17:30:00Z","created_at":null}`, func(r *workflow.Record) bool {
			return r.State == "a" && r.Revision == 2 && r.CreatedAt.Equal(t0)
		}},
		{"null-clears-references", `{"vars":{"a":"b"},"vars":null,"owner":{},"owner":null,"interruption_safe":true,"interruption_safe":null,"artifacts":["a"],"artifacts":null}`, func(r *workflow.Record) bool {
			return r.Vars == nil && r.Owner == nil && r.InterruptionSafe == nil && r.Artifacts == nil
		}},
		{"null-elements", `{"phases":{"a":null},"tasks":[null],"vars":{"k":null},"artifacts":[null],"phases":{"b":{"metadata":{"m":null}}}}`, func(r *workflow.Record) bool {
			a, hasA := r.Phases["a"]
			return hasA && reflect.DeepEqual(a, workflow.Phase{}) && len(r.Tasks) == 1 && r.Vars["k"] == "" && len(r.Vars) == 1 &&
				reflect.DeepEqual(r.Artifacts, str("")) && string(r.Phases["b"].Metadata["m"]) == "null"
		}},
		{"empty-is-not-nil", `{"history":[],"artifacts":[],"vars":{},"enforcement":{"violations":[]}}`, func(r *workflow.Record) bool {
			return r.History != nil && r.Artifacts != nil && r.Vars != nil && r.Enforcement.Violations != nil && r.Tasks == nil
		}},
		{"escapes", `{"context":"\u00e9\ud83d\ude00\ud800x\"\\\/\b\f\n\r\t","st\u0061te":"s"}`, func(r *workflow.Record) bool {
			return r.Context == "é😀\uFFFDx\"\\/\b\f\n\r\t" && r.State == "s"
		}},
		{"invalid-utf8-becomes-replacement", "{\"context\":\"a\xffb\",\"x\xff\":\"\xff\"}", func(r *workflow.Record) bool {
			return r.Context == "a\uFFFDb" && string(r.Extra["x\uFFFD"]) == "\"\xff\""
		}},
		{"largest-revision", `{"revision":9223372036854775807,"owner":{"pid":-1}}`, func(r *workflow.Record) bool {
			return r.Revision == 1<<63-1 && r.Owner.PID == -1
		}},
		{"null-record", ` null `, func(r *workflow.Record) bool { return reflect.DeepEqual(*r, workflow.Record{}) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			checkDecode(t, []byte(c.in))
			var r workflow.Record
			if err := json.Unmarshal([]byte(c.in), &r); err != nil {
				t.Fatal(err)
			}
			if !c.ok(&r) {
				t.Fatalf("decoded %+v", r)
			}
		})
	}
}

// Errors name the member where decoding failed, and the record is left as it was.
func TestRecordDecodeErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"revision":"1"}`, `revision: wrong JSON type at byte 12: expected a number, found a string`},
		{`{"revision":1.5}`, `revision: wrong JSON type at byte 12: number 1.5 is not a whole number`},
		{`{"revision":9223372036854775808}`, `revision: wrong JSON type at byte 12: number 9223372036854775808 is not a whole number in the range`},
		{`{"tasks":[{"id":"a"},{"attempts":1e2}]}`, `tasks[1].attempts: wrong JSON type`},
		{`{"phases":{"plan":{"completed_at":5}}}`, `phases.plan.completed_at: Time.UnmarshalJSON: input is not a JSON string`},
		{`{"phases":{"a.b":{"outputs":[1]}}}`, `phases."a.b".outputs[0]: wrong JSON type at byte 29: expected a string, found a number`},
		{`{"history":[{"at":"yesterday"}]}`, `history[0].at: parsing time`},
		{`{"enforcement":{"violations":{}}}`, `enforcement.violations: wrong JSON type at byte 29: expected an array, found an object`},
		{`{"owner":"x"}`, `owner: wrong JSON type at byte 9: expected an object, found a string`},
		{`{"vars":{"a":nul}}`, `vars.a: invalid JSON at byte 13: invalid literal, expected null`},
		{`{"a":1,}`, `invalid JSON at byte 7: unexpected '}', expected a string key`},
		{`{"x":[1 2]}`, `x: invalid JSON at byte 8: unexpected '2', expected ',' or ']' after an array element`},
		{`{"state":"a"} {}`, `invalid JSON at byte 14: data after the JSON value`},
		{`[]`, `wrong JSON type at byte 0: expected an object, found an array`},
		{``, `invalid JSON at byte 0: unexpected end of input, expected an object`},
		{"{\"context\":\"a\x01\"}", `context: invalid JSON at byte 13: control character 0x01 in a string`},
		{`{"x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`, `x: invalid JSON at byte 10004: nested deeper than 10000 levels`},
	} {
		before := decodeFull(t)
		r := decodeFull(t)
		err := r.UnmarshalJSON([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("decoding %.40q: got error %v, want one containing %q", c.in, err, c.want)
		}
		if !reflect.DeepEqual(r, before) {
			t.Errorf("decoding %.40q failed but changed the record", c.in)
		}
	}
}
