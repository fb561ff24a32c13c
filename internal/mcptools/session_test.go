package mcptools_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/mcptools"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// sessionCalls is a whole workflow as an agent drives it: 47 tool calls from the first
// resume_check to completion (issue 14's scripted session).
var sessionCalls = []struct{ tool, args string }{
	{"resume_check", `{}`},
	{"start_workflow", `{"type":"apex","context":"add retries to the uploader","scope":"standard"}`},
	{"set_vars", `{"vars":{"PLAN_PATH":"docs/plan.md","WF_TARGET":"uploader"}}`},
	{"update_task", `{"id":"a1","status":"running","note":"read the uploader"}`},
	{"update_task", `{"id":"a1","status":"done","output":"docs/analysis.md"}`},
	{"update_task", `{"id":"a2","status":"running","note":"find the failure modes"}`},
	{"update_task", `{"id":"a2","status":"done"}`},
	{"save_checkpoint", `{"name":"analyze-notes","data":{"files":["uploader.go","retry.go"],"risks":2}}`},
	{"append_log", `{"name":"decisions","entry":{"phase":"analyze","decision":"retry with backoff"}}`},
	{"transition", `{"to":"plan","from":"analyze","outputs":["docs/analysis.md"],"note":"analysis done"}`},
	{"update_task", `{"id":"p1","status":"running","note":"write the plan"}`},
	{"update_task", `{"id":"p1","status":"done","output":"docs/plan.md"}`},
	{"save_checkpoint", `{"name":"plan-progress","data":{"steps":4}}`},
	{"transition", `{"to":"implement","from":"plan","outputs":["docs/plan.md"],"note":"plan approved"}`},
	{"update_task", `{"id":"i1","status":"running"}`},
	{"update_task", `{"id":"i1","status":"done"}`},
	{"update_task", `{"id":"i2","status":"running"}`},
	{"update_task", `{"id":"i2","status":"done"}`},
	{"update_task", `{"id":"i3","status":"running"}`},
	{"update_task", `{"id":"i3","status":"failed","note":"flaky network test"}`},
	{"update_task", `{"id":"i3","status":"running","note":"second try"}`},
	{"update_task", `{"id":"i3","status":"done"}`},
	{"update_task", `{"id":"i4","status":"running"}`},
	{"update_task", `{"id":"i4","status":"done"}`},
	{"set_vars", `{"vars":{"WF_BRANCH":"retries"}}`},
	{"append_log", `{"name":"benchmarks","entry":{"ms":12}}`},
	{"append_log", `{"name":"benchmarks","entry":{"ms":11}}`},
	{"save_checkpoint", `{"name":"implement-progress","data":{"done":["i1","i2","i3","i4"]}}`},
	{"list_checkpoints", `{}`},
	{"load_checkpoint", `{"name":"plan-progress"}`},
	{"get_vars", `{"keys":["PLAN_PATH"]}`},
	{"resume_check", `{}`},
	{"transition", `{"to":"review","from":"implement","note":"implementation done"}`},
	{"update_task", `{"id":"r1","status":"running"}`},
	{"set_enforcement", `{"violations":[{"code":"V-TEST-03","severity":"HIGH","details":"retry path has no test"}]}`},
	{"transition", `{"to":"implement","from":"review","note":"add the missing test"}`},
	{"update_task", `{"id":"i5","status":"running","note":"test the retry path"}`},
	{"update_task", `{"id":"i5","status":"done"}`},
	{"transition", `{"to":"review","from":"implement"}`},
	{"set_enforcement", `{"violations":[]}`},
	{"update_task", `{"id":"r1","status":"done"}`},
	{"append_log", `{"name":"decisions","entry":{"phase":"review","decision":"ship"}}`},
	{"record_learning", `{"title":"Uploader retries","body":"The uploader retries with backoff; the network test is flaky."}`},
	{"get_vars", `{}`},
	{"resume_check", `{}`},
	{"complete_workflow", `{"outcome":"retries shipped with tests"}`},
	{"resume_check", `{}`},
}

// writeTools are the tools whose result says what changed.
var writeTools = map[string]bool{"start_workflow": true, "transition": true, "complete_workflow": true,
	"update_task": true, "set_enforcement": true, "expire_ttl": true, "save_checkpoint": true,
	"set_vars": true, "append_log": true, "record_learning": true}

