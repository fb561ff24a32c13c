package yamldoc_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/workflow"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

func TestParseDefinitionErrors(t *testing.T) {
	// Each fixture in testdata/defs is broken in one way; the line is where a person would
	// look in the file (front-matter offset included).
	for _, tc := range []struct {
		file   string
		line   int
		reason string
	}{
		{"syntax_error.md", 5, "did not find expected ',' or ']'"}, // the bracket left open, after 2 blank lines
		{"type_error.md", 4, "phases must be a list of names, not a mapping"},
		{"unknown_key.md", 3, `unknown key "phase"`},
		{"undeclared_transition.md", 5, `transitions names phase "c", which is not in phases (a, b)`},
		{"terminal_undeclared.md", 5, `terminal names phase "z"`},
		{"duplicate_phase.md", 6, `phase "a" is listed twice`},
		{"bad_ttl.md", 5, `ttl "1.5h" is not valid`},
		{"no_frontmatter.md", 1, "no YAML front matter"},
		{"unterminated.md", 1, "never closed"},
		{"unreachable.md", 3, `phase "b" cannot be reached from the start phase "a"`},
		{"no_exit.md", 2, `phase "b" cannot lead to a terminal phase (done) through transitions`},
		{"bad_name.md", 2, `workflow name "bad name!" is not valid`},
		// No name in the front matter: the file's name gives it, and is what to change.
		{"My Flow.md", 0, `the file name gives the workflow its name, as the front matter has none: name "my flow" is not valid: use lowercase letters, digits, '-' and '_', starting with a letter or digit; rename the file, or give the front matter a name line`},
		{"dead_end.md", 4, `phase "b" is not terminal and has no transitions out of it`},
		{"gate_terminal.md", 4, `approval gate "b" is a terminal phase`},
		{"duplicate_key.md", 5, `mapping key "ttl" already defined at line 4`},
		{"self_loop.md", 5, `transitions from "a" to itself`},
		{"terminal_out.md", 6, `terminal phase "b" has transitions out of it`},
		{"verb_undeclared.md", 5, `verbs names phase "q"`},
		{"major_bad.md", 4, `major entry "b->a" is not an allowed transition`},
		{"not_mapping.md", 2, "must be a YAML mapping"},
		{"empty_frontmatter.md", 1, "front matter is empty"},
		{"indented_end.md", 8, `the indented "---" on this line ends the front matter`},
		{"second_document.md", 4, `a second YAML document starts here`}, // the line after "..."
		{"second_document_start.md", 4, `a second YAML document starts here`},
		// The keys after a "---" that ended the front matter are body text: the "---" is blamed.
		{"keys_after_end.md", 4, `the "---" on this line ends the front matter, so "phases" on line 5 is read as the body`},
		{"cr_only.md", 1, `its lines end in a carriage return alone (classic Mac OS line endings), so it reads as one line: save it with LF or CRLF line endings`},
		// No phases key to point at: the "---" that ends the front matter, where it belongs.
		{"no_phases.md", 4, "phases is missing or empty"},
		// yaml.v3 reads past a tag of no meaning to it: whatever the author meant is refused.
		{"custom_tag.md", 4, `tag "!foo" is not read, and Cairn would take the value as if it were not there: remove it`},
		{"empty_then_keys.md", 2, `the "---" on this line ends the front matter, so "name" on line 3 is read as the body`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "defs", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			_, err = yamldoc.Codec{}.ParseDefinition(".claude/workflows/"+tc.file, data)
			var de *workflow.DefinitionError
			if !errors.As(err, &de) {
				t.Fatalf("err = %v, want *DefinitionError", err)
			}
			if de.File != ".claude/workflows/"+tc.file || de.Line != tc.line || !strings.Contains(de.Reason, tc.reason) {
				t.Fatalf("got %s:%d %q\nwant line %d, reason containing %q", de.File, de.Line, de.Reason, tc.line, tc.reason)
			}
			if !strings.HasPrefix(err.Error(), "workflow definition .claude/workflows/"+tc.file+":") {
				t.Fatalf("message %q does not start with file:line", err)
			}
		})
	}
}

