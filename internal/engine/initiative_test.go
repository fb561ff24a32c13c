package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

func TestInitiativeLifecycleAndStatusFileSync(t *testing.T) {
	e := newEnv(t)
	en := e.open("s1")
	do := func(r engine.InitiativeRequest) *engine.Result {
		t.Helper()
		return must(en.Initiative(r))(t)
	}
	if r := do(engine.InitiativeRequest{Action: "get"}); r.Changed || !strings.Contains(r.Message, "no initiative") {
		t.Fatalf("get before create: %+v", r)
	}
	do(engine.InitiativeRequest{Action: "create", Title: "Ship the uploader v2"})
	if _, err := en.Initiative(engine.InitiativeRequest{Action: "create", Title: "again"}); err == nil {
		t.Fatal("a second initiative was created over the first")
	}
	do(engine.InitiativeRequest{Action: "add_milestone", Milestone: "design"})
	do(engine.InitiativeRequest{Action: "add_milestone", Milestone: "build"})
	r := do(engine.InitiativeRequest{Action: "update_milestone", Milestone: "design", Status: "in_progress"})
	if !strings.Contains(r.Message, "in_progress") {
		t.Errorf("starting a milestone did not start the initiative: %s", r.Message)
	}
	r = do(engine.InitiativeRequest{Action: "update_milestone", Milestone: "design", Status: "completed"})
	if !strings.Contains(r.Message, "50% done") {
		t.Errorf("progress after one of two milestones: %s", r.Message)
	}
	status := filepath.Join(e.project, ".claude", "WORKFLOW-STATUS.yaml")
	data, err := os.ReadFile(status)
	if err != nil || !strings.Contains(string(data), "build") {
		t.Fatalf("WORKFLOW-STATUS.yaml not written: %v\n%s", err, data)
	}
	do(engine.InitiativeRequest{Action: "set_status", Status: "blocked"})
	do(engine.InitiativeRequest{Action: "set_status", Status: "in_progress"})
	do(engine.InitiativeRequest{Action: "set_status", Status: "completed"})
	_, err = en.Initiative(engine.InitiativeRequest{Action: "set_status", Status: "in_progress"})
	if err == nil || !strings.Contains(err.Error(), "completed") {
		t.Fatalf("completed -> in_progress: %v", err)
	}
	do(engine.InitiativeRequest{Action: "set_status", Status: "archived"})
	if _, err := en.Initiative(engine.InitiativeRequest{Action: "set_status", Status: "in_progress"}); err == nil {
		t.Fatal("a move out of archived was accepted")
	}

	// The status file edited later by a person wins, with a warning over five minutes.
	e.clock.Add(10 * time.Minute)
	data, _ = os.ReadFile(status)
	edited := strings.Replace(string(data), "Ship the uploader v2", "Ship the uploader v3", 1)
	stamp := e.clock.Now().Format(time.RFC3339)
	lines := strings.Split(edited, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "lastUpdated:") {
			lines[i] = "lastUpdated: \"" + stamp + "\""
		}
	}
	if err := os.WriteFile(status, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	r = do(engine.InitiativeRequest{Action: "get"})
	if !strings.Contains(r.Message, "WORKFLOW-STATUS.yaml") || !strings.Contains(r.Message, "v3") || len(r.Warnings) == 0 {
		t.Errorf("sync after a newer status file: %+v", r)
	}
}
