package mcptools_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/cli"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/hook"
	"github.com/cairn-dev/cairn/internal/mcptools"
	"github.com/cairn-dev/cairn/internal/yamldoc"
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
		cmd := exec.Command(mcpBinary.get(b))
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

// reportPair reports the mean time a loop's iteration spent on the base call (total base) and
// on the other one (total other), as name-ns/op, and their ratio as other/base.
func reportPair(b *testing.B, base, other time.Duration, baseName, otherName string) {
	b.ReportMetric(float64(base.Nanoseconds())/float64(b.N), baseName+"-ns/op")
	b.ReportMetric(float64(other.Nanoseconds())/float64(b.N), otherName+"-ns/op")
	b.ReportMetric(float64(other)/float64(base), otherName+"/"+baseName)
}

// BenchmarkListArchives measures what 10,000 archived workflows cost the paths that read
// archives, each beside the same path in a project with none (or 20), interleaved so that both
// see the same machine state:
//
//	list-process    `cairn list` as a user runs it, the built binary (issue 12: 10k/none at most 3)
//	list-engine     Engine.ListRecent(20), what list reads, in-process: 10k/20 against a
//	                project of 20 archives shows it flat; none-ns is the empty project's
//	status          `cairn status` in-process (cli.Main): 10k/none flat, about 1
//	session-start   the SessionStart hook in-process: 10k/none flat, about 1
//	all             `list --json`'s read of every archive (Engine.List), alone
//
// list-all is alone because decoding 10,000 index lines leaves garbage whose collection would
// land on whichever call runs next.
func BenchmarkListArchives(b *testing.B) {
	none, twenty, many := newProject(b), newProject(b), newProject(b)
	plantArchives(b, twenty.state, 20)
	plantArchives(b, many.state, 10000)
	open := func(p *project) *engine.Engine {
		e, err := engine.Open(engine.Config{Getenv: p.getenv(p.session), WorkDir: p.root, SessionID: p.session, Actor: "cli", YAML: yamldoc.Codec{}})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { e.Close() })
		return e
	}
	// pair runs none's call then the 10k project's once per iteration and reports both and
	// their ratio.
	pair := func(b *testing.B, base, other func() error) {
		var tb, to time.Duration
		for b.Loop() {
			t0 := time.Now()
			if err := base(); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			if err := other(); err != nil {
				b.Fatal(err)
			}
			tb += t1.Sub(t0)
			to += time.Since(t1)
		}
		reportPair(b, tb, to, "none", "10k")
	}

	b.Run("list-process", func(b *testing.B) {
		bin := cairnBinary.get(b)
		run := func(p *project, rows int) func() error {
			return func() error {
				cmd := exec.Command(bin, "list")
				cmd.Dir, cmd.Env = p.root, p.env()
				out, err := cmd.Output()
				if err == nil && strings.Count(string(out), "\n") < rows {
					b.Fatalf("cairn list printed %q", out)
				}
				return err
			}
		}
		pair(b, run(none, 1), run(many, 21))
	})
	b.Run("list-engine", func(b *testing.B) {
		en, e20, em := open(none), open(twenty), open(many)
		list := func(e *engine.Engine, want int, wantMore bool) func() error {
			return func() error {
				l, more, err := e.ListRecent(20)
				if err == nil && (len(l) != want || more != wantMore || want > 0 && l[0].Type != "apex") {
					b.Fatalf("ListRecent(20): %d, more %v", len(l), more)
				}
				return err
			}
		}
		var tn, t20, tm time.Duration
		for b.Loop() {
			t0 := time.Now()
			err0 := list(en, 0, false)()
			t1 := time.Now()
			err1 := list(e20, 20, false)()
			t2 := time.Now()
			err2 := list(em, 20, true)()
			tn, t20, tm = tn+t1.Sub(t0), t20+t2.Sub(t1), tm+time.Since(t2)
			if err0 != nil || err1 != nil || err2 != nil {
				b.Fatal(err0, err1, err2)
			}
		}
		b.ReportMetric(float64(tn.Nanoseconds())/float64(b.N), "none-ns/op")
		reportPair(b, t20, tm, "20", "10k")
	})
	b.Run("status", func(b *testing.B) {
		status := func(p *project) func() error {
			return func() error {
				if code := cli.Main([]string{"status"}, nil, io.Discard, io.Discard, p.getenv(p.session)); code != 0 {
					b.Fatalf("cairn status: exit %d", code)
				}
				return nil
			}
		}
		pair(b, status(none), status(many))
	})
	b.Run("session-start", func(b *testing.B) {
		const event = `{"session_id":"sess-1","transcript_path":"/tmp/bench.jsonl","cwd":"/tmp","hook_event_name":"SessionStart","source":"startup"}`
		start := func(p *project) func() error {
			return func() error {
				hook.SessionStart(strings.NewReader(event), io.Discard, io.Discard, p.getenv(p.session), yamldoc.Codec{})
				return nil
			}
		}
		pair(b, start(none), start(many))
	})
	b.Run("all", func(b *testing.B) {
		em := open(many)
		for b.Loop() {
			all, _, err := em.ListRecent(0)
			if err != nil || len(all) != 10000 {
				b.Fatal(len(all), err)
			}
		}
	})
}
