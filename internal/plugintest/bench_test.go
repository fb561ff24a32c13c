package plugintest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/hook"
	"github.com/cairn-dev/cairn/internal/hooktest"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// The whole-process benchmarks. BenchmarkHooksAsClaudeCodeRunsThem starts each hook the way
// Claude Code does: /bin/sh -c with the hooks.json command, CLAUDE_PLUGIN_ROOT and
// CLAUDE_PLUGIN_DATA set, the event on stdin, in a project holding an active workflow, 10,000
// archived workflows and a 200-line MEMORY.md; on both install paths (bin/ beside the plugin,
// binaries in the data dir) and in a project with a workflow definition of its own. Every
// iteration runs each case once, interleaved with the floor, /bin/sh -c <a Go binary that does
// nothing>, so the ratios come from one run on one machine state:
//
//	<case>-x   median over the floor's median (targets: SessionStart at most 2.0, Stop at most 1.6)
//	<case>-us  median in microseconds
//
// BenchmarkNoopProcess and BenchmarkBaselineSessionStart time the bare no-op binary and the
// seeds' bash+jq SessionStart hook (../shared/baseline/session-start.sh beside the
// repository); BenchmarkSessionStartProcess reports baseline-x (the baseline's median over the
// bare hook's; target: at least 20).
//
//	go test -run '^$' -bench Process -count 5 ./internal/plugintest

const (
	benchArchived    = 10000
	benchMemoryLines = 200
	benchSession     = "6f1c2a9e-3b7d-4c8e-9a0f-2d5b7e1c4a93" // Claude Code's session ids are UUIDs
)

type benchFixture struct {
	dir          string // holds everything; removed by TestMain
	sessionStart string // built binaries
	stop         string
	noop         string
	binRoot      string // a plugin root with bin/ (make build)
	dataRoot     string // a plugin root without bin/, its binaries in dataDir
	dataDir      string
	cairnEnv     []string // env for the hooks: project with Cairn state
	defsEnv      []string // env for the hooks: a project with a workflow definition of its own
	baselineEnv  []string // env for the baseline: project with a seeds' workflow-state.json
	baseline     string   // path of session-start.sh, "" when missing
	baselineWhy  string   // why it is missing
}

var (
	benchOnce sync.Once
	benchFix  *benchFixture
	benchErr  error

	mediansMu sync.Mutex
	medians   = map[string]time.Duration{} // "noop", "baseline": the latest run's median
)

// TestMain removes the benchmark fixture, which outlives any one benchmark.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchFix != nil {
		os.RemoveAll(benchFix.dir)
	}
	if relDir != "" {
		os.RemoveAll(relDir)
	}
	os.Exit(code)
}

func fixture(b *testing.B) *benchFixture {
	b.Helper()
	benchOnce.Do(func() { benchFix, benchErr = buildFixture(repoRoot(b)) })
	if benchErr != nil {
		b.Fatalf("building the benchmark fixture: %v", benchErr)
	}
	return benchFix
}

