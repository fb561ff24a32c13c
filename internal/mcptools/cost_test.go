package mcptools_test

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/internal/alloctest"
	"github.com/cairn-dev/cairn/internal/mcptools"
)

// TestOversizedCallCostsAboutItsSize: a tool call whose arguments are over the limit is
// refused for its size without mcp-go first reading them into Go values, which for an array
// of small numbers costs some thirty times the message in memory (and 16 such calls may run
// at once). The bytes allocated are counted while serving it.
// stdin stays open until the call's answer is written, as Claude Code keeps it open: at EOF
// the server waits for running calls for at most DrainTimeout, and a slow (loaded, -race)
// run would otherwise lose the answer to the clock rather than fail for its cost.
func TestOversizedCallCostsAboutItsSize(t *testing.T) {
	opts, _ := fakeOptions(t)
	opts.NoWatch = true
	srv := mcptools.New(opts)
	t.Cleanup(func() { srv.Close(context.Background()) })
	items := strings.Repeat("0,", (mcptools.MaxLineBytes-200)/2)
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_vars","arguments":{"keys":[` + items + `0]}}}`
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" + call + "\n"
	stdin, client := io.Pipe()
	go func() {
		if _, err := io.WriteString(client, in); err != nil {
			client.CloseWithError(err)
		}
	}()
	out := &closeOnAnswer{id: `"id":2`, stdin: client}
	runtime.GC()
	var err error
	alloc := alloctest.Bytes(func() { err = srv.ServeStdio(context.Background(), stdin, out) })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "more than the limit") {
		t.Fatalf("the oversized call was not refused for its size:\n%.600s", out.String())
	}
	t.Logf("serving a %d-byte call allocated %d bytes", len(call), alloc)
	if alloc > 10*uint64(len(call)) {
		t.Errorf("serving a %d-byte call allocated %d bytes, more than 10 times its size", len(call), alloc)
	}
}

// closeOnAnswer keeps what the server writes and closes its stdin once a line carrying id
// has been written: the client has its answer and goes.
type closeOnAnswer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	id    string
	stdin io.Closer
}

func (w *closeOnAnswer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if bytes.Contains(p, []byte(w.id)) {
		w.stdin.Close()
	}
	return len(p), nil
}

func (w *closeOnAnswer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
