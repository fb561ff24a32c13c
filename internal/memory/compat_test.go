package memory

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/compattest"
)

// TestCompatSettings is the contract for Claude Code's settings files as Cairn reads them:
// each testdata/compat/settings*.json gives what an earlier Cairn took from it.
func TestCompatSettings(t *testing.T) {
	compattest.Each(t, "settings*.json", func(t *testing.T, f string, data []byte) {
		s, ok := parseSettings("p", data)
		got := compattest.Dump(struct {
			OK      bool
			Path    string
			Dir     *string
			Enabled *bool
		}{ok, s.path, s.dir, s.enabled})
		compattest.Golden(t, strings.TrimSuffix(f, ".json")+".values", []byte(got))
	})
}
