package migrate

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// testNow is the migration time of every golden case.
var testNow = time.Date(2026, 11, 22, 18, 0, 0, 0, time.UTC)

// goldenDirs maps each testdata directory to the format its cases are in and the file name
// the store would pass for them ("" means the case's own file name).
var goldenDirs = []struct {
	dir    string
	format Format
	name   string
}{
	{"seed001", Seed001, "workflow-state.json"},
	{"seed002", Seed002, "phase.json"},
	{"seed003", Seed003, ""},
	{"seed004", Seed004, ""},
	{"schema1", Schema1, "workflow-state.json"},
}

type goldenCase struct {
	name      string // dir/file
	path      string
	format    Format
	data      []byte
	extra     Extra
	execution string // path of the execution.json beside it, if any
}

func goldenCases(t testing.TB) []goldenCase {
	t.Helper()
	var cases []goldenCase
	for _, d := range goldenDirs {
		files, err := filepath.Glob(filepath.Join("testdata", d.dir, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, ".execution.json") {
				continue
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			c := goldenCase{name: d.dir + "/" + filepath.Base(path), path: path, format: d.format, data: data}
			c.extra.Name = d.name
			if c.extra.Name == "" {
				c.extra.Name = filepath.Base(path)
			}
			exec := strings.TrimSuffix(path, ".json") + ".execution.json"
			if e, err := os.ReadFile(exec); err == nil {
				c.extra.Execution, c.execution = e, exec
			}
			cases = append(cases, c)
		}
	}
	if len(cases) < 20 {
		t.Fatalf("found only %d golden cases under testdata/", len(cases))
	}
	return cases
}

// TestConvertGolden converts every fixture and compares the record (or the error) with its
// .golden file. Run with -update to rewrite them, then read the diff.
func TestConvertGolden(t *testing.T) {
	for _, c := range goldenCases(t) {
		t.Run(c.name, func(t *testing.T) {
			f, err := Detect(c.data)
			if err != nil || f != c.format {
				t.Fatalf("Detect = %v, %v; want %v", f, err, c.format)
			}
			rec, err := Convert(f, c.data, c.extra, testNow)
			var got []byte
			if err != nil {
				if rec != nil {
					t.Errorf("Convert returned a record with an error")
				}
				got = []byte("error: " + err.Error() + "\n")
			} else {
				// The record as the store encodes it, indented to read.
				if got, err = json.MarshalIndent(rec, "", "  "); err != nil {
					t.Fatal(err)
				}
				got = append(got, '\n')
				if err := rec.Validate(); err != nil {
					t.Errorf("the record fails the domain's validation: %v", err)
				}
			}
			golden := strings.TrimSuffix(c.path, ".json") + ".golden"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the conversion:\n--- got\n%s\n--- want\n%s", golden, got, want)
			}
		})
	}
}

// TestIDStableAcrossRuns: the id a migration derives depends on the original only, not on the
// clock: a migration run again after a crash (at a later now) names the same workflow. Before,
// a document with no time at all took its creation time, and so its id, from now, and every
// re-run made a new workflow of it.
func TestIDStableAcrossRuns(t *testing.T) {
	noTime := 0
	for _, c := range goldenCases(t) {
		first, err := Convert(c.format, c.data, c.extra, testNow)
		if err != nil {
			continue
		}
		again, err := Convert(c.format, c.data, c.extra, testNow.Add(90*time.Minute))
		if err != nil {
			t.Fatalf("%s: %v on the second run", c.name, err)
		}
		if first.WorkflowID != again.WorkflowID {
			t.Errorf("%s: id %s, then %s on a later run", c.name, first.WorkflowID, again.WorkflowID)
		}
		if first.CreatedAt.Equal(testNow) {
			noTime++
		}
	}
	if noTime == 0 {
		t.Fatal("no fixture without times: the case this test is for is not covered")
	}
}
