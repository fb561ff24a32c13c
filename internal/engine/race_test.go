package engine_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// TestMain lets the test binary act as a second Cairn process.
func TestMain(m *testing.M) {
	switch os.Getenv("CAIRN_ENGINE_CHILD") {
	case "cas":
		os.Exit(casChild())
	case "kill":
		os.Exit(killWriter())
	}
	os.Exit(m.Run())
}

// casChild waits for the go file, then tries analyze->plan as a compare-and-swap and prints
// "won" or "lost: <error>".
func casChild() int {
	dir := os.Getenv("CLAUDE_PROJECT_DIR")
	en, err := engine.Open(engine.Config{WorkDir: dir, SessionID: os.Getenv("CHILD_SESSION"), Actor: "child"})
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := os.Stat(os.Getenv("CHILD_GO")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			fmt.Println("no go signal")
			return 1
		}
		time.Sleep(time.Millisecond)
	}
	_, err = en.Transition(engine.TransitionRequest{To: "plan", From: "analyze"})
	var ce *workflow.ConflictError
	switch {
	case err == nil:
		fmt.Println("won")
	case errors.As(err, &ce):
		fmt.Println("lost:", err)
	default:
		fmt.Println("error:", err)
		return 1
	}
	return 0
}

// Two processes race the same compare-and-swap transition: exactly one wins, the other gets
// the conflict error naming the phase it found, and the journal holds exactly one move.
func TestTwoProcessesRaceACompareAndSwap(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	for round := range 5 {
		e := newEnv(t)
		en := e.open("parent")
		e.clock.t = time.Now().UTC()
		must(en.Start(engine.StartRequest{Type: "apex", Context: "race"}))(t)
		goFile := t.TempDir() + "/go"
		var cmds []*exec.Cmd
		var outs []*strings.Builder
		for i := range 2 {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "CAIRN_ENGINE_CHILD=cas", "CLAUDE_PROJECT_DIR="+e.project,
				"HOME="+e.home, "CHILD_GO="+goFile, fmt.Sprintf("CHILD_SESSION=child-%d", i))
			var out strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds, outs = append(cmds, cmd), append(outs, &out)
		}
		time.Sleep(50 * time.Millisecond)
		if err := os.WriteFile(goFile, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		won, lost := 0, 0
		for i, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Fatalf("round %d child %d: %v\n%s", round, i, err, outs[i])
			}
			switch o := outs[i].String(); {
			case strings.HasPrefix(o, "won"):
				won++
			case strings.HasPrefix(o, "lost:") && strings.Contains(o, "expected phase analyze, found plan"):
				lost++
			default:
				t.Fatalf("round %d child %d said %q", round, i, o)
			}
		}
		if won != 1 || lost != 1 {
			t.Fatalf("round %d: %d won, %d lost", round, won, lost)
		}
		list := must(en.List())(t)
		hist := must(en.History(list[0].WorkflowID))(t)
		moves := 0
		for _, h := range hist {
			if h.Kind == "transition" {
				moves++
				if !strings.Contains(string(h.Detail), `"session_id":"child-`) {
					t.Errorf("the journal does not say which process moved: %s", h.Detail)
				}
			}
		}
		if moves != 1 || len(hist) != 2 {
			t.Fatalf("round %d: journal has %d records, %d transitions; want start + one move", round, len(hist), moves)
		}
	}
}
