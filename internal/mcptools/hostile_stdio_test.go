package mcptools_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/strictjson"
)

// gateServer is the binary on a workflow at apex's approval phase plan, with a client that
// declares elicitation and has sent one transition out of plan (id "move"); it returns the id
// of the question the server put to the person.
func gateServer(t *testing.T) (*project, *rawServer, json.RawMessage) {
	t.Helper()
	p, r := atTheGate(t, "one gate")
	r.send(`{"jsonrpc":"2.0","id":"move","method":"tools/call","params":{"name":"transition","arguments":{"to":"implement"}}}`)
	return p, r, nextAsk(t, r, "the server did not ask the person")
}

// TestStdioEOFWhileThePersonIsAsked: once stdin has ended no answer to a question can arrive,
// so a transition waiting for the person gives up at once (nothing changed) and the server
// exits promptly, instead of holding shutdown for the whole drain timeout.
func TestStdioEOFWhileThePersonIsAsked(t *testing.T) {
	p, r, _ := gateServer(t)
	r.stdin.Close()
	// The transition answers before the server exits: held for the drain timeout instead, it
	// is abandoned unanswered and stdout closes first.
	for string(r.next(hangGuard).ID) != `"move"` {
	}
	if code := r.wait(hangGuard); code != 0 {
		t.Errorf("exit code %d, want 0; stderr:\n%s", code, r.stderr)
	}
	if strings.Contains(r.stderr.String(), "still running") {
		t.Errorf("shutdown abandoned a call:\n%s", r.stderr)
	}
	if snap := snapshot(t, p.other(t, "observer")); snap.Phase != "plan" {
		t.Errorf("the workflow is at %s, want plan", snap.Phase)
	}
	r.checkStdout()
}

// TestStdioCancelledCallWithdrawsItsQuestion: when the client cancels a transition that is
// waiting for the person (Esc), the server withdraws the question it put to them
// (notifications/cancelled for its elicitation request), so the client is not left showing a
// prompt whose answer nobody will read, and a late yes moves nothing.
func TestStdioCancelledCallWithdrawsItsQuestion(t *testing.T) {
	p, r, ask := gateServer(t)
	r.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"move","reason":"user pressed Esc"}}`)
	deadline := time.After(hangGuard)
	for withdrawn := false; !withdrawn; {
		select {
		case line, ok := <-r.lines:
			if !ok {
				t.Fatalf("server closed stdout; stderr:\n%s", r.stderr)
			}
			var n struct {
				Method string `json:"method"`
				Params struct {
					RequestID json.RawMessage `json:"requestId"`
				} `json:"params"`
			}
			if json.Unmarshal(line, &n) == nil && n.Method == "notifications/cancelled" {
				if string(n.Params.RequestID) != string(ask) {
					t.Fatalf("withdrew request %s, want %s", n.Params.RequestID, ask)
				}
				withdrawn = true
			}
		case <-deadline:
			t.Fatalf("the question %s was not withdrawn after the call was cancelled", ask)
		}
	}
	r.send(`{"jsonrpc":"2.0","id":` + string(ask) + `,"result":{"action":"accept","content":{"approve":true}}}`)
	r.send(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
	for {
		if resp := r.next(hangGuard); string(resp.ID) == `"ping"` {
			break
		}
	}
	if snap := snapshot(t, p.other(t, "observer")); snap.Phase != "plan" {
		t.Errorf("the workflow is at %s, want plan: a yes to a withdrawn question moved it", snap.Phase)
	}
	r.checkStdout()
}

// TestStdioStateUnopenableAdvice: when the state directory cannot be opened (a file where its
// parent goes), the agent is told that the fix is the user's and that nothing is to be
// deleted. Once the user has fixed it, the next call works without a restart.
func TestStdioStateUnopenableAdvice(t *testing.T) {
	p := newProject(t)
	blocker := filepath.Join(p.root, ".claude")
	if err := os.WriteFile(blocker, []byte("a file where the state directory's parent goes"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := stdioClient(t, p, protocol)
	mustFail(t, c, "resume_check", `{}`, "could not open the workflow state", "nothing was changed", "the user", "do not move or delete it yourself")
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	mustOK(t, c, "resume_check", `{}`)
}

// TestStdioStateInTheWayAdvice: when a file or a symlink stands where the state directory
// goes, the agent passes on the step that fixes it, not one that does not ("make that directory
// writable": it is writable) nor one that forbids it. A file in the way may be anyone's: the
// agent is not given the person's "move or rename it" but has the user run cairn doctor, which
// names it and its fix; a CAIRN_STATE_DIR that names a file is the variable's to set again.
func TestStdioStateInTheWayAdvice(t *testing.T) {
	for _, tc := range []struct {
		name  string
		block func(t *testing.T, p *project)
		want  []string
	}{
		{"a file in its place", func(t *testing.T, p *project) {
			if err := os.MkdirAll(filepath.Dir(p.state), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p.state, []byte("someone's notes"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, []string{"is a file, not a directory", "ask the user to run `cairn doctor`", "then call resume_check again", "do not move or delete it yourself"}},
		{"CAIRN_STATE_DIR names a file", func(t *testing.T, p *project) {
			p.state = filepath.Join(t.TempDir(), "notes.txt")
			if err := os.WriteFile(p.state, []byte("someone's notes"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, []string{"is a file, not a directory", "Tell the user", "set CAIRN_STATE_DIR to a directory, or unset it", "restart Claude Code"}},
		{"a symlink in its place", func(t *testing.T, p *project) {
			if err := os.MkdirAll(filepath.Dir(p.state), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(t.TempDir(), p.state); err != nil {
				t.Fatal(err)
			}
		}, []string{"is a symlink", "Tell the user", "cairn doctor", "CAIRN_STATE_DIR"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t)
			tc.block(t, p)
			c := stdioClient(t, p, protocol)
			got := text(mustFail(t, c, "resume_check", `{}`, append(tc.want, "nothing was changed")...))
			for _, wrong := range []string{"writable", "do not delete or move", "move or rename", ".bak"} {
				if strings.Contains(got, wrong) {
					t.Errorf("the advice says %q, which does not fit: %s", wrong, got)
				}
			}
		})
	}
}

// TestStdioCancelledRunningCallIsNotAnswered: MCP asks that a request the client cancelled get
// no answer; Claude Code's client drops the handler when it cancels and reports a late answer
// as a response to an unknown id. Once the call sent after the cancellation is answered, stdin
// is closed: the server answers what it still runs before it exits, so every answer it would
// ever give is on stdout when it closes, however late.
func TestStdioCancelledRunningCallIsNotAnswered(t *testing.T) {
	_, r, _ := gateServer(t)
	r.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"move","reason":"user pressed Esc"}}`)
	r.send(`{"jsonrpc":"2.0","id":"after","method":"tools/call","params":{"name":"get_vars","arguments":{}}}`)
	hung := time.After(time.Minute) // only so that a hang fails: nothing here is timed
	for after := false; ; {
		select {
		case line, ok := <-r.lines:
			if !ok {
				if !after {
					t.Fatalf("the call sent after the cancellation was not answered; stderr:\n%s", r.stderr)
				}
				if code := r.wait(hangGuard); code != 0 {
					t.Errorf("exit code %d, want 0; stderr:\n%s", code, r.stderr)
				}
				r.checkStdout()
				return
			}
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			_ = json.Unmarshal(line, &m)
			switch string(m.ID) {
			case `"move"`:
				t.Fatalf("the cancelled call was answered: %s", line)
			case `"after"`:
				after = true
				r.stdin.Close()
			}
		case <-hung:
			t.Fatalf("the server did not answer and exit; stderr:\n%s", r.stderr)
		}
	}
}

