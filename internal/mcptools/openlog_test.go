package mcptools_test

import (
	"bytes"
	"log"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/internal/mcptools"
)

// lockedBuffer is a log's output read while the server may still write to it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestUnopenableStateLoggedOnce: a state directory that cannot be opened was logged again at
// every call (the open is retried on each), burying whatever else the MCP log said under the
// same line. It is logged when the failure is first met, or changes; each call's result still
// says it.
func TestUnopenableStateLoggedOnce(t *testing.T) {
	p := newProject(t)
	if err := os.MkdirAll(p.root+"/.claude", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.state, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logged lockedBuffer
	_, c := startServer(t, mcptools.Options{
		Open: mcptools.OpenEngine, Getenv: p.getenv(p.session), WorkDir: p.root,
		PPID: 77, Log: log.New(&logged, "", 0), NoWatch: true,
	})
	for range 4 {
		mustFail(t, c, "get_vars", `{}`, "could not open the workflow state")
	}
	if n := strings.Count(logged.String(), "opening the workflow state"); n != 1 {
		t.Errorf("the open's failure was logged %d times over the start and 4 calls, want once:\n%s", n, logged.String())
	}
}