// TestScriptedSessionCost measures what a whole session's tool results cost the model's
// context: the text and the structured content of every result, as the client receives them.
// Issue 14's targets: at most 15,000 characters in all, and a write tool's result at most 600
// characters when it carries no warning.
func TestScriptedSessionCost(t *testing.T) {
	if len(sessionCalls) != 47 {
		t.Fatalf("the scripted session has %d calls, want 47", len(sessionCalls))
	}
	p, c := approvingServer(t)
	for _, f := range []string{"docs/analysis.md", "docs/plan.md"} {
		if err := os.MkdirAll(filepath.Join(p.root, filepath.Dir(f)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p.root, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	total := 0
	for i, call := range sessionCalls {
		res := mustOK(t, c, call.tool, call.args)
		sc, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		n := len([]rune(text(res))) + len([]rune(string(sc)))
		total += n
		s := structured(t, res)
		if _, whole := s["workflow"]; whole {
			t.Errorf("call %d (%s) echoes the whole record", i+1, call.tool)
		}
		if _, warned := s["warnings"]; writeTools[call.tool] && !warned && n > 600 {
			t.Errorf("call %d (%s) returned %d characters, want at most 600:\n%s\n%s", i+1, call.tool, n, text(res), sc)
		}
		if call.tool == "resume_check" && strings.Contains(text(res), "resume_check") {
			t.Errorf("resume_check tells the model to call itself:\n%s", text(res))
		}
		if testing.Verbose() {
			t.Logf("%2d %-17s %5d  %s", i+1, call.tool, n, strings.SplitN(text(res), "\n", 2)[0])
		}
	}
	t.Logf("47 calls returned %d characters", total)
	if total > 15000 {
		t.Errorf("the session's tool results total %d characters, want at most 15,000", total)
	}
}

// person answers the server's elicitation requests as a person at the client would.
type person struct {
	action mcp.ElicitationResponseAction
	yes    bool
	note   string   // what the person writes in the form's note; "looks right" when empty
	asked  []string // the messages shown
	while  func()   // runs while the person is being asked, as another process might
	away   bool     // never answers: the question waits until the server gives up
}

func (p *person) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	p.asked = append(p.asked, req.Params.Message)
	if p.while != nil {
		p.while()
	}
	if p.away {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(10 * time.Second):
			return nil, errors.New("the server never gave up")
		}
	}
	res := &mcp.ElicitationResult{}
	res.Action = p.action
	if p.action == mcp.ElicitationResponseActionAccept {
		res.Content = map[string]any{"approve": p.yes, "note": cmp.Or(p.note, "looks right")}
	}
	return res, nil
}

// elicitingServer is a real server whose client declares elicitation and lets who answer.
func elicitingServer(t testing.TB, who *person) (*project, *client.Client) {
	t.Helper()
	return elicitingServerIn(t, newProject(t), who)
}

// elicitingServerIn is elicitingServer on a project the caller prepared: the server loads the
// workflow definitions when it opens the engine, in the background, as soon as it starts.
func elicitingServerIn(t testing.TB, p *project, who *person) (*project, *client.Client) {
	t.Helper()
	srv := mcptools.New(mcptools.Options{
		Open: mcptools.OpenEngine, Getenv: p.getenv(p.session), WorkDir: p.root,
		PPID: 77, Log: quietLog(), NoWatch: true,
	})
	t.Cleanup(func() { srv.Close(context.Background()) })
	return p, connectEliciting(t, srv, who)
}

// connectEliciting connects to srv a client that declares elicitation and lets who answer.
func connectEliciting(t testing.TB, srv *mcptools.Server, who *person) *client.Client {
	t.Helper()
	ctx := testCtx(t)
	c := client.NewClient(transport.NewInProcessTransportWithOptions(srv.MCP(), transport.WithElicitationHandler(who)),
		client.WithProtocolVersion(protocol), client.WithElicitationHandler(who))
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = protocol
	req.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatal(err)
	}
	return c
}

// approvingServer is a real server whose client is a person who approves.
func approvingServer(t testing.TB) (*project, *client.Client) {
	return elicitingServer(t, &person{action: mcp.ElicitationResponseActionAccept, yes: true})
}

