package engine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAppendLogSaysTornTailKept checks that the caller of an append that set aside a log's
// unfinished last line is told, once, in one line, where it is kept.
func TestAppendLogSaysTornTailKept(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	must(en.AppendLog("events", json.RawMessage(`{"n":1}`)))(t)
	p := filepath.Join(e.project, ".claude", "cairn", "logs", "events.jsonl")
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"phase":"impl`)
	f.Close()
	res, err := en.AppendLog("events", json.RawMessage(`{"n":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "quarantine/events.jsonl-") || strings.Contains(res.Warnings[0], "\n") {
		t.Fatalf("warnings %q", res.Warnings)
	}
	res, err = en.AppendLog("events", json.RawMessage(`{"n":3}`))
	if err != nil || len(res.Warnings) != 0 {
		t.Fatalf("second append: %+v, %v", res, err)
	}
}
