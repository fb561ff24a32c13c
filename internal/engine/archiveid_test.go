package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// An archived workflow's id is not given to a new one however archive/index.jsonl fares: lost,
// emptied, cut short before the archive's line, or too large to read, the archive's directory
// is still there and still that workflow's (its journal, `cairn show ID`).
func TestArchivedIDIsTakenWithoutItsIndexLine(t *testing.T) {
	for _, tc := range []struct {
		name  string
		index func(t *testing.T, file string)
	}{
		{"lost", func(t *testing.T, file string) {
			if err := os.Remove(file); err != nil {
				t.Fatal(err)
			}
		}},
		{"emptied", func(t *testing.T, file string) {
			if err := os.WriteFile(file, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"cut short", func(t *testing.T, file string) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(string(b), "\n")
			if err := os.WriteFile(file, []byte(first+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"too large to read", func(t *testing.T, file string) {
			f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteString(strings.Repeat(" ", 17<<20) + "\n"); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			en := e.open("s1")
			for _, id := range []string{"apex-a", "apex-b"} {
				must(en.Start(engine.StartRequest{Type: "apex", Context: id, WorkflowID: id}))(t)
				must(en.Archive("abandoned"))(t)
			}
			tc.index(t, filepath.Join(en.StateDir(), "archive", "index.jsonl"))
			res, err := en.Start(engine.StartRequest{Type: "apex", Context: "again", WorkflowID: "apex-b"})
			if res != nil {
				t.Fatalf("a start with the archived id apex-b: %s", res.Message)
			}
			if err == nil || !strings.Contains(err.Error(), "id apex-b is an archived workflow's (archive/apex-b-") {
				t.Fatalf("a start with the archived id apex-b: %v, %v", res, err)
			}
		})
	}
}