func buildFixture(root string) (*benchFixture, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("go is not on PATH: %w", err)
	}
	dir, err := os.MkdirTemp("", "cairn-bench-")
	if err != nil {
		return nil, err
	}
	f := &benchFixture{dir: dir}
	fail := func(err error) (*benchFixture, error) {
		os.RemoveAll(dir)
		return nil, err
	}

	// The binaries, built as make build builds them.
	noopSrc := filepath.Join(dir, "noop")
	if err := os.MkdirAll(noopSrc, 0o755); err != nil {
		return fail(err)
	}
	if err := os.WriteFile(filepath.Join(noopSrc, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		return fail(err)
	}
	f.binRoot = filepath.Join(dir, "plugin-bin")
	f.dataRoot = filepath.Join(dir, "plugin-data-root")
	f.dataDir = filepath.Join(dir, "plugin-data")
	bin := filepath.Join(f.binRoot, "bin")
	link := filepath.Join(dir, "link") // linked here, then copied into bin/ as make build does
	f.sessionStart = filepath.Join(bin, "cairn-session-start")
	f.stop = filepath.Join(bin, "cairn-stop")
	f.noop = filepath.Join(bin, "noop")
	for _, build := range []struct{ out, dir, pkg string }{
		{f.sessionStart, root, "./hooks/sessionstart"},
		{f.stop, root, "./hooks/stop"},
		{f.noop, noopSrc, "main.go"},
	} {
		linked := filepath.Join(link, filepath.Base(build.out))
		cmd := exec.Command(goBin, "build", "-trimpath", "-o", linked, build.pkg)
		cmd.Dir = build.dir
		if build.pkg == "main.go" {
			cmd.Env = append(os.Environ(), "GO111MODULE=off")
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			return fail(fmt.Errorf("go build %s: %v\n%s", build.pkg, err, out))
		}
		data, err := os.ReadFile(linked)
		if err == nil {
			err = os.MkdirAll(bin, 0o755)
		}
		if err == nil {
			err = os.WriteFile(build.out, data, 0o755)
		}
		if err != nil {
			return fail(err)
		}
	}
	// The two install paths: the plugin's launcher files in both roots, the binaries in bin/
	// of one and in the data dir of the other, each stamped as make build and hooks/install do.
	dataBin := filepath.Join(f.dataDir, "bin-"+cairn.Version())
	for _, pr := range []string{f.binRoot, f.dataRoot} {
		for _, file := range launcherFiles {
			data, err := os.ReadFile(filepath.Join(root, file))
			if err != nil {
				return fail(err)
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(pr, file)), 0o755); err != nil {
				return fail(err)
			}
			if err := os.WriteFile(filepath.Join(pr, file), data, 0o755); err != nil {
				return fail(err)
			}
		}
	}
	if err := os.MkdirAll(dataBin, 0o755); err != nil {
		return fail(err)
	}
	sums, err := os.ReadFile(filepath.Join(root, "release", "checksums.txt"))
	if err != nil {
		return fail(err)
	}
	for _, name := range []string{"cairn-session-start", "cairn-stop"} {
		data, err := os.ReadFile(filepath.Join(bin, name))
		if err != nil {
			return fail(err)
		}
		if err := os.WriteFile(filepath.Join(dataBin, name), data, 0o755); err != nil {
			return fail(err)
		}
	}
	for _, d := range []string{bin, dataBin} {
		if err := os.WriteFile(filepath.Join(d, ".checksums"), sums, 0o644); err != nil {
			return fail(err)
		}
		if err := os.WriteFile(filepath.Join(d, hook.SelfCheckFile), nil, 0o644); err != nil {
			return fail(err)
		}
	}

	// Cairn's project: an active workflow written by the engine, 10,000 archived ones.
	project := filepath.Join(dir, "project")
	memDir := filepath.Join(dir, "memory")
	home := filepath.Join(dir, "home")
	for _, d := range []string{filepath.Join(project, ".git"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fail(err)
		}
	}
	f.cairnEnv = []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"),
		"CLAUDE_PROJECT_DIR=" + project,
		"CAIRN_MEMORY_DIR=" + memDir,
		"CLAUDE_PID=" + hooktest.ClaudePID,
		"CLAUDE_CODE_SESSION_ID=" + benchSession,
	}
	getenv := envFunc(f.cairnEnv)
	e, err := engine.Open(engine.Config{Getenv: getenv, WorkDir: project, Actor: "bench"})
	if err != nil {
		return fail(err)
	}
	if _, err := e.Start(engine.StartRequest{Type: "apex", Context: "benchmark: add retries to the uploader"}); err != nil {
		e.Close()
		return fail(err)
	}
	for _, to := range []string{"plan", "implement"} {
		if to == "implement" { // plan is an approval gate: a person approves
			if _, err := e.Approve(""); err != nil {
				e.Close()
				return fail(err)
			}
		}
		if _, err := e.Transition(engine.TransitionRequest{To: to}); err != nil {
			e.Close()
			return fail(err)
		}
	}
	stateDir := e.StateDir()
	if err := e.Close(); err != nil {
		return fail(err)
	}
	if err := writeArchive(stateDir, benchArchived); err != nil {
		return fail(err)
	}
	if err := hooktest.WriteMemory(memDir, benchMemoryLines); err != nil {
		return fail(err)
	}

	// A project with a workflow definition of its own, which the hooks read themselves.
	defsProject := filepath.Join(dir, "project-defs")
	if err := os.MkdirAll(filepath.Join(defsProject, ".git"), 0o755); err != nil {
		return fail(err)
	}
	if err := os.MkdirAll(filepath.Join(defsProject, ".claude", "workflows"), 0o755); err != nil {
		return fail(err)
	}
	def := "---\nname: review-flow\nphases: [draft, read, comment]\ntransitions: {draft: [read], read: [comment, draft]}\n---\nReview a change.\n"
	if err := os.WriteFile(filepath.Join(defsProject, ".claude", "workflows", "review-flow.md"), []byte(def), 0o644); err != nil {
		return fail(err)
	}
	f.defsEnv = slices.Clone(f.cairnEnv)
	f.defsEnv = append(f.defsEnv, "CLAUDE_PROJECT_DIR="+defsProject, "CAIRN_MEMORY_DIR="+filepath.Join(dir, "memory-defs"))
	de, err := engine.Open(engine.Config{Getenv: envFunc(f.defsEnv), WorkDir: defsProject, Actor: "bench", YAML: yamldoc.Codec{}})
	if err != nil {
		return fail(err)
	}
	if _, err := de.Start(engine.StartRequest{Type: "review-flow", Context: "benchmark: review the uploader"}); err != nil {
		de.Close()
		return fail(err)
	}
	if err := de.Close(); err != nil {
		return fail(err)
	}

	// The baseline's project: the seeds' workflow-state.json, fresh enough not to expire.
	f.baseline, f.baselineWhy = locateBaseline(root)
	if f.baseline != "" {
		bproject := filepath.Join(dir, "baseline-project")
		if err := os.MkdirAll(filepath.Join(bproject, ".claude"), 0o755); err != nil {
			return fail(err)
		}
		state := fmt.Sprintf(`{"type":"apex","phase":"implement","context":"benchmark: add retries to the uploader","completedPhases":["analyze","plan"],"ttl":"24h","lastUpdated":%q}`,
			time.Now().UTC().Format(time.RFC3339))
		if err := os.WriteFile(filepath.Join(bproject, ".claude", "workflow-state.json"), []byte(state), 0o644); err != nil {
			return fail(err)
		}
		if err := writeArchive(filepath.Join(bproject, ".claude", "cairn"), benchArchived); err != nil {
			return fail(err)
		}
		if err := hooktest.WriteMemory(filepath.Join(bproject, ".claude"), benchMemoryLines); err != nil {
			return fail(err)
		}
		f.baselineEnv = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "CLAUDE_PROJECT_DIR=" + bproject}
	}
	return f, nil
}

