//go:build unix

package mcptools_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// TestStdioSignalShutdown does what Claude Code does at exit: SIGINT, then SIGTERM 100 ms later,
// stdin left open, with calls in flight. The server must exit 0, answer every call it started,
// start no other, and leave state that a fresh engine reads back exactly.
func TestStdioSignalShutdown(t *testing.T) {
	for _, sig := range []struct {
		name  string
		first syscall.Signal
	}{{"sigint-then-sigterm", syscall.SIGINT}, {"sigterm-only", syscall.SIGTERM}} {
		t.Run(sig.name, func(t *testing.T) {
			p := newProject(t)
			r := startRaw(t, p)
			r.initialize()
			r.send(`{"jsonrpc":"2.0","id":"start","method":"tools/call","params":{"name":"start_workflow","arguments":{"type":"apex","context":"shutdown"}}}`)
			if resp := r.next(hangGuard); resp.Error != nil || strings.Contains(string(resp.Result), `"isError":true`) {
				t.Fatalf("start_workflow: %s %+v", resp.Result, resp.Error)
			}

			const n = 40
			call := func(i int) string {
				return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"set_vars","arguments":{"vars":{"WF_V%d":"%d"}}}}`, i, i, i)
			}
			// The first call answered, the others go in one write and the signal right after
			// them, so that it lands while they are read and run (a fixed sleep before it
			// could pass, on a loaded machine, before any call started or after all ran).
			r.send(call(0))
			first := r.next(hangGuard)
			var batch []string
			for i := 1; i < n; i++ {
				batch = append(batch, call(i))
			}
			r.send(strings.Join(batch, "\n"))
			if err := r.cmd.Process.Signal(sig.first); err != nil {
				t.Fatal(err)
			}
			if sig.first == syscall.SIGINT {
				time.Sleep(100 * time.Millisecond)
				r.cmd.Process.Signal(syscall.SIGTERM)
			}
			if code := r.wait(hangGuard); code != 0 {
				t.Fatalf("exit code %d after %s, want 0; stderr:\n%s", code, sig.name, r.stderr)
			}
			r.checkStdout()

			answered := map[string]bool{}
			responses := []rpcResponse{first}
			for line := range r.lines {
				var resp rpcResponse
				if err := json.Unmarshal(line, &resp); err != nil {
					t.Fatalf("bad line %q", line)
				}
				responses = append(responses, resp)
			}
			for _, resp := range responses {
				var res struct {
					IsError bool `json:"isError"`
				}
				json.Unmarshal(resp.Result, &res)
				if resp.Error != nil || res.IsError {
					t.Errorf("call %s failed during shutdown: %s %+v", resp.ID, resp.Result, resp.Error)
					continue
				}
				answered["WF_V"+string(resp.ID)] = true
			}

			// A fresh engine reads exactly the answered writes: nothing half-done, nothing
			// done without an answer.
			look := p.other(t, "observer")
			res := look.Resume(engine.ResumeOptions{})
			if res.Tier != "Full" {
				t.Fatalf("resume after shutdown: tier %v", res)
			}
			for _, w := range res.Notices {
				if strings.Contains(w, "quarantin") || strings.Contains(w, "repair") {
					t.Errorf("state needed repair after shutdown: %s", w)
				}
			}
			vars, err := look.GetVars(nil)
			if err != nil {
				t.Fatal(err)
			}
			for k := range vars {
				if !answered[k] {
					t.Errorf("%s was written but never answered", k)
				}
			}
			for k := range answered {
				if _, ok := vars[k]; !ok {
					t.Errorf("%s was answered but is not on disk", k)
				}
			}
			if snap := snapshot(t, look); snap.Revision != int64(1+len(vars)) {
				t.Errorf("revision %d, want %d", snap.Revision, 1+len(vars))
			}
			t.Logf("%s: %d of %d calls ran before shutdown", sig.name, len(answered), n)
		})
	}
}

// TestStdioClientGone: when the client's end of stdout is closed, a write fails with EPIPE
// instead of killing the server with SIGPIPE; it then shuts down in order and exits 0.
func TestStdioClientGone(t *testing.T) {
	p := newProject(t)
	cmd := exec.Command(mcpBinary.get(t))
	cmd.Dir, cmd.Env = p.root, p.env()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = outW
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	outR.Close() // the client is gone
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`+"\n")
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
	// The two requests are read before the end of stdin (a pipe yields its data first), and
	// the server answers what it has read before it returns: so both answers are written to the
	// closed pipe, whenever stdin ends.
	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(hangGuard):
		cmd.Process.Kill()
		t.Fatal("server did not exit after its client went away")
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() || cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("server ended with %v (signalled %v), want exit 0", cmd.ProcessState, ws.Signaled())
	}
}
