package mcptools_test

import (
	"bytes"
	"context"
	"fmt"
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
// at once). A request whose params hold hundreds of thousands of members costs about its size
// too: the check for a member given twice kept each name in a map, thirteen times the message.
// The bytes allocated are counted while serving it.
// stdin stays open until the call's answer is written, as Claude Code keeps it open: at EOF
// the server waits for running calls for at most DrainTimeout, and a slow (loaded, -race)
// run would otherwise lose the answer to the clock rather than fail for its cost.
func TestOversizedCallCostsAboutItsSize(t *testing.T) {
	var members strings.Builder
	for i := 0; members.Len() < mcptools.MaxLineBytes-200; i++ {
		fmt.Fprintf(&members, `"k%d":0,`, i)
	}
	for _, tc := range []struct{ name, call, want string }{
		{"arguments over the limit",
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_vars","arguments":{"keys":[` + strings.Repeat("0,", (mcptools.MaxLineBytes-200)/2) + `0]}}}`,
			"more than the limit"},
		{"params of many members",
			`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + members.String() + `"z":0}}`,
			`"tools"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, _ := fakeOptions(t)
			opts.NoWatch = true
			srv := mcptools.New(opts)
			t.Cleanup(func() { srv.Close(context.Background()) })
			in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" + tc.call + "\n"
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
			if !strings.Contains(out.String(), tc.want) {
				t.Fatalf("the request was not answered with %s:\n%.600s", tc.want, out.String())
			}
			t.Logf("serving a %d-byte request allocated %d bytes", len(tc.call), alloc)
			if alloc > 10*uint64(len(tc.call)) {
				t.Errorf("serving a %d-byte request allocated %d bytes, more than 10 times its size", len(tc.call), alloc)
			}
		})
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