func TestParseDefinitionDefaultsAndForms(t *testing.T) {
	src := "\r\n---\r\ndescription: a tiny flow\r\nphases: [Draft, REVIEW, done]\r\nblocking: false\r\nverbs: {review: reviewing}\r\nttl: 90m\r\ntransitions:\r\n  draft: review\r\n  review: [done, draft]\r\n---\r\n\r\n# Tiny\r\nDo it.\r\n"
	d, err := yamldoc.Codec{}.ParseDefinition("/home/u/.claude/workflows/Tiny.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "tiny" || d.Description != "a tiny flow" || !slices.Equal(d.Phases, []string{"draft", "review", "done"}) {
		t.Fatalf("name %q phases %v", d.Name, d.Phases)
	}
	if !slices.Equal(d.Terminal, []string{"done"}) || !slices.Equal(d.Allowed("draft"), []string{"review"}) || d.Blocking {
		t.Fatalf("terminal %v draft->%v blocking %v", d.Terminal, d.Allowed("draft"), d.Blocking)
	}
	if ttl, _ := workflow.ParseTTL(d.TTL); ttl != 90*time.Minute || d.Verb("review") != "reviewing" || d.Verb("draft") != "draft" {
		t.Fatalf("ttl %v verbs %v", d.TTL, d.Verbs)
	}
	if !strings.HasPrefix(d.Body, "# Tiny") {
		t.Fatalf("body %q", d.Body)
	}
	// Transitions omitted: a linear chain; ttl omitted: 24h.
	lin, err := yamldoc.Codec{}.ParseDefinition("lin.md", []byte("---\nname: lin\nphases: [a, b, c]\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !lin.CanMove("a", "b") || !lin.CanMove("b", "c") || lin.CanMove("a", "c") || !lin.IsTerminal("c") || lin.TTL != "24h" {
		t.Fatalf("linear defaults: %+v", lin)
	}
	if _, err := (yamldoc.Codec{}).ParseDefinition("big.md", make([]byte, workflow.MaxDefinitionSize+1)); err == nil {
		t.Fatal("oversized definition accepted")
	}
}

func TestLoadDefinitions(t *testing.T) {
	user := map[string][]byte{
		"/p/.claude/workflows/apex.md":    []byte("---\nname: apex\nphases: [x, y, z]\n---\nuser apex\n"),
		"/p/.claude/workflows/mine.md":    []byte("---\nphases: [one, two]\n---\n"),
		"/p/.claude/workflows/mine2.md":   []byte("---\nname: mine\nphases: [three, four]\n---\n"),
		"/p/.claude/workflows/bad.md":     []byte("---\nname: bad\nphases: [a]\nttl: forever\n---\n"),
		"/p/.claude/workflows/notes.txt":  []byte("ignored"),
		"/p/.claude/workflows/zzz-ok.md":  []byte("---\nname: zzz\nphases: [q]\n---\n"),
		"/p/.claude/workflows/debug.md":   []byte("---\nname: debug\nphases: [\n---\n"),
		"/p/.claude/workflows/empty.md":   nil,
		"/p/.claude/workflows/spaces.md":  []byte("\n\n\n"),
		"/p/.claude/workflows/unicode.md": []byte("---\nname: ünï\nphases: [a]\n---\n"),
	}
	set, errs := workflow.LoadDefinitions(user, yamldoc.Codec{}.ParseDefinition)
	if got := set.Names(); !slices.Equal(got, []string{"apex", "brainstorm", "coordinate", "debug", "dotagent", "mine", "zzz"}) {
		t.Fatalf("loaded %v", got)
	}
	apex, _ := set.Lookup("APEX")
	if apex.Body != "user apex\n" || apex.Source != "/p/.claude/workflows/apex.md" {
		t.Fatalf("user file did not override the built-in: %+v", apex)
	}
	mine, _ := set.Lookup("mine")
	if mine.Phases[0] != "one" {
		t.Fatalf("first file by path should win: %v", mine.Phases)
	}
	// A broken override leaves the real built-in in place.
	if d, _ := set.Lookup("debug"); !strings.HasPrefix(d.Source, "builtin:") {
		t.Fatalf("broken override replaced the built-in: %+v", d)
	}
	want := map[string]string{
		"/p/.claude/workflows/bad.md":     `:4: ttl "forever"`,
		"/p/.claude/workflows/mine2.md":   `already defined by /p/.claude/workflows/mine.md; this file was skipped: give one of them another name (its name line, or its file name when it has none)`,
		"/p/.claude/workflows/debug.md":   ":3:",
		"/p/.claude/workflows/empty.md":   "no YAML front matter",
		"/p/.claude/workflows/spaces.md":  "no YAML front matter",
		"/p/.claude/workflows/unicode.md": "is not valid",
	}
	if len(errs) != len(want) {
		t.Fatalf("%d errors, want %d: %v", len(errs), len(want), errs)
	}
	for _, err := range errs {
		var de *workflow.DefinitionError
		if !errors.As(err, &de) {
			t.Fatalf("%v is not a *DefinitionError", err)
		}
		if w, ok := want[de.File]; !ok || !strings.Contains(err.Error(), w) {
			t.Errorf("error %q, want one for %s containing %q", err, de.File, w)
		}
	}
}

// FuzzParseDefinition: whatever the bytes, parsing never panics, an error is a
// *DefinitionError with a line inside the file, and a definition that parses is coherent.
func FuzzParseDefinition(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "defs", "*.md"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, name := range []string{"apex.md", "debug.md", "brainstorm.md", "dotagent.md", "coordinate.md"} {
		b, err := os.ReadFile(filepath.Join("..", "workflow", "definitions", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("---\nphases: &a [x, *a]\n---\n"))
	f.Add([]byte("---\nphases: [a, b]\ntransitions: {a: [b], A: [b]}\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := yamldoc.Codec{}.ParseDefinition("fuzz.md", data)
		if err != nil {
			var de *workflow.DefinitionError
			if !errors.As(err, &de) {
				t.Fatalf("error %v is not a *DefinitionError", err)
			}
			if lines := yamlLines(data); de.Line < 0 || de.Line > lines {
				t.Fatalf("line %d outside a %d-line file: %v", de.Line, lines, err)
			}
			return
		}
		if workflow.ValidName(d.Name) != nil || len(d.Phases) == 0 || len(d.Terminal) == 0 {
			t.Fatalf("incoherent definition %+v", d)
		}
		for _, p := range d.Phases {
			if workflow.ValidName(p) != nil {
				t.Fatalf("bad phase %q", p)
			}
			for _, to := range d.Allowed(p) {
				if !d.HasPhase(to) || to == p {
					t.Fatalf("transition %s->%s", p, to)
				}
			}
			if !d.IsTerminal(p) && len(d.Allowed(p)) == 0 {
				t.Fatalf("dead end %s", p)
			}
		}
		for _, p := range d.Phases { // each leads on to a terminal phase
			seen := []string{p}
			for i := 0; i < len(seen) && !d.IsTerminal(seen[i]); i++ {
				for _, to := range d.Allowed(seen[i]) {
					if !slices.Contains(seen, to) {
						seen = append(seen, to)
					}
				}
			}
			if !slices.ContainsFunc(seen, d.IsTerminal) {
				t.Fatalf("phase %s cannot lead to a terminal phase: %v", p, d.Transitions)
			}
		}
		if _, err := workflow.ParseTTL(d.TTL); err != nil {
			t.Fatal(err)
		}
	})
}

// yamlLines counts data's lines as YAML (and an editor) does: a lone "\r" ends a line too,
// and so do NEL, LS and PS, which yaml.v3 reads as line breaks.
func yamlLines(data []byte) int {
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	return 1 + strings.Count(s, "\n") + strings.Count(s, "\r") + strings.Count(s, "\u0085") +
		strings.Count(s, "\u2028") + strings.Count(s, "\u2029")
}

// TestParseDefinitionCapsPhases: the checks compare phases with each other and the hooks read
// definitions under a deadline, so a definition with more phases than workflow.MaxPhases is
// refused at once, and one with exactly that many is read.
func TestParseDefinitionCapsPhases(t *testing.T) {
	def := func(n int) []byte {
		var b strings.Builder
		b.WriteString("---\nname: many\nphases: [")
		for i := range n {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "p%d", i)
		}
		b.WriteString("]\n---\nMany phases.\n")
		return []byte(b.String())
	}
	if _, err := (yamldoc.Codec{}).ParseDefinition("many.md", def(workflow.MaxPhases)); err != nil {
		t.Fatalf("%d phases: %v", workflow.MaxPhases, err)
	}
	_, err := yamldoc.Codec{}.ParseDefinition("many.md", def(workflow.MaxPhases+1))
	var de *workflow.DefinitionError
	if !errors.As(err, &de) || de.Line != 3 || !strings.Contains(de.Reason, "more than the 200 a definition may have") {
		t.Fatalf("%d phases: %v, want refused at line 3", workflow.MaxPhases+1, err)
	}
}

// TestParseDefinitionBOM: editors on Windows save UTF-8 with a byte order mark. It is read
// as the file's encoding, not as text before the front matter, in definitions and milestone
// files alike; a UTF-16 file is refused with what to do about it.
func TestParseDefinitionBOM(t *testing.T) {
	d, err := yamldoc.Codec{}.ParseDefinition("bom.md", []byte("\ufeff---\r\nname: bom\r\nphases: [a, b]\r\nttl: 2h\r\n---\r\nBody.\r\n"))
	if err != nil {
		t.Fatalf("a definition with a UTF-8 byte order mark: %v", err)
	}
	if d.Name != "bom" || !slices.Equal(d.Phases, []string{"a", "b"}) || d.TTL != "2h" || d.Body != "Body.\r\n" {
		t.Fatalf("read %+v", d)
	}
	_, err = yamldoc.Codec{}.ParseDefinition("bom.md", []byte("\ufeff---\nname: bom\nphases: [a, b]\nttl: never\n---\n"))
	var de *workflow.DefinitionError
	if !errors.As(err, &de) || de.Line != 4 {
		t.Fatalf("an error after a byte order mark: %v, want it at line 4", err)
	}
	for _, bom := range []string{"\xff\xfe", "\xfe\xff"} {
		_, err := yamldoc.Codec{}.ParseDefinition("utf16.md", []byte(bom+"-\x00-\x00-\x00\n\x00"))
		if !errors.As(err, &de) || de.Line != 1 || !strings.Contains(de.Reason, "UTF-16") || !strings.Contains(de.Reason, "UTF-8") {
			t.Fatalf("a UTF-16 file: %v, want line 1 saying it is UTF-16 and must be UTF-8", err)
		}
	}
	title, _, status, err := yamldoc.Codec{}.MilestoneFrontMatter([]byte("\ufeff---\ntitle: Auth\nstatus: in_progress\n---\n"))
	if err != nil || title != "Auth" || status != "in_progress" {
		t.Fatalf("milestone front matter after a byte order mark: %q %q %v", title, status, err)
	}
}

// TestParseDefinitionDoubleBOM: a tool that adds a byte order mark to a file that has one
// (a converter run twice) leaves two. The second was read as text before the front matter, so
// the definition was skipped as documentation, with no word at session start: every mark at
// the start is the encoding's, and the definition loads.
func TestParseDefinitionDoubleBOM(t *testing.T) {
	d, err := yamldoc.Codec{}.ParseDefinition("bom.md", []byte("\ufeff\ufeff---\nname: bom\nphases: [a, b]\n---\n"))
	if err != nil || d.Name != "bom" || !slices.Equal(d.Phases, []string{"a", "b"}) {
		t.Fatalf("a definition with two byte order marks: %+v, %v; want it read", d, err)
	}
	title, _, _, err := yamldoc.Codec{}.MilestoneFrontMatter([]byte("\ufeff\ufeff---\ntitle: Auth\n---\n"))
	if err != nil || title != "Auth" {
		t.Fatalf("milestone front matter after two byte order marks: %q %v", title, err)
	}
}

// TestParseDefinitionRefusesNullItems: yaml.v3 skips a null (~, null, an empty "- " item) in
// a list of strings, and a null key in a mapping, so such an item would vanish without a
// word: a phase left out of the workflow, a gate that guards nothing. Each is refused at its
// line, naming the list and the item's place in it.
func TestParseDefinitionRefusesNullItems(t *testing.T) {
	for _, tc := range []struct {
		front  string
		line   int
		reason string
	}{
		{"phases: [a, ~, b]", 2, "phases: item 2 is null"},
		{"phases:\n  - a\n  - b\n  -\n  - c", 5, "phases: item 3 is null"},
		{"phases: [a, b, c]\nterminal: [c, null]", 3, "terminal: item 2 is null"},
		{"phases: [a, b, c]\napprovals: [~, a]", 3, "approvals: item 1 is null"},
		{"phases: [a, b, c]\nmajor: [a->b, ~]", 3, "major: item 2 is null"},
		{"phases: [a, b, c]\ntransitions:\n  a: [b, ~]\n  b: [c]", 4, `transitions of "a": item 2 is null`},
		{"phases: [a, b, c]\ntransitions:\n  ~: [b]\n  a: [b]\n  b: [c]", 4, "transitions: key 1 is null"},
		{"phases: [a, b, c]\nverbs: {~: doing}", 3, "verbs: key 1 is null"},
		{"name: &n ~\nphases: [a, *n, b]", 3, "phases: item 2 is null"},
	} {
		src := "---\n" + tc.front + "\n---\n"
		_, err := yamldoc.Codec{}.ParseDefinition("nulls.md", []byte(src))
		var de *workflow.DefinitionError
		if !errors.As(err, &de) || de.Line != tc.line || !strings.Contains(de.Reason, tc.reason) {
			t.Errorf("%q: %v\nwant line %d, reason containing %q", tc.front, err, tc.line, tc.reason)
		}
	}
}

// TestParseDefinitionRefusesAVerbGivenTwice: keys that differ only in case name the same
// phase. Under verbs both were kept in turn, in Go's random map order, so the verb in L2 lines
// changed from one process to the next; like a phase given twice under transitions, it is
// refused.
func TestParseDefinitionRefusesAVerbGivenTwice(t *testing.T) {
	src := []byte("---\nphases: [a, review, c]\nverbs:\n  review: reviewing\n  Review: checking\n---\n")
	for range 20 { // the map order used to decide; every run must refuse
		_, err := yamldoc.Codec{}.ParseDefinition("verbs.md", src)
		var de *workflow.DefinitionError
		if !errors.As(err, &de) || de.Line != 4 || !strings.Contains(de.Reason, `verbs lists phase "review" twice`) {
			t.Fatalf("err = %v; want line 4, verbs lists phase \"review\" twice", err)
		}
	}
}

// A null inside a mapping merged in with "<<" vanishes on decoding as it does anywhere else,
// so it is refused there too.
func TestParseDefinitionRefusesNullItemsInMerges(t *testing.T) {
	for _, tc := range []struct {
		in   string
		line int
	}{
		{"---\nphases: [a, b]\ntransitions:\n  <<: {a: [b, ~]}\n---\n", 4},
		{"---\nphases: [a, b, c]\ntransitions:\n  <<: [{b: [c]}, {a: [b, null]}]\n---\n", 4},
		{"---\nphases: [a, b]\nverbs:\n  <<: {~: x}\n---\n", 4},
		{"---\nphases: [a, b]\ntransitions:\n  <<: {<<: {a: [\n    b, ~]}}\n---\n", 5},
	} {
		_, err := yamldoc.Codec{}.ParseDefinition("merge.md", []byte(tc.in))
		var de *workflow.DefinitionError
		if !errors.As(err, &de) || de.Line != tc.line || !strings.Contains(de.Reason, "null") {
			t.Errorf("%q: %v; want a *DefinitionError about a null at line %d", tc.in, err, tc.line)
		}
	}
	if d, err := (yamldoc.Codec{}).ParseDefinition("merge.md", []byte("---\nphases: [a, b]\ntransitions:\n  <<: {a: [b]}\n---\n")); err != nil || !d.CanMove("a", "b") {
		t.Errorf("a merge without nulls: %v", err)
	}
}

// Two files that declare one type: the one skipped is blamed at its name line, the line to
// change, and the one kept is named with its own; a file whose name gives the type (no name
// line) has no line to point at.
func TestDuplicateTypeIsBlamedAtItsNameLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		user map[string][]byte
		want string
	}{
		{"both have name lines", map[string][]byte{
			"/p/w/alpha.md": []byte("---\nname: review\nphases: [a, b]\n---\n"),
			"/p/w/beta.md":  []byte("---\ndescription: x\nname: review\nphases: [a, c]\n---\n"),
		}, `workflow definition /p/w/beta.md:3: workflow "review" is already defined by /p/w/alpha.md:2; this file was skipped`},
		{"the kept one is named after the type", map[string][]byte{
			"/p/w/review.md": []byte("---\nphases: [a, b]\n---\n"),
			"/p/w/beta.md":   []byte("---\n\n\nname: review\nphases: [a, c]\n---\n"),
		}, `workflow definition /p/w/beta.md:4: workflow "review" is already defined by /p/w/review.md; this file was skipped`},
		{"the skipped one is named after the type elsewhere", map[string][]byte{
			"/p/w/review.md":   []byte("---\nname: review\nphases: [a, b]\n---\n"),
			"/p/w/x/review.md": []byte("---\nphases: [a, c]\n---\n"),
		}, `workflow definition /p/w/x/review.md: workflow "review" is already defined by /p/w/review.md:2; this file was skipped`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := workflow.LoadDefinitions(tc.user, yamldoc.Codec{}.ParseDefinition)
			if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), tc.want) {
				t.Errorf("errors %v, want one starting %q", errs, tc.want)
			}
		})
	}
}