// waitingInPlan is a real server with an apex workflow waiting in plan, its approval phase,
// whose client lets who answer (nil: a client without elicitation).
func waitingInPlan(t testing.TB, who *person) (*project, *client.Client) {
	t.Helper()
	var p *project
	var c *client.Client
	if who != nil {
		p, c = elicitingServer(t, who)
	} else {
		p, c = realServer(t)
	}
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"gate"}`)
	mustOK(t, c, "transition", `{"to":"plan"}`)
	return p, c
}

// TestApprovalGate: leaving an approval phase needs a person's yes. A client whose person
// accepts moves on, with the approval recorded; one that declines, cancels (claude -p) or
// cannot ask stays, with one line saying how a person approves.
func TestApprovalGate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		who   *person // nil: a client without elicitation
		moves bool
		err   string
	}{
		{"accept", &person{action: mcp.ElicitationResponseActionAccept, yes: true}, true, ""},
		// The person's note on a no is what to change: the agent is given it, not sent to ask.
		{"accept-but-no", &person{action: mcp.ElicitationResponseActionAccept, yes: false, note: "split step 3\nfirst"}, false, "the user did not approve leaving phase plan and wrote: “split step 3 first”; stay in it: do what they ask, and ask again once it is done"},
		// A note with a secret's shape is not repeated: the agent asks what to change.
		{"no-with-secret-note", &person{action: mcp.ElicitationResponseActionAccept, yes: false, note: "use ghp_" + strings.Repeat("A1b2C3d4E5", 4)[:36]}, false, "the user did not approve leaving phase plan; stay in it: ask the user what to change, and ask again once it is done"},
		{"decline", &person{action: mcp.ElicitationResponseActionDecline}, false, "the user did not approve leaving phase plan; stay in it: ask the user what to change, and ask again once it is done"},
		{"cancel-as-claude-p-does", &person{action: mcp.ElicitationResponseActionCancel}, false, "the prompt was cancelled (claude -p cancels every prompt): ask the user to run `cairn approve [NOTE]` in the project, in a terminal of their own (not through Claude Code, where it is refused), then call transition again"},
		{"no-elicitation", nil, false, "no person could be asked here: ask the user to run `cairn approve [NOTE]` in the project, in a terminal of their own (not through Claude Code, where it is refused), then call transition again"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, c := waitingInPlan(t, tc.who)
			look := p.other(t, "observer")
			if !tc.moves {
				res := mustFail(t, c, "transition", `{"to":"implement"}`, tc.err)
				if strings.Contains(text(res), "\n") {
					t.Errorf("refusal is more than one line: %q", text(res))
				}
				if snap := snapshot(t, look); snap.Phase != "plan" {
					t.Errorf("refused move left the workflow at %s", snap.Phase)
				}
				// A person's command approves; the same move then goes through.
				if _, err := look.Approve("by hand"); err != nil {
					t.Fatal(err)
				}
			}
			mustOK(t, c, "transition", `{"to":"implement"}`)
			r := look.Resume(engine.ResumeOptions{})
			want := "by a person, with cairn approve: by hand"
			if tc.moves {
				want = "by a person, asked in Claude Code: looks right"
				if len(tc.who.asked) != 1 || !strings.Contains(tc.who.asked[0], "phase plan") {
					t.Errorf("the person was asked %q", tc.who.asked)
				}
			}
			if len(r.Approvals) != 1 || !strings.HasSuffix(r.Approvals[0], want) {
				t.Fatalf("approvals on record %q, want one ending %q", r.Approvals, want)
			}
			// The details view's text says it too, as its structured content does.
			if got := text(mustOK(t, c, "resume_check", `{}`)); !strings.Contains(got, "\napproval: "+r.Approvals[0]+"\n") {
				t.Errorf("resume_check does not give the approval %q:\n%s", r.Approvals[0], got)
			}
		})
	}
}

// TestApprovalAnswersTheGateItWasAskedFor: a person's yes is for leaving the gate they were
// asked about. When another process moves the workflow on to another gate while they are
// asked, the yes must not carry the workflow out of that one, by a move or by completing it.
func TestApprovalAnswersTheGateItWasAskedFor(t *testing.T) {
	for _, call := range []struct{ tool, args string }{
		{"transition", `{"to":"ship"}`},
		{"complete_workflow", `{"outcome":"shipped"}`},
	} {
		t.Run(call.tool, func(t *testing.T) {
			who := &person{action: mcp.ElicitationResponseActionAccept, yes: true}
			p := newProject(t)
			dir := filepath.Join(p.root, ".claude", "workflows")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			def := "---\nname: twogates\nphases: [draft, vet, ship]\ntransitions: {draft: [ship, vet], vet: [ship]}\napprovals: [draft, vet]\nterminal: [ship]\n---\nTwo gates.\n"
			if err := os.WriteFile(filepath.Join(dir, "twogates.md"), []byte(def), 0o600); err != nil {
				t.Fatal(err)
			}
			_, c := elicitingServerIn(t, p, who)
			mustOK(t, c, "start_workflow", `{"type":"twogates","context":"gates"}`)
			look := p.other(t, "observer")
			who.while = func() {
				// A person approves draft by hand and another process moves on to vet, the
				// second gate, while this person is still being asked about draft.
				if _, err := look.Approve("by hand"); err != nil {
					t.Error(err)
				}
				if _, err := look.Transition(engine.TransitionRequest{To: "vet"}); err != nil {
					t.Error(err)
				}
			}
			res := callRaw(t, c, call.tool, call.args)
			if snap := snapshot(t, look); snap.Phase != "vet" {
				t.Fatalf("the yes for leaving draft moved the workflow out of vet (phase %q, result %q)", snap.Phase, text(res))
			}
			if !res.IsError || !strings.Contains(text(res), "vet") {
				t.Errorf("%s after the workflow moved to another gate = %q, want it refused, naming where it is", call.tool, text(res))
			}
		})
	}
}

// TestApprovalNoteIsBounded: the person's note comes from the client's form, which may not
// hold to the schema's maxLength or know Cairn's rules. A note over 500 characters is cut
// (it is shown in every resume report); a note holding a secret records nothing and says
// what happened and how to go on, without the secret and without blaming the agent.
func TestApprovalNoteIsBounded(t *testing.T) {
	long := strings.Repeat("fine by me ", 10000)
	p, c := elicitingServer(t, &person{action: mcp.ElicitationResponseActionAccept, yes: true, note: long})
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"gate"}`)
	mustOK(t, c, "transition", `{"to":"plan"}`)
	mustOK(t, c, "transition", `{"to":"implement"}`)
	r := p.other(t, "observer").Resume(engine.ResumeOptions{})
	if len(r.Approvals) != 1 || !strings.Contains(r.Approvals[0], "fine by me") {
		t.Fatalf("approvals on record %.300q", r.Approvals)
	}
	if n := len([]rune(r.Approvals[0])); n > 700 {
		t.Errorf("the approval on record is %d characters; the note is not cut to 500", n)
	}

	sh := secrettest.Shapes()[3]
	p, c = elicitingServer(t, &person{action: mcp.ElicitationResponseActionAccept, yes: true, note: "ok, the key is " + sh.Text})
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"gate"}`)
	mustOK(t, c, "transition", `{"to":"plan"}`)
	res := mustFail(t, c, "transition", `{"to":"implement"}`, "nothing was changed", "call transition again",
		"secret found ("+sh.Rule+") in the note they wrote: secrets are not stored") // the secrets package's words
	if holdsSecret(text(res), sh.Core) || strings.Contains(text(res), "environment variable") {
		t.Errorf("the refusal quotes the secret or tells the agent how to keep one: %s", text(res))
	}
	if snap := snapshot(t, p.other(t, "observer")); snap.Phase != "plan" {
		t.Errorf("the workflow moved to %s", snap.Phase)
	}
	if f := fileHolding(p.root, sh.Core); f != "" {
		t.Errorf("the secret is stored in %s", f)
	}
}

// The person's note is scanned whole, then cut to 500 characters: a key glued to more text
// ("sk_live_...-x", no secret) cut right after its body is one, and the store refused the
// move the person approved, as a secret the agent sent. The cut now ends before that word.
func TestApprovalNoteCutStoresNoSecret(t *testing.T) {
	pad := strings.Repeat("fine by me ", 40)
	key := secrettest.GluedKey(t, 500-len(pad)) // its body ends at the cut
	p, c := elicitingServer(t, &person{action: mcp.ElicitationResponseActionAccept, yes: true, note: pad + key + " more"})
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"gate"}`)
	mustOK(t, c, "transition", `{"to":"plan"}`)
	mustOK(t, c, "transition", `{"to":"implement"}`)
	if f := fileHolding(p.root, key[:len(key)-len("-x")]); f != "" {
		t.Errorf("the cut key is stored in %s", f)
	}
	if r := p.other(t, "observer").Resume(engine.ResumeOptions{}); len(r.Approvals) != 1 || !strings.Contains(r.Approvals[0], "fine by me") {
		t.Errorf("approvals on record %.300q", r.Approvals)
	}
}

