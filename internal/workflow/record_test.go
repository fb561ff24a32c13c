package workflow_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/workflow"
)

const fullRecord = `{
  "version": "2.0",
  "workflow_id": "apex-20261122T173000Z-3f9a",
  "type": "apex",
  "context": "one-line summary",
  "scope": "standard",
  "state": "plan",
  "phase_status": "in_progress",
  "status": "active",
  "phases": {"analyze": {"completed": true, "completed_at": "2026-11-22T17:31:00Z", "outputs": ["a.md"], "metadata": {"k": [1, 2.50]}, "phase_future": 1}},
  "history": [{"from": "analyze", "to": "plan", "at": "2026-11-22T17:31:00Z", "session_id": "s1", "note": "n", "hist_future": "x"}],
  "tasks": [{"id": "t1", "status": "pending", "attempts": 0, "output": "o.json", "note": "",
             "started_at": "2026-11-22T17:31:00Z", "completed_at": "2026-11-22T17:32:00Z", "updated_at": "2026-11-22T17:32:00Z", "task_future": true}],
  "approvals": [{"phase": "plan", "requested_at": "2026-11-22T17:31:00Z", "approved_at": "2026-11-22T17:33:00Z", "by": "user"}],
  "artifacts": ["path"],
  "vars": {"PLAN_PATH": "/x/plan.md"},
  "enforcement": {"violations": [{"code": "V-TEST-03", "severity": "HIGH", "details": "...", "file": "x.go"}],
                  "blocking": true, "summary": "1 HIGH violation (blocking)", "source": "x-review"},
  "ttl": "24h",
  "created_at": "2026-11-22T17:30:00Z", "updated_at": "2026-11-22T17:33:00Z", "completed_at": "2026-11-22T17:34:00Z",
  "outcome": "done",
  "owner": {"session_id": "s1", "pid": 123, "heartbeat": "2026-11-22T17:33:00Z", "host": "box"},
  "interruption_safe": true,
  "revision": 7,
  "future_top": {"nested": [1, {"a": null}]},
  "another": "kept"
}`

// canonical re-encodes JSON with sorted keys so two documents can be compared as values.
func canonical(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode: %v\n%s", err, b)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestRecordRoundTripKeepsUnknownFields(t *testing.T) {
	var r workflow.Record
	if err := json.Unmarshal([]byte(fullRecord), &r); err != nil {
		t.Fatal(err)
	}
	if r.WorkflowID != "apex-20261122T173000Z-3f9a" || r.Revision != 7 || r.Owner.PID != 123 ||
		r.Vars["PLAN_PATH"] != "/x/plan.md" || r.Enforcement.Violations[0].Code != "V-TEST-03" ||
		!*r.InterruptionSafe || r.Phases["analyze"].Outputs[0] != "a.md" {
		t.Fatalf("known fields not decoded: %+v", r)
	}
	if _, ok := r.Extra["future_top"]; !ok {
		t.Fatalf("unknown top-level field not captured: %v", r.Extra)
	}
	out, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	// 2.50 in metadata must survive byte-exact in meaning; canonical compares numbers as text.
	if got, want := canonical(t, out), canonical(t, []byte(fullRecord)); got != want {
		t.Fatalf("round trip changed the document:\n got %s\nwant %s", got, want)
	}
	// And through a Clone and an operation, unknown fields are still there.
	c := r.Clone()
	c.Extra["another"] = json.RawMessage(`"changed"`)
	c.Phases["analyze"].Metadata["k"][0] = '!'
	if string(r.Extra["another"]) != `"kept"` || r.Phases["analyze"].Metadata["k"][0] != '[' {
		t.Fatal("Clone shares memory with the original")
	}
}

// TestRecordUnknownFieldsAtOneLevel: a value without unknown members is decoded in one pass,
// one with them in two (DecodeKnown); unknown members at only one level of nesting, or at
// none, still land in that level's Extra alone and the record round-trips.
func TestRecordUnknownFieldsAtOneLevel(t *testing.T) {
	future := map[string]string{"phase": `, "phase_future": 1`, "history": `, "hist_future": "x"`,
		"task": `, "task_future": true`, "top": `,
  "future_top": {"nested": [1, {"a": null}]},
  "another": "kept"`}
	for _, keep := range []string{"none", "top", "phase", "history", "task"} {
		doc := fullRecord
		for level, f := range future {
			if level != keep {
				doc = strings.Replace(doc, f, "", 1)
			}
		}
		var r workflow.Record
		if err := json.Unmarshal([]byte(doc), &r); err != nil {
			t.Fatalf("%s: %v", keep, err)
		}
		got := map[string]bool{"top": r.Extra != nil, "phase": r.Phases["analyze"].Extra != nil,
			"history": r.History[0].Extra != nil, "task": r.Tasks[0].Extra != nil}
		for level, has := range got {
			if has != (level == keep) {
				t.Errorf("%s: Extra at %s is %t", keep, level, has)
			}
		}
		if r.WorkflowID != "apex-20261122T173000Z-3f9a" || r.Tasks[0].ID != "t1" || r.Owner.PID != 123 {
			t.Errorf("%s: known fields not decoded: %+v", keep, r)
		}
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if canonical(t, out) != canonical(t, []byte(doc)) {
			t.Errorf("%s: round trip changed the document:\n%s", keep, out)
		}
	}
}

