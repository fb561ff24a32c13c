package engine_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/store/storetest"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// TestEveryArchiveSaysRetentionFailed: each way the engine archives the active workflow (a
// replacing start, an expiry asked for, an expiry a resume finds) says when retention could
// not remove older archives, as cairn archive and a completion do. Before, the archive made
// on the way to a replacing start or by an expiry dropped what the store said of it.
func TestEveryArchiveSaysRetentionFailed(t *testing.T) {
	t.Parallel()
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
			storetest.UnplaceableArchive(t, filepath.Join(e.project, ".claude", "cairn")) // retention fails, and says why
			warnings := tc.archive(e, en)
			if !containsAny(warnings, "older archives were not removed this time") || !containsAny(warnings, "damaged line") {
				t.Errorf("warnings %q do not say that retention failed and why", warnings)
			}
		})
	}
}
