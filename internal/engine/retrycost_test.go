package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/alloctest"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store"
)

// TestRetryAfterAnArchiveReadsItsRecordNotItsJournal: an operation retried after it archived
// the workflow (a completion, an archive with or without a note, an expiry cut short before its
// ending, a replacing start) looks at the newest archive's record, or its journal's last line:
// it does not read a long workflow's whole archived journal, many times the record, for them.
func TestRetryAfterAnArchiveReadsItsRecordNotItsJournal(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first func(t *testing.T, e *env, en *engine.Engine, id string) // the call that landed
		retry func(en *engine.Engine) (*engine.Result, error)
	}{
		{"complete", func(t *testing.T, _ *env, en *engine.Engine, _ string) {
			must(en.Complete("retries added"))(t)
		}, func(en *engine.Engine) (*engine.Result, error) { return en.Complete("retries added") }},
		{"archive with a note", func(t *testing.T, _ *env, en *engine.Engine, _ string) {
			must(en.Archive("superseded by the rewrite"))(t)
		}, func(en *engine.Engine) (*engine.Result, error) { return en.Archive("superseded by the rewrite") }},
		{"archive cut short before its ending", func(t *testing.T, e *env, en *engine.Engine, id string) {
			st := must(store.Open(en.StateDir(), store.WithClock(e.clock.Now)))(t)
			defer st.Close()
			must(st.ArchiveIf("abandoned", id))(t)
		}, func(en *engine.Engine) (*engine.Result, error) { return en.Archive("abandoned") }},
		{"replace", func(t *testing.T, _ *env, en *engine.Engine, _ string) {
			must(en.Start(engine.StartRequest{Type: "apex", Context: "the rewrite", Replace: true}))(t)
		}, func(en *engine.Engine) (*engine.Result, error) {
			return en.Start(engine.StartRequest{Type: "apex", Context: "the rewrite", Replace: true})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			en := e.open("s1")
			id := must(en.Start(engine.StartRequest{Type: "apex", Context: "long", WorkflowID: "apex-long"}))(t).WorkflowID
			must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
			must(en.Approve(""))(t)
			for i := range 400 {
				must(en.SetVars(map[string]string{"WF_STEP": fmt.Sprintf("%d %s", i, strings.Repeat("v", 1000))}))(t)
			}
			journal := must(os.Stat(filepath.Join(en.StateDir(), "journal", id+".jsonl")))(t).Size()
			tc.first(t, e, en, id)
			e.clock.Add(time.Minute)
			retry := e.open("s1")
			var res *engine.Result
			var err error
			n := alloctest.Bytes(func() { res, err = tc.retry(retry) })
			if err != nil || !strings.Contains(res.Message, "already") {
				t.Fatalf("retry: %+v, %v; want the call already made", res, err)
			}
			// The engine's own reads (definitions, the active slot, the index's tail, the
			// archived record) and, for an ending left unrecorded, its L2 write: a small part
			// of the journal's bytes.
			if budget := uint64(256 << 10); n > budget || journal < 2*int64(budget) {
				t.Errorf("the retry with a %d-byte archived journal allocated %d bytes, want at most %d", journal, n, budget)
			}
			t.Logf("the retry with a %d-byte archived journal allocated %d bytes: %s", journal, n, res.Message)
		})
	}
}
