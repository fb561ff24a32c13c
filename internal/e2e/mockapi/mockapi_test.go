package mockapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/e2e/mockapi"
)

// sseEvent is one server-sent event as a client reads it.
type sseEvent struct {
	Name string
	Data map[string]any
}

// readSSE parses a text/event-stream body the way the Anthropic SDK does: "event:" and
// "data:" lines, a blank line ending each event.
func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	var data strings.Builder
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Name != "" || data.Len() > 0 {
				if err := json.Unmarshal([]byte(data.String()), &cur.Data); err != nil {
					t.Fatalf("event %q: data is not JSON: %v: %q", cur.Name, err, data.String())
				}
				out = append(out, cur)
			}
			cur, data = sseEvent{}, strings.Builder{}
		case strings.HasPrefix(line, "event: "):
			cur.Name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data.WriteString(strings.TrimPrefix(line, "data: "))
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// assembled is a streamed message put back together, as a client would.
type assembled struct {
	ID, Model, StopReason string
	Blocks                []map[string]any // text blocks get "text", tool_use blocks "input" (decoded)
	InputTokens           float64
	OutputTokens          float64
	Names                 []string
}

func assemble(t *testing.T, events []sseEvent) assembled {
	t.Helper()
	var a assembled
	partial := map[int]*strings.Builder{}
	for i, e := range events {
		a.Names = append(a.Names, e.Name)
		if e.Data["type"] != e.Name {
			t.Errorf("event %d: name %q but data type %v", i, e.Name, e.Data["type"])
		}
		switch e.Name {
		case "message_start":
			m := e.Data["message"].(map[string]any)
			a.ID, a.Model = m["id"].(string), m["model"].(string)
			n, ok := m["usage"].(map[string]any)["input_tokens"].(float64)
			if !ok {
				t.Errorf("message_start without usage.input_tokens")
			}
			a.InputTokens = n
		case "content_block_start":
			idx := int(e.Data["index"].(float64))
			if idx != len(a.Blocks) {
				t.Fatalf("content_block_start index %d, want %d", idx, len(a.Blocks))
			}
			cb := e.Data["content_block"].(map[string]any)
			a.Blocks = append(a.Blocks, cb)
			partial[idx] = &strings.Builder{}
		case "content_block_delta":
			idx := int(e.Data["index"].(float64))
			d := e.Data["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				a.Blocks[idx]["text"] = a.Blocks[idx]["text"].(string) + d["text"].(string)
			case "input_json_delta":
				partial[idx].WriteString(d["partial_json"].(string))
			default:
				t.Errorf("unknown delta type %v", d["type"])
			}
		case "content_block_stop":
			idx := int(e.Data["index"].(float64))
			if a.Blocks[idx]["type"] == "tool_use" {
				var in any
				if err := json.Unmarshal([]byte(partial[idx].String()), &in); err != nil {
					t.Fatalf("tool input %q is not JSON: %v", partial[idx].String(), err)
				}
				a.Blocks[idx]["input"] = in
			}
		case "message_delta":
			a.StopReason = e.Data["delta"].(map[string]any)["stop_reason"].(string)
			a.OutputTokens = e.Data["usage"].(map[string]any)["output_tokens"].(float64)
		}
	}
	return a
}