// TestStdioUnparsableRequestAnsweredWithItsID: a request Go cannot parse (here: a comma too
// many, in a message also nested deeper than encoding/json reads) is still answered with its
// own id when the id can be found, or the client waits for that call for ever.
func TestStdioUnparsableRequestAnsweredWithItsID(t *testing.T) {
	r := startRaw(t, newProject(t))
	r.initialize()
	deep := strings.Repeat(`{"a":`, 20_000) + "1" + strings.Repeat("}", 20_000)
	answeredWithTheirIDs(t, r, "unparsable", -32700, 5*time.Second, []idCase{
		{`{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"transition","arguments":{"to":"plan","checkpoint":` + deep + `,}}}`, "41"},
		{`{"method":"tools/call","params":{"name":"save_checkpoint","arguments":{"name":"x",,"data":` + deep + `}},"jsonrpc":"2.0","id":"req-42"}`, `"req-42"`},
		{`this is not json`, "null"},
	})
	r.checkStdout()
}

// TestStdioDeepArgumentsSaidPlainly: an argument nested deeper than encoding/json reads (JSON.
// stringify writes 20,000 levels happily) is the tool's own isError result naming the argument
// and saying it is nested too deeply, as one 70 levels deep is. It was a JSON-RPC parse error
// saying the line was not one JSON-RPC message, which it is: the model was told nothing it
// could act on.
func TestStdioDeepArgumentsSaidPlainly(t *testing.T) {
	p := newProject(t)
	r := startRaw(t, p)
	r.initialize()
	deep := strings.Repeat(`{"a":[`, 10_000) + "1" + strings.Repeat("]}", 10_000)
	for i, tc := range []struct{ tool, args, want string }{
		{"transition", `{"to":"plan","checkpoint":` + deep + `}`, `argument "checkpoint"`},
		{"save_checkpoint", `{"name":"x","data":{"s":"[{\"[","d":` + deep + `}}`, `argument "data"`},
		{"append_log", `{"name":"l","entry":` + deep + `}`, `argument "entry"`},
	} {
		r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, i+1, tc.tool, tc.args))
		resp := r.next(hangGuard)
		var res struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		}
		if resp.Error != nil || json.Unmarshal(resp.Result, &res) != nil || !res.IsError || len(res.Content) != 1 {
			t.Errorf("%s with an argument 20,000 levels deep answered %s (error %+v), want an isError tool result", tc.tool, clip(string(resp.Result)), resp.Error)
			continue
		}
		if got := res.Content[0].Text; string(resp.ID) != fmt.Sprint(i+1) || !strings.Contains(got, tc.want) || !strings.Contains(got, "nested deeper than") {
			t.Errorf("%s with an argument 20,000 levels deep answered %q for id %s, want %s nested too deeply", tc.tool, got, resp.ID, tc.want)
		}
	}
	p.noCheckpoints(t, "a refused call was run")
	r.checkStdout()
}