// longDefinition has twelve phases in a line, so that a workflow can have ten behind it.
const longDefinition = `---
name: long
description: Twelve steps.
phases: [p01, p02, p03, p04, p05, p06, p07, p08, p09, p10, p11, p12]
transitions:
  p01: [p02]
  p02: [p03]
  p03: [p04]
  p04: [p05]
  p05: [p06]
  p06: [p07]
  p07: [p08]
  p08: [p09]
  p09: [p10]
  p10: [p11]
  p11: [p12]
terminal: [p12]
---
Twelve steps.
`

// TestResumeCheckLongWorkflow: resume_check on a long workflow (10 phases done, 20 tasks, 3
// warnings) stays within 2,500 characters, text and structured content together, and says
// each warning once.
func TestResumeCheckLongWorkflow(t *testing.T) {
	p := newProject(t)
	dir := filepath.Join(p.root, ".claude", "workflows")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "long.md"), []byte(longDefinition), 0o600); err != nil {
		t.Fatal(err)
	}
	// A definition that does not load: the third warning.
	if err := os.WriteFile(filepath.Join(dir, "broken.md"), []byte("---\nname: broken\nphases: [a, [b\n---\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, c := startServer(t, mcptools.Options{
		Open: mcptools.OpenEngine, Getenv: p.getenv(p.session), WorkDir: p.root,
		PPID: 77, Log: quietLog(), NoWatch: true,
	})
	mustOK(t, c, "start_workflow", `{"type":"long","context":"a long piece of work with many steps in it"}`)
	for i := 2; i <= 11; i++ {
		// Each phase names an output that is not there: the missing-outputs warning.
		mustOK(t, c, "transition", fmt.Sprintf(`{"to":"p%02d","outputs":["docs/step-%02d.md"]}`, i, i-1))
	}
	for i := 1; i <= 20; i++ {
		status := "done"
		if i%7 == 0 {
			status = "failed"
		}
		mustOK(t, c, "update_task", fmt.Sprintf(`{"id":"task-%02d","status":"running"}`, i))
		mustOK(t, c, "update_task", fmt.Sprintf(`{"id":"task-%02d","status":%q}`, i, status))
	}
	mustOK(t, c, "save_checkpoint", `{"name":"long-progress","data":{"at":"p11"}}`)
	mustOK(t, c, "set_enforcement", `{"violations":[{"code":"V-DOC","severity":"medium","details":"the steps are not documented"}]}`)
	// A second session holds it: the ownership warning.
	other := p.other(t, "sess-2")
	if _, err := other.SetVars(map[string]string{"WF_X": "1"}); err != nil {
		t.Fatal(err)
	}
	// The next session's first call.
	_, next := startServer(t, mcptools.Options{
		Open: mcptools.OpenEngine, Getenv: p.getenv(p.session), WorkDir: p.root,
		PPID: 78, Log: quietLog(), NoWatch: true,
	})
	res := mustOK(t, next, "resume_check", `{}`)
	sc, _ := json.Marshal(res.StructuredContent)
	n := len([]rune(text(res))) + len([]rune(string(sc)))
	s := structured(t, res)
	ws, _ := s["warnings"].([]any)
	if len(s["completed"].([]any)) != 10 || len(ws) != 3 || s["failed_tasks"] == nil || s["checkpoints"] == nil {
		t.Fatalf("not the long workflow meant: %s", sc)
	}
	for _, w := range ws {
		// Compared on a prefix: the text escapes Markdown ("]" becomes "\]").
		if c := strings.Count(text(res), w.(string)[:30]); c != 1 {
			t.Errorf("warning %q is said %d times in the text", w, c)
		}
	}
	for _, want := range []string{"checkpoints: long-progress", "failed: task-07, task-14", "next phases: p12", "Next: "} {
		if !strings.Contains(text(res), want) {
			t.Errorf("the details view lacks %q", want)
		}
	}
	t.Logf("resume_check: %d characters (text %d)\n%s", n, len([]rune(text(res))), text(res))
	if n > 2500 {
		t.Errorf("resume_check returned %d characters, want at most 2,500", n)
	}
}

