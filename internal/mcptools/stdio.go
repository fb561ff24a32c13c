package mcptools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/lazyre"
	"github.com/cairn-dev/cairn/internal/strictjson"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// MaxLineBytes bounds one JSON-RPC message on stdin. It is well above MaxArgsBytes so that an
// oversized tool call still reaches the tool and gets a readable isError result.
const MaxLineBytes = 4 << 20

// DrainTimeout bounds how long shutdown waits for calls already running (a variable for tests).
var DrainTimeout = 5 * time.Second

// updateQuiet is how long stdin must stay quiet, once the plugin was updated, before the
// server answers what it read and exits; updateHold bounds the whole wait.
const (
	updateQuiet = 50 * time.Millisecond
	updateHold  = 1500 * time.Millisecond
)

// maxInFlight bounds the requests running at once. More are queued in order, up to
// maxQueuedBytes, rather than left unread: stdin must always be read, because the answer to
// an elicitation comes in on it while calls wait behind the one that asked.
const maxInFlight = 16

// maxQueuedBytes bounds the requests read but not yet running; a request beyond it is refused
// at once.
const maxQueuedBytes = 32 << 20

// ServeStdio serves MCP as newline-delimited JSON-RPC on in and out until in ends or ctx is
// done, then stops reading, lets the requests already read finish (at most DrainTimeout)
// and returns. It is our own small transport rather than mcp-go's StdioServer because it must
// answer server/discover with -32601 at once (Claude Code then falls back to initialize instead
// of waiting 2.8 s), must not cancel running engine calls on shutdown, and must bound the size
// of a message.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	w := &lineWriter{w: out, hold: s.restart}
	sess := &stdioSession{notes: make(chan mcp.JSONRPCNotification, 64), w: w, gone: make(chan struct{})}
	if err := s.mcp.RegisterSession(ctx, sess); err != nil {
		return fmt.Errorf("registering the stdio session: %w", err)
	}
	defer s.mcp.UnregisterSession(context.Background(), sess.SessionID())

	// Requests run on a context that shutdown does not cancel: a call that has begun finishes.
	reqCtx := s.mcp.WithContext(context.WithoutCancel(ctx), sess)

	lines := make(chan lineRead)
	stopRead := make(chan struct{})
	stdin := &stdinReader{r: in}
	go readLines(stdin, lines, stopRead)
	defer close(stopRead)

	go func() {
		for {
			select {
			case n := <-sess.notes:
				w.write(n)
			case <-stopRead:
				return
			}
		}
	}()

	var (
		running  int
		queue    []queued // oldest first
		queuedN  int      // their bytes
		queuedID = map[string]bool{}
		finished = make(chan struct{}, maxInFlight)
		result   error
		// Once the plugin was updated (restart, then nil), the answers are held (lineWriter)
		// and stdin is read on until the client has been quiet for updateQuiet (at most
		// updateHold): the calls of a turn arrive a few milliseconds apart, and each must be
		// answered, not lost when the server exits. Answering at once would let the model's
		// retry reach this old server again.
		restart  = s.restart
		quiet    *time.Timer
		quietC   <-chan time.Time
		holdEnds <-chan time.Time
		// The requests running, by id as sent. Their cancellation is ours, not mcp-go's: mcp-go
		// keys the requests it runs by the id's text (%v), so that a cancellation of "1" would
		// cancel the request 1 as well.
		cancelMu sync.Mutex
		inFlight = make(map[string]*runningRequest, maxInFlight)
	)
	start := func(q queued) {
		running++
		var note requestNote
		ctx, cancel := context.WithCancel(context.WithValue(reqCtx, requestNoteKey{}, &note))
		cancelMu.Lock()
		inFlight[string(q.id)] = &runningRequest{cancel: cancel}
		cancelMu.Unlock()
		go func() {
			defer func() { finished <- struct{}{} }()
			defer cancel()
			var resp mcp.JSONRPCMessage
			if q.method == string(mcp.MethodToolsCall) && len(q.msg) > MaxArgsBytes {
				// Arguments over the limit are refused for their size before mcp-go reads
				// them into Go values, which costs many times the message.
				resp = s.unreadableCall(ctx, q)
			}
			if resp == nil {
				resp = s.mcp.HandleMessage(ctx, q.msg)
			}
			if f := s.opt.answering; f != nil {
				f()
			}
			cancelMu.Lock()
			dropped := inFlight[string(q.id)].cancelled
			delete(inFlight, string(q.id))
			cancelMu.Unlock()
			if dropped {
				// MCP: a cancelled request gets no answer. The call ran as far as it got: a change
				// it made is said on the next result, whenever the cancel came.
				if note.ran != "" {
					s.cancelledRan.Store(&note.ran)
				}
				return
			}
			if e, ok := resp.(mcp.JSONRPCError); ok && e.Error.Code == mcp.INVALID_REQUEST && q.method == string(mcp.MethodToolsCall) {
				if r := s.unreadableCall(ctx, q); r != nil {
					resp = r
				}
			}
			if resp != nil {
				w.answer(withID(unquoted(q, resp, note.err), q.id))
			}
		}()
	}
	// done frees the slot of a request that finished and starts the oldest one queued.
	done := func() {
		running--
		if len(queue) > 0 {
			q := queue[0]
			queue[0] = queued{}
			queue = queue[1:]
			queuedN -= len(q.msg)
			delete(queuedID, string(q.id))
			start(q)
		}
	}
	// drop forgets a queued request the client cancelled: it was not started, so nothing of it
	// runs, and (as MCP asks) it gets no answer. A running one is cancelled, and its answer is
	// not sent.
	drop := func(id json.RawMessage) {
		cancelMu.Lock()
		if r := inFlight[string(id)]; r != nil {
			r.cancelled = true
			r.cancel()
		}
		cancelMu.Unlock()
		i := slices.IndexFunc(queue, func(q queued) bool { return bytes.Equal(q.id, id) })
		if i >= 0 {
			queuedN -= len(queue[i].msg)
			queue = slices.Delete(queue, i, i+1)
			delete(queuedID, string(id))
		}
	}
	// inUse says whether a request with the id is running or waiting to run: MCP forbids
	// reusing one, and the client could match only one of the two answers to it.
	inUse := func(id json.RawMessage) bool {
		cancelMu.Lock()
		_, running := inFlight[string(id)]
		cancelMu.Unlock()
		return running || queuedID[string(id)]
	}
	// writing runs a write of the read loop's and waits for it, so that a client that reads
	// slowly is read from slowly, but not past ctx: a client that has stopped reading stdout
	// and then signals must see the server shut down, not wait for the pipe for ever.
	writing := func(write func()) {
		written := make(chan struct{})
		go func() {
			defer close(written)
			write()
		}()
		select {
		case <-written:
		case <-ctx.Done():
		}
	}
	// reply writes the read loop's own answers.
	reply := func(v any) { writing(func() { w.answer(v) }) }
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-restart:
			restart, quiet, holdEnds = nil, time.NewTimer(updateQuiet), time.After(updateHold)
			quietC = quiet.C
		case <-quietC:
			if stdin.waiting.Load() {
				break loop // readLines waits on stdin, having handed over all it read
			}
			quiet.Reset(updateQuiet)
		case <-holdEnds:
			break loop
		case <-finished:
			done()
		case l := <-lines:
			if l.err != nil {
				if !errors.Is(l.err, io.EOF) {
					result = fmt.Errorf("reading stdin: %w", l.err)
				}
				break loop
			}
			if quiet != nil {
				quiet.Reset(updateQuiet)
			}
			if l.tooLong {
				reply(errorResponse(l.id, mcp.INVALID_REQUEST,
					fmt.Sprintf("message is larger than %d bytes; it was not run and nothing was changed: keep large content in a file and pass its path", MaxLineBytes)))
				continue
			}
			req := s.dispatch(reqCtx, sess, l.data, reply, drop)
			switch {
			case req.msg == nil:
			case inUse(req.id):
				reply(errorResponse(req.id, mcp.INVALID_REQUEST,
					"invalid request: a request with this id is still running or waiting to run; this one was not run and nothing was changed: give each request an id of its own"))
			case running < maxInFlight:
				start(req)
			case queuedN+len(req.msg) <= maxQueuedBytes:
				queue = append(queue, req)
				queuedN += len(req.msg)
				queuedID[string(req.id)] = true
			default:
				reply(errorResponse(req.id, mcp.INTERNAL_ERROR,
					fmt.Sprintf("cairn-mcp has %d requests running and %d waiting; this one was not run and nothing was changed: send it again once earlier calls have answered", running, len(queue))))
			}
		}
		if w.failed.Load() {
			break
		}
	}
	// Nothing more is read: a question put to the person can no longer be answered, and the
	// calls waiting for one give up now rather than at the drain timeout.
	close(sess.gone)

	// Every request read is run, as it would have been had the client stayed; the drain and
	// closing the engine after it (here or in main) are bounded all the same, once.
	s.stopBy.Store(time.Now().Add(DrainTimeout).UnixNano())
	timeout := time.After(DrainTimeout)
