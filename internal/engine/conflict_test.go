package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// Two copies competing for the active slot (seed 004): Cairn's active workflow and a seed 001
// file that appeared beside it. The newer stays active, the other is archived as conflict-,
// the seed file is kept as its .bak, and the user is told.
func TestTwoCopiesNewestWins(t *testing.T) {
	for _, tc := range []struct {
		name        string
		legacyAge   time.Duration // how long before now the seed file was last updated
		legacyWins  bool
		activePhase string
	}{
		{"seed-file-newer", -time.Minute, true, "implement"},
		{"active-newer", -2 * time.Hour, false, "analyze"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.clock.Add(-time.Hour)
			must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "cairn copy"}))(t)
			e.clock.Add(time.Hour)

			seed := `{"type":"APEX","phase":"implement","lastUpdated":"` +
				e.clock.Now().Add(tc.legacyAge).Format(time.RFC3339) + `","ttl":"24h","context":"seed copy"}`
			seedPath := filepath.Join(e.project, ".claude", "workflow-state.json")
			if err := os.WriteFile(seedPath, []byte(seed), 0o644); err != nil {
				t.Fatal(err)
			}

			r := must(e.open("s2").Resume(engine.ResumeOptions{Apply: true, Source: "startup"}))(t)
			if r.Phase != tc.activePhase {
				t.Fatalf("active phase %q, want %q; notices %v", r.Phase, tc.activePhase, r.Notices)
			}
			if !containsAny(r.Notices, "two copies") || !strings.Contains(r.SystemMessage, "two copies") {
				t.Errorf("the conflict was not reported: notices %v, system message %q", r.Notices, r.SystemMessage)
			}
			if _, err := os.Stat(seedPath); !os.IsNotExist(err) {
				t.Errorf("the seed file is still in place: %v", err)
			}
			if _, err := os.Stat(filepath.Join(e.project, ".claude", "workflow-state.v1.json.bak")); err != nil {
				t.Errorf("the seed file was not kept as .bak: %v", err)
			}
			list := must(e.open("s2").List())(t)
			var conflict int
			for _, s := range list {
				if s.Status == "conflict" && strings.HasPrefix(s.Archived, "conflict-") {
					conflict++
					loser := "seed copy"
					if tc.legacyWins {
						loser = "cairn copy"
					}
					if s.Context != loser {
						t.Errorf("archived the wrong copy: %+v", s)
					}
				}
			}
			if conflict != 1 {
				t.Errorf("want one conflict- archive, got %+v", list)
			}
			// Settled: the next start finds one copy and says nothing more about it.
			again := must(e.open("s3").Resume(engine.ResumeOptions{Apply: true}))(t)
			if containsAny(again.Notices, "two copies") {
				t.Errorf("the conflict was reported twice: %v", again.Notices)
			}
		})
	}
}