// TestStdioRequestIDs: a request is answered with its id exactly as sent, so that the client
// can match the answer (an integer beyond 2^53 read as a float comes back as another number,
// and the client waits for its answer for ever). A request whose id is neither a string nor
// an integer (MCP's rule) is refused as an invalid request and not run; one whose id is null
// was taken for a notification and never answered, and one whose string id was not UTF-8 was
// run and answered under another id (U+FFFD for the bytes).
func TestStdioRequestIDs(t *testing.T) {
	p := newProject(t)
	r := startRaw(t, p)
	r.initialize()
	// An integer of 400 digits is beyond a float64, which mcp-go reads ids as: it answered
	// "Failed to parse message", a parse error, for a message that is JSON-RPC.
	for _, id := range []string{`9007199254740993`, `9223372036854775808`, `-12345678901234567890123`, `"req-1"`, strings.Repeat("9", 400), "-" + strings.Repeat("1", 400)} {
		r.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"list_checkpoints","arguments":{}}}`)
		if resp := r.next(hangGuard); string(resp.ID) != id || resp.Error != nil {
			t.Errorf("a request with id %s answered with id %s (error %+v)", id, resp.ID, resp.Error)
		}
	}
	call := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"save_checkpoint","arguments":{"name":"c","data":{"a":1}}}}`
	}
	answeredWithTheirIDs(t, r, "invalid id", -32600, 5*time.Second, []idCase{
		{call(`{"a":1}`), "null"},
		{call(`[1]`), "null"},
		{call(`true`), "null"},
		{call(`1.5`), "null"},
		{call(`null`), "null"},
		{call("\"\xff\""), "null"},
	})
	p.noCheckpoints(t, "a request with an invalid id was run")
	r.checkStdout()
}

// TestStdioUnknownNamesNotEchoed: an unknown tool or method is refused without its name
// repeated: the name may be megabytes long, or a secret pasted in the wrong place, and the
// refusal goes back into the model's context.
func TestStdioUnknownNamesNotEchoed(t *testing.T) {
	r := startRaw(t, newProject(t))
	r.initialize()
	token := "ghp_" + strings.Repeat("A1b2C3d4E5", 4)[:36]
	long := strings.Repeat("x", 3<<20)
	for i, tc := range []struct{ msg, name string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + long + `","arguments":{}}}`, long},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + token + `","arguments":{}}}`, token},
		{`{"jsonrpc":"2.0","id":3,"method":"` + long + `"}`, long},
		{`{"jsonrpc":"2.0","id":4,"method":"` + token + `"}`, token},
	} {
		r.send(tc.msg)
		resp := r.next(hangGuard)
		if resp.Error == nil || string(resp.ID) != fmt.Sprint(i+1) {
			t.Errorf("message %d answered %s (error %+v), want a protocol error", i+1, clip(string(resp.Result)), resp.Error)
			continue
		}
		if msg := resp.Error.Message; strings.Contains(msg, tc.name[:40]) || len(msg) > 200 {
			t.Errorf("message %d: the refusal repeats the name it was sent: %q", i+1, clip(msg))
		}
	}
	r.send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	if resp := r.next(hangGuard); string(resp.ID) != "9" || resp.Error != nil {
		t.Errorf("ping after unknown names: %+v", resp)
	}
}

// TestStdioCallWithoutName: a tools/call that names no tool (params null or missing, no
// name, a name of null or "") is refused as invalid params saying what to send, not as
// "tool not found", which reads as though a name was sent and misspelt.
func TestStdioCallWithoutName(t *testing.T) {
	r := startRaw(t, newProject(t))
	r.initialize()
	for i, params := range []string{`,"params":null`, ``, `,"params":{}`, `,"params":{"name":null}`, `,"params":{"name":"","arguments":{}}`} {
		r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call"%s}`, i+1, params))
		resp := r.next(hangGuard)
		if resp.Error == nil || resp.Error.Code != -32602 || string(resp.ID) != fmt.Sprint(i+1) ||
			!strings.Contains(resp.Error.Message, "params.name") || strings.Contains(resp.Error.Message, "not found") {
			t.Errorf("params %q answered %s (error %+v), want -32602 naming params.name", params, clip(string(resp.Result)), resp.Error)
		}
	}
}

// TestStdioUnsupportedVersionNotEchoed: a request declaring a protocol version the server
// does not speak (2026-07-28's per-request _meta) is refused with the versions it does speak,
// without the declared one repeated: it may be megabytes long, or a secret pasted in the wrong
// place. A version of the usual form is still said back in the error's data.
func TestStdioUnsupportedVersionNotEchoed(t *testing.T) {
	r := startRaw(t, newProject(t))
	token := "ghp_" + strings.Repeat("A1b2C3d4E5", 4)[:36]
	for i, v := range []string{token, strings.Repeat("x", 2<<20), "2099-01-01"} {
		r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_vars","_meta":{`+
			`"io.modelcontextprotocol/protocolVersion":%q,"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"x","version":"1"}}}}`, i+1, v))
		resp := r.next(hangGuard)
		if resp.Error == nil || resp.Error.Code != -32022 || string(resp.ID) != fmt.Sprint(i+1) {
			t.Errorf("version %d answered %s (error %+v), want -32022", i+1, clip(string(resp.Result)), resp.Error)
			continue
		}
		var data struct {
			Supported []string `json:"supported"`
			Requested *string  `json:"requested"`
		}
		if err := json.Unmarshal(resp.Error.Data, &data); err != nil || !slices.Contains(data.Supported, protocol) || data.Requested == nil {
			t.Errorf("version %d: data %s does not list the versions spoken", i+1, clip(string(resp.Error.Data)))
		}
		switch {
		case v == "2099-01-01":
			if data.Requested != nil && *data.Requested != v {
				t.Errorf("a version of the usual form is not said back: data %s", resp.Error.Data)
			}
		case strings.Contains(resp.Error.Message, v[:10]) || strings.Contains(string(resp.Error.Data), v[:10]):
			t.Errorf("version %d is repeated: %q, data %s", i+1, clip(resp.Error.Message), clip(string(resp.Error.Data)))
		}
		if !strings.Contains(resp.Error.Message, protocol) {
			t.Errorf("version %d: the refusal does not say which versions are spoken: %q", i+1, clip(resp.Error.Message))
		}
	}
	r.checkStdout()
}

