package mockapi

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
)

// outMessage is an assistant message about to be sent, with its blocks already resolved (ids
// generated, inputs marshalled).
type outMessage struct {
	id, model, stopReason string
	inputTokens           int
	blocks                []outBlock
}

type outBlock struct {
	typ, text, id, name string
	input               json.RawMessage
}

func (s *Server) message(m *MessagesRequest, r Reply) *outMessage {
	out := &outMessage{
		id:          s.newID("msg"),
		model:       cmp.Or(m.Model, "claude-mock"),
		stopReason:  r.stopReason(),
		inputTokens: cmp.Or(r.InputTokens, estimateTokens(m.Raw)),
	}
	for _, b := range r.Blocks {
		ob := outBlock{typ: b.Type, text: b.Text, id: b.ID, name: b.Name}
		if b.Type == "tool_use" {
			if ob.id == "" {
				ob.id = s.newID("toolu")
			}
			raw, err := json.Marshal(cmp.Or(b.Input, any(map[string]any{})))
			if err != nil {
				// A script bug, not a client bug: make it loud in the transcript.
				raw, _ = json.Marshal(map[string]string{"mock_error": "tool input does not marshal: " + err.Error()})
			}
			ob.input = raw
		}
		out.blocks = append(out.blocks, ob)
	}
	return out
}

func (o *outMessage) outputTokens() int {
	n := 1
	for _, b := range o.blocks {
		n += (len(b.text) + len(b.input)) / 4
	}
	return n
}

func usage(input, output int) map[string]any {
	return map[string]any{
		"input_tokens":                input,
		"output_tokens":               output,
		"cache_creation_input_tokens": 0,
		"cache_read_input_tokens":     0,
	}
}

// final is the whole message, for a request with stream false.
func (o *outMessage) final() map[string]any {
	content := []map[string]any{}
	for _, b := range o.blocks {
		if b.typ == "tool_use" {
			content = append(content, map[string]any{"type": "tool_use", "id": b.id, "name": b.name, "input": b.input})
		} else {
			content = append(content, map[string]any{"type": "text", "text": b.text})
		}
	}
	return map[string]any{
		"id": o.id, "type": "message", "role": "assistant", "model": o.model,
		"content": content, "stop_reason": o.stopReason, "stop_sequence": nil,
		"usage": usage(o.inputTokens, o.outputTokens()),
	}
}

// writeStream sends the message as the Messages API's server-sent events.
func writeStream(w http.ResponseWriter, o *outMessage) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("request-id", "req_"+o.id)
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(event string, data map[string]any) {
		data["type"] = event
		raw, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, raw)
		if flusher != nil {
			flusher.Flush()
		}
	}

	send("message_start", map[string]any{"message": map[string]any{
		"id": o.id, "type": "message", "role": "assistant", "model": o.model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": usage(o.inputTokens, 1),
	}})
	send("ping", map[string]any{})
	for i, b := range o.blocks {
		block, delta, key, body := map[string]any{"type": "text", "text": ""}, "text_delta", "text", b.text
		if b.typ == "tool_use" {
			block = map[string]any{"type": "tool_use", "id": b.id, "name": b.name, "input": map[string]any{}}
			delta, key, body = "input_json_delta", "partial_json", string(b.input)
		}
		send("content_block_start", map[string]any{"index": i, "content_block": block})
		// Two deltas, split mid-value, as the real API streams partial JSON.
		for _, part := range splitHalf(body) {
			send("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": delta, key: part}})
		}
		send("content_block_stop", map[string]any{"index": i})
	}
	send("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": o.stopReason, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": o.outputTokens()},
	})
	send("message_stop", map[string]any{})
}

// splitHalf cuts s in two at a rune boundary near its middle; short strings stay whole.
func splitHalf(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	mid := len(s) / 2
	for mid < len(s) && (s[mid]&0xC0) == 0x80 {
		mid++
	}
	if mid >= len(s) {
		return []string{s}
	}
	return []string{s[:mid], s[mid:]}
}