func post(t *testing.T, url string, body any) *http.Response {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url, "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// mainRequest is a request shaped like Claude Code's agent loop: it offers tools.
func mainRequest(user string) map[string]any {
	return map[string]any{
		"model": "claude-test", "max_tokens": 100, "stream": true,
		"system":   []map[string]any{{"type": "text", "text": "You are a test."}},
		"tools":    []map[string]any{{"name": "mcp__plugin_toy_toy__echo", "input_schema": map[string]any{"type": "object"}}},
		"messages": []map[string]any{{"role": "user", "content": user}},
	}
}

func streamOf(t *testing.T, s *mockapi.Server, body any) assembled {
	t.Helper()
	resp := post(t, s.URL+"/v1/messages?beta=true", body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	return assemble(t, readSSE(t, resp.Body))
}

func TestStreamText(t *testing.T) {
	s := mockapi.New()
	defer s.Close()
	s.Script(mockapi.On(nil, mockapi.Text("héllo wörld, streamed")))
	a := streamOf(t, s, mainRequest("hi"))

	want := "message_start ping content_block_start content_block_delta content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(a.Names, " "); got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
	if len(a.Blocks) != 1 || a.Blocks[0]["text"] != "héllo wörld, streamed" {
		t.Errorf("blocks = %v", a.Blocks)
	}
	if a.StopReason != "end_turn" || a.Model != "claude-test" || a.OutputTokens < 1 {
		t.Errorf("stop %q model %q output tokens %v", a.StopReason, a.Model, a.OutputTokens)
	}
}

func TestStreamToolUse(t *testing.T) {
	s := mockapi.New()
	defer s.Close()
	input := map[string]any{"type": "apex", "context": "ship \"it\" — now", "n": 3.0}
	s.Script(
		mockapi.On(nil, mockapi.TextThenToolUse("calling", "mcp__plugin_cairn_cairn__start_workflow", input)),
		mockapi.On(nil, mockapi.ToolUse("mcp__plugin_cairn_cairn__transition", nil)),
	)
	a := streamOf(t, s, mainRequest("go"))
	if a.StopReason != "tool_use" || len(a.Blocks) != 2 {
		t.Fatalf("stop %q, %d blocks", a.StopReason, len(a.Blocks))
	}
	if a.Blocks[0]["text"] != "calling" {
		t.Errorf("text block = %v", a.Blocks[0])
	}
	tu := a.Blocks[1]
	if tu["type"] != "tool_use" || tu["name"] != "mcp__plugin_cairn_cairn__start_workflow" {
		t.Errorf("tool block = %v", tu)
	}
	gotIn, _ := json.Marshal(tu["input"])
	wantIn, _ := json.Marshal(input)
	if !bytes.Equal(gotIn, wantIn) {
		t.Errorf("input = %s, want %s", gotIn, wantIn)
	}
	b := streamOf(t, s, mainRequest("again"))
	if b.Blocks[0]["id"] == tu["id"] || b.ID == a.ID {
		t.Errorf("ids repeat: tool %v, message %v", tu["id"], a.ID)
	}
	if in, _ := json.Marshal(b.Blocks[0]["input"]); string(in) != "{}" {
		t.Errorf("nil input streamed as %s, want {}", in)
	}
}

// The usage reports the mock's estimate of the input, or the count a reply sets (to make the
// client compact).
func TestInputTokens(t *testing.T) {
	s := mockapi.New()
	defer s.Close()
	full := mockapi.Text("full")
	full.InputTokens = 190_000
	s.Script(mockapi.On(mockapi.LastUserContains("FULL"), full))
	req := mainRequest("hello")
	raw, _ := json.Marshal(req)
	if a := assemble(t, readSSE(t, post(t, s.URL+"/v1/messages", req).Body)); a.InputTokens != float64(len(raw)/4+1) {
		t.Errorf("input_tokens %v, want the estimate %d", a.InputTokens, len(raw)/4+1)
	}
	if a := assemble(t, readSSE(t, post(t, s.URL+"/v1/messages", mainRequest("FULL")).Body)); a.InputTokens != 190_000 {
		t.Errorf("input_tokens %v, want the reply's 190000", a.InputTokens)
	}
}

func TestSideRequestsDoNotConsumeScript(t *testing.T) {
	s := mockapi.New()
	defer s.Close()
	s.Script(
		mockapi.On(nil, mockapi.Text("main answer")).Named("main"),
		mockapi.On(mockapi.LastUserContains("second"), mockapi.Text("second answer")).Named("second"),
	)
	title := map[string]any{"model": "claude-haiku", "max_tokens": 50, "stream": true,
		"system": "Generate a title", "messages": []map[string]any{{"role": "user", "content": "hi"}}}
	if a := streamOf(t, s, title); a.Blocks[0]["text"] != "ok" {
		t.Errorf("side request got %v, want the default", a.Blocks[0]["text"])
	}
	if a := streamOf(t, s, mainRequest("first")); a.Blocks[0]["text"] != "main answer" {
		t.Errorf("main request got %v", a.Blocks[0]["text"])
	}
	// The next step waits for its predicate; a non-matching main request gets the default.
	if a := streamOf(t, s, mainRequest("other")); a.Blocks[0]["text"] != "ok" {
		t.Errorf("non-matching request got %v", a.Blocks[0]["text"])
	}
	if got := s.Unused(); len(got) != 1 || got[0] != "second" {
		t.Errorf("Unused = %v", got)
	}
	if a := streamOf(t, s, mainRequest("the second one")); a.Blocks[0]["text"] != "second answer" {
		t.Errorf("second step got %v", a.Blocks[0]["text"])
	}
	if got := s.Unused(); len(got) != 0 {
		t.Errorf("Unused = %v", got)
	}
	var steps []string
	for _, r := range s.Requests() {
		steps = append(steps, r.Step)
	}
	if got := strings.Join(steps, ","); got != ",main,,second" {
		t.Errorf("steps = %q", got)
	}
	if n := len(s.MainRequests()); n != 3 {
		t.Errorf("MainRequests = %d, want 3", n)
	}
}

func TestCompactionIsNotMainAndGetsASummary(t *testing.T) {
	s := mockapi.New()
	defer s.Close()
	s.Script(mockapi.On(nil, mockapi.Text("main")).Named("main"))
	compact := mainRequest("CRITICAL: Respond with TEXT ONLY.\nYour task is to create a detailed summary of the conversation so far, paying close attention ...")
	if a := streamOf(t, s, compact); a.Blocks[0]["text"] != mockapi.CompactionSummary {
		t.Errorf("compaction got %q", a.Blocks[0]["text"])
	}
	if u := s.Unused(); len(u) != 1 {
		t.Errorf("a compaction request consumed a step: unused %v", u)
	}
	if n := len(s.MainRequests()); n != 0 {
		t.Errorf("MainRequests counts the compaction: %d", n)
	}
	if n := len(s.Find(mockapi.IsCompaction)); n != 1 {
		t.Errorf("Find(IsCompaction) = %d", n)
	}
}

func TestNonStreaming(t *testing.T) {
	s := mockapi.New()
	defer s.Close()
	s.Script(mockapi.On(nil, mockapi.ToolUse("t", map[string]int{"a": 1})))
	body := mainRequest("hi")
	body["stream"] = false
	resp := post(t, s.URL+"/v1/messages", body)
	var msg struct {
		Type       string `json:"type"`
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type  string          `json:"type"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		} `json:"content"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if msg.Type != "message" || msg.StopReason != "tool_use" || len(msg.Content) != 1 ||
		msg.Content[0].Name != "t" || string(msg.Content[0].Input) != `{"a":1}` {
		t.Errorf("message = %+v", msg)
	}
}

func TestOtherEndpoints(t *testing.T) {
	s := mockapi.New()
	defer s.Close()
	resp, err := http.Get(s.URL + "/api/hello")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/api/hello: %d", resp.StatusCode)
	}
	head, err := http.Head(s.URL + "/api/hello")
	if err != nil {
		t.Fatal(err)
	}
	head.Body.Close()
	if head.StatusCode != 200 {
		t.Errorf("HEAD /api/hello: %d", head.StatusCode)
	}

	ct := post(t, s.URL+"/v1/messages/count_tokens?beta=true", mainRequest(strings.Repeat("word ", 400)))
	var n struct {
		InputTokens int `json:"input_tokens"`
	}
	if err := json.NewDecoder(ct.Body).Decode(&n); err != nil || n.InputTokens < 400 {
		t.Errorf("count_tokens = %d, %v", n.InputTokens, err)
	}

	nf := post(t, s.URL+"/v1/files", map[string]any{"x": 1})
	if nf.StatusCode != 404 {
		t.Errorf("/v1/files: %d, want 404", nf.StatusCode)
	}
	bad, err := http.Post(s.URL+"/v1/messages", "application/json", strings.NewReader("{not json"))
	if err != nil {
		t.Fatal(err)
	}
	bad.Body.Close()
	if bad.StatusCode != 400 {
		t.Errorf("bad body: %d, want 400", bad.StatusCode)
	}

	want := []string{"GET /api/hello -> 200", "HEAD /api/hello -> 200", "POST /v1/messages/count_tokens -> 200", "POST /v1/files -> 404", "POST /v1/messages -> 400"}
	if got := s.Paths(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Paths:\n got %q\nwant %q", got, want)
	}
	reqs := s.Requests()
	if reqs[2].Query != "beta=true" || !strings.Contains(string(reqs[3].Body), `"x":1`) || reqs[0].Seq != 1 || reqs[4].Seq != 5 {
		t.Errorf("recorded = %+v", reqs)
	}
	if reqs[2].Messages != nil {
		t.Errorf("count_tokens decoded as a Messages request")
	}
}

func TestDelayEndsWhenClientHangsUp(t *testing.T) {
	s := mockapi.New()
	defer s.Close()
	s.Script(mockapi.On(nil, mockapi.Reply{Delay: time.Hour}))
	client := &http.Client{Timeout: 200 * time.Millisecond}
	raw, _ := json.Marshal(mainRequest("hi"))
	if _, err := client.Post(s.URL+"/v1/messages", "application/json", bytes.NewReader(raw)); err == nil {
		t.Fatal("a delayed reply came back before the client timeout")
	}
	// Close waits for in-flight handlers: it returns only because the delay honours the hang-up.
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close still waiting on a delayed handler after the client left")
	}
}

func TestRequestHelpers(t *testing.T) {
	s := mockapi.New()
	defer s.Close()
	body := map[string]any{
		"model": "m", "stream": true,
		"system": []map[string]any{{"type": "text", "text": "billing"}, {"type": "text", "text": "You are Claude Code."}},
		"tools":  []map[string]any{{"name": "Bash"}, {"name": "mcp__plugin_toy_toy__echo"}},
		"messages": []map[string]any{
			{"role": "user", "content": []map[string]any{
				{"type": "text", "text": "<system-reminder>Contents of MEMORY.md: TOY-MEMORY</system-reminder>"},
				{"type": "text", "text": "please echo"},
			}},
			{"role": "system", "content": "SessionStart hook additional context: TOY-CONTEXT"},
			{"role": "assistant", "content": []map[string]any{
				{"type": "tool_use", "id": "toolu_1", "name": "mcp__plugin_toy_toy__echo", "input": map[string]any{"text": "a"}},
			}},
			{"role": "user", "content": []map[string]any{
				{"type": "tool_result", "tool_use_id": "toolu_1", "content": []map[string]any{{"type": "text", "text": "TOY-ECHO: a"}}},
				{"type": "tool_result", "tool_use_id": "toolu_2", "content": "plain string result", "is_error": true},
			}},
		},
	}
	post(t, s.URL+"/v1/messages?beta=true", body)
	m := s.FirstMain()
	if m == nil {
		t.Fatal("no main request recorded")
	}
	if m.System.Text() != "billing\nYou are Claude Code." {
		t.Errorf("System.Text = %q", m.System.Text())
	}
	if !m.Contains("SessionStart hook additional context: TOY-CONTEXT") || !m.Contains("TOY-MEMORY") || m.Contains("absent") {
		t.Errorf("Contains is wrong on %q", m.AllText())
	}
	if got := m.LastUserText(); got != "TOY-ECHO: a\nplain string result" {
		t.Errorf("LastUserText = %q", got)
	}
	trs := m.ToolResults()
	if len(trs) != 2 || trs[0] != (mockapi.ToolResult{ToolUseID: "toolu_1", Text: "TOY-ECHO: a"}) ||
		trs[1] != (mockapi.ToolResult{ToolUseID: "toolu_2", Text: "plain string result", IsError: true}) {
		t.Errorf("ToolResults = %+v", trs)
	}
	for name, tc := range map[string]struct {
		p    mockapi.Predicate
		want bool
	}{
		"ends-with-tool-result":  {mockapi.EndsWithToolResult, true},
		"all-main-and-contains":  {mockapi.All(mockapi.IsMain, mockapi.Contains("TOY-CONTEXT")), true},
		"all-one-false":          {mockapi.All(mockapi.IsMain, mockapi.Contains("nope")), false},
		"last-user-has-echo":     {mockapi.LastUserContains("TOY-ECHO"), true},
		"last-user-lacks-prompt": {mockapi.LastUserContains("please echo"), false},
	} {
		if got := tc.p(m); got != tc.want {
			t.Errorf("%s: got %v, want %v", name, got, tc.want)
		}
	}
	if found := s.Find(mockapi.Contains("TOY-MEMORY")); len(found) != 1 {
		t.Errorf("Find = %d requests", len(found))
	}
}

func TestConcurrentRequests(t *testing.T) {
	s := mockapi.New()
	defer s.Close()
	const n = 24
	var steps []mockapi.Step
	for i := range n {
		steps = append(steps, mockapi.On(nil, mockapi.Text(fmt.Sprintf("answer %d", i))))
	}
	s.Script(steps...)
	var wg sync.WaitGroup
	answers := make(chan string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := post(t, s.URL+"/v1/messages?beta=true", mainRequest(fmt.Sprintf("q%d", i)))
			answers <- assemble(t, readSSE(t, resp.Body)).Blocks[0]["text"].(string)
			_ = s.Requests() // read while others write
		}()
	}
	wg.Wait()
	close(answers)
	seen := map[string]bool{}
	for a := range answers {
		if seen[a] {
			t.Errorf("answer %q given twice", a)
		}
		seen[a] = true
	}
	if len(seen) != n || len(s.Unused()) != 0 {
		t.Errorf("%d distinct answers, unused %v", len(seen), s.Unused())
	}
	seqs := map[int]bool{}
	for _, r := range s.Requests() {
		seqs[r.Seq] = true
		if r.Status != 200 {
			t.Errorf("request %d status %d", r.Seq, r.Status)
		}
	}
	if len(seqs) != n {
		t.Errorf("%d distinct sequence numbers, want %d", len(seqs), n)
	}
}

func TestErrorReply(t *testing.T) {
	s := mockapi.New()
	defer s.Close()
	s.Script(mockapi.On(nil, mockapi.Error(529, "overloaded_error")))
	resp := post(t, s.URL+"/v1/messages?beta=true", mainRequest("hi"))
	var body struct {
		Type  string `json:"type"`
		Error struct {
			Type, Message string
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 529 || body.Type != "error" || body.Error.Type != "overloaded_error" || body.Error.Message == "" {
		t.Errorf("status %d, body %+v; want 529 and an overloaded_error", resp.StatusCode, body)
	}
	if got := s.Requests(); len(got) != 1 || got[0].Status != 529 {
		t.Errorf("requests %+v, want one answered 529", got)
	}
	// The next request, unscripted, gets the default reply.
	if a := streamOf(t, s, mainRequest("again")); a.StopReason != "end_turn" {
		t.Errorf("the request after the error stopped with %q", a.StopReason)
	}
}