// writeArchive makes n archive/<id>-<utc>/ directories, each with a finished workflow.
func writeArchive(stateDir string, n int) error {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		at := base.Add(time.Duration(i) * time.Minute)
		id := fmt.Sprintf("apex-%s-%04x", at.Format("20060102T150405Z"), i&0xffff)
		d := filepath.Join(stateDir, "archive", id+"-"+at.Add(time.Hour).Format("20060102T150405Z"))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		rec := fmt.Sprintf(`{"version":"2.0","workflow_id":%q,"type":"apex","context":"archived %d","state":"git-commit","phase_status":"complete","status":"completed","ttl":"24h","created_at":%q,"updated_at":%q,"revision":5}`,
			id, i, at.Format(time.RFC3339), at.Add(time.Hour).Format(time.RFC3339))
		if err := os.WriteFile(filepath.Join(d, "workflow-state.json"), []byte(rec), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// locateBaseline finds ../shared/baseline/session-start.sh beside the repository (CI clones
// the repository with shared/ next to it) and the bash and jq it needs.
func locateBaseline(root string) (string, string) {
	p := filepath.Join(filepath.Dir(root), "shared", "baseline", "session-start.sh")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Sprintf("the seeds' baseline %s is missing (it lives in ../shared beside the repository)", p)
	}
	for _, tool := range []string{"bash", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", fmt.Sprintf("the baseline needs %s, which is not on PATH", tool)
		}
	}
	return p, ""
}