drain:
	for running > 0 {
		select {
		case <-finished:
			done()
		case <-timeout:
			s.opt.Log.Printf("shutting down with calls still running after %s (%d not started)", DrainTimeout, len(queue))
			break drain
		}
	}
	select {
	case <-s.restart:
		// The answers held go last, once the engine is closed (tens of milliseconds): the
		// model's retry, sent as soon as it reads "call it again", must find this process
		// gone, or Claude Code hands it to this old server and reports the connection closed.
		if err := s.Close(context.Background()); err != nil {
			s.opt.Log.Printf("closing: %v", err)
		}
		writing(w.release)
	default:
		// Nothing is held without an update; a notification write blocked on a client that
		// stopped reading must not keep the server from returning once stdin has ended.
	}
	return result
}

// runningRequest is a request that runs: its cancellation, and whether the client sent one.
type runningRequest struct {
	cancel    context.CancelFunc
	cancelled bool
}

// queued is a request to run: one that waits for a free slot sits in ServeStdio's queue.
type queued struct {
	id     json.RawMessage
	method string
	msg    []byte
}

// unreadableCall answers a tools/call whose arguments mcp-go could not read with the tool's
// own isError result. mcp-go decodes the arguments into Go values before any tool sees them,
// and a number beyond float64's range (1e999) fails there with a protocol error that names no
// argument (and repeats the number). The tool's decoder reads them as they are: it names the
// argument, or, when every argument is otherwise right, the one whose JSON holds the number
// (strict JSON refuses it).
// It returns nil when the call is unreadable for another reason: mcp-go's error stands.
// A call whose message is larger than MaxArgsBytes is put to it before mcp-go, so that
// arguments over the limit are refused without being read into Go values; nil then means the
// arguments are right and mcp-go runs the call.
func (s *Server) unreadableCall(ctx context.Context, q queued) mcp.JSONRPCMessage {
	var req struct {
		Params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(q.msg, &req) != nil {
		return nil
	}
	i := slices.IndexFunc(specs, func(sp *toolSpec) bool { return sp.name == req.Params.Name })
	if i < 0 {
		return nil
	}
	spec := specs[i]
	a, argErr := decodeArgs(spec, req.Params.Arguments)
	if argErr == nil {
		return nil
	}
	return mcp.NewJSONRPCResultResponse(mcp.NewRequestId(q.id), s.serve(ctx, spec, a, argErr))
}

// dispatch routes one message: it answers server/discover itself (before mcp-go sees it),
// hands answers to our own requests to the session and notifications to mcp-go in order
// (a cancellation to drop as well), and returns a request for the caller to run.
func (s *Server) dispatch(ctx context.Context, sess *stdioSession, line []byte, reply func(any), drop func(id json.RawMessage)) queued {
	if answers, ok := batchRefusal(line); ok {
		if answers != nil {
			reply(answers)
		}
		return queued{}
	}
	if strictjson.KindOf(line) != "an object" && json.Valid(line) {
		reply(errorResponse(nil, mcp.INVALID_REQUEST, "invalid request: each line must be one JSON-RPC message, a JSON object; it was not run"))
		return queued{}
	}
	var env struct {
		JSONRPC json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &env); err != nil {
		if clipped, ok := clipDeep(line, clipDepth); ok {
			// Valid JSON nested deeper than encoding/json reads: read with the deep part
			// cut, a call's argument is refused by the tool as nested too deeply, naming it.
			return s.dispatch(ctx, sess, clipped, reply, drop)
		}
		// Answered with the request's id when it can be found (JSON nested deeper than
		// encoding/json reads is valid to the client), or the client waits for it for ever.
		id := sniffID(line[:min(len(line), sniffBytes)], line[max(0, len(line)-sniffBytes):])
		reply(errorResponse(id, mcp.PARSE_ERROR, "parse error: each line must be one JSON-RPC message"))
		return queued{}
	}
	var method string // "" when missing or not a string
	_ = json.Unmarshal(env.Method, &method)
	// An id of null makes a request, which JSON-RPC answers (its error's id is null too), not
	// a notification: the client waits for the answer. Only a notification's is let pass.
	isRequest := len(env.ID) > 0 && (string(env.ID) != "null" || !strings.HasPrefix(method, "notifications/"))
	if method != "" {
		// encoding/json, and so mcp-go, takes the last of a member given twice: what runs
		// would not be what a reader of the first (the client, a proxy) took it for.
		if member, id := givenTwice(line, env.ID); member != "" {
			if isRequest {
				reply(errorResponse(id, mcp.INVALID_REQUEST, fmt.Sprintf("invalid request: %s is given twice; it was not run and nothing was changed: give each member once", member)))
			}
			return queued{}
		}
	}
	switch {
	case method == "" && (len(env.Result) > 0 || len(env.Error) > 0 || sess.waiting(env.ID)):
		sess.reply(env.ID, line) // the answer to a request of ours (elicitation)
	case isRequest && string(env.JSONRPC) != `"2.0"`:
		// mcp-go calls a number here a parse error, which the line is not, and another string
		// an "Invalid JSON-RPC version", without the one it takes.
		reply(errorResponse(answerID(env.ID), mcp.INVALID_REQUEST, `invalid request: "jsonrpc" must be "2.0"; it was not run`))
	case method == "":
		// A request with no method: answered, or the client waits for it for ever.
		if isRequest {
			reply(errorResponse(answerID(env.ID), mcp.INVALID_REQUEST, "invalid request: a request needs a method, a non-empty string; it was not run"))
		}
	case isRequest && strings.HasPrefix(method, "notifications/"):
		// The method is not repeated: it may be long, and only its prefix matters.
		reply(errorResponse(answerID(env.ID), mcp.INVALID_REQUEST, "invalid request: a notification (a method under notifications/) is sent without an id; it was not acted on"))
	case method == string(mcp.MethodServerDiscover):
		if isRequest {
			reply(errorResponse(env.ID, mcp.METHOD_NOT_FOUND, "server/discover is not supported; use initialize"))
		}
	case method == string(mcp.MethodNotificationCancelled):
		// Acted on here, in order, on the read loop, and not handed to mcp-go (drop).
		var n struct {
			Params struct {
				RequestID json.RawMessage `json:"requestId"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &n) == nil && len(n.Params.RequestID) > 0 {
			drop(n.Params.RequestID)
		}
	case !isRequest:
		// Other notifications (initialized) are handled in order, on the read loop.
		s.mcp.HandleMessage(ctx, line)
	case !validID(env.ID):
		reply(errorResponse(nil, mcp.INVALID_REQUEST, "invalid request: the id must be a string (UTF-8 text) or an integer; the request was not run"))
	default:
		return queued{id: env.ID, method: method, msg: readableID(line, env.ID)}
	}
	return queued{}
}

// readableID is a copy of the request line for mcp-go to run, with an integer id beyond the
// range of a float64, which mcp-go reads ids as (it answered "Failed to parse message"), written
// 0 in it: the answer goes out with the id as sent (withID). The id is given once (givenTwice).
func readableID(line []byte, id json.RawMessage) []byte {
	var f float64
	if strictjson.KindOf(id) != "a number" || json.Unmarshal(id, &f) == nil {
		return bytes.Clone(line)
	}
	var out []byte
	strictjson.Each(line, func(key, v []byte) bool {
		if !bytes.EqualFold(key, []byte("id")) {
			return true
		}
		at := cap(line) - cap(v) // v is line[at:...]
		out = slices.Concat(line[:at], []byte("0"), line[at+len(v):])
		return false
	})
	if out == nil {
		return bytes.Clone(line)
	}
	return out
}

// givenTwice names the first member the request line, or its params, gives twice, as
// encoding/json matches names (unescaped, whatever their case), and returns the id to answer
// with: the request's, or none when it gave two different ones. The name is "" when there is
// no such member.
func givenTwice(line []byte, id json.RawMessage) (member string, answer json.RawMessage) {
	var ids [][]byte
	var params []byte
	strictjson.Each(line, func(key []byte, v []byte) bool {
		switch {
		case bytes.EqualFold(key, []byte("id")):
			ids = append(ids, v)
		case bytes.EqualFold(key, []byte("params")):
			params = v
		}
		return true
	})
	member = repeated(line)
	if member == "" && len(params) > 0 {
		switch member = repeated(params); member {
		case "":
		case "a member": // not said back
			member += " of params"
		default:
			member = "params." + member
		}
	}
	if member == "" {
		return "", nil
	}
	for _, other := range ids {
		if !bytes.Equal(other, ids[0]) {
			return member, nil
		}
	}
	return member, answerID(id)
}

// repeated returns the first name the JSON object b gives twice (strictjson.FoldedTwice), as
// said back ("a member" when it is not a plain name: the client's text is not repeated), or ""
// when none is or b is not an object.
func repeated(b []byte) string {
	switch name, _ := strictjson.FoldedTwice(b); {
	case name == nil:
		return ""
	case plainName().Match(name):
		return string(name)
	}
	return "a member"
}

// plainName is a member name said back in a refusal.
var plainName = lazyre.New(`^[A-Za-z_$][A-Za-z0-9_$]{0,63}$`)

// batchRefusal answers a JSON-RPC batch (a JSON array of messages), which this server does
// not run: each request in it gets an error with its id, in one array as JSON-RPC answers a
// batch, so that the client is not left waiting for them; notifications and answers in it get
// none. ok is false when line is not a batch; answers is nil when nothing in it needs one.
func batchRefusal(line []byte) (answers any, ok bool) {
	var items []json.RawMessage
	if line[0] != '[' || json.Unmarshal(line, &items) != nil {
		return nil, false
	}
	const msg = "invalid request: a batch (a JSON array of messages) is not supported, and no message in it was run; send each one on its own line"
	if len(items) == 0 {
		return errorResponse(nil, mcp.INVALID_REQUEST, msg), true
	}
	var errs []mcp.JSONRPCError
	for _, it := range items {
		var env struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		switch err := json.Unmarshal(it, &env); {
		case err != nil: // not an object
			errs = append(errs, errorResponse(nil, mcp.INVALID_REQUEST, msg))
		case env.Method == "" || len(env.ID) == 0 || string(env.ID) == "null" && strings.HasPrefix(env.Method, "notifications/"):
			// An answer or a notification: JSON-RPC answers neither.
		default:
			errs = append(errs, errorResponse(answerID(env.ID), mcp.INVALID_REQUEST, msg))
		}
	}
	if len(errs) == 0 {
		return nil, true
	}
	return errs, true
}

// answerID is the id to answer a refused request with: its own when MCP allows it, else none.
func answerID(id json.RawMessage) json.RawMessage {
	if validID(id) {
		return id
	}
	return nil
}

// validID says whether id is one MCP allows on a request: a string or an integer. A string
// that is not UTF-8 is none: encoding/json reads it with U+FFFD in place of the bytes, and the
// answer would come back under an id the client never sent.
func validID(id json.RawMessage) bool {
	switch strictjson.KindOf(id) {
	case "a string":
		return utf8.Valid(id)
	case "a number":
		return !bytes.ContainsAny(id, ".eE")
	}
	return false
}

// unquoted is mcp-go's answer with an error that quotes the name the client sent (an unknown
// tool's, an unknown method's) said without it: the name may be megabytes long, or a secret
// pasted in the wrong place, and the error goes back into the model's context. A request whose
// params mcp-go could not read (refused, from the hook) is said in JSON's words.
func unquoted(q queued, resp mcp.JSONRPCMessage, refused error) mcp.JSONRPCMessage {
	e, ok := resp.(mcp.JSONRPCError)
	mistyped, isType := errors.AsType[*json.UnmarshalTypeError](refused)
	_, isCursor := errors.AsType[base64.CorruptInputError](refused)
	switch {
	case !ok:
	case e.Error.Code == mcp.METHOD_NOT_FOUND && strings.Contains(e.Error.Message, q.method):
		e.Error.Message = "method not found"
		return e
	case e.Error.Code == mcp.INVALID_PARAMS && q.method == string(mcp.MethodToolsCall) && strings.Contains(e.Error.Message, "not found"):
		e.Error.Message = "tool not found: tools/list names cairn's tools"
		var call struct {
			Params struct{ Name string } `json:"params"`
		}
		if json.Unmarshal(q.msg, &call) == nil && call.Params.Name == "" { // params null, no name
			e.Error.Message = "invalid params: params.name is required, the name of one of cairn's tools (tools/list gives them); the request was not run"
		}
		return e
	case e.Error.Code == mcp.UNSUPPORTED_PROTOCOL_VERSION:
		d, _ := e.Error.Data.(mcp.UnsupportedProtocolVersionData)
		if !versionForm().MatchString(d.Requested) {
			d.Requested = "" // the client's text, whatever it holds, is not repeated
		}
		e.Error.Message = fmt.Sprintf("unsupported protocol version (supported: %s); the request was not run", strings.Join(d.Supported, ", "))
		e.Error.Data = d
		return e
	case e.Error.Code == mcp.INVALID_PARAMS && isCursor:
		// The one param read as base64; mcp-go says only "illegal base64 data at input byte 7".
		e.Error.Message = "invalid params: params.cursor is not one this server gave; the request was not run: call tools/list without a cursor"
		return e
	case e.Error.Code == mcp.INVALID_REQUEST && isType:
		e.Error.Message = mistypedText(q.msg, mistyped)
		return e
	}
	return resp
}

// requestNote is what handling one request leaves for ServeStdio, in the goroutine that
// handles it: err, the error mcp-go refused it with, as its error hook saw it (mcp-go's own
// text names Go types, "cannot unmarshal array into Go struct field CallToolRequest.params of
// type mcp.params", and repeats a number it cannot store in full); ran, what a call that made
// its change says of it should its answer be dropped (serve).
type requestNote struct {
	err error
	ran string
}

type requestNoteKey struct{}

// paramsHooks keeps, for the request whose context has a requestNote, the error mcp-go
// refused it with.
func paramsHooks() *server.Hooks {
	h := &server.Hooks{}
	h.AddOnError(func(ctx context.Context, _ any, _ mcp.MCPMethod, _ any, err error) {
		if f, ok := ctx.Value(requestNoteKey{}).(*requestNote); ok {
			f.err = err
		}
	})
	return h
}

// mistypedText says which member of a request was of the wrong JSON type and what it takes,
// by its whole JSON path (array indices too, as a tool argument is named); the value is not
// repeated.
func mistypedText(msg []byte, te *json.UnmarshalTypeError) string {
	return fmt.Sprintf("invalid request: %v; the request was not run", strictjson.ExplainIn(msg, te))
}

// withID is mcp-go's answer with the request's id exactly as it was sent: mcp-go reads a
// number as a float64, and an integer beyond 2^53 would come back as another number, whose
// answer the client would never match.
func withID(resp mcp.JSONRPCMessage, id json.RawMessage) mcp.JSONRPCMessage {
	switch r := resp.(type) {
	case mcp.JSONRPCResponse:
		r.ID = mcp.NewRequestId(id)
		return r
	case mcp.JSONRPCError:
		r.ID = mcp.NewRequestId(id)
		return r
	}
	return resp
}

type lineRead struct {
	data    []byte
	err     error
	tooLong bool
	id      json.RawMessage // best effort, for a message too long to parse
}

// stdinReader is the client's stream as readLines reads it: it says whether readLines waits on
// the stream itself, having handed over every whole message it read.
type stdinReader struct {
	r       io.Reader
	waiting atomic.Bool
}

func (r *stdinReader) Read(p []byte) (int, error) {
	r.waiting.Store(true)
	n, err := r.r.Read(p)
	r.waiting.Store(false)
	return n, err
}

// readLines reads newline-delimited messages, each at most MaxLineBytes; a longer one is
// skipped and reported with the id found at its start or its end.
func readLines(in io.Reader, out chan<- lineRead, stop <-chan struct{}) {
	br := bufio.NewReaderSize(in, 64<<10)
	send := func(l lineRead) bool {
		select {
		case out <- l:
			return true
		case <-stop:
			return false
		}
	}
	for {
		var line, tail []byte
		n := 0
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			if n += len(chunk); n <= MaxLineBytes {
				line = append(line, chunk...)
			} else {
				// Only the ends are kept, for the id: a client may write it first or last.
				if tail == nil {
					tail = bytes.Clone(line[max(0, len(line)-sniffBytes):])
					line = bytes.Clone(line[:min(len(line), sniffBytes)])
				}
				tail = append(tail, chunk...)
				tail = append(tail[:0], tail[max(0, len(tail)-sniffBytes):]...)
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if n > MaxLineBytes {
			if !send(lineRead{tooLong: true, id: sniffID(line, tail)}) {
				return
			}
		} else if line := bytes.TrimSpace(line); len(line) > 0 {
			if !send(lineRead{data: line}) {
				return
			}
		}
		if err != nil {
			send(lineRead{err: err})
			return
		}
	}
}

// versionForm is a protocol version as MCP writes one (2025-11-25): one of that form is said
// back when refused.
var versionForm = lazyre.New(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)

// sniffBytes is how much of each end of an oversized message is kept to find its id.
const sniffBytes = 512

// idValue is a JSON-RPC id as sniffID accepts it: a whole number or a short string.
const idValue = `(-?[0-9]+|"(?:[^"\\]|\\.){0,128}")`

var (
	idRE = lazyre.New(`"id"\s*:\s*` + idValue)
	// lastIDRE is an id that is the last member of the outermost object: Claude Code's
	// client (the MCP TypeScript SDK) writes {...request, jsonrpc, id}.
	lastIDRE = lazyre.New(`[,{]\s*"id"\s*:\s*` + idValue + `\s*}\s*$`)
)

// sniffID finds the id of a message too long to parse from its first and last bytes: the
// outermost object's "id" member, never one inside its params (a task's id, a checkpoint's).
func sniffID(head, tail []byte) json.RawMessage {
	if m := lastIDRE().FindSubmatch(tail); m != nil {
		return json.RawMessage(bytes.Clone(m[1]))
	}
	for _, loc := range idRE().FindAllSubmatchIndex(head, -1) {
		if depthAt(head[:loc[0]]) == 1 {
			return json.RawMessage(bytes.Clone(head[loc[2]:loc[3]]))
		}
	}
	return nil
}

// brackets calls f with the index of each bracket ({, [, } or ]) outside strings in the JSON
// text b and of each quote that opens or closes a string, with the byte, until f says stop,
// and says whether b ends inside a string.
func brackets(b []byte, f func(i int, c byte) (stop bool)) (inString bool) {
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
			if f(i, c) {
				return inString
			}
		case inString:
		case c == '{' || c == '[' || c == '}' || c == ']':
			if f(i, c) {
				return inString
			}
		}
	}
	return inString
}

// opens says whether a bracket opens an array or an object.
func opens(c byte) bool { return c == '{' || c == '[' }

// depthAt is how deep in objects and arrays the end of the JSON text b is; -1 inside a string.
func depthAt(b []byte) int {
	depth := 0
	inString := brackets(b, func(_ int, c byte) bool {
		switch {
		case c == '"':
		case opens(c):
			depth++
		default:
			depth--
		}
		return false
	})
	if inString {
		return -1
	}
	return depth
}

// clipDepth is where clipDeep cuts a message: deeper than any argument is accepted
// (maxArgsDepth, inside params and arguments), shallower than encoding/json's 10,000 levels.
const clipDepth = 1000

// clipDeep returns b with each array or object that opens deeper than depth replaced by 0,
// and whether it cut one. JSON.stringify writes 20,000 levels happily; encoding/json, and so
// mcp-go, refuses the whole line, and the client was told its message was not JSON-RPC.
// Where b is not JSON, the result is not either.
func clipDeep(b []byte, depth int) ([]byte, bool) {
	var out []byte
	level, from, cut := 0, 0, -1 // cut: where the array or object cut opened
	brackets(b, func(i int, c byte) bool {
		switch {
		case c == '"':
		case opens(c):
			if level++; level == depth+1 {
				cut = i
			}
		case level == depth+1 && cut >= 0:
			out = append(append(out, b[from:cut]...), '0')
			from, cut = i+1, -1
			level--
		default:
			level--
		}
		return false
	})
	if cut >= 0 { // never closed: cut to the end
		out = append(append(out, b[from:cut]...), '0')
		from = len(b)
	}
	if out == nil {
		return b, false
	}
	return append(out, b[from:]...), true
}

// errorResponse is a JSON-RPC error; a missing id is sent as null.
func errorResponse(id json.RawMessage, code int, msg string) mcp.JSONRPCError {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	return mcp.NewJSONRPCError(mcp.NewRequestId(id), code, msg, nil)
}

// lineWriter writes one message per line; the lock keeps concurrent responses whole. After a
// failed write (the client is gone) it stops writing and the server shuts down. Answers to
// requests are held from when hold is closed (the plugin was updated) until release.
type lineWriter struct {
	mu       sync.Mutex
	w        io.Writer
	failed   atomic.Bool
	hold     <-chan struct{}
	held     [][]byte
	released bool
}

func (lw *lineWriter) write(v any) { lw.put(v, false) }

// answer writes the answer to a request, or holds it.
func (lw *lineWriter) answer(v any) { lw.put(v, true) }

func (lw *lineWriter) put(v any, answer bool) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(errorResponse(nil, mcp.INTERNAL_ERROR, "response could not be encoded"))
	}
	b = append(b, '\n')
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if answer && !lw.released {
		select {
		case <-lw.hold:
			lw.held = append(lw.held, b)
			return
		default:
		}
	}
	lw.writeLocked(b)
}

