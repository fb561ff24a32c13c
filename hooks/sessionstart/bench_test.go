package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/hook"
	"github.com/cairn-dev/cairn/internal/hooktest"
)

// BenchmarkRunInProcess times the hook's work without process start and package init (see
// internal/plugintest for the whole process): an active workflow and a 200-line MEMORY.md.
func BenchmarkRunInProcess(b *testing.B) {
	dir := b.TempDir()
	project := filepath.Join(dir, "project")
	if err := os.MkdirAll(filepath.Join(project, ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	env := map[string]string{
		"HOME":               filepath.Join(dir, "home"),
		"CLAUDE_CONFIG_DIR":  filepath.Join(dir, "home", ".claude"),
		"CLAUDE_PROJECT_DIR": project,
		"CAIRN_MEMORY_DIR":   filepath.Join(dir, "memory"),
		"CLAUDE_PID":         hooktest.ClaudePID,
	}
	getenv := func(k string) string { return env[k] }
	e, err := engine.Open(engine.Config{Getenv: getenv, WorkDir: project, Actor: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.Start(engine.StartRequest{Type: "apex", Context: "benchmark"}); err != nil {
		b.Fatal(err)
	}
	if _, err := e.Transition(engine.TransitionRequest{To: "plan"}); err != nil {
		b.Fatal(err)
	}
	e.Close()
	if err := hooktest.WriteMemory(env["CAIRN_MEMORY_DIR"], 200); err != nil {
		b.Fatal(err)
	}
	const event = `{"session_id":"bench","hook_event_name":"SessionStart","source":"startup"}`
	var out bytes.Buffer
	b.ResetTimer()
	for range b.N {
		out.Reset()
		hook.SessionStart(strings.NewReader(event), &out, io.Discard, getenv, nil)
	}
	b.StopTimer()
	if !bytes.Contains(out.Bytes(), []byte(`"hookEventName":"SessionStart"`)) {
		b.Fatalf("the hook printed %q: the benchmark timed the wrong thing", out.String())
	}
}
