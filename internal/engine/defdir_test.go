package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
)

// A file where the definitions directory belongs (a definition copied to .claude/workflows
// before the directory existed) is told at session start, as a broken definition file is,
// with the step that makes it read; the built-ins still load.
func TestDefinitionsDirectoryThatIsAFileIsShown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write(".claude/workflows", "---\nname: review\nphases: [draft, done]\n---\n")
	r := e.open("s1").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
	want := filepath.FromSlash("workflow definition .claude/workflows: is a file, not a directory: Cairn reads definitions from .claude/workflows/NAME.md; to use it, the user makes it a directory")
	if !strings.Contains(r.SystemMessage, want) || !strings.Contains(r.Report, want) {
		t.Errorf("not shown: system message %q, report:\n%s", r.SystemMessage, r.Report)
	}
	if _, err := e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "x"}); err != nil {
		t.Errorf("the built-ins do not load: %v", err)
	}
}

// A definitions directory holding thousands of small files (generated ones, a directory
// copied in by mistake) is read only up to a number of files, as it is up to a number of
// bytes: each file costs an open and a parse whatever its size, and the session start reads
// them all under its deadline. The files past it are said in one warning that names the cap
// and the files skipped, and the report of the active workflow still arrives.
func TestDefinitionFilesPastTheCountAreNotRead(t *testing.T) {
	t.Parallel()
	const cap = 500
	en, got := manyDefinitions(t, cap+3, func(i int) (string, string) {
		return fmt.Sprintf("t%04d.md", i), fmt.Sprintf("---\nname: t%04d\nphases: [a, b]\n---\n", i)
	}, "not read")
	want := filepath.FromSlash("workflow definition .claude/workflows/t0500.md: not read, nor the 2 files after it in name order: Cairn reads at most 500 definition files")
	if len(got) != 1 || !strings.Contains(got[0], want) || !strings.Contains(got[0], "move some elsewhere") {
		t.Errorf("warnings about files not read: %q; want one saying %q", got, want)
	}
	if _, ok := en.Definition("t0499"); !ok {
		t.Errorf("t0499, the last file within the cap, did not load")
	}
	if _, err := en.TypeDefinition("t0500"); err == nil {
		t.Errorf("t0500, past the cap, loaded")
	}
}

// Thousands of files ending in .MD (or another case of .md) are told each with its step only
// up to the few a report shows, the rest in one warning naming the first and how many more:
// ten thousand such lines took the session start past its deadline, and the report of the
// active workflow with it.
func TestManyMisnamedDefinitionsAreToldInOneLine(t *testing.T) {
	t.Parallel()
	_, got := manyDefinitions(t, 300, func(i int) (string, string) { return fmt.Sprintf("w%03d.MD", i), "" }, ".MD")
	want := filepath.FromSlash("workflow definition .claude/workflows/w005.MD: not read, nor the 294 files after it that end in another case of .md: Cairn reads only files ending in .md, in lower case; rename them")
	if len(got) != 6 || !strings.Contains(got[5], want) || !strings.Contains(got[4], "w004.MD: not read: Cairn reads only files ending in .md, in lower case; rename it to w004.md") {
		t.Errorf("warnings about .MD files: %d, the first six %q; want five with their step, then one saying %q", len(got), got[:min(6, len(got))], want)
	}
}

// manyDefinitions writes n files in .claude/workflows, file(i) giving the name and contents of
// each, in a project with an active apex workflow, and reads them as a session start does: the
// report of the workflow must still arrive. It returns the engine, and the start's warnings
// that contain about.
func manyDefinitions(t *testing.T, n int, file func(i int) (name, body string), about string) (*engine.Engine, []string) {
	t.Helper()
	e, _ := startApex(t)
	for i := range n {
		name, body := file(i)
		e.write(".claude/workflows/"+name, body)
	}
	en := e.open("s1")
	r := en.Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
	if !strings.Contains(r.Report, "apex") || !strings.Contains(r.Report, "phase analyze") {
		t.Errorf("the report of the active workflow is missing:\n%s", r.Report)
	}
	var got []string
	for _, w := range r.Warnings {
		if strings.Contains(w, about) {
			got = append(got, w)
		}
	}
	return en, got
}

