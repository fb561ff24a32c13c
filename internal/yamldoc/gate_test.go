package yamldoc_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/workflow"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// Milestone front matter and WORKFLOW-STATUS.yaml pass the checks definitions pass: a
// !!binary tag turns the base64 it tags into other text (a milestone written
// "Y29tcGxldGVk" was read as completed), and NEL, LS and PS split what every editor shows as
// one line into two keys for yaml.v3 (a title "Ship it<LS>status: completed" set the status).
func TestMilestoneAndStatusFilesPassTheDefinitionsChecks(t *testing.T) {
	const at = "2026-11-22T10:00:00Z"
	for _, tc := range []struct{ in, want string }{
		{"---\ntitle: t\nstatus: !!binary Y29tcGxldGVk\n---\n", `line 2: "Y29tcGxldGVk" is tagged !!binary`},
		{"---\ntitle: Ship it\u2028status: completed\n---\n", "line 1: character U+2028 is a line break"},
		{"---\ntitle: t\nname: \"a\u0085b\"\n---\n", "line 2: character U+0085 is a line break"},
		{"---\ntitle: t\n--- # more\nstatus: completed\n---\n", "line 3: a second YAML document starts here"},
	} {
		_, _, status, err := yamldoc.Codec{}.MilestoneFrontMatter([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("milestone %q: status %q, %v; want an error saying %q", tc.in, status, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"initiative: x\nstatus: !!binary Y29tcGxldGVk\nlastUpdated: " + at + "\n", `reading WORKFLOW-STATUS.yaml: line 2: "Y29tcGxldGVk" is tagged !!binary`},
		{"initiative: x\ntitle: Ship it\u2029status: completed\nlastUpdated: " + at + "\n", `reading WORKFLOW-STATUS.yaml: line 2: character U+2029 is a line break`},
		{"initiative: x\nlastUpdated: " + at + "\nnotes: [a,\n  b\u2028]\n", `reading WORKFLOW-STATUS.yaml: line 4: character U+2028 is a line break`},
	} {
		doc, err := yamldoc.Codec{}.ParseStatusDoc([]byte(tc.in))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("status %q: %+v, %v; want an error starting %q", tc.in, doc, err, tc.want)
		}
	}
	// Escaped, the characters are text; other tags are read as before.
	title, _, status, err := yamldoc.Codec{}.MilestoneFrontMatter([]byte("---\ntitle: \"a\\Lb\"\nstatus: !!str done\n---\nx\u2028y\n"))
	if err != nil || title != "a\u2028b" || status != "done" {
		t.Errorf("escaped LS, !!str: %q %q %v", title, status, err)
	}
}

// What Cairn writes to WORKFLOW-STATUS.yaml it reads back: yaml.v3 would write a title with
// LS or PS in it raw, inside single quotes, and the file would then be refused.
func TestStatusDocWithUnicodeLineBreaksReadsBack(t *testing.T) {
	in := &workflow.Initiative{ID: "initiative-x", Title: "a\u2028b\u2029c\u0085d", Status: workflow.InitiativeInProgress,
		Milestones: []workflow.Milestone{{ID: "m1", Title: "x\u2028", Status: workflow.MilestonePending}}}
	d := workflow.StatusDocFrom(in, nil)
	out, err := yamldoc.Codec{}.MarshalStatusDoc(d)
	if err != nil {
		t.Fatal(err)
	}
	back, err := yamldoc.Codec{}.ParseStatusDoc(out)
	if err != nil || back.Title != in.Title || len(back.Milestones) != 1 || back.Milestones[0].Title != "x\u2028" {
		t.Errorf("read back %+v, %v\n%s", back, err, out)
	}
}

// Aliases in WORKFLOW-STATUS.yaml are refused when they would repeat its values more than
// the file itself holds: a value that uses one is written back expanded, and yaml.v3's own
// limit let an 11 KB file (a list of 1,000 named 390 times) through, to be written back as
// 3 MB, in seconds, and then be too large to read.
func TestStatusDocRefusesAliasExpansion(t *testing.T) {
	src := "initiative: x\nlastUpdated: 2026-11-22T10:00:00Z\npad: [" + strings.Repeat("p,", 3999) + "p]\n" +
		"a: &a [" + strings.Repeat("x,", 999) + "x]\nb: [" + strings.Repeat("*a,", 389) + "*a]\n"
	const want = "reading WORKFLOW-STATUS.yaml: line 5: aliases (*a) repeat its values"
	if doc, err := (yamldoc.Codec{}).ParseStatusDoc([]byte(src)); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("read (%v): %v; want an error starting %q", doc != nil, err, want)
	}
	// A few aliases are read, and written back expanded.
	doc, err := yamldoc.Codec{}.ParseStatusDoc([]byte("initiative: x\nlastUpdated: 2026-11-22T10:00:00Z\na: &a [x, y, z]\nb: [*a, *a, *a]\n"))
	if err != nil || len(doc.Extra) != 2 {
		t.Fatalf("%+v, %v", doc, err)
	}
}

// An entry listed twice under approvals, terminal, major or a phase's transitions was merged
// without a word, so "approvals: [review, review]", the second meant to be another phase,
// left that phase with no gate and nothing said. The definition still loads (it works as
// it did), and each such entry is a doubt at its line, for cairn doctor to name.
func TestDefinitionDuplicateEntriesAreDoubts(t *testing.T) {
	const src = "---\nname: rev\nphases: [draft, review, deploy, done]\ntransitions:\n  draft: [review, Review]\n" +
		"  review: [deploy]\n  deploy: [done]\napprovals:\n  - review\n  - deploy\n  - review\nterminal: [done, done]\n" +
		"major: [draft->review, review->deploy, draft->review]\n---\nbody\n"
	d, err := yamldoc.Codec{}.ParseDefinition("/p/rev.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.Approvals, []string{"review", "deploy"}) || !d.CanMove("draft", "review") {
		t.Fatalf("loaded %+v, want it as before", d)
	}
	var got []string
	for _, doubt := range d.Doubts {
		got = append(got, doubt.Error())
	}
	want := []string{
		`workflow definition /p/rev.md:12: terminal lists phase "done" twice: remove one, or name the phase you meant`,
		`workflow definition /p/rev.md:5: transitions of "draft" list phase "review" twice: remove one, or name the phase you meant`,
		`workflow definition /p/rev.md:11: approvals lists phase "review" twice: remove one, or name the phase you meant`,
		`workflow definition /p/rev.md:13: major lists "draft->review" twice: remove one, or name the move you meant`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("doubts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, name := range workflow.BuiltinNames() {
		if d, _ := workflow.BuiltinDefinition(name); len(d.Doubts) > 0 {
			t.Errorf("built-in %s: doubts %v", name, d.Doubts)
		}
	}
}

// A major entry into a terminal phase writes no memory line (entering one writes the
// completion line instead), and a major list of only such entries turned every position line
// off: "major: [review->done]" loaded with no word, and draft->review wrote none. It still
// loads so; the entry is a doubt at its line.
func TestDefinitionMajorIntoTerminalIsADoubt(t *testing.T) {
	const src = "---\nphases: [draft, review, done]\nmajor:\n  - draft->review\n  - review->done\n---\n"
	d, err := yamldoc.Codec{}.ParseDefinition("/p/rev.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	const want = `workflow definition /p/rev.md:5: major lists "review->done", a move into terminal phase "done", which writes the completion line, never a position line: remove it`
	if len(d.Doubts) != 1 || d.Doubts[0].Error() != want || !d.IsMajor("draft", "review") {
		t.Errorf("doubts %v, major %v; want one, %q", d.Doubts, d.Major, want)
	}
}