// release writes the answers held, and those to come at once.
func (lw *lineWriter) release() {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.released = true
	for _, b := range lw.held {
		lw.writeLocked(b)
	}
	lw.held = nil
}

func (lw *lineWriter) writeLocked(b []byte) {
	if lw.failed.Load() {
		return
	}
	if _, err := lw.w.Write(b); err != nil {
		lw.failed.Store(true)
	}
}

// stdioSession is the one client of a stdio server. It keeps what the client declared at
// initialize, and sends the server's own requests (elicitation) and routes their answers.
type stdioSession struct {
	notes       chan mcp.JSONRPCNotification
	initialized atomic.Bool
	w           *lineWriter
	info        atomic.Pointer[mcp.Implementation]
	caps        atomic.Pointer[mcp.ClientCapabilities]
	nextID      atomic.Int64
	pending     sync.Map      // request id -> chan rpcReply
	gone        chan struct{} // closed when stdin is no longer read: no answer can arrive
}

// rpcReply is a client's answer to one of our requests.
type rpcReply struct {
	Result json.RawMessage          `json:"result"`
	Error  *mcp.JSONRPCErrorDetails `json:"error"`
}

func (s *stdioSession) GetClientInfo() mcp.Implementation              { return load(&s.info) }
func (s *stdioSession) SetClientInfo(i mcp.Implementation)             { s.info.Store(&i) }
func (s *stdioSession) GetClientCapabilities() mcp.ClientCapabilities  { return load(&s.caps) }
func (s *stdioSession) SetClientCapabilities(c mcp.ClientCapabilities) { s.caps.Store(&c) }

