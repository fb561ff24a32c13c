package memory

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/e2e/mockapi"
)

// realClaude returns the Claude Code executable to check Dir against, or skips: it is
// $CAIRN_CLAUDE_BIN, else the copy .ci/install-claude.sh keeps in its cache (the end-to-end
// suite installs it there). Each case costs a few seconds of the CLI starting up, so -short
// skips the check.
func realClaude(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: not starting the real Claude Code CLI")
	}
	if p := os.Getenv("CAIRN_CLAUDE_BIN"); p != "" {
		return p
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	p := filepath.Join(cache, "cairn-e2e", "claude-2.1.330", "node_modules", ".bin", "claude")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("Claude Code is not installed (%v); set CAIRN_CLAUDE_BIN or run .ci/install-claude.sh to check Dir against it", err)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed; the cases build real repositories and worktrees")
	}
	return p
}

// TestDirMatchesRealClaude starts the real CLI in real trees and checks that the memory
// directory it creates is the one Dir names (or, disabled, that it creates none), once it has
// run to its end against the mock API.
func TestDirMatchesRealClaude(t *testing.T) {
	claude := realClaude(t)
	type tc struct {
		name  string
		build func(t *testing.T, base string) (launch string) // returns the launch dir
		env   map[string]string
		files map[string]string // relative to base; "{base}" replaced
		off   bool
	}
	repo := func(t *testing.T, dir string) {
		git(t, dir, "init", "-q")
		git(t, dir, "commit", "-q", "--allow-empty", "-m", "init")
	}
	cases := []tc{
		{name: "long-path", build: func(t *testing.T, base string) string {
			p := filepath.Join(base, "Some Dir", "my.repo_X")
			for i := range 22 {
				p = filepath.Join(p, "segment_"+string(rune('a'+i))+".x")
			}
			mkdirAll(t, p)
			repo(t, p)
			return p
		}},
		{name: "worktree-subfolder", build: func(t *testing.T, base string) string {
			main := filepath.Join(base, "Main.Repo_1")
			mkdirAll(t, main)
			repo(t, main)
			wt := filepath.Join(base, "wt one")
			git(t, main, "worktree", "add", "-q", "-b", "feature", wt)
			sub := filepath.Join(wt, "Sub Dir")
			mkdirAll(t, sub)
			return sub
		}},
		// Started from a shell that cd'd through a symlink: Cairn's $PWD-preferring working
		// directory is the path through it, Claude Code's the physical one.
		{name: "through-a-symlink", env: map[string]string{"PWD": "{base}/linked"}, build: func(t *testing.T, base string) string {
			p := filepath.Join(base, "real", "proj")
			mkdirAll(t, p)
			repo(t, p)
			if err := os.Symlink(p, filepath.Join(base, "linked")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(base, "linked")
		}},
		{name: "submodule-subfolder", build: func(t *testing.T, base string) string {
			lib := filepath.Join(base, "lib.src")
			mkdirAll(t, lib)
			repo(t, lib)
			super := filepath.Join(base, "Super.Proj")
			mkdirAll(t, super)
			repo(t, super)
			git(t, super, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "vendor/lib")
			sub := filepath.Join(super, "vendor", "lib", "pkg")
			mkdirAll(t, sub)
			return sub
		}},
		{name: "no-git", build: func(t *testing.T, base string) string {
			p := filepath.Join(base, "plain", "Dir.With_Stuff")
			mkdirAll(t, p)
			return p
		}},
		{name: "config-dir", env: map[string]string{"CLAUDE_CONFIG_DIR": "{base}/cfg"}, build: func(t *testing.T, base string) string {
			p := filepath.Join(base, "proj")
			mkdirAll(t, p)
			repo(t, p)
			return p
		}},
		{name: "setting-tilde", files: map[string]string{"home/.claude/settings.json": `{"autoMemoryDirectory": "~/mem-here"}`},
			build: func(t *testing.T, base string) string {
				p := filepath.Join(base, "proj")
				mkdirAll(t, p)
				return p
			}},
		{name: "disabled-in-settings-env", files: map[string]string{"home/.claude/settings.json": `{"env": {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}}`}, off: true,
			build: func(t *testing.T, base string) string {
				p := filepath.Join(base, "proj")
				mkdirAll(t, p)
				return p
			}},
		{name: "disabled", env: map[string]string{"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}, off: true,
			build: func(t *testing.T, base string) string {
				p := filepath.Join(base, "proj")
				mkdirAll(t, p)
				return p
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			base, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			home := filepath.Join(base, "home")
			mkdirAll(t, home)
			for name, content := range c.files {
				p := filepath.Join(base, filepath.FromSlash(name))
				mkdirAll(t, filepath.Dir(p))
				if err := os.WriteFile(p, []byte(strings.ReplaceAll(content, "{base}", base)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			launch := c.build(t, base)
			env := map[string]string{"HOME": home}
			for k, v := range c.env {
				env[k] = strings.ReplaceAll(v, "{base}", base)
			}
			loc, err := Dir(Env{Getenv: func(k string) string { return env[k] }, WorkDir: launch, ManagedSettings: filepath.Join(base, "none.json")})
			if err != nil {
				t.Fatal(err)
			}
			if loc.Disabled != c.off {
				t.Fatalf("Dir = %+v, want disabled=%v", loc, c.off)
			}

			// Against the mock API the CLI answers and exits: every directory it makes is
			// there by then, and none comes later.
			srv := mockapi.New()
			defer srv.Close()
			cmd := exec.Command(claude, "-p", "hi")
			cmd.Dir = launch
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=sk-test-dummy"}
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			runClaude(t, cmd)
			created := memoryDirs(t, base)
			if c.off {
				if len(created) != 0 {
					t.Errorf("auto-memory disabled, yet Claude Code created %v", created)
				}
				return
			}
			if len(created) != 1 || created[0] != loc.Dir {
				t.Errorf("Claude Code created memory dirs %v; Dir says %s (source %s)", created, loc.Dir, loc.Source)
			}
		})
	}
}

// memoryDirs lists the directories under base that Claude Code may have made for memory:
// any named "memory" and any named "mem-here".
func memoryDirs(t *testing.T, base string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() && (d.Name() == "memory" || d.Name() == "mem-here") {
			out = append(out, p)
			return filepath.SkipDir
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "plugins") {
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mkdirAll(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

// runClaude runs the CLI to its end; 90 s only bounds a hang.
func runClaude(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("claude -p: %v", err)
		}
	case <-time.After(90 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatal("claude -p did not finish in 90s")
	}
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestClaudeLoadsCairnLines writes L2 the way the engine will (a position line and a
// learning, beside a line of the user's) and runs the real CLI against the mock API: the
// first main request must carry MEMORY.md with every line, Cairn's included.
func TestClaudeLoadsCairnLines(t *testing.T) {
	claude := realClaude(t)
	m, home, proj := memoryProject(t)
	userLine := "- [Prefs](prefs.md) — user likes tabs"
	if err := os.WriteFile(filepath.Join(m.Location().Dir, IndexFile), []byte("# Memory index\n"+userLine+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.Record("Active APEX workflow: analyze completed, planning the login fix"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := recordLearning(m, Learning{Title: "Run migrations first", Body: "make migrate before go test"}); err != nil {
		t.Fatal(err)
	}

	all := firstMainText(t, claude, home, proj)
	for _, want := range []string{
		userLine,
		"- [Cairn workflow](cairn-workflow.md) — Active APEX workflow: analyze completed, planning the login fix",
		"- [“Run migrations first”](cairn-learning-run-migrations-first.md) — “make migrate before go test”",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the model's context lacks %q", want)
		}
	}
	// Cairn's record of the learnings it wrote is its own, not a memory the model is shown.
	if _, err := os.Stat(filepath.Join(m.Location().Dir, writtenFile)); err != nil || strings.Contains(all, writtenFile) {
		t.Errorf("the record %s: %v; in the model's context: %t", writtenFile, err, strings.Contains(all, writtenFile))
	}
}

// TestClaudeLoadsAsClaudeLoadsSays runs the real CLI on MEMORY.md files past its caps: the
// model's context must hold exactly the lines claudeLoads yields, the last of them and not
// the one after, which is what a learning's refusal (LearningsFullError.Crowded) rests on.
func TestClaudeLoadsAsClaudeLoadsSays(t *testing.T) {
	claude := realClaude(t)
	lines := func(n int, pad string) string {
		var b strings.Builder
		for i := range n {
			// The marker last: Claude Code's warning quotes the first line it cut, its first 80 characters.
			fmt.Fprintf(&b, "- [Note %d](note-%d.md) — %s z%dz\n", i, i, pad, i)
		}
		return b.String()
	}
	for _, tc := range []struct{ name, index string }{
		{"lines", bom + "\n\n" + lines(230, strings.Repeat("a", 80))},
		{"UTF-16 units", lines(60, strings.Repeat("é", 600))}, // 36,000+ units, 72,000+ bytes
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, home, proj := memoryProject(t)
			if err := os.WriteFile(filepath.Join(m.Location().Dir, IndexFile), []byte(tc.index), 0o644); err != nil {
				t.Fatal(err)
			}
			n := 0
			for range claudeLoads([]byte(tc.index)) {
				n++
			}
			all := firstMainText(t, claude, home, proj)
			if last := fmt.Sprintf(" z%dz\n", n-1); n == 0 || !strings.Contains(all, last) {
				t.Errorf("claudeLoads yields %d lines; the model's context lacks line %d", n, n)
			}
			if next := fmt.Sprintf(" z%dz\n", n); strings.Contains(all, next) {
				t.Errorf("claudeLoads yields %d lines; the model's context holds line %d too", n, n+1)
			}
		})
	}
}

// memoryProject makes a home and a git project in a new directory, and opens the project's
// auto-memory, its directory made.
func memoryProject(t *testing.T) (m *Memory, home, proj string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, proj = filepath.Join(base, "home"), filepath.Join(base, "proj")
	mkdirAll(t, home)
	mkdirAll(t, proj)
	git(t, proj, "init", "-q")
	env := map[string]string{"HOME": home}
	m, err = Open(Env{Getenv: func(k string) string { return env[k] }, WorkDir: proj, ManagedSettings: filepath.Join(base, "none.json")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mkdirAll(t, m.Location().Dir)
	return m, home, proj
}

// firstMainText runs `claude -p hi` in proj with home against the mock API, and returns all
// the text of its first main request.
func firstMainText(t *testing.T, claude, home, proj string) string {
	t.Helper()
	srv := mockapi.New()
	defer srv.Close()
	cmd := exec.Command(claude, "-p", "hi")
	cmd.Dir = proj
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=sk-test-dummy"}
	runClaude(t, cmd)
	first := srv.FirstMain()
	if first == nil {
		t.Fatalf("no main request reached the mock; paths %v", srv.Paths())
	}
	return first.AllText()
}