// TestStdioNumberBeyondFloatInParamsNotEchoed: a number beyond float64 outside the tool's
// arguments (in _meta, which mcp-go reads into Go values before any tool sees the call) is
// refused without the number repeated: it may be megabytes of digits, and the refusal goes
// back to the client. The refusal says what is wrong and that nothing was run.
func TestStdioNumberBeyondFloatInParamsNotEchoed(t *testing.T) {
	p := newProject(t)
	r := startRaw(t, p)
	r.initialize()
	huge := strings.Repeat("9", 100_000)
	for i, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"x":` + huge + `}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"x":1e999}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"save_checkpoint","arguments":{"name":"c","data":{"a":1}},"_meta":{"progressToken":` + huge + `}}}`,
	} {
		r.send(msg)
		resp := r.next(hangGuard)
		if resp.Error == nil || string(resp.ID) != fmt.Sprint(i+1) {
			t.Errorf("message %d answered %s (error %+v), want a protocol error", i+1, clip(string(resp.Result)), resp.Error)
			continue
		}
		msg := resp.Error.Message
		if strings.Contains(msg, "999") || strings.Contains(msg, "1e999") || len(msg) > 300 {
			t.Errorf("message %d: the refusal repeats the number: %q", i+1, clip(msg))
		}
		if !strings.Contains(msg, "64-bit float") || !strings.Contains(msg, "not run") {
			t.Errorf("message %d: the refusal does not say what is wrong and that nothing ran: %q", i+1, clip(msg))
		}
	}
	p.noCheckpoints(t, "a refused call was run")
	r.checkStdout()
}

// TestStdioLoneSurrogateRefused: a string argument holding half of a UTF-16 surrogate pair
// (\ud800 with no low half) is not text; encoding/json reads it as U+FFFD, so it was stored
// as a character the client never sent, without a word. It is refused, naming the argument,
// and nothing is written; so are bytes that are not UTF-8. So is one inside a JSON argument
// (a checkpoint's data, a log entry), which was stored as sent.
func TestStdioLoneSurrogateRefused(t *testing.T) {
	p := newProject(t)
	c := stdioClient(t, p, protocol)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"surrogates \ud83d\ude00 paired are fine"}`)
	before := snapshot(t, p.other(t, "observer")).Revision
	for _, tc := range []struct{ tool, args, arg, why string }{
		{"set_vars", `{"vars":{"WF_NOTE":"a\ud800b"}}`, `"vars.WF_NOTE"`, "surrogate"},
		{"set_vars", `{"vars":{"WF_NOTE":"a\udc00"}}`, `"vars.WF_NOTE"`, "surrogate"},
		{"transition", `{"to":"plan","note":"\ud83d"}`, `"note"`, "surrogate"},
		{"transition", `{"to":"plan","outputs":["a.md","b\ude00.md"]}`, `"outputs[1]"`, "surrogate"},
		{"update_task", `{"id":"t1","status":"done","output":"x\ud800\ud800"}`, `"output"`, "surrogate"},
		{"set_enforcement", `{"violations":[{"code":"V1","severity":"LOW","details":"d\udbff"}]}`, `"violations[0].details"`, "surrogate"},
		{"complete_workflow", `{"outcome":"done \ud800"}`, `"outcome"`, "surrogate"},
		{"record_learning", `{"title":"t","body":"b\\\ud800"}`, `"body"`, "surrogate"},
		// Inside a JSON value too: load_checkpoint would give the half back in its structured
		// content, and Claude Code, sending it to the API, fails every request after it ("no low
		// surrogate in string").
		{"save_checkpoint", `{"name":"s","data":{"a":["ok \ud83d\ude00","x\ud800"]}}`, `argument "data"`, "surrogate"},
		{"save_checkpoint", `{"name":"s","data":"{\"a\":\"\\udc00\"}"}`, `argument "data"`, "surrogate"},
		{"save_checkpoint", `{"name":"s","data":"{\"a\":\"\udc00\"}"}`, `argument "data"`, "surrogate"},
		{"append_log", `{"name":"l","entry":{"\udbff":1}}`, `argument "entry"`, "surrogate"},
		{"transition", `{"to":"plan","checkpoint":{"a":"\\\ud800"}}`, `argument "checkpoint"`, "surrogate"},
		// A string is never a checkpoint: that is said first, not what the string holds.
		{"transition", `{"to":"plan","checkpoint":"{\"a\":\"\udc00\"}"}`, `argument "checkpoint" must be a JSON object`, "not JSON text inside a string"},
		// Bytes that are not UTF-8 were refused as if an argument were named twice ("send one
		// JSON object with each argument named once"), naming none.
		{"append_log", "{\"name\":\"l\",\"entry\":{\"a\":\"\xff\xfe\"}}", `argument "entry"`, "UTF-8"},
		{"save_checkpoint", "{\"name\":\"u8\",\"data\":{\"k\xc3\":1}}", `argument "data"`, "UTF-8"},
		{"transition", "{\"to\":\"pl\xffan\"}", `argument "to"`, "UTF-8"},
		{"set_vars", "{\"vars\":{\"WF_NOTE\":\"caf\xe9\"}}", `argument "vars"`, "UTF-8"},
		{"transition", "{\"to\":\"plan\",\"n\xffte\":\"x\"}", "an unknown argument", "UTF-8"},
	} {
		if got := text(mustFail(t, c, tc.tool, tc.args, tc.arg, tc.why, "nothing was changed")); strings.Contains(got, "named once") {
			t.Errorf("%s: the refusal steers to naming each argument once: %q", tc.tool, got)
		}
	}
	if after := snapshot(t, p.other(t, "observer")).Revision; after != before {
		t.Errorf("a refused call changed the workflow: revision %d, was %d", after, before)
	}
	p.noCheckpoints(t, "a refused call was run")
	mustOK(t, c, "set_vars", `{"vars":{"WF_NOTE":"\\ud800 as text, \ufffd sent as itself"}}`)
	vars, err := p.other(t, "observer").GetVars([]string{"WF_NOTE"})
	if err != nil || vars["WF_NOTE"] != `\ud800 as text, `+"\ufffd"+` sent as itself` {
		t.Errorf("WF_NOTE is %q (%v)", vars["WF_NOTE"], err)
	}
}

