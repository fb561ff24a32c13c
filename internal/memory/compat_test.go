package memory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/compattest"
)

// TestCompatSettings is the contract for Claude Code's settings files as Cairn reads them:
// each testdata/compat/settings*.json gives what an earlier Cairn took from it.
func TestCompatSettings(t *testing.T) {
	files, _ := filepath.Glob("testdata/compat/settings*.json")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
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
}
