package mockapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// Request is one HTTP request the mock received, whatever its path.
type Request struct {
	Seq    int // 1-based arrival order
	Time   time.Time
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
	Status int // the status the mock answered with

	// Messages is the decoded body of a POST /v1/messages; nil for other paths or a body that is
	// not a Messages request.
	Messages *MessagesRequest
	// Step names the script step that answered; empty when the default reply did.
	Step string
}

// MessagesRequest is the part of a Messages API request body the suite inspects.
type MessagesRequest struct {
	Model     string    `json:"model"`
	MaxTokens int       `json:"max_tokens"`
	Stream    bool      `json:"stream"`
	System    Content   `json:"system"`
	Messages  []Message `json:"messages"`
	Tools     []Tool    `json:"tools"`

	// Raw is the whole body, for anything the fields above do not cover.
	Raw json.RawMessage `json:"-"`
}

// Message is one turn of the conversation sent to the model.
type Message struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// Tool is one entry of the request's tools list.
type Tool struct {
	Name        string          `json:"name"`
	Type        string          `json:"type,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// Block is one content block: text, tool_use, tool_result, or anything else Claude Code sends
// (its Type says which; unknown types keep only Type).
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   Content         `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

// Content is a list of blocks. The API also allows a bare string wherever content goes; it
// decodes as a single text block.
type Content []Block

// UnmarshalJSON accepts a string or an array of blocks.
func (c *Content) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*c = Content{{Type: "text", Text: s}}
		return nil
	}
	var blocks []Block // null decodes as nil
	if err := json.Unmarshal(data, &blocks); err != nil {
		return err
	}
	*c = blocks
	return nil
}

// Text joins the text of every text block, and of the content nested in tool results, with
// newlines.
func (c Content) Text() string {
	var parts []string
	for _, b := range c {
		switch {
		case b.Type == "text":
			parts = append(parts, b.Text)
		case len(b.Content) > 0:
			parts = append(parts, b.Content.Text())
		}
	}
	return strings.Join(parts, "\n")
}

// ToolResult is a tool_result block found in a request, flattened.
type ToolResult struct {
	ToolUseID string
	Text      string
	IsError   bool
}

// MessagesText is the text of every message, in order, joined with newlines.
func (m *MessagesRequest) MessagesText() string {
	parts := make([]string, 0, len(m.Messages))
	for _, msg := range m.Messages {
		parts = append(parts, msg.Content.Text())
	}
	return strings.Join(parts, "\n")
}

// AllText is the system prompt and every message's text: what the model would read.
func (m *MessagesRequest) AllText() string { return m.System.Text() + "\n" + m.MessagesText() }

// Contains reports whether s appears in the system prompt or any message.
func (m *MessagesRequest) Contains(s string) bool { return strings.Contains(m.AllText(), s) }

// LastUserText is the text of the last user message ("" when there is none).
func (m *MessagesRequest) LastUserText() string {
	for i := len(m.Messages) - 1; i >= 0; i-- {
		if m.Messages[i].Role == "user" {
			return m.Messages[i].Content.Text()
		}
	}
	return ""
}

// ToolResults lists every tool_result block in the conversation, oldest first.
func (m *MessagesRequest) ToolResults() []ToolResult {
	var out []ToolResult
	for _, msg := range m.Messages {
		for _, b := range msg.Content {
			if b.Type == "tool_result" {
				out = append(out, ToolResult{ToolUseID: b.ToolUseID, Text: b.Content.Text(), IsError: b.IsError})
			}
		}
	}
	return out
}

func decodeMessages(body []byte) *MessagesRequest {
	var m MessagesRequest
	if err := json.Unmarshal(body, &m); err != nil {
		return nil
	}
	m.Raw = append(json.RawMessage(nil), body...)
	return &m
}