func envFunc(env []string) func(string) string {
	return func(key string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if k, v, ok := bytes.Cut([]byte(env[i]), []byte("=")); ok && string(k) == key {
				return string(v)
			}
		}
		return ""
	}
}

// The events carry a session id of the shape Claude Code sends (a UUID), as benchSession.
const (
	startEvent = `{"session_id":"6f1c2a9e-3b7d-4c8e-9a0f-2d5b7e1c4a93","transcript_path":"/tmp/bench.jsonl","cwd":"/tmp","hook_event_name":"SessionStart","source":"startup"}`
	stopEvent  = `{"session_id":"6f1c2a9e-3b7d-4c8e-9a0f-2d5b7e1c4a93","transcript_path":"/tmp/bench.jsonl","cwd":"/tmp","hook_event_name":"Stop","stop_hook_active":false}`
)

// runOnce starts one process and waits for it; stdout must hold want (when not empty).
func runOnce(tb testing.TB, argv []string, env []string, stdin, want string) time.Duration {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdin = bytes.NewReader([]byte(stdin))
	var out bytes.Buffer
	cmd.Stdout = &out
	start := time.Now()
	err := cmd.Run()
	el := time.Since(start)
	if err != nil {
		tb.Fatalf("%s: %v", argv[0], err)
	}
	if want != "" && !bytes.Contains(out.Bytes(), []byte(want)) {
		tb.Fatalf("%s printed %q, want it to contain %q: the benchmark would time the wrong thing", argv[0], out.String(), want)
	}
	return el
}

// benchProcess times b.N starts of argv and reports the median.
func benchProcess(b *testing.B, argv []string, env []string, stdin, want string) time.Duration {
	runOnce(b, argv, env, stdin, want) // warm the page cache and check the output
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		times = append(times, runOnce(b, argv, env, stdin, ""))
	}
	b.StopTimer()
	m := median(times)
	b.ReportMetric(float64(m.Nanoseconds()), "median-ns")
	return m
}

func median(ts []time.Duration) time.Duration {
	s := slices.Clone(ts)
	slices.Sort(s)
	return s[len(s)/2]
}

// reference is the median of a reference process from this run, measured now with a fixed
// sample when its own benchmark has not run.
func reference(b *testing.B, key string, measure func() time.Duration) time.Duration {
	mediansMu.Lock()
	m, ok := medians[key]
	mediansMu.Unlock()
	if ok {
		return m
	}
	m = measure()
	mediansMu.Lock()
	medians[key] = m
	mediansMu.Unlock()
	return m
}

func sample(tb testing.TB, n int, argv, env []string, stdin string) time.Duration {
	times := make([]time.Duration, n)
	for i := range times {
		times[i] = runOnce(tb, argv, env, stdin, "")
	}
	return median(times)
}

func BenchmarkNoopProcess(b *testing.B) {
	f := fixture(b)
	m := benchProcess(b, []string{f.noop}, f.cairnEnv, startEvent, "")
	mediansMu.Lock()
	medians["noop"] = m
	mediansMu.Unlock()
}

func BenchmarkBaselineSessionStart(b *testing.B) {
	f := fixture(b)
	if f.baseline == "" {
		b.Skip(f.baselineWhy)
	}
	m := benchProcess(b, []string{"bash", f.baseline}, f.baselineEnv, startEvent, "Resuming apex workflow")
	mediansMu.Lock()
	medians["baseline"] = m
	mediansMu.Unlock()
}

// BenchmarkSessionStartProcess is the bare hook binary (GOMAXPROCS=1, as the launcher runs
// it) against the seeds' baseline.
func BenchmarkSessionStartProcess(b *testing.B) {
	f := fixture(b)
	m := benchProcess(b, []string{f.sessionStart}, append(slices.Clone(f.cairnEnv), "GOMAXPROCS=1"), startEvent, `"hookEventName":"SessionStart"`)
	reportRatios(b, f, m)
}