// A directory named like a definition (.claude/workflows/deploy.md/, made by a mkdir -p that
// meant the file) was passed over in silence: "cairn start deploy" said only that deploy is
// an unknown type, and doctor that the definitions were fine. It is told as a link to a
// directory is, with the step, and the type is one whose definition does not load.
func TestDefinitionDirectoryNamedLikeAFileIsShown(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.write(".claude/workflows/deploy.md/deploy.md", "---\nphases: [a, b]\n---\n")
	en := e.open("s1")
	want := filepath.FromSlash(".claude/workflows/deploy.md: not read: it is a directory, not a regular file: put the definition in a regular file of that name")
	if c := doctorCheck(en, engine.DoctorOptions{}, "workflow definitions"); c == nil || c.OK || !strings.Contains(c.Detail, want) {
		t.Errorf("doctor says %+v, want a failure saying %q", c, want)
	}
	_, err := e.open("s1").Start(engine.StartRequest{Type: "deploy", Context: "x"})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("start deploy: %v, want an error saying %q", err, want)
	}
}

// A file where the definitions directory belongs, in a project whose path holds a character
// the messages escape (a zero-width space): doctor's step was "fix the files named (the
// others load fine)", as for a broken definition, since it told the two apart by the path as
// written, and the message names it escaped. It is the step that makes it a directory.
func TestDefinitionsDirectoryThatIsAFileInAnOddlyNamedProject(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.project += "\u200b"
	e.vars["CLAUDE_PROJECT_DIR"] = e.project
	if err := os.MkdirAll(filepath.Join(e.project, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.write(".claude/workflows", "---\nname: review\nphases: [draft, done]\n---\n")
	c := doctorCheck(e.open("s1"), engine.DoctorOptions{}, "workflow definitions")
	if c == nil || c.OK || !strings.Contains(c.Detail, "is a file, not a directory") || !strings.Contains(c.Fix, "a directory this user can read") {
		t.Errorf("doctor says %+v, want the step that makes it a directory", c)
	}
}

// A definition put in a folder within .claude/workflows (.claude/workflows/team/review.md,
// kept by team) was passed over in silence: start review said only that review is an unknown
// type, doctor that the definitions were fine, the session start nothing. Cairn reads only
// the files directly in .claude/workflows; a folder there holding .md files is told, with the
// step, at the session start, in doctor and with the refused start. A folder of other files
// is not. The step is the user's: the model, which reads it too, was told to move the files.
func TestDefinitionsInAFolderAreShown(t *testing.T) {
	t.Parallel()
	e, _ := startApex(t)
	e.write(".claude/workflows/team/review.md", "---\nphases: [draft, done]\n---\n")
	e.write(".claude/workflows/assets/logo.png", "png")
	want := filepath.FromSlash(".claude/workflows/team: not read: it is a folder, and Cairn reads only the definitions directly in .claude/workflows; to use them, the user moves its .md files up (or links them there)")
	r := e.open("s1").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
	if !strings.Contains(strings.Join(r.Warnings, "\n"), want) {
		t.Errorf("session start warnings %q, want one saying %q", r.Warnings, want)
	}
	if strings.Contains(strings.Join(r.Warnings, "\n"), "assets") {
		t.Errorf("a folder with no .md file is told: %q", r.Warnings)
	}
	if c := doctorCheck(e.open("s1"), engine.DoctorOptions{}, "workflow definitions"); c == nil || c.OK || !strings.Contains(c.Detail, want) {
		t.Errorf("doctor says %+v, want a failure saying %q", c, want)
	}
	_, err := e.open("s2").Start(engine.StartRequest{Type: "review", Context: "x", Replace: true})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("start review: %v, want an error saying %q", err, want)
	}
}