// TestStdioBatchAnsweredPerRequest: a JSON-RPC batch (an array of messages, which MCP
// 2025-03-26 allowed and later versions dropped) is not run, and each request in it is
// answered with its own id, in one array as JSON-RPC answers a batch: before, the array got
// one parse error with id null, and the client waited for its requests for ever.
func TestStdioBatchAnsweredPerRequest(t *testing.T) {
	p := newProject(t)
	r := startRaw(t, p)
	r.initialize()
	for _, tc := range []struct {
		batch string
		ids   []string // the ids answered, in order
	}{
		{`[{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"save_checkpoint","arguments":{"name":"c","data":{"a":1}}}},` +
			`{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"six","method":"ping"}]`, []string{"5", `"six"`}},
		{`[]`, []string{"null"}},
		{`[7, {"jsonrpc":"2.0","id":8,"method":"ping"}]`, []string{"null", "8"}},
		{`[{"jsonrpc":"2.0","id":null,"method":"ping"},{"jsonrpc":"2.0","id":null,"method":"notifications/initialized"}]`, []string{"null"}},
	} {
		r.send(tc.batch)
		var line []byte
		select {
		case line = <-r.lines:
		case <-time.After(hangGuard):
			t.Fatalf("batch %s: no answer", tc.batch)
		}
		var answers []rpcResponse
		if err := json.Unmarshal(line, &answers); err != nil {
			var one rpcResponse
			_ = json.Unmarshal(line, &one)
			if one.JSONRPC == "" || len(tc.ids) != 1 || string(one.ID) != tc.ids[0] {
				t.Errorf("batch %s answered %s, want errors for %v", clip(tc.batch), clip(string(line)), tc.ids)
				continue
			}
			answers = []rpcResponse{one}
		}
		var ids []string
		for _, a := range answers {
			ids = append(ids, string(a.ID))
			if a.JSONRPC != "2.0" || a.Error == nil || a.Error.Code != -32600 || !strings.Contains(a.Error.Message, "batch") || !strings.Contains(a.Error.Message, "no message in it was run") {
				t.Errorf("batch %s: answer %s does not refuse it as a batch", clip(tc.batch), clip(string(line)))
			}
		}
		if fmt.Sprint(ids) != fmt.Sprint(tc.ids) {
			t.Errorf("batch %s answered ids %v, want %v", clip(tc.batch), ids, tc.ids)
		}
	}
	r.send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	if resp := r.next(hangGuard); string(resp.ID) != "9" || resp.Error != nil {
		t.Errorf("ping after the batches: %+v", resp)
	}
	p.noCheckpoints(t, "a request in a batch was run")
}

