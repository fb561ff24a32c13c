// Package mockapi is a scripted stand-in for the Anthropic Messages API, for running the real
// Claude Code CLI in the end-to-end suite. It listens on 127.0.0.1 only, records every request
// (path, headers, body) for assertions, and answers POST /v1/messages from a script of steps
// matched by predicate, with a short default text for whatever the script does not claim (Claude
// Code's title, quota and summary side requests).
//
// It is not a model: it reads no meaning into prompts. It is not the whole API either: it
// speaks just enough of the wire format (SSE streaming, count_tokens, GET or HEAD /api/hello) for Claude
// Code; every other path gets 404 and is recorded.
package mockapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"
)

// Server is a running mock. All methods are safe for concurrent use.
type Server struct {
	// URL is the base URL to give Claude Code as ANTHROPIC_BASE_URL.
	URL string

	srv *httptest.Server

	mu       sync.Mutex
	requests []*Request
	steps    []Step
	next     int // index of the first unused step
	ids      int
}

// New starts a mock on 127.0.0.1 on a free port. Close it when done.
func New() *Server {
	s := &Server{}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the listener and waits for requests in flight.
func (s *Server) Close() { s.srv.Close() }

// Script appends steps to the script.
func (s *Server) Script(steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range steps {
		if st.Name == "" {
			st.Name = fmt.Sprintf("step %d", len(s.steps)+1)
		}
		if st.When == nil {
			st.When = IsMain
		}
		if st.Reply == nil {
			st.Reply = DefaultReply
		}
		s.steps = append(s.steps, st)
	}
}

// Unused names the steps no request has claimed yet.
func (s *Server) Unused() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, st := range s.steps[s.next:] {
		out = append(out, st.Name)
	}
	return out
}

// Requests returns a snapshot of every request received so far, in arrival order. Header,
// Body and Messages are shared with the mock: read them, do not modify them.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = *r
	}
	return out
}

// MainRequests returns the Messages requests of the agent loop (IsMain), in arrival order.
func (s *Server) MainRequests() []*MessagesRequest { return s.Find(IsMain) }

// FirstMain is the first agent-loop request, or nil when none came.
func (s *Server) FirstMain() *MessagesRequest {
	if m := s.MainRequests(); len(m) > 0 {
		return m[0]
	}
	return nil
}

// Find returns the Messages requests (decoded POST /v1/messages bodies) p matches, in
// arrival order.
func (s *Server) Find(p Predicate) []*MessagesRequest {
	var out []*MessagesRequest
	for _, r := range s.Requests() {
		if r.Messages != nil && p(r.Messages) {
			out = append(out, r.Messages)
		}
	}
	return out
}

// Paths lists "METHOD path" of every request, for failure messages.
func (s *Server) Paths() []string {
	var out []string
	for _, r := range s.Requests() {
		out = append(out, fmt.Sprintf("%s %s -> %d", r.Method, r.Path, r.Status))
	}
	return out
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	req := &Request{
		Time:   time.Now(),
		Method: r.Method,
		Path:   r.URL.Path,
		Query:  r.URL.RawQuery,
		Header: r.Header.Clone(),
		Body:   body,
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	req.Seq = len(s.requests)
	s.mu.Unlock()

	status := s.route(w, r, req)

	s.mu.Lock()
	req.Status = status
	s.mu.Unlock()
}

func (s *Server) route(w http.ResponseWriter, r *http.Request, req *Request) int {
	switch {
	case (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.URL.Path == "/api/hello":
		// Claude Code 2.1.330 probes with HEAD when nonessential traffic is allowed.
		return writeJSON(w, http.StatusOK, map[string]string{"message": "hello"})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		return writeJSON(w, http.StatusOK, map[string]int{"input_tokens": estimateTokens(req.Body)})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		m := decodeMessages(req.Body)
		if m == nil {
			return writeError(w, http.StatusBadRequest, "invalid_request_error", "the mock could not decode this Messages request body as JSON")
		}
		reply, step := s.answer(m)
		s.mu.Lock()
		req.Messages = m
		req.Step = step
		s.mu.Unlock()
		if reply.Delay > 0 {
			select {
			case <-time.After(reply.Delay):
			case <-r.Context().Done():
				return 499 // client closed the request, as nginx logs it
			}
		}
		if reply.Status != 0 {
			return writeError(w, reply.Status, reply.ErrorType, fmt.Sprintf("mock failure %d", reply.Status))
		}
		msg := s.message(m, reply)
		if m.Stream {
			writeStream(w, msg)
			return http.StatusOK
		}
		return writeJSON(w, http.StatusOK, msg.final())
	default:
		return writeError(w, http.StatusNotFound, "not_found_error", "the mock API does not serve "+r.Method+" "+r.URL.Path)
	}
}

// answer picks the reply for m: the first unused step when it matches, else the default.
func (s *Server) answer(m *MessagesRequest) (Reply, string) {
	s.mu.Lock()
	var st *Step
	if s.next < len(s.steps) && s.steps[s.next].When(m) {
		st = &s.steps[s.next]
		s.next++
	}
	s.mu.Unlock()
	if st != nil {
		return st.Reply(m), st.Name
	}
	return DefaultReply(m), ""
}

func (s *Server) newID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return fmt.Sprintf("%s_mock%04d", prefix, s.ids)
}

// estimateTokens is a rough count (4 bytes a token): Claude Code only uses it for display and
// compaction thresholds.
func estimateTokens(body []byte) int { return len(body)/4 + 1 }

func writeJSON(w http.ResponseWriter, status int, v any) int {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
	return status
}

func writeError(w http.ResponseWriter, status int, errType, msg string) int {
	return writeJSON(w, status, map[string]any{
		"type":  "error",
		"error": map[string]string{"type": errType, "message": msg},
	})
}
