package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote/mirror"
	"github.com/cairn-dev/cairn/internal/store"
)

// TestResumeSaysHowTheMirrorStands: with sharing on, the resume report and its JSON carry one
// line on the mirror (age of the last sync, revisions not pushed), read from the state
// directory; with sharing off, or for a workflow the last sync was not about, it says so.
func TestResumeSaysHowTheMirrorStands(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings *mirror.Settings // nil: never enabled
		ago      time.Duration    // the last sync, before the test clock's now; 0: never
		want     string           // "" : no line
	}{
		{"never enabled", nil, 0, ""},
		{"disabled", &mirror.Settings{Remote: "origin"}, time.Hour, ""},
		{"never synced", &mirror.Settings{Enabled: true, Remote: "origin"}, 0, "shared via origin: never synced, 2 changes not pushed"},
		{"one behind", &mirror.Settings{Enabled: true, Remote: "origin", Mirrored: 1}, 4 * time.Minute,
			"shared via origin: synced 4m ago, 1 change not pushed"},
		{"all pushed", &mirror.Settings{Enabled: true, Remote: "up", Mirrored: 2}, 3 * time.Hour,
			"shared via up: synced 3h ago"},
		{"another workflow", &mirror.Settings{Enabled: true, Remote: "origin", Workflow: "other", Mirrored: 2}, 30 * time.Second,
			"shared via origin: synced just now, 2 changes not pushed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			en := e.open("s-1")
			res := must(en.Start(engine.StartRequest{Type: "apex", Context: "ship it"}))(t)
			must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
			if tc.settings != nil {
				st := must(store.Open(en.StateDir()))(t)
				defer st.Close()
				s := *tc.settings
				if s.Workflow == "" {
					s.Workflow = res.WorkflowID
				}
				if tc.ago > 0 {
					s.LastSync = e.clock.Now().Add(-tc.ago)
				}
				if err := mirror.Save(st, s); err != nil {
					t.Fatal(err)
				}
			}
			r := must(en.Resume(engine.ResumeOptions{Apply: true, ReportOnly: true, Source: "startup"}))(t)
			if r.Shared != tc.want {
				t.Errorf("Shared = %q, want %q", r.Shared, tc.want)
			}
			has := strings.Contains(r.Report, "\nshared via ")
			if has != (tc.want != "") || tc.want != "" && !strings.Contains(r.Report, "\n"+tc.want+"\n") {
				t.Errorf("report does not carry %q as its own line:\n%s", tc.want, r.Report)
			}
		})
	}
}
