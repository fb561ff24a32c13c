package engine_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// TestEveryArchiveSaysRetentionFailed: each way the engine archives the active workflow (a
// replacing start, an expiry asked for, an expiry a resume finds) says when retention could
// not remove older archives, as cairn archive and a completion do. Before, the archive made
// on the way to a replacing start or by an expiry dropped what the store said of it.
func TestEveryArchiveSaysRetentionFailed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		archive func(e *env, en *engine.Engine) []string
	}{
		{"resume of a completed workflow left in the active slot", func(e *env, en *engine.Engine) []string {
			// As a kill between a completion's commit and its archive leaves it.
			st, err := store.Open(filepath.Join(e.project, ".claude", "cairn"))
			if err != nil {
				e.t.Fatal(err)
			}
			defer st.Close()
			if _, err := st.UpdateRecord(func(cur *workflow.Record) (*workflow.Record, store.Event, error) {
				cur.Status = workflow.StatusCompleted
				return cur, store.Event{Kind: "complete"}, nil
			}); err != nil {
				e.t.Fatal(err)
			}
			return e.open("s2").Resume(engine.ResumeOptions{Apply: true}).Warnings
		}},
		{"replacing start", func(e *env, en *engine.Engine) []string {
			return must(en.Start(engine.StartRequest{Type: "debug", Context: "two", Replace: true}))(e.t).Warnings
		}},
		{"expire", func(e *env, en *engine.Engine) []string {
			e.clock.Add(2 * time.Hour)
			return must(en.ExpireTTL(false))(e.t).Warnings
		}},
		{"resume of an expired workflow", func(e *env, en *engine.Engine) []string {
			e.clock.Add(2 * time.Hour)
			r := e.open("s2").Resume(engine.ResumeOptions{Apply: true})
			return r.Warnings
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			en := e.open("s1")
			must(en.Start(engine.StartRequest{Type: "apex", Context: "one", TTL: "1h"}))(t)
			// An index with a damaged line and an archive it does not name: where that archive
			// belongs in the order is not known, so retention removes nothing and says why.
			archive := filepath.Join(e.project, ".claude", "cairn", "archive")
			other := filepath.Join(archive, "apex-20261101T000000Z-aaaa-20261101T000000.000Z")
			if err := os.MkdirAll(other, 0o700); err != nil {
				t.Fatal(err)
			}
			rec := `{"version":"2.0","workflow_id":"apex-20261101T000000Z-aaaa","revision":1,"type":"apex","state":"analyze","status":"completed"}`
			if err := os.WriteFile(filepath.Join(other, store.WorkflowFile), []byte(rec), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(archive, "index.jsonl"), []byte("{\"dir\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			warnings := tc.archive(e, en)
			if !containsAny(warnings, "older archives were not removed this time") || !containsAny(warnings, "damaged line") {
				t.Errorf("warnings %q do not say that retention failed and why", warnings)
			}
		})
	}
}
