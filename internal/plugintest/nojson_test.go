package plugintest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/hooktest"
)

// On their common paths (a session start with an active workflow, a Stop with nothing owed)
// the hooks run no encoding/json code: its first use in a process costs page faults and
// reflection set-up, so the event, the settings and state they read and write, and their
// output go through jsonx instead. The hooks are built with encoding/json instrumented for
// coverage and run, and its counters must all be zero. Rarer paths may still use it (bad
// stdin, repair, migration, and for now whatever takes a store lock: fsx records the lock's
// holder with encoding/json); the bad-stdin run shows that the counters do count.
func TestHooksRunNoEncodingJSON(t *testing.T) {
	skipOnWindows(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH: cannot build the hooks")
	}
	bin := t.TempDir()
	build := func(pkg string) string {
		out := filepath.Join(bin, filepath.Base(pkg))
		cmd := exec.Command(goBin, "build", "-cover", "-coverpkg=encoding/json,"+pkg, "-o", out, pkg)
		cmd.Dir = repoRoot(t)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build -cover %s: %v\n%s", pkg, err, msg)
		}
		return out
	}
	sessionStart, stop := build("./hooks/sessionstart"), build("./hooks/stop")

	// A project as the hooks meet it every day: an active workflow that has moved through
	// phases (so L2 lines were written and the ledger exists), a MEMORY.md, a config.json,
	// and Claude Code's settings files, user and project.
	work := t.TempDir()
	project := filepath.Join(work, "project")
	if err := os.MkdirAll(filepath.Join(project, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(work, "home"),
		"CLAUDE_CONFIG_DIR=" + filepath.Join(work, "home", ".claude"),
		"CLAUDE_PROJECT_DIR=" + project,
		"CAIRN_MEMORY_DIR=" + filepath.Join(work, "memory"),
		"CLAUDE_PID=" + hooktest.ClaudePID,
		"CLAUDE_CODE_SESSION_ID=s-1",
		"GOMAXPROCS=1",
	}
	e, err := engine.Open(engine.Config{Getenv: envFunc(env), WorkDir: project, Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	if _, err := e.Start(ctx, engine.StartRequest{Type: "apex", Context: "add retries to the uploader"}); err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{"plan", "implement"} {
		if to == "implement" { // plan is an approval gate: a person approves
			if _, err := e.Approve(ctx, ""); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := e.Transition(ctx, engine.TransitionRequest{To: to}); err != nil {
			t.Fatal(err)
		}
	}
	if err := hooktest.WriteMemory(filepath.Join(work, "memory"), 50); err != nil {
		t.Fatal(err)
	}
	for file, doc := range map[string]string{
		filepath.Join(e.StateDir(), "config.json"):               `{"archive_retention": 5, "stop_blocking": true}`,
		filepath.Join(work, "home", ".claude", "settings.json"):  `{"model": "opus", "autoMemoryEnabled": true, "permissions": {"allow": ["Bash(go test:*)"]}}`,
		filepath.Join(project, ".claude", "settings.json"):       `{"hooks": {}, "autoMemoryDirectory": null}`,
		filepath.Join(project, ".claude", "settings.local.json"): `{"permissions": {"deny": []}}`,
	} {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// run runs a hook and returns its stdout and the encoding/json functions it ran.
	run := func(hook, event string) (string, []string) {
		t.Helper()
		cov := t.TempDir()
		cmd := exec.Command(hook)
		cmd.Env = append(env, "GOCOVERDIR="+cov)
		cmd.Stdin = strings.NewReader(event)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", hook, err, stderr.String())
		}
		out, err := exec.Command(goBin, "tool", "covdata", "func", "-i", cov).Output()
		if err != nil {
			t.Fatalf("go tool covdata func: %v", err)
		}
		var ran []string
		sawJSON := false
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) != 3 || !strings.HasPrefix(f[0], "encoding/json/") {
				continue
			}
			sawJSON = true
			if f[2] != "0.0%" {
				ran = append(ran, f[0]+" "+f[1])
			}
		}
		if !sawJSON {
			t.Fatalf("%s: no encoding/json counters in the coverage data: the check would prove nothing\n%s", hook, out)
		}
		return stdout.String(), ran
	}
	check := func(what, hook, event, want string) {
		t.Helper()
		out, ran := run(hook, event)
		if want == "" && out != "" || !strings.Contains(out, want) {
			t.Fatalf("%s printed %q, want %q in it (nothing for \"\"): the run did not take the path it is meant to check", what, out, want)
		}
		if len(ran) > 0 {
			t.Errorf("%s ran encoding/json:\n\t%s", what, strings.Join(ran, "\n\t"))
		}
	}

	start := `{"session_id":"s-1","transcript_path":"/t.jsonl","cwd":"/p","hook_event_name":"SessionStart","source":"startup"}`
	check("SessionStart", sessionStart, start, `"additionalContext":"Cairn: stored workflow state`)
	check("Stop with nothing owed", stop, `{"session_id":"s-1","hook_event_name":"Stop","stop_hook_active":false}`, "")

	// The counters count: stdin that is not JSON is described with encoding/json's words.
	if _, ran := run(sessionStart, "this is not JSON"); len(ran) == 0 {
		t.Error("a SessionStart given bad stdin ran no encoding/json either: the coverage counters may not be counting")
	}
}
