// Package readme runs the README's shell commands, so the set-up and usage it promises stay
// true, and holds the README and docs/ to the code: the state layout, the package map, the
// dependencies and the environment variables they list. It has only tests.
package readme

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote/gittest"
)

// block is one ```sh fenced block of the README.
type block struct {
	line  int
	lines []string
}

func shellBlocks(t *testing.T, readme string) []block {
	t.Helper()
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	var out []block
	var cur *block
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(l) == "```sh":
			cur = &block{line: n}
		case cur != nil && strings.TrimSpace(l) == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, l)
		}
	}
	if cur != nil {
		t.Fatalf("README: the sh block at line %d is not closed", cur.line)
	}
	return out
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found from %s", root)
	}
	return root
}

// command strips a trailing comment: the README annotates its commands.
func command(l string) string {
	if i := strings.Index(l, "  #"); i >= 0 {
		l = l[:i]
	}
	return strings.TrimSpace(l)
}

// TestReadmeCommands runs every command of every sh block. The set-up block's `make test` is
// the command .ci/run runs (checked here, run there: running it here would recurse); its
// `make install` runs for real, without a claude CLI on PATH and with a private HOME and state
// directory. The other blocks run in order in one shell in a fresh git project with the CLI on
// PATH, and must all succeed.
func TestReadmeCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries and runs make")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the README's commands are POSIX shell")
	}
	root := repoRoot(t)
	blocks := shellBlocks(t, filepath.Join(root, "README.md"))
	if len(blocks) < 2 {
		t.Fatalf("README has %d sh blocks; want the set-up block and at least one usage block", len(blocks))
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}

	tmp := t.TempDir()
	home := filepath.Join(tmp, "home")
	project := filepath.Join(tmp, "project")
	bin := filepath.Join(tmp, "bin")
	for _, d := range []string{home, filepath.Join(project, ".git"), bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	// PATH without any claude CLI: make install must work without one.
	path := strings.Join([]string{bin, filepath.Dir(goBin), "/usr/local/bin", "/usr/bin", "/bin"}, string(os.PathListSeparator))
	env := append(os.Environ(), "PATH="+path, "HOME="+home, "CAIRN_STATE_DIR="+filepath.Join(tmp, "state"),
		"GOFLAGS=-mod=readonly", "GOCACHE="+goEnv(t, "GOCACHE"), "GOMODCACHE="+goEnv(t, "GOMODCACHE"))

	setup := blocks[0]
	var sawInstall, sawTest bool
	for _, l := range setup.lines {
		switch cmd := command(l); cmd {
		case "":
		case "make test":
			sawTest = true
			if !strings.Contains(string(ci), "\nmake test\n") {
				t.Errorf(".ci/run does not run the README's test command %q", cmd)
			}
		case "make install":
			sawInstall = true
			c := exec.Command("sh", "-c", cmd)
			c.Dir, c.Env = root, env
			out, err := c.CombinedOutput()
			if err != nil {
				t.Fatalf("README line %d: %s: %v\n%s", setup.line, cmd, err, out)
			}
			if !bytes.Contains(out, []byte("claude is not on PATH")) || !bytes.Contains(out, []byte("state directory")) {
				t.Errorf("make install did not build and run cairn doctor:\n%s", out)
			}
		default:
			t.Errorf("README line %d: set-up command %q is not run by this test", setup.line, cmd)
		}
	}
	if !sawInstall || !sawTest {
		t.Fatalf("the set-up block must be `make install` and `make test`, got %q", setup.lines)
	}

	// The usage blocks run against binaries built into bin/, as make install leaves them.
	for _, b := range []string{"cairn", "cairn-mcp", "cairn-session-start", "cairn-stop"} {
		src := filepath.Join(root, "bin", b)
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatalf("make install did not build %s: %v", b, err)
		}
		if err := os.WriteFile(filepath.Join(bin, b), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range blocks[1:] {
		var script strings.Builder
		script.WriteString("set -eu\n")
		for _, l := range b.lines {
			if cmd := command(l); cmd != "" {
				script.WriteString(cmd + "\n")
			}
		}
		c := exec.Command("sh", "-c", script.String())
		c.Dir = project
		c.Env = append(env, "CLAUDE_PROJECT_DIR="+project, "CLAUDE_PLUGIN_ROOT="+root)
		c.Env = withoutKey(c.Env, "CAIRN_STATE_DIR")
		out, err := c.CombinedOutput()
		if err != nil {
			t.Errorf("README block at line %d failed: %v\n%s\n--- output ---\n%s", b.line, err, script.String(), out)
		}
	}
	if _, err := os.Stat(filepath.Join(project, ".claude", "cairn", "workflow-state.json")); err != nil {
		t.Errorf("the usage block left no workflow state in the project: %v", err)
	}
}

func goEnv(t *testing.T, key string) string {
	t.Helper()
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", key, err)
	}
	return strings.TrimSpace(string(out))
}

