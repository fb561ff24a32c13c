package main

import (
	"os"
	"testing"

	"github.com/cairn-dev/cairn/internal/hook"
	"github.com/cairn-dev/cairn/internal/hooktest"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// cairn-stop and cairn-session-start are here too: scripts check what a StopFailure or a task
// event leaves for the next Stop or session start.
func TestMain(m *testing.M) {
	hooktest.Main(m, map[string]func(){"cairn-event": main, "cairn-stop": func() {
		hook.Stop(os.Stdin, os.Stdout, os.Stderr, os.Getenv, yamldoc.Codec{})
	}, "cairn-session-start": func() {
		hook.SessionStart(os.Stdin, os.Stdout, os.Stderr, os.Getenv, yamldoc.Codec{})
	}})
}

// TestScripts runs testdata/script/*.txtar (see internal/hooktest); -update rewrites their
// expected files.
func TestScripts(t *testing.T) { hooktest.Run(t) }
