package mockapi

import (
	"slices"
	"strings"
	"time"
)

// Predicate decides whether a script step claims a Messages request.
type Predicate func(*MessagesRequest) bool

// IsMain matches the requests of the agent loop itself: they offer tools and are not a
// compaction. Claude Code's other side requests (session titles, quota probes) offer no tools.
func IsMain(m *MessagesRequest) bool { return len(m.Tools) > 0 && !IsCompaction(m) }

// compactionMarker is in the last user message of the request /compact (or auto-compaction)
// sends; that request still offers every tool.
const compactionMarker = "create a detailed summary of the conversation so far"

// IsCompaction matches the request that asks the model to summarise the conversation.
func IsCompaction(m *MessagesRequest) bool {
	return strings.Contains(m.LastUserText(), compactionMarker)
}

// Contains matches a request whose system prompt or messages contain s.
func Contains(s string) Predicate {
	return func(m *MessagesRequest) bool { return m.Contains(s) }
}

// LastUserContains matches a request whose last user message contains s.
func LastUserContains(s string) Predicate {
	return func(m *MessagesRequest) bool { return strings.Contains(m.LastUserText(), s) }
}

// EndsWithToolResult matches a request whose last message carries a tool_result: the request
// that follows a tool call.
func EndsWithToolResult(m *MessagesRequest) bool {
	if len(m.Messages) == 0 {
		return false
	}
	last := m.Messages[len(m.Messages)-1]
	return last.Role == "user" && slices.ContainsFunc(last.Content, func(b Block) bool { return b.Type == "tool_result" })
}

// All matches when every predicate does.
func All(ps ...Predicate) Predicate {
	return func(m *MessagesRequest) bool {
		for _, p := range ps {
			if !p(m) {
				return false
			}
		}
		return true
	}
}

// Step is one scripted answer. Steps are consumed in order: a request is offered only to the
// first step not yet used; if its predicate refuses, the default reply answers and the step
// waits for a later request. That keeps Claude Code's side requests from eating the script.
type Step struct {
	Name  string    // shows in Request.Step and in Unused; defaults to "step N"
	When  Predicate // nil means IsMain
	Reply func(*MessagesRequest) Reply
}

// On is a step answering reply to the first request matching when (nil: IsMain).
func On(when Predicate, reply Reply) Step {
	return Step{When: when, Reply: func(*MessagesRequest) Reply { return reply }}
}

// Named returns s with a name, for clearer failures.
func (s Step) Named(name string) Step { s.Name = name; return s }

// Reply is what the mock model answers.
type Reply struct {
	Blocks []ReplyBlock
	// Delay holds the answer back (or until the client hangs up), to test timeouts.
	Delay time.Duration
	// Status, when not 0, answers with this HTTP status and an API error body of ErrorType
	// instead of a message (500 api_error, 529 overloaded_error, 400 invalid_request_error).
	Status    int
	ErrorType string
	// InputTokens, when not 0, is the input token count the reply's usage reports instead of
	// the mock's estimate: a count near the context window makes Claude Code compact the
	// conversation on its own before its next request.
	InputTokens int
}

// ReplyBlock is one content block of a reply: text, or a tool call.
type ReplyBlock struct {
	Type  string // "text" or "tool_use"
	Text  string
	ID    string // tool_use id; generated when empty
	Name  string
	Input any // marshalled as the tool input; nil means {}
}

// Text is a reply of one text block that ends the turn.
func Text(s string) Reply { return Reply{Blocks: []ReplyBlock{{Type: "text", Text: s}}} }

// Error is a reply that fails the request as the API does: HTTP status and error type.
func Error(status int, errType string) Reply { return Reply{Status: status, ErrorType: errType} }

// ToolUse is a reply calling one tool with input (any JSON-marshalable value).
func ToolUse(name string, input any) Reply {
	return Reply{Blocks: []ReplyBlock{{Type: "tool_use", Name: name, Input: input}}}
}

// TextThenToolUse is a reply saying text and then calling a tool, as models often do.
func TextThenToolUse(text, name string, input any) Reply {
	return Reply{Blocks: []ReplyBlock{{Type: "text", Text: text}, {Type: "tool_use", Name: name, Input: input}}}
}

// stopReason is "tool_use" when a block is a tool call and "end_turn" otherwise.
func (r Reply) stopReason() string {
	if slices.ContainsFunc(r.Blocks, func(b ReplyBlock) bool { return b.Type == "tool_use" }) {
		return "tool_use"
	}
	return "end_turn"
}

// CompactionSummary is the default answer to a compaction request: Claude Code asks again,
// more sternly, when the answer lacks a <summary> block.
const CompactionSummary = "<analysis>mock analysis</analysis>\n<summary>MOCK-SUMMARY of the conversation so far.</summary>"

// DefaultReply answers every request no step claims: a short text that ends the turn (a
// well-formed summary for a compaction request).
func DefaultReply(m *MessagesRequest) Reply {
	if IsCompaction(m) {
		return Text(CompactionSummary)
	}
	return Text("ok")
}