// TestApprovalGateOverStdio: the binary asks the person over stdio (its own transport sends
// elicitation/create and routes the answer back); an accepting client moves on, a declining
// one does not.
func TestApprovalGateOverStdio(t *testing.T) {
	for _, tc := range []struct {
		name  string
		who   *person
		moves bool
	}{
		{"accept", &person{action: mcp.ElicitationResponseActionAccept, yes: true}, true},
		{"decline", &person{action: mcp.ElicitationResponseActionDecline}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t)
			c := stdioClient(t, p, protocol, client.WithElicitationHandler(tc.who))
			mustOK(t, c, "start_workflow", `{"type":"apex","context":"gate over stdio"}`)
			mustOK(t, c, "transition", `{"to":"plan"}`)
			if tc.moves {
				res := mustOK(t, c, "transition", `{"to":"implement"}`)
				if structured(t, res)["phase"] != "implement" {
					t.Errorf("after the approval: %s", text(res))
				}
			} else {
				mustFail(t, c, "transition", `{"to":"implement"}`, "the user did not approve leaving phase plan")
			}
			if len(tc.who.asked) != 1 || !strings.Contains(tc.who.asked[0], "wants to move on to implement") {
				t.Errorf("the person was asked %q", tc.who.asked)
			}
			want := "plan"
			if tc.moves {
				want = "implement"
			}
			if snap := snapshot(t, p.other(t, "observer")); snap.Phase != want {
				t.Errorf("the workflow is at %s, want %s", snap.Phase, want)
			}
		})
	}
}

