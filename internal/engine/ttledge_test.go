package engine_test

import (
	"runtime"

	"github.com/cairn-dev/cairn/internal/yamldoc"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// At exactly the end of its TTL a workflow is still live (workflow.Expired: now > last +
// ttl), and every part of the session-start report agrees; a second later it is archived and
// the report says it ended, nothing else.
func TestTTLEdgeReport(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "edge", TTL: "2h"}))(t)
	e.clock.Add(2 * time.Hour)
	res := e.open("s2").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
	if res.WorkflowID == "" || !strings.Contains(res.Report, "last change 2h ago") || !strings.Contains(res.Report, "\nNext: Continue phase analyze") ||
		strings.Contains(res.Report, "expired") || strings.Contains(res.SystemMessage, "expired") {
		t.Fatalf("at exactly its TTL: %q / %q, want it live and resumed", res.Report, res.SystemMessage)
	}
	e.clock.Add(time.Second)
	res = e.open("s2").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
	if res.WorkflowID != "" || !strings.HasPrefix(res.Report, "Cairn: no active workflow, nothing to resume; the last one ended (\"Expired APEX") ||
		!strings.Contains(res.SystemMessage, "expired after 2h without a change") {
		t.Errorf("a second past its TTL: %q / %q, want it archived and said once", res.Report, res.SystemMessage)
	}
}

// A session's write that lands while another session expires the workflow (read past its
// TTL, then the write, then the expiry's conditional write) is not lost, and the expiry does
// not give up on it: it reads the workflow again and goes on with that. A move wins: nothing
// is archived; the session start's report is the workflow as the move left it, resumed, not
// the copy read before it with an expiry that did not happen and a step (expire_ttl) that
// would be refused, and expire_ttl says it has not expired, not that archiving failed. A
// heartbeat (the owner's Stop hook) is no change: the workflow expires.
func TestTTLExpiryRacesAWrite(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		write   func(s1 *engine.Engine) error
		expired bool
	}{
		{"a move", func(s1 *engine.Engine) error {
			_, err := s1.Transition(engine.TransitionRequest{To: "plan"})
			return err
		}, false},
		{"a heartbeat", func(s1 *engine.Engine) error {
			_, err := s1.Stop(engine.StopInput{SessionID: "s1"})
			return err
		}, true},
	} {
		for _, by := range []string{"session start", "expire_ttl"} {
			t.Run(tc.name+" during "+by, func(t *testing.T) {
				e := newEnv(t)
				must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "racing", TTL: "30m"}))(t)
				e.clock.Add(31 * time.Minute)
				s1 := e.open("s1")
				wrote := false
				en, err := engine.Open(engine.Config{Getenv: func(k string) string { return e.vars[k] }, WorkDir: e.project, SessionID: "s2", PID: 4242,
					Actor: "test", YAML: yamldoc.Codec{}, Now: func() time.Time {
						// The expiry asks the time after reading the workflow and before its
						// write: s1's write lands there.
						var pcs [16]uintptr
						frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs[:])])
						for f, more := frames.Next(); more && !wrote; f, more = frames.Next() {
							if strings.HasSuffix(f.Function, "engine.(*Engine).expire") {
								wrote = true
								e.clock.Add(time.Second) // the write comes after the read, in time too
								if err := tc.write(s1); err != nil {
									t.Fatal(err)
								}
							}
						}
						return e.clock.Now()
					}})
				if err != nil {
					t.Fatal(err)
				}
				defer en.Close()
				const archived = "expired after 30m without a change and was archived"
				if by == "expire_ttl" {
					res, err := en.ExpireTTL(false)
					switch {
					case !wrote:
						t.Fatal("the expiry did not run")
					case err != nil:
						t.Errorf("expire_ttl: %v", err)
					case tc.expired && (!res.Changed || !strings.Contains(res.Message, archived)):
						t.Errorf("expire_ttl overtaken by a heartbeat: %+v, want it archived", res)
					case !tc.expired && (res.Changed || !strings.Contains(res.Message, "has not expired; it expires at 2026-11-22T11:01:01Z")):
						t.Errorf("expire_ttl overtaken by a move: %+v, want it not expired", res)
					}
				} else {
					res := en.Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
					switch {
					case !wrote:
						t.Fatal("the expiry did not run")
					case len(res.Warnings) > 0:
						t.Errorf("warnings: %q", res.Warnings)
					case tc.expired && (res.WorkflowID != "" || !strings.Contains(res.SystemMessage, archived)):
						t.Errorf("an expiry overtaken by a heartbeat: %q / %q, want it archived", res.Report, res.SystemMessage)
					case !tc.expired && (res.Phase != "plan" || strings.Contains(res.Report, "expire") || !strings.Contains(res.Next, "phase plan")):
						t.Errorf("resume after the expiry lost to a move: phase %s\n%s", res.Phase, res.Report)
					}
				}
				if s := must(e.open("s1").Snapshot())(t); !tc.expired && s.Phase != "plan" {
					t.Errorf("the workflow is at %q, want plan, still active", s.Phase)
				}
			})
		}
	}
}