func withoutKey(env []string, key string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// TestReadmeMakeTargetsExist checks every `make TARGET` the README names outside its sh blocks:
// make knows how to run it, and `make bench` really runs and prints benchstat's table. It runs
// the recipe whole (every package of it built and run) but one iteration of a few benchmarks:
// every one, once, took over seven minutes on a loaded two-core machine, most of it the
// bash+jq baseline sampled and the store's benchmarks filling directories. The hooks' noop and
// baseline benchmarks run first, so that the SessionStart one measures no samples of its own.
func TestReadmeMakeTargetsExist(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not on PATH")
	}
	root := repoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]bool{}
	for _, f := range strings.Split(string(data), "`make ")[1:] {
		if end := strings.IndexAny(f, "` "); end > 0 {
			targets[f[:end]] = true
		}
	}
	if !targets["bench"] {
		t.Fatalf("the README names no `make bench`; found %v", targets)
	}
	for target := range targets {
		c := exec.Command("make", "-n", target)
		c.Dir = root
		if out, err := c.CombinedOutput(); err != nil {
			t.Errorf("make -n %s: %v\n%s", target, err, out)
		}
	}
	if testing.Short() {
		return
	}
	args := []string{"bench", "COUNT=1", "BENCHTIME=1x", "BENCH=^Benchmark(NoopProcess|BaselineSessionStart|SessionStartProcess|SaveVsBare)"}
	out, err := makeCmd(t, root, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	for _, want := range []string{"BenchmarkSaveVsBare", "BenchmarkSessionStartProcess", "sec/op"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("make bench printed no %s:\n%s", want, out)
		}
	}
}

// makeCmd runs make in dir in a process group of its own, killed whole a little before the
// test's deadline: go test's timeout ends this binary with a panic, no cleanup, and would leave
// make and the go test it runs going on their own.
func makeCmd(t *testing.T, dir string, args ...string) *exec.Cmd {
	t.Helper()
	ctx := t.Context()
	if end, ok := t.Deadline(); ok {
		var cancel func()
		ctx, cancel = context.WithDeadline(ctx, end.Add(-time.Until(end)/10))
		t.Cleanup(cancel)
	}
	c := exec.CommandContext(ctx, "make", args...)
	c.Dir = dir
	gittest.OwnGroup(c)
	c.Cancel = func() error {
		t.Logf("make %s: killed with its children, close to the test's deadline", strings.Join(args, " "))
		gittest.KillGroup(c)
		return nil
	}
	c.WaitDelay = time.Second // a killed group's grandchildren may hold the output pipe a moment
	return c
}

// A benchmark that fails fails make bench, although its output goes through tee. The go here
// fails its test run as a failing benchmark does and succeeds at anything else (benchstat).
func TestMakeBenchFailsWithItsBenchmark(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not on PATH")
	}
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in go is a shell script")
	}
	fakeGo := filepath.Join(t.TempDir(), "go")
	script := "#!/bin/sh\nif [ \"$1\" = test ]; then echo '--- FAIL: BenchmarkBroken'; exit 1; fi\n"
	if err := os.WriteFile(fakeGo, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := makeCmd(t, repoRoot(t), "bench", "GO="+fakeGo, "COUNT=1", "BENCHTIME=1x").CombinedOutput()
	if err == nil {
		t.Fatalf("make bench with a failing benchmark succeeded:\n%s", out)
	}
	if !bytes.Contains(out, []byte("--- FAIL: BenchmarkBroken")) {
		t.Errorf("make bench did not print the benchmark's failure:\n%s", out)
	}
}
