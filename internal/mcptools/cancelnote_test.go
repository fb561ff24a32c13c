package mcptools_test

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/mcptools"
)

// TestStdioCancelledCallThatRanIsTold: every tool runs to its end once begun, so a call the
// client cancelled (Esc; the model reads "interrupted") may still make its change after the
// cancel arrived, and its answer is dropped as MCP asks. The next result says, once, that the
// cancelled call was completed, so the model does not make it again; a cancelled call that
// changed nothing (refused, or only read) is not mentioned.
func TestStdioCancelledCallThatRanIsTold(t *testing.T) {
	for _, tc := range []struct {
		name, call string
		told       bool
	}{
		{"completed", `"transition","arguments":{"to":"plan"}`, true},
		{"refused", `"transition","arguments":{"to":"review"}`, false},
		{"read only", `"get_vars","arguments":{}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, st := fakeOptions(t)
			srv := mcptools.New(opts)
			t.Cleanup(func() { srv.Close(context.Background()) })
			inR, inW := io.Pipe()
			defer inW.Close()
			out := &answerLines{}
			go srv.ServeStdio(testCtx(t), inR, out)
			n := 0
			call := func(line string) string {
				t.Helper()
				n++
				if _, err := io.WriteString(inW, line+"\n"); err != nil {
					t.Fatal(err)
				}
				waitFor(t, func() bool { return out.count() >= n })
				return out.last()
			}
			send := func(line string) {
				t.Helper()
				if _, err := io.WriteString(inW, line+"\n"); err != nil {
					t.Fatal(err)
				}
			}
			call(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
			send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			call(`{"jsonrpc":"2.0","id":"start","method":"tools/call","params":{"name":"start_workflow","arguments":{"type":"apex","context":"x"}}}`)

			release := make(chan struct{}) // the workflow's lock, held by someone else
			st.mu.Lock()
			st.block = release
			before := len(st.calls)
			st.mu.Unlock()
			send(`{"jsonrpc":"2.0","id":"esc","method":"tools/call","params":{"name":` + tc.call + `}}`)
			waitFor(t, func() bool { // the call is in the engine, waiting
				st.mu.Lock()
				defer st.mu.Unlock()
				return len(st.calls) > before && slices.ContainsFunc(st.calls[before:], func(c string) bool { return c != "snapshot" })
			})
			send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"esc","reason":"user pressed Esc"}}`)
			call(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`) // read after the cancel: it has been taken
			st.mu.Lock()
			st.block = nil
			st.mu.Unlock()
			close(release)

			next := call(`{"jsonrpc":"2.0","id":"next","method":"tools/call","params":{"name":"get_vars","arguments":{}}}`)
			if strings.Contains(next, `"id":"esc"`) {
				t.Fatalf("the cancelled call was answered: %s", next)
			}
			told := strings.Contains(next, "cancelled call")
			if told != tc.told {
				t.Fatalf("the call after the cancelled one answered %s; want the cancelled call told: %v", next, tc.told)
			}
			if told && (!strings.Contains(next, "transition") || !strings.Contains(next, "do not make it again")) {
				t.Errorf("the notice does not say which call ran and not to repeat it: %s", next)
			}
			if again := call(`{"jsonrpc":"2.0","id":"again","method":"tools/call","params":{"name":"get_vars","arguments":{}}}`); strings.Contains(again, "cancelled call") {
				t.Errorf("the notice was said twice: %s", again)
			}
		})
	}
}

// A cancel that arrives once the call has run, after the server looked for one and before
// its answer is sent, still drops the answer (MCP): the call made its change and the model was
// never told. It is told on the next result, as for a cancel that came while the call ran.
func TestStdioCancelAfterTheCallRanIsTold(t *testing.T) {
	opts, _ := fakeOptions(t)
	var armed atomic.Bool
	reached, release := make(chan struct{}), make(chan struct{})
	srv := mcptools.New(mcptools.BeforeAnswer(opts, func() {
		if armed.CompareAndSwap(true, false) {
			close(reached)
			<-release
		}
	}))
	t.Cleanup(func() { srv.Close(context.Background()) })
	inR, inW := io.Pipe()
	defer inW.Close()
	out := &answerLines{}
	go srv.ServeStdio(testCtx(t), inR, out)
	n := 0
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	call := func(line string) string {
		t.Helper()
		n++
		send(line)
		waitFor(t, func() bool { return out.count() >= n })
		return out.last()
	}
	call(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	call(`{"jsonrpc":"2.0","id":"start","method":"tools/call","params":{"name":"start_workflow","arguments":{"type":"apex","context":"x"}}}`)
	armed.Store(true)
	send(`{"jsonrpc":"2.0","id":"esc","method":"tools/call","params":{"name":"transition","arguments":{"to":"plan"}}}`)
	<-reached // it ran, its context not cancelled
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"esc","reason":"user pressed Esc"}}`)
	call(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`) // read after the cancel: it has been taken
	close(release)
	// The dropped answer's goroutine goes on beside the next call: one of the next few says it.
	var next string
	for i := 0; i < 50 && !strings.Contains(next, "cancelled call"); i++ {
		next = call(`{"jsonrpc":"2.0","id":"next` + strconv.Itoa(i) + `","method":"tools/call","params":{"name":"get_vars","arguments":{}}}`)
		if strings.Contains(next, `"id":"esc"`) {
			t.Fatalf("the cancelled call was answered: %s", next)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(next, "cancelled call transition") || !strings.Contains(next, "do not make it again") {
		t.Fatalf("the calls after the cancelled one answered %s last; want the cancelled transition told", next)
	}
}

// answerLines is a server's stdout, kept by line.
type answerLines struct {
	mu    sync.Mutex
	lines []string
}

func (w *answerLines) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for l := range strings.SplitSeq(strings.TrimSpace(string(p)), "\n") {
		var m struct{ Method string }
		if json.Unmarshal([]byte(l), &m) == nil && m.Method == "" { // answers only
			w.lines = append(w.lines, l)
		}
	}
	return len(p), nil
}

func (w *answerLines) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.lines)
}

func (w *answerLines) last() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lines[len(w.lines)-1]
}
