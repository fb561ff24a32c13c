package main

import (
	"testing"

	"github.com/cairn-dev/cairn/internal/hooktest"
)

func TestMain(m *testing.M) { hooktest.Main(m, map[string]func(){"cairn-stop": main}) }

// TestScripts runs testdata/script/*.txtar (see internal/hooktest); -update rewrites their
// expected files.
func TestScripts(t *testing.T) { hooktest.Run(t) }