func TestRecordUnknownFieldsSurviveOperations(t *testing.T) {
	def := mustDef(t, "apex")
	var r workflow.Record
	if err := json.Unmarshal([]byte(fullRecord), &r); err != nil {
		t.Fatal(err)
	}
	r.CompletedAt = time.Time{}
	r.Outcome = ""
	res, err := workflow.Transition(def, &r, workflow.TransitionRequest{To: "implement"}, t0.Add(time.Hour), alice)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(res.Record)
	for _, k := range []string{`"future_top"`, `"another":"kept"`, `"phase_future":1`, `"hist_future":"x"`,
		`"task_future":true`, `"by":"user"`, `"file":"x.go"`, `"source":"x-review"`} {
		if !strings.Contains(string(out), k) {
			t.Errorf("%s lost after a transition:\n%s", k, out)
		}
	}
}

func TestRecordMinimalEncoding(t *testing.T) {
	r := workflow.Record{Version: "2.0", WorkflowID: "x", Type: "apex", State: "analyze",
		PhaseStatus: workflow.PhaseInProgress, Status: workflow.StatusActive}
	out, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"version":"2.0","workflow_id":"x","type":"apex","context":"","state":"analyze","phase_status":"in_progress","status":"active","revision":0}`
	if string(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
	var back workflow.Record
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Fatalf("decode(encode(r)) = %+v, want %+v", back, r)
	}
}

func TestRecordExtraCannotShadowKnownField(t *testing.T) {
	r := workflow.Record{WorkflowID: "x", Extra: map[string]json.RawMessage{"workflow_id": json.RawMessage(`"evil"`), "z": json.RawMessage(`1`)}}
	out, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back workflow.Record
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if back.WorkflowID != "x" || strings.Count(string(out), "workflow_id") != 1 {
		t.Fatalf("extra shadowed a known field: %s", out)
	}
	r.Extra["bad"] = json.RawMessage(`{`)
	if _, err := json.Marshal(r); err == nil {
		t.Fatal("invalid extra JSON was written")
	}
}

func TestRecordCaseVariantKeysAreNotDuplicated(t *testing.T) {
	var r workflow.Record
	if err := json.Unmarshal([]byte(`{"Workflow_ID":"b","workflow_id":"a"}`), &r); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(r)
	var back workflow.Record
	_ = json.Unmarshal(out, &back)
	if back.WorkflowID != r.WorkflowID || len(r.Extra) != 0 {
		t.Fatalf("case-variant key changed the value on a round trip: %s", out)
	}
}

// FuzzRecordRoundTrip: whatever JSON decodes as a record encodes to a document that decodes
// and encodes to the same bytes again (unknown fields included).
func FuzzRecordRoundTrip(f *testing.F) {
	f.Add([]byte(fullRecord))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"x":1,"phases":{"a":{"y":[]}},"tasks":[{"id":"t","z":{}}]}`))
	f.Add([]byte(`{"WORKFLOW_ID":"a","workflow_id":"b","Extra":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r workflow.Record
		if json.Unmarshal(data, &r) != nil {
			return
		}
		once, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("encoding a decoded record: %v", err)
		}
		var r2 workflow.Record
		if err := json.Unmarshal(once, &r2); err != nil {
			t.Fatalf("decoding our own output: %v\n%s", err, once)
		}
		twice, err := json.Marshal(r2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(once, twice) {
			t.Fatalf("not stable:\n%s\n%s", once, twice)
		}
		_ = r.Clone()
	})
}

// TestCloneSharesNothing: a clone of a record with every kind of field filled is equal to it
// and shares no map, slice or pointer with it, at any depth, so changing one never changes
// the other.
func TestCloneSharesNothing(t *testing.T) {
	data, err := os.ReadFile("testdata/compat/record-unknown.in.json")
	if err != nil {
		t.Fatal(err)
	}
	var r workflow.Record
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	c := r.Clone()
	if !reflect.DeepEqual(&r, c) {
		t.Fatalf("clone differs:\n%+v\n%+v", r, *c)
	}
	var walk func(path string, a, b reflect.Value)
	walk = func(path string, a, b reflect.Value) {
		switch a.Kind() {
		case reflect.Pointer, reflect.Map, reflect.Slice:
			if a.IsNil() {
				return
			}
			if a.Kind() != reflect.Slice || a.Len() > 0 {
				if a.Pointer() == b.Pointer() {
					t.Errorf("%s is shared between the record and its clone", path)
				}
			}
		}
		switch a.Kind() {
		case reflect.Pointer:
			walk(path, a.Elem(), b.Elem())
		case reflect.Map:
			for _, k := range a.MapKeys() {
				walk(fmt.Sprintf("%s[%v]", path, k), a.MapIndex(k), b.MapIndex(k))
			}
		case reflect.Slice:
			for i := range a.Len() {
				walk(fmt.Sprintf("%s[%d]", path, i), a.Index(i), b.Index(i))
			}
		case reflect.Struct:
			for i := range a.NumField() {
				if a.Type().Field(i).IsExported() {
					walk(path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i))
				}
			}
		}
	}
	walk("record", reflect.ValueOf(&r), reflect.ValueOf(c))
	if (*workflow.Record)(nil).Clone() != nil {
		t.Error("Clone of nil is not nil")
	}
}
