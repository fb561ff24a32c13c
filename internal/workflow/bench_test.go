package workflow_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/workflow"
)

// The SessionStart hook loads every definition and decodes the record on each start, so
// these are on its path.

func BenchmarkLoadBuiltins(b *testing.B) {
	for b.Loop() {
		if _, errs := workflow.LoadDefinitions(nil, nil); errs != nil {
			b.Fatal(errs)
		}
	}
}

func BenchmarkRecordDecodeEncode(b *testing.B) {
	data := []byte(fullRecord)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		var r workflow.Record
		if err := json.Unmarshal(data, &r); err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTransition(b *testing.B) {
	def := mustDef(b, "apex")
	r := walk(b, def, mustStart(b, def), "plan", "implement")
	at := r.UpdatedAt.Add(time.Minute)
	for b.Loop() {
		if _, err := workflow.Transition(def, r, workflow.TransitionRequest{To: "review", From: "implement"}, at, alice); err != nil {
			b.Fatal(err)
		}
	}
}