// TestStdioReusedIDRefused: a request whose id is that of a request still running or waiting
// to run is refused and not run. Both ran before: the client, which can match one answer to an
// id, took the first answer to come for the call it last sent, and the other call's change
// was never reported to it.
func TestStdioReusedIDRefused(t *testing.T) {
	// Ids 1 to 16 are running, each waiting for the person, and 100 waits for a slot.
	p, r, asks := askingServer(t)
	r.send(`{"jsonrpc":"2.0","id":100,"method":"tools/call","params":{"name":"get_vars","arguments":{}}}`)
	for _, id := range []string{"3", "100"} {
		r.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"save_checkpoint","arguments":{"name":"dup-` + id + `","data":{"a":1}}}}`)
		resp := r.next(hangGuard)
		if string(resp.ID) != id || resp.Error == nil || resp.Error.Code != -32600 || !strings.Contains(resp.Error.Message, "not run") {
			t.Errorf("a second request with id %s answered %s (error %+v), want it refused", id, clip(string(resp.Result)), resp.Error)
		}
	}
	r.decline(asks)
	answers := map[string]int{}
	for range len(asks) + 1 {
		answers[string(r.next(hangGuard).ID)]++
	}
	for _, id := range []string{"3", "100"} {
		if answers[id] != 1 {
			t.Errorf("the first request with id %s was answered %d times, want once", id, answers[id])
		}
	}
	p.noCheckpoints(t, "a request with a reused id was run")
	r.checkStdout()
}

// TestStdioRequestWithoutMethodAnswered: a message with an id but no method, an empty one or
// one that is not a string, and a line that is JSON but no object, is an invalid request
// (-32600) and is answered with its id: the first were dropped as if they were answers to the
// server's own requests, and the client waited for them for ever; the last were called parse
// errors, which they are not.
func TestStdioRequestWithoutMethodAnswered(t *testing.T) {
	r := startRaw(t, newProject(t))
	r.initialize()
	answeredWithTheirIDs(t, r, "method-less", -32600, 5*time.Second, []idCase{
		{`{"jsonrpc":"2.0","id":5}`, "5"},
		{`{"jsonrpc":"2.0","id":"six","params":{"name":"get_vars","arguments":{}}}`, `"six"`},
		{`{"jsonrpc":"2.0","id":7,"method":""}`, "7"},
		{`{"jsonrpc":"2.0","id":8,"method":5}`, "8"},
		{`{"jsonrpc":"2.0","id":9,"method":null}`, "9"},
		{`5`, "null"},
		{`"tools/call"`, "null"},
		{`null`, "null"},
	})
	r.checkStdout()
}

// TestStdioNotificationWithIDAnswered: a notification sent with an id (as a request) is
// refused as an invalid request that says it takes no id, rather than "method not found" for
// a method the server knows, which left a client that sent its cancellation so with no clue.
func TestStdioNotificationWithIDAnswered(t *testing.T) {
	r := startRaw(t, newProject(t))
	r.initialize()
	for _, id := range []string{"7", `"cancel"`} {
		r.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"notifications/cancelled","params":{"requestId":"x"}}`)
		resp := r.next(hangGuard)
		if string(resp.ID) != id || resp.Error == nil || resp.Error.Code != -32600 || !strings.Contains(resp.Error.Message, "without an id") {
			t.Errorf("a notification with id %s answered %s (error %+v), want it refused for its id", id, clip(string(resp.Result)), resp.Error)
		}
	}
	r.checkStdout()
}

