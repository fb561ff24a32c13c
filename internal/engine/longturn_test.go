package engine_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// One long turn (a 15-minute build) refreshes no heartbeat: the Stop hook keeps it, at turn
// ends. A second terminal's session start then took the owner, quiet past the live window, as
// gone: it moved the running task back to pending and took the workflow, while the owner's
// client was still in that session running it, and the second session ran the same task again.
// While the owner's client runs and its session record names the owner's session as the one
// it is in, the owner is live however long its turn: its running task stays, the workflow
// stays its, and the second session is told of the live session. Once that client has exited,
// has /cleared to another session, or is not known (no pid, no record), recovery is as before.
func TestLongTurnNotTakenOver(t *testing.T) {
	t.Parallel()
	const owner, other = "sess-aaaa-1", "sess-bbbb-2"
	live := func(*testing.T) int { return os.Getpid() } // a running client
	for _, tc := range []struct {
		name string
		pid  func(t *testing.T) int // the owner's client; 0: recorded without a pid
		// record is the session the owner's client's record names at the second start
		// ("": none written); recordPID is that record's client when the owner has no pid.
		record    string
		recordPID func(t *testing.T) int
		recovered bool
	}{
		{"owner's client runs in its session", live, owner, nil, false},
		{"owner's client /cleared to another session", live, "sess-cccc-3", nil, true},
		{"owner's client exited", exitedPID, owner, nil, true},
		{"owner's client runs, no session record", live, "", nil, true},
		{"no pid, a running client's record names its session", func(*testing.T) int { return 0 }, owner, live, false},
		{"no pid, no record", func(*testing.T) int { return 0 }, "", nil, true},
	} {
		for _, apply := range []string{"session start", "resume_check"} {
			t.Run(tc.name+"/"+apply, func(t *testing.T) {
				e := newEnv(t)
				pid := tc.pid(t)
				en := e.openAs(owner, pid)
				must(en.Start(engine.StartRequest{Type: "apex", Context: "long turn"}))(t)
				must(en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running"}))(t)
				if tc.record != "" {
					rp := pid
					if tc.recordPID != nil {
						rp = tc.recordPID(t)
					}
					must(0, en.RecordSession(engine.Session{SessionID: owner, PID: rp}))(t)
					if tc.record != owner {
						must(0, en.RecordSession(engine.Session{SessionID: tc.record, PID: rp, Source: "clear"}))(t)
					}
				}
				e.clock.Add(15 * time.Minute) // one turn, no turn end
				res := e.openAs(other, 4243).Resume(engine.ResumeOptions{Apply: true, FromClient: apply == "resume_check"})
				var st workflow.Record
				if err := json.Unmarshal(res.Workflow, &st); err != nil || len(st.Tasks) != 1 || st.Owner == nil {
					t.Fatalf("state after the second start: %+v", st)
				}
				running := st.Tasks[0].Status == workflow.TaskRunning && st.Owner.SessionID == owner
				if running == tc.recovered || containsAny(res.Notices, "t1") != tc.recovered {
					t.Fatalf("recovered = %v, want %v: task %s, owner %s, notices %q", !running, tc.recovered, st.Tasks[0].Status, st.Owner.SessionID, res.Notices)
				}
				told := strings.Contains(strings.Join(res.Warnings, "\n"), "Another live session")
				if told == tc.recovered {
					t.Errorf("told of another live session = %v, want %v: warnings %q", told, !tc.recovered, res.Warnings)
				}
			})
		}
	}
}

// The other paths that took an owner quiet for ten minutes as gone, in one long turn of a
// client that runs in the owner's session: a second terminal's session start archived the
// workflow past its TTL under it (and told its session there was nothing to resume),
// expire_ttl there archived it without a word of the owner, and that terminal's Stop asked its
// agent about the owner's blocking violations, the owner's own Stop's ask. Now the start leaves
// the workflow, expire_ttl says the owner was working in it, and the Stop asks nothing; once
// the owner's client has /cleared to another session, all is as before.
func TestLongTurnOwnerLiveBesideIt(t *testing.T) {
	t.Parallel()
	const owner, other = "sess-aaaa-1", "sess-bbbb-2"
	client := os.Getpid() // a running client
	for _, cleared := range []bool{false, true} {
		t.Run(map[bool]string{false: "in its session", true: "cleared"}[cleared], func(t *testing.T) {
			e := newEnv(t)
			en := e.openAs(owner, client)
			must(en.Start(engine.StartRequest{Type: "apex", Context: "long turn", TTL: "30m"}))(t)
			must(en.SetEnforcement([]engine.Violation{{Code: "V-TEST-03", Severity: "HIGH", Details: "no test"}}))(t)
			must(0, en.RecordSession(engine.Session{SessionID: owner, PID: client}))(t)
			if cleared {
				must(0, en.RecordSession(engine.Session{SessionID: "sess-cccc-3", PID: client, Source: "clear"}))(t)
			}
			e.clock.Add(15 * time.Minute)
			if out := must(e.openAs(other, 4243).Stop(engine.StopInput{SessionID: other}))(t); out.Block == !cleared {
				t.Errorf("the second terminal's Stop asked = %v: %+v", out.Block, out)
			}
			e.clock.Add(20 * time.Minute) // past the TTL, still in the one turn
			res := e.openAs(other, 4243).Resume(engine.ResumeOptions{Apply: true})
			if kept := res.WorkflowID != ""; kept == cleared {
				t.Errorf("the workflow kept at the second start = %v: told %q, warnings %q", kept, res.SystemMessage, res.Warnings)
			}
			if cleared {
				return // archived by the start, as the owner's session has ended
			}
			warned := must(e.openAs(other, 4243).ExpireTTL(false))(t)
			if !warned.Changed || !strings.Contains(strings.Join(warned.Warnings, "\n"), "Another live session was working in") {
				t.Errorf("expire_ttl beside the owner's long turn: %+v", warned)
			}
		})
	}
}

// A change from a second terminal during the owner's long turn (its client in its session,
// quiet past the live window) crosses the owner's work as one within the window does: its
// result warned of the owner only while the heartbeat was under ten minutes old, so the second
// session, claiming the task the owner is running or moving the workflow under it, was told
// nothing. It now warns; once the owner's client has /cleared to another session, it does not.
func TestLongTurnOwnerWarnedOfOnChange(t *testing.T) {
	t.Parallel()
	const owner, other = "sess-aaaa-1", "sess-bbbb-2"
	client := os.Getpid() // a running client
	for _, cleared := range []bool{false, true} {
		for _, change := range []string{"claim its running task", "set a variable", "move the workflow"} {
			t.Run(map[bool]string{false: "in its session", true: "cleared"}[cleared]+"/"+change, func(t *testing.T) {
				e := newEnv(t)
				en := e.openAs(owner, client)
				must(en.Start(engine.StartRequest{Type: "apex", Context: "long turn"}))(t)
				must(en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running"}))(t)
				must(0, en.RecordSession(engine.Session{SessionID: owner, PID: client}))(t)
				if cleared {
					must(0, en.RecordSession(engine.Session{SessionID: "sess-cccc-3", PID: client, Source: "clear"}))(t)
				}
				e.clock.Add(15 * time.Minute)
				b := e.openAs(other, 4243)
				var res *engine.Result
				switch change {
				case "claim its running task":
					res = must(b.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running"}))(t)
				case "set a variable":
					res = must(b.SetVars(map[string]string{"WF_K": "v"}))(t)
				default:
					res = must(b.Transition(engine.TransitionRequest{To: "plan"}))(t)
				}
				if warned := strings.Contains(strings.Join(res.Warnings, "\n"), "Another live session last changed this workflow 15m ago"); warned == cleared {
					t.Errorf("warned of the owner = %v: %+v", warned, res.Warnings)
				}
			})
		}
	}
}
