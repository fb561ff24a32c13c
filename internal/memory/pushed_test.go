package memory

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A longer line of Cairn's rewritten in place, at the top of a MEMORY.md as long as Claude
// Code loads (25,000 characters), pushes its last line out: said with the count and the step,
// and not as a line moved near the top, which it was not.
func TestLongerLinePushesTheLastLineOut(t *testing.T) {
	m, dir := newTestMemory(t)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := m.Record("Active APEX workflow: planning"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, IndexFile)
	cur, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Filled to 5 units short of the 25,000 Claude Code loads.
	note := "- " + strings.Repeat("n", 998) + "\n"
	body := string(cur) + strings.Repeat(note, (loadedUnitsCap-len(cur))/len(note))
	body += strings.Repeat("x", loadedUnitsCap-len(body)-6) + "\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	err = m.Record("Active APEX workflow: analyze completed, planning the login fix at length")
	p, ok := errors.AsType[*PushedError](err)
	if !ok || p.N != 1 || strings.Contains(err.Error(), "near the top") || !strings.Contains(err.Error(), "shorten MEMORY.md") {
		t.Fatalf("Record = %v, want one line said pushed out, with the step", err)
	}
}