// load reads a value stored whole: the zero value until the client declares it.
func load[T any](p *atomic.Pointer[T]) T {
	if v := p.Load(); v != nil {
		return *v
	}
	var zero T
	return zero
}

// RequestElicitation asks the client to put a question to the person and waits for the
// answer, or for ctx.
func (s *stdioSession) RequestElicitation(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	select {
	case <-s.gone:
		return nil, errClientGone // not asked: no answer could be read
	default:
	}
	id := fmt.Sprintf(`"cairn-%d"`, s.nextID.Add(1))
	ch := make(chan rpcReply, 1)
	s.pending.Store(id, ch)
	defer s.pending.Delete(id)
	s.w.write(struct {
		JSONRPC string                `json:"jsonrpc"`
		ID      json.RawMessage       `json:"id"`
		Method  string                `json:"method"`
		Params  mcp.ElicitationParams `json:"params"`
	}{mcp.JSONRPC_VERSION, json.RawMessage(id), string(mcp.MethodElicitationCreate), req.Params})
	select {
	case r := <-ch:
		if r.Error != nil {
			return nil, fmt.Errorf("the client refused the elicitation: %s (code %d)", r.Error.Message, r.Error.Code)
		}
		var res mcp.ElicitationResult
		if json.Unmarshal(r.Result, &res) != nil {
			res = mcp.ElicitationResult{} // no action: the caller says the answer could not be read
		}
		return &res, nil
	case <-ctx.Done():
		s.withdraw(id, "the tool call that asked was cancelled or timed out")
		return nil, ctx.Err()
	case <-s.gone:
		s.withdraw(id, "the server is shutting down")
		return nil, errClientGone
	}
}