// TestApprovalUnanswered: a person who was asked but did not answer in time is not the same as
// a session where nobody can be asked; the agent is told which, and that asking again works.
// The wait is said as every age is ("15m"), not as Go writes a duration ("15m0s").
func TestApprovalUnanswered(t *testing.T) {
	defer mcptools.SetApprovalWait(1500 * time.Millisecond)()
	p, c := elicitingServer(t, &person{away: true})
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"nobody answers"}`)
	mustOK(t, c, "transition", `{"to":"plan"}`)
	res := mustFail(t, c, "transition", `{"to":"implement"}`, "did not answer within 1s,", "call transition again", "nothing was changed", "in a terminal of their own")
	if strings.Contains(text(res), "no person could be asked") {
		t.Errorf("the agent is told nobody can be asked, though the person was: %s", text(res))
	}
	if snap := snapshot(t, p.other(t, "observer")); snap.Phase != "plan" {
		t.Errorf("the workflow is at %s, want plan", snap.Phase)
	}
}

// TestOtherCallsRunWhileThePersonIsAsked: a transition waiting for the person's answer (up to
// 15 minutes) must not hold every other call up: reads and writes go on meanwhile, and the
// approved move is still made from the approval phase only.
func TestOtherCallsRunWhileThePersonIsAsked(t *testing.T) {
	asked, answer := make(chan struct{}), make(chan struct{})
	who := &person{action: mcp.ElicitationResponseActionAccept, yes: true, while: func() {
		close(asked)
		<-answer
	}}
	var once sync.Once
	release := func() { once.Do(func() { close(answer) }) }
	defer release() // before the server's cleanup, which waits for the transition
	p, c := elicitingServer(t, who)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"others go on"}`)
	mustOK(t, c, "transition", `{"to":"plan"}`)
	moved := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := c.CallTool(context.Background(), toolRequest("transition", `{"to":"implement"}`))
		if err != nil {
			t.Error(err)
		}
		moved <- res
	}()
	<-asked
	// Calls held up behind the transition would wait until release, below: the timeout only
	// turns that into a failure, and a loaded machine may take seconds for the calls.
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	for _, cl := range [][2]string{{"set_vars", `{"vars":{"WF_MEANWHILE":"1"}}`}, {"get_vars", `{}`}} {
		res, err := c.CallTool(ctx, toolRequest(cl[0], cl[1]))
		if err != nil || res.IsError {
			t.Fatalf("%s while the person was asked: %v %s", cl[0], err, text(res))
		}
	}
	release()
	res := <-moved
	if res == nil || res.IsError || structured(t, res)["phase"] != "implement" {
		t.Fatalf("the approved transition: %+v", res)
	}
	vars, err := p.other(t, "observer").GetVars(nil)
	if err != nil || vars["WF_MEANWHILE"] != "1" {
		t.Errorf("vars %v (%v)", vars, err)
	}
}