// A phase with no way on is blamed at a line: the transitions key when the file has one, else
// the phase in phases (transitions left out, the file has no transitions line to point at,
// and the error had none).
func TestParseDefinitionBlamesAPhaseWithNoWayOnAtALine(t *testing.T) {
	for in, want := range map[string]string{
		"---\nname: x\nphases:\n  - a\n  - b\n  - c\nterminal: [b]\n---\n":             `z.md:6: phase "c" is not terminal and has no transitions out of it`,
		"---\nname: x\nphases: [a, b, c]\nterminal: [c]\ntransitions: {a: [c]}\n---\n": `z.md:5: phase "b" is not terminal and has no transitions out of it`,
	} {
		_, err := yamldoc.Codec{}.ParseDefinition("z.md", []byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want %s", in, err, want)
		}
	}
}

// TestParseDefinitionLongKey: a key longer than the 1024 characters YAML reads in a key (a
// pasted blob, a line run together) was refused with yaml.v3's "could not find expected ':'",
// "did not find expected ',' or '}'", or, at the first line, "mapping values are not allowed
// in this context" and no line at all. It is refused at its line, saying how long it is.
func TestParseDefinitionLongKey(t *testing.T) {
	long := strings.Repeat("k", 1100)
	for _, tc := range []struct {
		name, front string
		line        int
	}{
		{"first line", long + ": 1\nphases: [a, b]\n", 2},
		{"later line", "phases: [a, b]\n" + long + ": 1\n", 3},
		{"in a flow mapping", "phases: [a, b]\ntransitions: {a: [b], " + long + ": [b]}\n", 3},
		{"very long", strings.Repeat("k", 200000) + ": 1\nphases: [a, b]\n", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := yamldoc.Codec{}.ParseDefinition("long.md", []byte("---\n"+tc.front+"---\n"))
			var de *workflow.DefinitionError
			if !errors.As(err, &de) || de.Line != tc.line || !strings.Contains(de.Reason, "characters long, more than the 1024 YAML reads in a key") {
				t.Fatalf("got %v, want line %d saying the key is too long", err, tc.line)
			}
		})
	}
	// A long value holding ": " is not a long key.
	_, err := yamldoc.Codec{}.ParseDefinition("v.md", []byte("---\nphases: [a, b]\ndescription: "+long+" note: x\n---\n"))
	if err == nil || strings.Contains(err.Error(), "1024") {
		t.Fatalf("a long value with a colon in it: %v, want YAML's own error", err)
	}
}

// TestParseDefinitionTooDeep: front matter nested past the 10,000 levels yaml.v3 reads (a
// hostile file, a generator gone wrong) was refused with yaml.v3's bare "exceeded max depth
// of 10000": it says what nests, and how deep a definition needs.
func TestParseDefinitionTooDeep(t *testing.T) {
	for _, front := range []string{
		"phases: " + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + "\n",
		"phases: [a, b]\nx:\n" + strings.Repeat("- ", 10001) + "a\n",
	} {
		_, err := yamldoc.Codec{}.ParseDefinition("deep.md", []byte("---\n"+front+"---\n"))
		if err == nil || !strings.Contains(err.Error(), "nest more than 10000 levels deep") || !strings.Contains(err.Error(), "a definition needs two") {
			t.Fatalf("got %v, want it to say the front matter nests too deep", err)
		}
	}
}