// withdraw tells the client that the request id (ours) is no longer wanted, so that it stops
// showing the person a question whose answer nobody will read.
func (s *stdioSession) withdraw(id, reason string) {
	type params struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    string          `json:"reason"`
	}
	s.w.write(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  params `json:"params"`
	}{mcp.JSONRPC_VERSION, string(mcp.MethodNotificationCancelled), params{json.RawMessage(id), reason}})
}

var errClientGone = errors.New("the client stopped sending before it answered")

// waiting says whether a request of ours with the id waits for its answer.
func (s *stdioSession) waiting(id json.RawMessage) bool {
	_, ok := s.pending.Load(string(id))
	return ok
}

// reply hands a client's answer to the request waiting for it; others are dropped.
func (s *stdioSession) reply(id json.RawMessage, line []byte) {
	ch, ok := s.pending.Load(string(id))
	if !ok {
		return
	}
	var r rpcReply
	if json.Unmarshal(line, &r) != nil {
		r.Error = &mcp.JSONRPCErrorDetails{Code: mcp.PARSE_ERROR, Message: "unreadable answer"}
	}
	select {
	case ch.(chan rpcReply) <- r:
	default:
	}
}

func (s *stdioSession) SessionID() string                                   { return "stdio" }
func (s *stdioSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return s.notes }
func (s *stdioSession) Initialize()                                         { s.initialized.Store(true) }
func (s *stdioSession) Initialized() bool                                   { return s.initialized.Load() }
