package main

import (
	"os"
	"testing"

	"github.com/cairn-dev/cairn/internal/hook"
	"github.com/cairn-dev/cairn/internal/hooktest"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// cairn-stop is here too: a script checks what a StopFailure leaves for the next Stop.
func TestMain(m *testing.M) {
	hooktest.Main(m, map[string]func(){"cairn-event": main, "cairn-stop": func() {
		hook.Stop(os.Stdin, os.Stdout, os.Stderr, os.Getenv, yamldoc.Codec{})
	}})
}

// TestScripts runs testdata/script/*.txtar (see internal/hooktest); -update rewrites their
// expected files.
func TestScripts(t *testing.T) { hooktest.Run(t) }
