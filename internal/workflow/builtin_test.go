package workflow_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/workflow"
)

// A process without a definition parser (the hook binaries) keeps the built-ins and reports
// each user file it could not read.
func TestLoadDefinitionsWithoutParser(t *testing.T) {
	set, errs := workflow.LoadDefinitions(map[string][]byte{
		"/p/.claude/workflows/apex.md": []byte("---\nphases: [x]\n---\n"),
		"/p/.claude/workflows/a.txt":   []byte("ignored"),
	}, nil)
	if got := set.Names(); !slices.Equal(got, workflow.BuiltinNames()) {
		t.Fatalf("names %v, want the built-ins %v", got, workflow.BuiltinNames())
	}
	if d, _ := set.Lookup("apex"); d.Source != "builtin:apex.md" {
		t.Fatalf("apex from %s", d.Source)
	}
	var de *workflow.DefinitionError
	if len(errs) != 1 || !errors.As(errs[0], &de) || de.File != "/p/.claude/workflows/apex.md" || !strings.Contains(de.Reason, workflow.ErrNoParser.Error()) {
		t.Fatalf("errors %v", errs)
	}
}

// BuildDefinition validates a definition as written, with or without line information: the
// same rules as a parsed file, errors at line 0 when nothing locates them.
func TestBuildDefinition(t *testing.T) {
	d, err := workflow.BuildDefinition("mine.md", workflow.Definition{
		Phases: []string{" Draft ", "DONE"}, Body: "\n\nbody\n", Source: "ignored.md",
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "mine" || !slices.Equal(d.Phases, []string{"draft", "done"}) || !d.CanMove("draft", "done") ||
		!d.IsTerminal("done") || d.Blocking || d.Body != "body\n" || d.Source != "mine.md" || d.TTL != "24h" {
		t.Fatalf("%+v", d)
	}
	_, err = workflow.BuildDefinition("bad.md", workflow.Definition{Phases: []string{"a", "b"}, Terminal: []string{}}, nil)
	var de *workflow.DefinitionError
	if !errors.As(err, &de) || de.Line != 0 || !strings.Contains(de.Reason, "terminal is empty") {
		t.Fatalf("empty terminal (not omitted): %v", err)
	}
}

// GateAhead names the gate a workflow cannot complete without entering, and none when some
// way to the end avoids every gate, or the gate lies behind.
func TestGateAhead(t *testing.T) {
	branch, err := workflow.BuildDefinition("branch.md", workflow.Definition{
		Phases:      []string{"triage", "quick-fix", "plan", "build", "done"},
		Transitions: map[string][]string{"triage": {"quick-fix", "plan"}, "quick-fix": {"done"}, "plan": {"build"}, "build": {"done"}},
		Approvals:   []string{"plan"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	apex := mustDef(t, "apex")
	for _, tc := range []struct {
		def       *workflow.Definition
		at, ahead string
	}{
		{apex, "analyze", "plan"},
		{apex, "plan", ""},
		{apex, "implement", ""},
		{branch, "triage", ""},
		{branch, "quick-fix", ""},
		{nil, "analyze", ""},
	} {
		if got := tc.def.GateAhead(tc.at); got != tc.ahead {
			t.Errorf("GateAhead(%s) = %q, want %q", tc.at, got, tc.ahead)
		}
	}
}

// GatelessRoute is a way from the start to a terminal phase that enters no approval gate:
// "triage: [quick-fix, plan]" with the gate on plan lets quick-fix lead on without it. None
// when the definition has no gates, starts in one, or every way enters one.
func TestGatelessRoute(t *testing.T) {
	def := func(start string, approvals ...string) *workflow.Definition {
		d, err := workflow.BuildDefinition("branch.md", workflow.Definition{
			Phases:      []string{start, "quick-fix", "plan", "build", "done"},
			Transitions: map[string][]string{start: {"quick-fix", "plan"}, "quick-fix": {"build"}, "plan": {"build"}, "build": {"done"}},
			Approvals:   approvals,
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, tc := range []struct {
		def  *workflow.Definition
		want []string
	}{
		{def("triage", "plan"), []string{"triage", "quick-fix", "build", "done"}},
		{def("triage"), nil},
		{def("triage", "triage"), nil},
		{def("triage", "plan", "quick-fix"), nil},
		{def("triage", "build"), nil},
		{mustDef(t, "apex"), nil},
		{mustDef(t, "dotagent"), nil},
	} {
		if got := tc.def.GatelessRoute(); !slices.Equal(got, tc.want) {
			t.Errorf("%s %v: route %v, want %v", tc.def.Name, tc.def.Approvals, got, tc.want)
		}
	}
}

// A definition file whose name holds a character no one sees (zero-width, bidi, control) or
// bytes that are not UTF-8 was named with them dropped wherever its error was shown (session
// start, cairn types and start, tool results), as "xy.md" for "x\u200by.md": a file that is
// not there. The error names it with each such character escaped, as Go writes it.
func TestDefinitionErrorNamesAnUnseenFileName(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"/p/.claude/workflows/x\u200by.md", `/p/.claude/workflows/x\u200by.md`},
		{"/p/.claude/workflows/q\u202edm.txt.md", `/p/.claude/workflows/q\u202edm.txt.md`},
		{"/p/.claude/workflows/a\tb\xff.md", `/p/.claude/workflows/a\tb\xff.md`},
		{`C:\p\.claude\workflows\café.md`, `C:\p\.claude\workflows\café.md`},
	} {
		got := (&workflow.DefinitionError{File: tc.file, Line: 3, Reason: "why"}).Error()
		if want := "workflow definition " + tc.want + ":3: why"; got != want {
			t.Errorf("%q: %q, want %q", tc.file, got, want)
		}
	}
}

// Two files of one type: the error about the one skipped names the one kept with its unseen
// characters escaped too.
func TestDuplicateTypeNamesAnUnseenFileName(t *testing.T) {
	parse := func(file string, data []byte) (*workflow.Definition, error) {
		return workflow.BuildDefinition(file, workflow.Definition{Name: "rev", Phases: []string{"a", "b"}}, nil)
	}
	_, errs := workflow.LoadDefinitions(map[string][]byte{"/w/rev\u200b.md": nil, "/w/zz.md": nil}, parse)
	const want = `workflow definition /w/zz.md: workflow "rev" is already defined by /w/rev\u200b.md; this file was skipped`
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), want) {
		t.Fatalf("errors %v, want one starting %q", errs, want)
	}
}