// TestStdioMistypedParamsSaidPlainly: a request whose params mcp-go cannot read into its Go
// types (a member of the wrong JSON type) is refused with a text that names the member by its
// JSON path and says what it takes, not encoding/json's "cannot unmarshal ... into Go struct
// field ... of type mcp.params", which names Go types the client never sees. A "jsonrpc" that
// is not a string is an invalid request, not a parse error: the line is JSON; one that is
// another string was refused in mcp-go's words ("Invalid JSON-RPC version"), which do not say
// what it must be.
func TestStdioMistypedParamsSaidPlainly(t *testing.T) {
	p := newProject(t)
	r := startRaw(t, p)
	r.initialize()
	for i, tc := range []struct{ msg, want string }{
		{`"method":"tools/call","params":[1,2]`, "params must be an object, not an array"},
		{`"method":"tools/call","params":"x"`, "params must be an object, not a string"},
		{`"method":"tools/call","params":{"name":5,"arguments":{}}`, "params.name must be a string, not a number"},
		{`"method":"tools/call","params":{"name":"save_checkpoint","arguments":{"name":"c","data":{}},"_meta":[1]}`, "params._meta must be an object, not an array"},
		{`"method":"tools/call","params":{"name":"save_checkpoint","arguments":{"name":"c","data":{}},"task":true}`, "params.task must be an object, not a boolean"},
		{`"method":"tools/list","params":{"cursor":5}`, "params.cursor must be a string, not a number"},
		{`"method":"tools/call","params":{"name":"get_vars","arguments":{},"task":{"ttl":"1h"}}`, "params.task.ttl must be a whole number, not a string"},
		{`"method":"tools/call","params":{"name":"get_vars","arguments":{},"task":{"ttl":1.5}}`, "params.task.ttl must be a whole number, not a fraction or a number out of range"},
		{`"method":"ping","params":[1]`, "params must be an object, not an array"},
		{`"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":5},"clientInfo":{"name":"x","version":"1"}}`, "params.capabilities.elicitation must be an object, not a number"},
		{`"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":"yes"}},"clientInfo":{"name":"x","version":"1"}}`, "params.capabilities.roots.listChanged must be a boolean, not a string"},
		// Which element of an array, as a tool argument's refusal says it.
		{`"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1","icons":[{"src":"a"},{"src":5}]}}`, "params.clientInfo.icons[1].src must be a string, not a number"},
	} {
		id := i + 1
		r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,%s}`, id, tc.msg))
		resp := r.next(hangGuard)
		if resp.Error == nil || string(resp.ID) != fmt.Sprint(id) {
			t.Errorf("%s: answered %s (error %+v), want a protocol error for id %d", tc.msg, clip(string(resp.Result)), resp.Error, id)
			continue
		}
		msg := resp.Error.Message
		if resp.Error.Code != -32600 || !strings.Contains(msg, tc.want) || !strings.Contains(msg, "not run") {
			t.Errorf("%s: refused with %d %q, want -32600 saying %q and that it was not run", tc.msg, resp.Error.Code, msg, tc.want)
		}
		for _, goWord := range []string{"Go ", "mcp.", "unmarshal", "interface"} {
			if strings.Contains(msg, goWord) {
				t.Errorf("%s: the refusal speaks of Go: %q", tc.msg, msg)
				break
			}
		}
	}
	r.send(`{"jsonrpc":"2.0","id":19,"method":"tools/list","params":{"cursor":"not base64!"}}`)
	if resp := r.next(hangGuard); resp.Error == nil || resp.Error.Code != -32602 || string(resp.ID) != "19" || !strings.Contains(resp.Error.Message, "params.cursor") || strings.Contains(resp.Error.Message, "base64") {
		t.Errorf("a cursor the server never gave answered %+v (error %+v), want -32602 naming params.cursor", resp, resp.Error)
	}
	r.send(`{"jsonrpc":"2.0","id":21,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	if resp := r.next(hangGuard); resp.Error == nil || string(resp.ID) != "21" || strings.Contains(resp.Error.Message, "cursor") {
		t.Errorf("tools/list without the capabilities 2026-07-28 needs answered %+v (error %+v), want a refusal that is not about a cursor", resp, resp.Error)
	}
	for _, v := range []string{`2`, `"1.0"`} {
		r.send(`{"jsonrpc":` + v + `,"id":20,"method":"ping"}`)
		if resp := r.next(hangGuard); resp.Error == nil || resp.Error.Code != -32600 || string(resp.ID) != "20" || !strings.Contains(resp.Error.Message, `"2.0"`) {
			t.Errorf("jsonrpc %s answered %+v (error %+v), want -32600 saying it must be \"2.0\"", v, resp, resp.Error)
		}
	}
	p.noCheckpoints(t, "a refused call was run")
	r.checkStdout()
}

// TestStdioCancellationOfAnotherIDWithTheSameText: a cancellation names one request by its id,
// and "1" and 1 are two ids. mcp-go keys the requests it runs by the id's text (%v), so a
// cancellation of "1", a request that had already finished or never was, cancelled the
// transition with id 1 that waited for the person: the question was withdrawn and the call
// the client never cancelled failed.
func TestStdioCancellationOfAnotherIDWithTheSameText(t *testing.T) {
	for _, tc := range []struct{ running, cancelled string }{
		{`1`, `"1"`},
		{`"1"`, `1`},
		{`9007199254740993`, `9007199254740992`}, // one float64 apart from neither
	} {
		t.Run(tc.running+" and "+tc.cancelled, func(t *testing.T) {
			p, r := atTheGate(t, "one gate")
			r.send(`{"jsonrpc":"2.0","id":` + tc.running + `,"method":"tools/call","params":{"name":"transition","arguments":{"to":"implement"}}}`)
			ask := nextAsk(t, r, "the server did not ask the person")
			r.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + tc.cancelled + `,"reason":"user pressed Esc"}}`)
			// The ping is answered after the cancellation has been acted on: notifications
			// and requests are read in order. Nothing before it may withdraw the question or
			// answer the call.
			r.send(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
			_, before := r.until(`"ping"`)
			for _, line := range before {
				t.Errorf("before the approval, the server wrote %s", clip(string(line)))
			}
			r.send(`{"jsonrpc":"2.0","id":` + string(ask) + `,"result":{"action":"accept","content":{"approve":true}}}`)
			if answer, lines := r.until(tc.running); len(lines) > 0 || bytes.Contains(answer, []byte(`"isError":true`)) {
				t.Errorf("the call answered %s, after %q", clip(string(answer)), lines)
			}
			if snap := snapshot(t, p.other(t, "observer")); snap.Phase != "implement" {
				t.Errorf("the workflow is at %s, want implement: the approved move was not made", snap.Phase)
			}
			r.checkStdout()
		})
	}
}

// until reads the server's messages up to the answer to the request id and returns it and the
// others it read on the way.
func (r *rawServer) until(id string) (answer []byte, others [][]byte) {
	r.t.Helper()
	for {
		select {
		case line, ok := <-r.lines:
			if !ok {
				r.t.Fatalf("server closed stdout before answering %s; stderr:\n%s", id, r.stderr)
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(line, &m) == nil && m.Method == "" && string(m.ID) == id {
				return line, others
			}
			others = append(others, line)
		case <-time.After(10 * time.Second):
			r.t.Fatalf("no answer to %s within 10s", id)
		}
	}
}

// TestStdioApprovalIsForTheWorkflowAsked: the person is asked to approve leaving phase plan of
// one workflow, and while they read the question another session replaces it with a workflow
// of its own, also at plan. Their yes was applied to whichever workflow was active at plan,
// carrying the other session's workflow out of a gate nobody approved for it, or ending it.
// The call is refused, and the other workflow stays at its gate.
func TestStdioApprovalIsForTheWorkflowAsked(t *testing.T) {
	for _, call := range []struct{ tool, args string }{
		{"transition", `{"to":"implement"}`},
		{"complete_workflow", `{"outcome":"done"}`},
	} {
		t.Run(call.tool, func(t *testing.T) {
			p, r := atTheGate(t, "mine")
			r.send(`{"jsonrpc":"2.0","id":"move","method":"tools/call","params":{"name":"` + call.tool + `","arguments":` + call.args + `}}`)
			ask := nextAsk(t, r, "the server did not ask the person")
			other := p.other(t, "sess-2")
			if _, err := other.Start(engine.StartRequest{Type: "apex", Context: "theirs", Replace: true}); err != nil {
				t.Fatal(err)
			}
			if _, err := other.Transition(engine.TransitionRequest{To: "plan"}); err != nil {
				t.Fatal(err)
			}
			theirs := snapshot(t, p.other(t, "observer"))
			r.send(`{"jsonrpc":"2.0","id":` + string(ask) + `,"result":{"action":"accept","content":{"approve":true}}}`)
			if answer, _ := r.until(`"move"`); !bytes.Contains(answer, []byte(`"isError":true`)) || !bytes.Contains(answer, []byte("resume_check")) {
				t.Errorf("the approved call answered %s, want it refused, with resume_check as the step", clip(string(answer)))
			}
			if snap := snapshot(t, p.other(t, "observer")); snap.WorkflowID != theirs.WorkflowID || snap.Phase != "plan" || snap.Revision != theirs.Revision {
				t.Errorf("the other session's workflow is %+v, was %+v: the yes for another workflow moved or ended it", snap, theirs)
			}
		})
	}
}

// TestStdioLoadCheckpointGivesNoHalfPair: a checkpoint saved another way (cairn checkpoint
// save, an earlier version) may hold a \u escape of half a UTF-16 surrogate pair. Given back
// as it is in load_checkpoint's structured content, Claude Code holds a string it cannot send:
// the API refuses the request with it ("no low surrogate in string"), and every later one. The
// half is given as U+FFFD, in the text and the structured content alike, and a warning says so;
// the rest is given as saved.
func TestStdioLoadCheckpointGivesNoHalfPair(t *testing.T) {
	p := newProject(t)
	saved := `{"a":["x\ud800y","\udc00"],"b":"\\ud800 as text","c":"\ud83d\ude00"}`
	if _, err := p.other(t, "observer").SaveCheckpoint("halves", json.RawMessage(saved)); err != nil {
		t.Fatal(err)
	}
	r := startRaw(t, p)
	r.initialize()
	r.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"load_checkpoint","arguments":{"name":"halves"}}}`)
	line, _ := r.until("1")
	if at := strictjson.LoneSurrogate(line); at >= 0 {
		t.Fatalf("the answer holds half a surrogate pair at byte %d: %s", at, line)
	}
	var resp struct {
		Result struct {
			Content           []struct{ Text string } `json:"content"`
			StructuredContent struct {
				Data     json.RawMessage `json:"data"`
				Warnings []string        `json:"warnings"`
			} `json:"structuredContent"`
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &resp); err != nil || resp.Result.IsError || len(resp.Result.Content) != 1 {
		t.Fatalf("answer %s (%v)", line, err)
	}
	want := `{"a":["x\ufffdy","\ufffd"],"b":"\\ud800 as text","c":"\ud83d\ude00"}`
	if got := string(resp.Result.StructuredContent.Data); got != want {
		t.Errorf("data is %s, want %s", got, want)
	}
	text := resp.Result.Content[0].Text
	if !strings.Contains(text, want) {
		t.Errorf("the text does not give the data as the structured content does: %q", text)
	}
	if w := resp.Result.StructuredContent.Warnings; len(w) != 1 || !strings.Contains(w[0], `holds 2 \u escapes of half`) || !strings.Contains(text, w[0]) {
		t.Errorf("warnings %q, text %q: want one saying 2 halves were given as U+FFFD, in both", w, text)
	}
	r.checkStdout()
}

// TestStdioDuplicateMembersRefused: a request that names a member of its envelope or of its
// params twice (as encoding/json reads names: "\u006eame" and "Name" are "name" too) ran
// with the last one, so that a client, or a proxy that read the first, saw list_checkpoints
// and the server ran save_checkpoint; tool arguments already refuse a duplicate. It is now an
// invalid request, answered to its id when the id can be told, and nothing is run.
func TestStdioDuplicateMembersRefused(t *testing.T) {
	p := newProject(t)
	r := startRaw(t, p)
	r.initialize()
	const save = `"arguments":{"name":"c","data":{"a":1}}`
	answeredWithTheirIDs(t, r, "duplicate-member", -32600, hangGuard, []idCase{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_checkpoints",` + save + `,"name":"save_checkpoint"}}`, "1"},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_checkpoints",` + save + `,"\u006eame":"save_checkpoint"}}`, "2"},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_checkpoints",` + save + `,"Name":"save_checkpoint"}}`, "3"},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/list","method":"tools/call","params":{"name":"save_checkpoint",` + save + `}}`, "4"},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"save_checkpoint",` + save + `},"params":{}}`, "5"},
		{`{"jsonrpc":"2.0","id":"s","id":"s","method":"tools/call","params":{"name":"save_checkpoint",` + save + `}}`, `"s"`},
		// White space, and brackets and quotes inside strings, in the members read past.
		{` { "jsonrpc" : "2.0" , "id" : 10 , "method" : "tools/call" , "params" : { "name" : "list_checkpoints" , "arguments" : {"name":"c\"}","data":{"a":[1,{"b":"]\\"}]}} , "name" : "save_checkpoint" } } `, "10"},
		// Two ids: the client could match the answer to neither.
		{`{"jsonrpc":"2.0","id":6,"id":7,"method":"tools/call","params":{"name":"save_checkpoint",` + save + `}}`, "null"},
	})
	r.send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"list_checkpoints","arguments":{},"Name":"save_checkpoint"}}`)
	if resp := r.next(hangGuard); resp.Error == nil || !strings.Contains(resp.Error.Message, "params.name is given twice") {
		t.Errorf("the refusal = %+v, want it to name params.name", resp.Error)
	}
	// A name not said back is "a member", of params when it is one of params'.
	r.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"list_checkpoints","arguments":{},"x y":1,"x y":2}}`)
	if resp := r.next(hangGuard); resp.Error == nil || !strings.Contains(resp.Error.Message, "invalid request: a member of params is given twice") {
		t.Errorf("the refusal = %+v, want it to say a member of params", resp.Error)
	}
	p.noCheckpoints(t, "a request with a member given twice was run")
	r.checkStdout()
}
