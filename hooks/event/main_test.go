package main

import (
	"flag"
	"testing"

	"github.com/cairn-dev/cairn/internal/hooktest"
	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite the expected files in testdata/script/*.txtar")

// TestMain makes this test binary cairn-event itself (and the fixture commands), so the
// scripts exec the real hook over real stdin and stdout with no build step.
func TestMain(m *testing.M) {
	cmds := hooktest.Commands()
	cmds["cairn-event"] = main
	testscript.Main(m, cmds)
}

// TestScripts runs testdata/script/*.txtar; -update rewrites their expected files.
func TestScripts(t *testing.T) {
	testscript.Run(t, hooktest.Params("testdata/script", *update))
}