// The TTL counts only real changes, so a session that works past it without changing the
// workflow would lose it at its own compaction, or at its own resume_check. The SessionStart
// after the owning session's compaction resumes it (not expired, no expiry line, the report's
// usual next step), and the anchor its PreCompact adds to the compaction request does not send
// it to expire_ttl; so does resume_check from a client of the owner's session (cairn-mcp under the
// pid of a Claude Code client, acting for the owner's session: the same session id is the live
// session in whichever client, as at its compaction). Every other start and every other
// session expires it; expire_ttl from the owner's client still does, and
// the owner's next ordinary start still does: the TTL is not reset.
func TestTTLOwnerMidWorkKeepsTheWorkflow(t *testing.T) {
	t.Parallel()
	compaction, client := engine.ResumeOptions{Compaction: true}, engine.ResumeOptions{FromClient: true}
	for _, tc := range []struct {
		name     string
		ownerPID int // the client the owner started it in
		session  string
		pid      int
		opt      engine.ResumeOptions
		kept     bool
	}{
		{"the owner's compaction", 4242, "s1", 4242, compaction, true},
		{"the owner's resume", 4242, "s1", 4242, engine.ResumeOptions{}, false},
		{"another session's compaction", 4242, "s2", 4242, compaction, false},
		{"a compaction without a session id", 4242, "", 4242, compaction, false},
		{"resume_check from the owner's client", 4242, "s1", 4242, client, true},
		{"the owner's session compacting in another client", 4242, "s1", 5151, compaction, true},
		{"resume_check from another client of the owner's session", 4242, "s1", 5151, client, true},
		{"resume_check from the owner's client after /clear", 4242, "s2", 4242, client, false},
		{"resume_check from the owner's session, no client known", 0, "s1", 0, client, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			must(e.openAs("s1", tc.ownerPID).Start(engine.StartRequest{Type: "apex", Context: "long work", TTL: "2h"}))(t)
			e.clock.Add(3 * time.Hour)
			if tc.opt.Compaction {
				// The anchor PreCompact adds to the compaction request agrees with the start
				// that follows it: none when that start archives the workflow.
				a, _ := e.openAs(tc.session, tc.pid).CompactAnchor()
				if tc.kept != strings.Contains(a, "; next: Continue phase analyze") || !tc.kept && a != "" {
					t.Errorf("compaction anchor %q, want it resumed: %v", a, tc.kept)
				}
			}
			opt := tc.opt
			opt.Apply, opt.ReportOnly = true, opt.Compaction // resume_check has the whole record
			caller := e.openAs(tc.session, tc.pid)
			res := caller.Resume(opt)
			if !tc.kept {
				if res.WorkflowID != "" || !strings.Contains(res.SystemMessage, "expired after 2h without a change") {
					t.Fatalf("%q / %q, want it expired and archived", res.Report, res.SystemMessage)
				}
				return
			}
			if res.WorkflowID == "" || strings.Contains(res.Report, "expire") || strings.Contains(res.SystemMessage, "expire") ||
				!strings.HasPrefix(res.Next, "Continue phase analyze") || len(res.Warnings) > 0 {
				t.Fatalf("%q / %q (next %q, warnings %q), want it resumed as it stands", res.Report, res.SystemMessage, res.Next, res.Warnings)
			}
			if s := must(e.open("s1").Snapshot())(t); s.WorkflowID == "" || s.Phase != "analyze" {
				t.Fatalf("after the read the active workflow is %q at %q, want it at analyze", s.WorkflowID, s.Phase)
			}
			if tc.opt.FromClient {
				if r := must(caller.ExpireTTL(false))(t); !r.Changed || !strings.Contains(r.Message, "expired after 2h without a change") {
					t.Errorf("expire_ttl from the owner's client: %q, want it expired: the read is no change", r.Message)
				}
				return
			}
			res = e.open("s1").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
			if res.WorkflowID != "" || !strings.Contains(res.SystemMessage, "expired after 2h without a change") {
				t.Errorf("the owner's next start: %q / %q, want it expired: the compaction is no change", res.Report, res.SystemMessage)
			}
		})
	}
}