// BenchmarkHooksAsClaudeCodeRunsThem: see the top of this file.
func BenchmarkHooksAsClaudeCodeRunsThem(b *testing.B) {
	f := fixture(b)
	plugin := func(root, data string, env []string) []string {
		return append(slices.Clone(env), "CLAUDE_PLUGIN_ROOT="+root, "CLAUDE_PLUGIN_DATA="+data)
	}
	binEnv := plugin(f.binRoot, filepath.Join(f.dir, "unused-data"), f.cairnEnv)
	dataEnv := plugin(f.dataRoot, f.dataDir, f.cairnEnv)
	defsEnv := plugin(f.binRoot, filepath.Join(f.dir, "unused-data"), f.defsEnv)
	start, stop := hookCommand(b, "SessionStart"), hookCommand(b, "Stop")
	sh := func(cmd string) []string { return []string{"/bin/sh", "-c", cmd} }
	// Claude Code gives SessionStart a CLAUDE_ENV_FILE, where the launcher puts a data dir's
	// set on the agent's PATH.
	envFile := func(env []string) []string {
		return append(slices.Clone(env), "CLAUDE_ENV_FILE="+filepath.Join(f.dir, "sessionstart-hook-0.sh"))
	}
	cases := []struct {
		name        string
		argv, env   []string
		stdin, want string
		target      float64 // at most this many times the floor; 0: the floor itself; -1: none
	}{
		{"noop", sh(f.noop), binEnv, startEvent, "", 0},
		// The hook binary itself, as the launcher leaves it to run: what the launcher costs
		// is start-bin less this.
		{"start-bare", sh(f.sessionStart), append(slices.Clone(binEnv), "GOMAXPROCS=1"), startEvent, "(apex)", -1},
		{"start-bin", sh(start), envFile(binEnv), startEvent, "(apex)", 2.0},
		{"start-data", sh(start), envFile(dataEnv), startEvent, "(apex)", 2.0},
		{"start-defs", sh(start), envFile(defsEnv), startEvent, "(review-flow)", 2.0},
		{"stop-bin", sh(stop), binEnv, stopEvent, "", 1.6},
		{"stop-data", sh(stop), dataEnv, stopEvent, "", 1.6},
	}
	times := make([][]time.Duration, len(cases))
	for i, c := range cases {
		runOnce(b, c.argv, c.env, c.stdin, c.want) // warm the page cache, check the output
		runOnce(b, c.argv, c.env, c.stdin, c.want) // and let Stop write what it owes once
		times[i] = make([]time.Duration, 0, b.N)
	}
	b.ResetTimer()
	for range b.N {
		// A new order each round: no case always follows the same one.
		for _, i := range rand.Perm(len(cases)) {
			c := cases[i]
			times[i] = append(times[i], runOnce(b, c.argv, c.env, c.stdin, ""))
		}
	}
	b.StopTimer()
	floor := median(times[0])
	for i, c := range cases {
		m := median(times[i])
		b.ReportMetric(float64(m.Microseconds()), c.name+"-us")
		if c.target != 0 {
			x := float64(m) / float64(floor)
			b.ReportMetric(x, c.name+"-x")
			if c.target > 0 && x > c.target {
				b.Logf("%s: %.2fx the floor, over the %.1fx target", c.name, x, c.target)
			}
		}
	}
}

func reportRatios(b *testing.B, f *benchFixture, m time.Duration) {
	noop := reference(b, "noop", func() time.Duration { return sample(b, 201, []string{f.noop}, f.cairnEnv, startEvent) })
	b.ReportMetric(float64(m)/float64(noop), "x-noop")
	if f.baseline == "" {
		b.Logf("no baseline ratio: %s", f.baselineWhy)
		return
	}
	base := reference(b, "baseline", func() time.Duration {
		return sample(b, 21, []string{"bash", f.baseline}, f.baselineEnv, startEvent)
	})
	b.ReportMetric(float64(base)/float64(m), "baseline-x")
}
