package engine_test

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
)

// No refusal repeats a secret the caller pasted into any argument.
func TestRefusalsDoNotEchoSecrets(t *testing.T) {
	t.Parallel()
	e, en := startApexWith(t, "echo")
	must(en.Initiative(engine.InitiativeRequest{Action: "create", Title: "echo"}))(t)
	must(en.Initiative(engine.InitiativeRequest{Action: "add_milestone", Milestone: "m1"}))(t)
	for _, s := range secrettest.Shapes() {
		calls := map[string]func() error{
			"start id": func() error {
				_, err := en.Start(engine.StartRequest{Type: "apex", Context: "x", WorkflowID: s.Text, Replace: true})
				return err
			},
			"start type": func() error { _, err := en.Start(engine.StartRequest{Type: s.Text, Context: "x"}); return err },
			"start ttl": func() error {
				_, err := en.Start(engine.StartRequest{Type: "apex", Context: "x", TTL: s.Text, Replace: true})
				return err
			},
			"start scope": func() error {
				_, err := en.Start(engine.StartRequest{Type: "apex", Context: "x", Scope: s.Text, Replace: true})
				return err
			},
			"to":   func() error { _, err := en.Transition(engine.TransitionRequest{To: s.Text}); return err },
			"from": func() error { _, err := en.Transition(engine.TransitionRequest{To: "plan", From: s.Text}); return err },
			"severity": func() error {
				_, err := en.SetEnforcement([]engine.Violation{{Code: "c", Severity: s.Text}})
				return err
			},
			"code": func() error {
				_, err := en.SetEnforcement([]engine.Violation{{Code: s.Text, Severity: "HIGH"}})
				return err
			},
			"code with an unknown severity": func() error {
				_, err := en.SetEnforcement([]engine.Violation{{Code: s.Text, Severity: "URGENT"}})
				return err
			},
			"var key":           func() error { _, err := en.SetVars(map[string]string{s.Text: "v"}); return err },
			"task status":       func() error { _, err := en.UpdateTask(engine.TaskRequest{ID: "t1", Status: s.Text}); return err },
			"checkpoint":        func() error { _, err := en.LoadCheckpoint(s.Text); return err },
			"initiative action": func() error { _, err := en.Initiative(engine.InitiativeRequest{Action: s.Text}); return err },
			"initiative status": func() error {
				_, err := en.Initiative(engine.InitiativeRequest{Action: "set_status", Status: s.Text})
				return err
			},
			"milestone status": func() error {
				_, err := en.Initiative(engine.InitiativeRequest{Action: "update_milestone", Milestone: "m1", Status: s.Text})
				return err
			},
			"milestone id": func() error {
				_, err := en.Initiative(engine.InitiativeRequest{Action: "update_milestone", Milestone: s.Text, Status: "done"})
				return err
			},
			"new milestone id": func() error {
				_, err := en.Initiative(engine.InitiativeRequest{Action: "add_milestone", Milestone: "\n" + s.Text})
				return err
			},
			"archive": func() error { _, err := e.open("s9").Archive(s.Text); return err },
		}
		for name, call := range calls {
			err := call()
			if err != nil && strings.Contains(err.Error(), s.Core) {
				t.Errorf("%s %s: the error repeats the secret: %v", s.Name, name, err)
			}
		}
	}
}
