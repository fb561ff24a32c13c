package mcptools_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/mcptools"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// BenchmarkToolCallInProcess is one get_vars round trip through mcp-go's in-process client:
// decoding, the turn, the change check, the engine call and the result.
func BenchmarkToolCallInProcess(b *testing.B) {
	p := newProject(b)
	srv := mcptools.New(mcptools.Options{Open: mcptools.OpenEngine, Getenv: p.getenv(p.session), WorkDir: p.root, PPID: 1, Log: quietLog(), NoWatch: true})
	b.Cleanup(func() { srv.Close(testCtx(b)) })
	benchGetVars(b, connect(b, srv))
}

// BenchmarkToolCallStdio is the same round trip against the real binary over stdio.
func BenchmarkToolCallStdio(b *testing.B) {
	p := newProject(b)
	benchGetVars(b, stdioClient(b, p, protocol))
}

// benchGetVars times get_vars round trips through c, in a workflow with one variable.
func benchGetVars(b *testing.B, c *client.Client) {
	mustOK(b, c, "start_workflow", `{"type":"apex","context":"bench"}`)
	mustOK(b, c, "set_vars", `{"vars":{"WF_A":"1"}}`)
	req := toolRequest("get_vars", `{"keys":["WF_A"]}`)
	ctx := testCtx(b)
	b.ResetTimer()
	for b.Loop() {
		res, err := c.CallTool(ctx, req)
		if err != nil || res.IsError {
			b.Fatalf("get_vars: %v %v", err, res)
		}
	}
}

// BenchmarkStartToInitialize measures process start until the initialize answer is read, the
// way Claude Code sees it (after its server/discover is refused). Target: under 50 ms.
func BenchmarkStartToInitialize(b *testing.B) {
	p := newProject(b)
	msgs := `{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{}}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n"
	for b.Loop() {
		cmd := exec.Command(binary)
		cmd.Dir, cmd.Env = p.root, p.env()
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		if _, err := stdin.Write([]byte(msgs)); err != nil {
			b.Fatal(err)
		}
		r := bufio.NewReader(stdout)
		for range 2 {
			line, err := r.ReadBytes('\n')
			if err != nil {
				b.Fatalf("reading: %v", err)
			}
			_ = line
		}
		b.StopTimer()
		stdin.Close()
		cmd.Wait()
		b.StartTimer()
	}
}

// BenchmarkIdleRSS reports the resident memory of an idle server after start-up and one call
// (Linux: VmRSS from /proc). Target: under 25 MB.
func BenchmarkIdleRSS(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads /proc/<pid>/status")
	}
	var total float64
	for b.Loop() {
		p := newProject(b)
		r := startRaw(b, p)
		r.initialize()
		r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"resume_check","arguments":{}}}`)
		r.next(10 * time.Second)
		time.Sleep(300 * time.Millisecond)
		kb := vmRSS(b, r.cmd.Process.Pid)
		total += kb
		r.stdin.Close()
		r.wait(10 * time.Second)
	}
	b.ReportMetric(total/float64(b.N)/1024, "MB-VmRSS")
}

func vmRSS(tb testing.TB, pid int) float64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if rest, ok := strings.CutPrefix(string(line), "VmRSS:"); ok {
			f := strings.Fields(rest)
			kb, err := strconv.ParseFloat(f[0], 64)
			if err != nil {
				tb.Fatal(err)
			}
			return kb
		}
	}
	tb.Fatal("no VmRSS line")
	return 0
}

var _ = mcp.LATEST_PROTOCOL_VERSION

// BenchmarkCheckpoint1MiB saves and loads a checkpoint of almost 1 MiB in process.
func BenchmarkCheckpoint1MiB(b *testing.B) {
	_, c := realServer(b)
	blob := strings.Repeat("0123456789abcdef", (1<<20-64)/16)
	save := toolRequest("save_checkpoint", `{"name":"big","data":{"blob":"`+blob+`"}}`)
	load := toolRequest("load_checkpoint", `{"name":"big"}`)
	ctx := context.Background() // the benchmark's own timeout bounds it; a fixed deadline would cut long runs
	for b.Loop() {
		if res, err := c.CallTool(ctx, save); err != nil || res.IsError {
			b.Fatal(err, res)
		}
		if res, err := c.CallTool(ctx, load); err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}
