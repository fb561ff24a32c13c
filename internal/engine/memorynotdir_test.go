package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// TestMemoryDirIsAFile: where the memory directory (or a directory above it) is a file, no
// line can ever be written there. A move's warning said "mkdir …: exists and is not a
// directory" and that Cairn retries, with no step; SessionStart reported tier Full; doctor's
// fix was chmod u+w on the file, then said lines are skipped where the move's warning says
// they are retried; record_learning said "mkdir …" with no step. Each now says the file is in the way and the one step, naming a directory
// where the memory directory was named, that lines are retried, and the tier is Minimal.
func TestMemoryDirIsAFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, under string }{{"the directory", ""}, {"a directory above it", "sub"}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			file := filepath.Join(e.home, "memfile")
			if err := os.WriteFile(file, []byte("mine\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			e.vars["CAIRN_MEMORY_DIR"] = filepath.Join(file, tc.under)
			const step = "set CAIRN_MEMORY_DIR to a directory"
			en := e.open("s1")
			must(en.Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
			res := must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
			if w := strings.Join(res.Warnings, "\n"); !strings.Contains(w, file+" is a file") || !strings.Contains(w, step) || strings.Contains(w, "exists and is not a directory") {
				t.Errorf("transition warnings %q: want the file named and the step", res.Warnings)
			}
			r := e.open("s2").Resume(engine.ResumeOptions{})
			if w := strings.Join(r.Warnings, "\n"); r.Tier != "Minimal" || !strings.Contains(w, file+" is a file") || !strings.Contains(w, step) {
				t.Errorf("resume: tier %s, warnings %q: want Minimal, the file named and the step", r.Tier, r.Warnings)
			}
			c := doctorCheck(e.open("s3"), engine.DoctorOptions{}, "auto-memory (L2)")
			if c == nil || c.OK || !strings.Contains(c.Detail, file+" is a file") || c.Fix != step+"; Cairn retries L2 lines after each turn" {
				t.Errorf("doctor says %+v", c)
			}
			_, err := e.open("s4").RecordLearning(engine.LearningRequest{Title: "Flaky tests", Body: "Run them with -count=3."})
			if want := "the learning was not recorded: " + file + " is a file"; err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), ": ask the user to "+step+", then call "+engine.ToolPrefix+"record_learning again") {
				t.Errorf("record_learning: %v\nwant it to start %q and end with the user's step", err, want)
			}
			if data, _ := os.ReadFile(file); string(data) != "mine\n" {
				t.Errorf("the file holds %q now", data)
			}
		})
	}
}

// A memory directory of a long path under a file: the warning named the whole path before
// its step, and the report, which cuts a warning at 320 characters, cut the step off. The
// path is clipped, as other paths are, and the step is in the report.
func TestMemoryDirIsAFileOfALongPathKeepsItsStep(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := filepath.Join(e.home, strings.Repeat("a", 200), strings.Repeat("b", 200))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "memfile")
	if err := os.WriteFile(file, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.vars["CAIRN_MEMORY_DIR"] = filepath.Join(file, "sub")
	const step = "set CAIRN_MEMORY_DIR to a directory"
	must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	if r := e.open("s2").Resume(engine.ResumeOptions{}); !strings.Contains(r.Report, step) {
		t.Errorf("resume report:\n%s\nwant the step %q", r.Report, step)
	}
}
