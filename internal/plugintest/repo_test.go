package plugintest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var (
	rootOnce sync.Once
	rootDir  string
	rootErr  error
)

// repoRoot is the directory holding go.mod, found from the test's working directory.
func repoRoot(tb testing.TB) string {
	tb.Helper()
	rootOnce.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			rootErr = err
			return
		}
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				rootDir = dir
				return
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				rootErr = os.ErrNotExist
				return
			}
			dir = parent
		}
	})
	if rootErr != nil {
		tb.Fatalf("finding the repository root (go.mod) from the working directory: %v", rootErr)
	}
	return rootDir
}

// readJSON decodes the repository file rel into v, failing the test with the file's name.
func readJSON(tb testing.TB, rel string, v any) {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(tb), rel))
	if err != nil {
		tb.Fatalf("reading %s: %v", rel, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		tb.Fatalf("%s is not valid JSON: %v", rel, err)
	}
}

// mustExecutable fails unless rel (relative to the repository root) is a regular file with an
// execute bit.
func mustExecutable(tb testing.TB, rel, why string) {
	tb.Helper()
	fi, err := os.Stat(filepath.Join(repoRoot(tb), rel))
	if err != nil {
		tb.Errorf("%s: %s does not exist: %v", why, rel, err)
		return
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		tb.Errorf("%s: %s is not an executable file (mode %s)", why, rel, fi.Mode())
	}
}

// binarySources maps each binary hooks/launch can start to its package directory.
var binarySources = map[string]string{
	"cairn-mcp":           "mcpserver",
	"cairn-session-start": "hooks/sessionstart",
	"cairn-stop":          "hooks/stop",
	"cairn-event":         "hooks/event",
	"cairn":               "cmd/cairn",
}

// mcpTools is the tool list of issue 5: the only names skills and commands may mention.
var mcpTools = []string{
	"resume_check", "start_workflow", "transition", "complete_workflow", "update_task",
	"set_enforcement", "expire_ttl", "save_checkpoint", "load_checkpoint", "list_checkpoints",
	"set_vars", "get_vars", "append_log", "record_learning", "initiative",
}