// TestCompleteAtAGateAsksThePerson: complete_workflow in an approval phase that waits for a
// person's yes asks the person as transition does. A yes is recorded with the completion; a
// no, a cancelled prompt (claude -p) or a client that cannot ask leaves the workflow waiting.
func TestCompleteAtAGateAsksThePerson(t *testing.T) {
	for _, tc := range []struct {
		name string
		who  *person // nil: a client without elicitation
		err  string  // "": completed
	}{
		{"accept", &person{action: mcp.ElicitationResponseActionAccept, yes: true}, ""},
		{"decline", &person{action: mcp.ElicitationResponseActionDecline}, "the user did not approve leaving phase plan"},
		{"cancel-as-claude-p-does", &person{action: mcp.ElicitationResponseActionCancel}, "the prompt was cancelled (claude -p cancels every prompt): " + engine.UserApproves + ", then call complete_workflow again"},
		{"no-elicitation", nil, "is in approval phase plan, which waits for a person's yes, and completing it needs that yes too; nothing was changed: " + engine.UserApproves + ", then call complete_workflow again"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, c := waitingInPlan(t, tc.who)
			look := p.other(t, "observer")
			if tc.err != "" {
				res := mustFail(t, c, "complete_workflow", `{"outcome":"done early"}`, tc.err)
				if strings.Contains(text(res), "\n") || strings.Contains(text(res), "transition") {
					t.Errorf("refusal is more than one line or names transition: %q", text(res))
				}
				if snap := snapshot(t, look); snap.Phase != "plan" || snap.WorkflowID == "" {
					t.Errorf("refused completion left %+v", snap)
				}
				return
			}
			res := mustOK(t, c, "complete_workflow", `{"outcome":"done early"}`)
			if !strings.Contains(text(res), "has ended") {
				t.Errorf("complete_workflow after the yes = %q", text(res))
			}
			if len(tc.who.asked) != 1 || !strings.Contains(tc.who.asked[0], "phase plan") || strings.Contains(tc.who.asked[0], "move on to") {
				t.Errorf("the person was asked %q", tc.who.asked)
			}
			if snap := snapshot(t, look); snap.WorkflowID != "" {
				t.Errorf("active workflow after the completion: %+v", snap)
			}
			recs, _ := filepath.Glob(filepath.Join(p.root, ".claude", "cairn", "archive", "*", "workflow-state.json"))
			if len(recs) != 1 {
				t.Fatalf("archived records %q, want one", recs)
			}
			b, err := os.ReadFile(recs[0])
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), `"source": "elicitation"`) && !strings.Contains(string(b), `"source":"elicitation"`) || !strings.Contains(string(b), "looks right") {
				t.Errorf("the person's yes is not on the archived record:\n%s", b)
			}
		})
	}
}

// TestTransitionWithoutDefinitionAsksTheUser: a workflow whose definition stopped loading
// refuses a move; the model is told to ask the user to fix or restore the definition file, as
// resume_check tells it, not to fix or restore the file itself.
func TestTransitionWithoutDefinitionAsksTheUser(t *testing.T) {
	p := newProject(t)
	dir := filepath.Join(p.root, ".claude", "workflows")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	def := filepath.Join(dir, "long.md")
	if err := os.WriteFile(def, []byte(longDefinition), 0o600); err != nil {
		t.Fatal(err)
	}
	_, c := startServer(t, mcptools.Options{
		Open: mcptools.OpenEngine, Getenv: p.getenv(p.session), WorkDir: p.root,
		PPID: 77, Log: quietLog(), NoWatch: true,
	})
	mustOK(t, c, "start_workflow", `{"type":"long","context":"a definition that stops loading"}`)
	if err := os.WriteFile(def, []byte("---\nname: long\nphases: [a, [b\n---\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, c = startServer(t, mcptools.Options{ // definitions are read once a server
		Open: mcptools.OpenEngine, Getenv: p.getenv(p.session), WorkDir: p.root,
		PPID: 77, Log: quietLog(), NoWatch: true,
	})
	got := text(mustFail(t, c, "transition", `{"to":"p02"}`, "no definition of its type", "ask the user to fix or restore its definition file"))
	if strings.Contains(got, "kept as it is: fix") {
		t.Errorf("transition tells the model to fix the definition itself: %s", got)
	}
}
