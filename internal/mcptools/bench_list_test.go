package mcptools_test

import (
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/cli"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/hook"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

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
		b.ReportMetric(float64(tb.Nanoseconds())/float64(b.N), "none-ns/op")
		b.ReportMetric(float64(to.Nanoseconds())/float64(b.N), "10k-ns/op")
		b.ReportMetric(float64(to)/float64(tb), "10k/none")
	}

	b.Run("list-process", func(b *testing.B) {
		bin := cairnBinary(b)
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
		b.ReportMetric(float64(t20.Nanoseconds())/float64(b.N), "20-ns/op")
		b.ReportMetric(float64(tm.Nanoseconds())/float64(b.N), "10k-ns/op")
		b.ReportMetric(float64(tm)/float64(t20), "10k/20")
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
				if code := hook.SessionStart(strings.NewReader(event), io.Discard, io.Discard, p.getenv(p.session), yamldoc.Codec{}); code != 0 {
					b.Fatalf("SessionStart: exit %d", code)
				}
				return nil
			}
		}
		pair(b, start(none), start(many))
	})
	b.Run("all", func(b *testing.B) {
		em := open(many)
		for b.Loop() {
			all, err := em.List()
			if err != nil || len(all) != 10000 {
				b.Fatal(len(all), err)
			}
		}
	})
}

var (
	cairnOnce sync.Once
	cairnBin  string
	cairnErr  error
)

// cairnBinary builds the cairn command beside cairn-mcp (TestMain removes both).
func cairnBinary(b *testing.B) string {
	cairnOnce.Do(func() {
		cairnBin = filepath.Join(filepath.Dir(binary), "cairn")
		if runtime.GOOS == "windows" {
			cairnBin += ".exe"
		}
		out, err := exec.Command("go", "build", "-o", cairnBin, "github.com/cairn-dev/cairn/cmd/cairn").CombinedOutput()
		if err != nil {
			cairnErr = err
			cairnBin = string(out)
		}
	})
	if cairnErr != nil {
		b.Fatalf("building cairn: %v\n%s", cairnErr, cairnBin)
	}
	return cairnBin
}
