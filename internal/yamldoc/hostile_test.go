package yamldoc_test

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/alloctest"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/cairn-dev/cairn/internal/workflow"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// A small file that names one list thousands of times through aliases is refused before it
// is expanded: each copy under transitions is decoded by stringList with a fresh yaml.v3
// decoder, out of reach of yaml.v3's own alias limit, so a 256 KiB file could ask for
// billions of strings. (This one asks for 4 million: seconds of work without the limit.)
func TestParseDefinitionRefusesAliasExpansion(t *testing.T) {
	var b strings.Builder
	b.WriteString("---\nname: bomb\nphases: [a, b]\ntransitions:\n  a: &s [b")
	b.WriteString(strings.Repeat(",b", 1999))
	b.WriteString("]\n")
	for i := range 2000 {
		fmt.Fprintf(&b, "  k%d: *s\n", i)
	}
	b.WriteString("---\n")
	_, err := yamldoc.Codec{}.ParseDefinition("bomb.md", []byte(b.String()))
	var de *workflow.DefinitionError
	if !errors.As(err, &de) || de.Line != 6 || !strings.Contains(de.Reason, "aliases") {
		t.Fatalf("err = %v; want a *DefinitionError at line 6 about aliases", err)
	}

	// Aliases that expand to little are still read.
	d, err := yamldoc.Codec{}.ParseDefinition("small.md", []byte("---\nphases: [a, b, c]\ntransitions:\n  a: [b, &last c]\n  b: [*last]\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !d.CanMove("b", "c") || !d.CanMove("a", "c") || !d.CanMove("a", "b") {
		t.Fatalf("aliased transitions not read: %v", d.Transitions)
	}
}

// A mapping that repeats one key thousands of times is refused before yaml.v3 decodes it:
// yaml.v3 compares every key with every other and formats an error for each equal pair, so
// 900 lines took 130 MB (3,000: seconds and 1.5 GB) in a definition, a milestone file (read
// by the SessionStart hook) and WORKFLOW-STATUS.yaml alike. The first duplicate is reported
// as yaml.v3 reports it; a mapping of more keys than any of these files can use is refused.
func TestRepeatedMappingKeysAreRefusedCheaply(t *testing.T) {
	dups := strings.Repeat("  a: b\n", 900)
	var err error
	const budget = 16 << 20
	if n := alloctest.Bytes(func() {
		_, err = yamldoc.Codec{}.ParseDefinition("dups.md", []byte("---\nphases: [a]\nverbs:\n"+dups+"---\n"))
	}); n > budget {
		t.Errorf("a definition with 900 equal keys allocated %d MB", n>>20)
	}
	var de *workflow.DefinitionError
	if !errors.As(err, &de) || de.Line != 5 || de.Reason != `front matter: mapping key "a" already defined at line 4` {
		t.Errorf("definition: %v; want line 5, mapping key \"a\" already defined at line 4", err)
	}
	if n := alloctest.Bytes(func() {
		_, _, _, err = yamldoc.Codec{}.MilestoneFrontMatter([]byte("---\ntitle: t\n" + strings.Repeat("a: b\n", 900) + "---\n"))
	}); n > budget || err == nil || !strings.Contains(err.Error(), `line 3: mapping key "a" already defined at line 2`) {
		t.Errorf("milestone file: %.200v, %d MB allocated", err, n>>20)
	}
	if n := alloctest.Bytes(func() {
		_, err = yamldoc.Codec{}.ParseStatusDoc([]byte("initiative: x\nlastUpdated: 2026-11-22T10:00:00Z\nx:\n" + dups))
	}); n > budget || err == nil || !strings.Contains(err.Error(), `line 5: mapping key "a" already defined at line 4`) {
		t.Errorf("status file: %.200v, %d MB allocated", err, n>>20)
	}

	_, err = yamldoc.Codec{}.ParseDefinition("dups.md", []byte("---\nphases: [a]\nverbs:\n"+strings.Repeat("  a: b\n", 3000)+"---\n"))
	if !errors.As(err, &de) || de.Line != 4 || !strings.Contains(de.Reason, "3000 keys, more than the 1000 allowed") {
		t.Errorf("a mapping of 3000 equal keys: %v", err)
	}
	var many strings.Builder
	many.WriteString("---\nphases: [a]\nverbs:\n")
	for i := range 1001 {
		fmt.Fprintf(&many, "  k%d: v\n", i)
	}
	many.WriteString("---\n")
	_, err = yamldoc.Codec{}.ParseDefinition("many.md", []byte(many.String()))
	if !errors.As(err, &de) || de.Line != 4 || !strings.Contains(de.Reason, "1001 keys, more than the 1000 allowed") {
		t.Errorf("a mapping of 1001 keys: %v", err)
	}
}

// A !!binary tag makes yaml.v3 decode the base64 it tags into other text: a phase written
// "cmV2aWV3" would be the phase "review", and a gate listed under approvals would guard a
// phase the file never shows. Such a file is refused at the tagged value, wherever it stands;
// YAML's own other tags leave the text as written and are read as before (a tag of no meaning
// to YAML, "!local", is refused: TestParseDefinitionErrors).
func TestParseDefinitionRefusesBinaryTags(t *testing.T) {
	for _, tc := range []struct {
		in   string
		line int
	}{
		{"---\nphases: [a, !!binary cmV2aWV3]\n---\n", 2},
		{"---\nname: !!binary aGVsbG8=\nphases: [a]\n---\n", 2},
		{"\n---\nphases: [a, b]\ntransitions:\n  !!binary YQ==: [b]\n---\n", 5},
		{"---\nphases: [a, b]\nverbs:\n  a: !!binary Z28=\n---\n", 4},
	} {
		_, err := yamldoc.Codec{}.ParseDefinition("bin.md", []byte(tc.in))
		var de *workflow.DefinitionError
		if !errors.As(err, &de) || de.Line != tc.line || !strings.Contains(de.Reason, "!!binary") || !strings.Contains(de.Reason, "remove the tag") {
			t.Errorf("%q: %v; want a *DefinitionError at line %d about the !!binary tag", tc.in, err, tc.line)
		}
	}
	d, err := yamldoc.Codec{}.ParseDefinition("str.md", []byte("---\nphases: [!!str 1, ! b]\n---\n"))
	if err != nil || !slices.Equal(d.Phases, []string{"1", "b"}) {
		t.Errorf("other tags: %v, %v", d, err)
	}
}

// Bytes YAML cannot read (invalid UTF-8, a control character) are reported at their line, with
// the fix: yaml.v3's own error names no line ("invalid leading UTF-8 octet").
func TestParseDefinitionLocatesBytesYAMLCannotRead(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		line     int
	}{
		{"---\nphases: [a]\ndescription: caf\xe9\n---\n", "not valid UTF-8", 3},
		{"\n---\nphases: [a]\n\ndescription: \"\xff\"\n---\n", "not valid UTF-8", 5},
		{"---\nphases: [a]\ndescription: a\x00b\n---\n", "U+0000", 3},
		{"---\nphases: [a]\r\ndescription: a\x1bb\r\n---\n", "U+001B", 3},
	} {
		_, err := yamldoc.Codec{}.ParseDefinition("bytes.md", []byte(tc.in))
		var de *workflow.DefinitionError
		if !errors.As(err, &de) || de.Line != tc.line || !strings.Contains(de.Reason, tc.want) {
			t.Errorf("%q: %v; want a *DefinitionError at line %d saying %q", tc.in, err, tc.line, tc.want)
		}
	}
}

// A line "---" inside a quoted value ends the front matter there (adrg/frontmatter, like
// Claude Code, ends it at the first such line), so the quote is never closed. yaml.v3 says
// only "found unexpected end of stream"; the refusal names the "---" line and the fix.
func TestParseDefinitionExplainsADashLineInsideAQuote(t *testing.T) {
	for _, in := range []string{
		"---\nphases: [a]\ndescription: \"x\n---\ny\"\n---\n",
		"---\r\nphases: [a]\r\ndescription: 'x\r\n---\r\ny'\r\n---\r\n",
	} {
		_, err := yamldoc.Codec{}.ParseDefinition("dash.md", []byte(in))
		var de *workflow.DefinitionError
		if !errors.As(err, &de) || de.Line != 4 || !strings.Contains(de.Reason, `"---" on this line ends the front matter`) {
			t.Errorf("%q: %v; want a *DefinitionError at line 4 about the \"---\" line", in, err)
		}
	}
}

// yaml.v3 (YAML 1.1) takes NEL, LS and PS for line breaks; YAML 1.2 readers (Claude Code's,
// most editors' highlighting) take them for ordinary characters. A front matter holding one
// means two things: "phases: [a]<LS>transitions: {...}" is one line of phases to the eye and
// two keys to Cairn. Such a file is refused at the character's line, with the fix.
func TestParseDefinitionRefusesUnicodeLineBreaks(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		line     int
	}{
		{"---\nphases: [a, b]\u2028transitions: {a: [b]}\n---\n", "U+2028", 2},
		{"---\nphases: [a, b]\ndescription: x\u2029y\nterminal: [b]\n---\n", "U+2029", 3},
		{"\n---\nphases: [a]\ndescription: \"a\u0085b\"\n---\n", "U+0085", 4},
	} {
		_, err := yamldoc.Codec{}.ParseDefinition("ls.md", []byte(tc.in))
		var de *workflow.DefinitionError
		if !errors.As(err, &de) || de.Line != tc.line || !strings.Contains(de.Reason, tc.want) || !strings.Contains(de.Reason, "line break") {
			t.Errorf("%q: %v; want a *DefinitionError at line %d about %s", tc.in, err, tc.line, tc.want)
		}
	}
	// In the body they are text, and in the front matter they can be written as escapes.
	d, err := yamldoc.Codec{}.ParseDefinition("ls.md", []byte("---\nphases: [a]\ndescription: \"a\\Lb\"\n---\nx\u2028y\n"))
	if err != nil || d.Description != "a\u2028b" || d.Body != "x\u2028y\n" {
		t.Errorf("escaped in the front matter, raw in the body: %+v, %v", d, err)
	}
}

// Front matter in a form Cairn does not read is refused with the form named and the fix,
// not with a generic message: TOML's "+++", JSON's "{" (which was taken for documentation and
// passed over in silence), a YAML "..." line where "---" ends it, a tab in the indentation.
func TestParseDefinitionNamesTheFormItDoesNotRead(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		line     int
	}{
		{"+++\nphases = [\"a\"]\n+++\n", "TOML", 1},
		{"\n\n+++\r\nphases = [\"a\"]\r\n+++\r\n", "TOML", 3},
		{"{\n  \"phases\": [\"a\", \"b\"]\n}\n", "JSON", 1},
		{"\n{\"phases\": [\"a\", \"b\"]}\n", "JSON", 2},
		{"---\nphases: [a]\n...\nbody\n", `"..."`, 3},
		{"---\nphases:\n\t- a\n---\n", "tab", 3},
		{"---\nphases: [a, b]\ntransitions:\n  a:\n  \t- b\n---\n", "tab", 5},
	} {
		_, err := yamldoc.Codec{}.ParseDefinition("form.md", []byte(tc.in))
		var de *workflow.DefinitionError
		if !errors.As(err, &de) || de.Line != tc.line || !strings.Contains(de.Reason, tc.want) {
			t.Errorf("%q: %v; want a *DefinitionError at line %d naming %s", tc.in, err, tc.line, tc.want)
		}
	}
}

// A top-level key that is not text (a "? [list]" complex key, an alias) was reported as an
// unknown key "" or by its anchor's name; it is refused as what it is.
func TestParseDefinitionRefusesKeysThatAreNotText(t *testing.T) {
	for _, in := range []string{
		"---\nphases: [a]\n? [x]\n: b\n---\n",
		"---\nphases: [&n a]\n*n : b\n---\n",
		"---\nphases: [a]\n? {x: y}\n: b\n---\n",
	} {
		_, err := yamldoc.Codec{}.ParseDefinition("keys.md", []byte(in))
		var de *workflow.DefinitionError
		if !errors.As(err, &de) || de.Line != 3 || !strings.Contains(de.Reason, "not text") {
			t.Errorf("%q: %v; want a *DefinitionError at line 3 saying the key is not text", in, err)
		}
	}
}

// An alias used as a mapping key is the key it names: given again that way, it is a duplicate
// like any other (yaml.v3 kept the last and dropped "a: [b]" without a word).
func TestParseDefinitionRefusesAKeyRepeatedThroughAnAlias(t *testing.T) {
	for in, want := range map[string]string{
		"---\nphases: [&p a, b, c]\nterminal: [c]\ntransitions:\n  a: [b]\n  b: [c]\n  *p : [c]\n---\n": `alias.md:7: front matter: mapping key "a" already defined at line 5`,
		"---\nphases: [&p a, b]\nverbs:\n  a: go\n  x: y\n  *p : stop\n---\n":                           `alias.md:6: front matter: mapping key "a" already defined at line 4`,
	} {
		_, err := yamldoc.Codec{}.ParseDefinition("alias.md", []byte(in))
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%q: %v; want %s", in, err, want)
		}
	}
}

// A merge key ("<<") at the top level of a definition's front matter was refused as an
// unknown key "<<", as if it were a name misspelled; it is refused as the merge it is, with
// the step that works. A quoted "<<" is a key like any other, and unknown.
func TestParseDefinitionRefusesATopLevelMergeAsAMerge(t *testing.T) {
	for in, want := range map[string]string{
		"---\nphases: [a, b]\n<<: {terminal: [b]}\n---\n":              `merge.md:3: the merge key "<<" is not read at the top level of the front matter: write the keys it merges in out there`,
		"---\nphases: [a, b]\nverbs: &v {a: go}\n<<: *v\n---\n":        `merge.md:4: the merge key "<<" is not read at the top level of the front matter: write the keys it merges in out there`,
		"---\nphases: [a, b]\n<<: [{terminal: [b]}, {ttl: 1h}]\n---\n": `merge.md:3: the merge key "<<" is not read at the top level of the front matter: write the keys it merges in out there`,
		"---\nphases: [a, b]\n\"<<\": {terminal: [b]}\n---\n":          `merge.md:3: unknown key "<<"`,
	} {
		_, err := yamldoc.Codec{}.ParseDefinition("merge.md", []byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want %s", in, err, want)
		}
	}
}

// A definition that does not load is reported to the person and, in the session's context,
// to the model: the reason never repeats text of a secret's shape the file holds, in any
// letter case (names are lowercased before they are quoted). The line is still given. A
// definition holding such text did load when it was otherwise valid (a lowercase token as a
// phase, any in its description), and its phases and description were then repeated by
// cairn types, a refused move's "next phases", start_workflow: it no longer loads.
func TestDefinitionErrorsDoNotRepeatSecrets(t *testing.T) {
	for _, s := range secrettest.Shapes() {
		if strings.Contains(s.Text, "\n") {
			continue
		}
		for _, tc := range frontMatters(s.Text) {
			_, err := yamldoc.Codec{}.ParseDefinition("wf.md", []byte("---\n"+tc.fm+"---\n"))
			if err == nil {
				t.Errorf("%s in %s: the definition loads", s.Name, tc.name)
				continue
			}
			var de *workflow.DefinitionError
			if !errors.As(err, &de) || de.Line == 0 {
				t.Errorf("%s in %s: %v, want a *DefinitionError with its line", s.Name, tc.name, err)
				continue
			}
			if strings.Contains(strings.ToLower(err.Error()), strings.ToLower(s.Core)) {
				t.Errorf("%s in %s: the error repeats the secret: %v", s.Name, tc.name, err)
			}
		}
	}
}

// frontMatters puts text in each place of a definition's front matter, quoted.
func frontMatters(text string) []struct{ name, fm string } {
	q := strconv.Quote(text)
	return []struct{ name, fm string }{
		{"key", q + ": 1\nphases: [a, b]\n"},
		{"phase", "phases: [a, " + q + "]\n"},
		{"phase twice", "phases: [" + q + ", " + q + "]\n"},
		{"terminal", "phases: [a, b]\nterminal: [" + q + "]\n"},
		{"transition", "phases: [a, b]\ntransitions: {a: [" + q + "]}\n"},
		{"verbs", "phases: [a, b]\nverbs: {" + q + ": x}\n"},
		{"major", "phases: [a, b]\nmajor: [" + q + "]\n"},
		{"ttl", "phases: [a, b]\nttl: " + q + "\n"},
		{"approvals", "phases: [a, b]\napprovals: [" + q + "]\n"},
		{"name", "name: " + q + "\nphases: [a, b]\n"},
		{"description", "description: " + q + "\nphases: [a, b]\n"},
		{"phase and moves", "phases: [a, " + q + "]\ntransitions: {a: [" + q + "]}\n"},
	}
}

// Names are lowercased when a definition is read: a name written in capitals that lowercased
// has a secret's shape ("GLPAT-..." read as "glpat-...") loaded, and cairn types, a refused
// move's "next phases" and resume repeated it; a refusal's reason quoted it lowercased. It is
// refused as the same name in lowercase is, and no reason repeats it.
func TestDefinitionNamesInCapitalsAreScannedLowercased(t *testing.T) {
	tried := 0
	for _, s := range secrettest.Shapes() {
		text := strings.ToUpper(s.Text)
		if strings.Contains(s.Text, "\n") || secrets.ScanString(text) != nil || secrets.ScanString(strings.ToLower(text)) == nil {
			continue // only capitals hide it from the scan of the file
		}
		tried++
		for _, tc := range frontMatters(text) {
			d, err := yamldoc.Codec{}.ParseDefinition("wf.md", []byte("---\n"+tc.fm+"---\n"))
			if err == nil {
				t.Errorf("%s in %s: the definition loads, as %s %v", s.Name, tc.name, d.Name, d.Phases)
			} else if secrets.ScanString(err.Error()) != nil {
				t.Errorf("%s in %s: the error repeats the secret: %v", s.Name, tc.name, err)
			}
		}
	}
	if tried == 0 {
		t.Fatal("no shape is a secret only in lowercase: the test tries nothing")
	}
}

// A list written as one line without brackets ("phases: a, b, c") is one YAML string, so it
// reads as one name: the refusal says so, and how to write the list, rather than that the
// name must be lowercase letters (which it is) or is not among the phases.
func TestParseDefinitionExplainsAListWithoutBrackets(t *testing.T) {
	const want = `front matter: "%s" is one item, and no name holds a ',': to list several, write them in brackets, [%[1]s]`
	for _, c := range []struct {
		front string
		line  int
		item  string
	}{
		{"phases: a, b, c", 2, "a, b, c"},
		{"phases: [a, b, c]\nterminal: b, c\ntransitions: {a: [b, c]}", 3, "b, c"},
		{"phases: [a, b, c]\napprovals: a, b", 3, "a, b"},
		{"phases: [a, b, c]\ntransitions:\n  a: b, c\n  b: [c]", 4, "b, c"},
	} {
		_, err := yamldoc.Codec{}.ParseDefinition("t.md", []byte("---\n"+c.front+"\n---\n"))
		de, ok := errors.AsType[*workflow.DefinitionError](err)
		if !ok || de.Line != c.line || de.Reason != fmt.Sprintf(want, c.item) {
			t.Errorf("%q: %v\nwant line %d: %s", c.front, err, c.line, fmt.Sprintf(want, c.item))
		}
	}
}

// A key whose value has the wrong shape (a list where text belongs, a mapping where a list
// does) was refused in yaml.v3's words, naming Go types and no step ("cannot unmarshal !!seq
// into map[string]yamldoc.stringList"); it is refused at the value's line, saying what the
// key takes and how to write it.
func TestParseDefinitionSaysWhatShapeAKeyTakes(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"---\nname: [a]\nphases: [a, b]\n---\n", `shape.md:2: name must be text, not a list: write it as in "name: review"`},
		{"---\nphases: [a, b]\nttl:\n  - 24h\n---\n", `shape.md:4: ttl must be text, not a list: write it as in "ttl: 24h"`},
		{"---\ndescription:\n  x: 1\nphases: [a, b]\n---\n", `shape.md:3: description must be text, not a mapping: write it as in "description: Review a change"`},
		{"---\nphases:\n  a: b\n---\n", `shape.md:3: phases must be a list of names, not a mapping: write it as in "phases: [draft, review, done]"`},
		{"---\nphases: [[a], b]\n---\n", `shape.md:2: phases: item 1 is a list, not a name: write each item as a plain name, as in "phases: [draft, review, done]"`},
		{"---\nphases: [a, b]\napprovals: [{a: 1}]\n---\n", `shape.md:3: approvals: item 1 is a mapping, not a name: write each item as a plain name, as in "approvals: [review]"`},
		{"---\nphases: [a, b]\ntransitions: [a]\n---\n", `shape.md:3: transitions must be a mapping of each phase to the phases it may move to, not a list: write it as in "transitions: {draft: [review], review: [draft, done]}"`},
		{"---\nphases: [a, b]\ntransitions:\n  a: {b: 1}\n---\n", `shape.md:4: transitions of "a" must be a list of names, not a mapping: write it as in "transitions: {draft: [review], review: [draft, done]}"`},
		{"---\nphases: [a, b]\ntransitions:\n  a: [[b]]\n---\n", `shape.md:4: transitions of "a": item 1 is a list, not a name: write each item as a plain name, as in "transitions: {draft: [review], review: [draft, done]}"`},
		{"---\nphases: [a, b]\ntransitions: a\n---\n", `shape.md:3: transitions must be a mapping of each phase to the phases it may move to, not "a": write it as in`},
		{"---\nphases: [a, b]\nverbs: [a]\n---\n", `shape.md:3: verbs must be a mapping of each phase to a word for being in it, not a list: write it as in "verbs: {draft: drafting, review: reviewing}"`},
		{"---\nphases: [a, b]\nverbs:\n  a: [x]\n---\n", `shape.md:4: verbs of "a" must be text, not a list: write it as in "verbs: {draft: drafting, review: reviewing}"`},
		{"---\nphases: [a, b]\nblocking: maybe\n---\n", `shape.md:3: blocking must be true or false, not "maybe"`},
		{"---\nphases: [a, b]\nblocking: [false]\n---\n", `shape.md:3: blocking must be true or false, not a list`},
		{"---\nphases: &p [a, b]\nname: *p\n---\n", `shape.md:3: name must be text, not a list`},
		// A key under transitions or verbs that is not text: yaml.v3 said "cannot unmarshal !!seq into string".
		{"---\nphases: [a, b]\ntransitions:\n  ? [a]\n  : [b]\n---\n", `shape.md:4: transitions: key 1 is a list, not a phase name: write each key as a plain name, as in "transitions: {draft: [review], review: [draft, done]}"`},
		{"---\nphases: [a, b]\nverbs: {? {a: 1} : x}\n---\n", `shape.md:3: verbs: key 1 is a mapping, not a phase name: write each key as a plain name, as in "verbs: {draft: drafting, review: reviewing}"`},
	} {
		_, err := yamldoc.Codec{}.ParseDefinition("shape.md", []byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), "workflow definition "+tc.want) {
			t.Errorf("%q: %v; want %s", tc.in, err, tc.want)
		}
	}
	// The shapes each key takes still load: a list as one name, a merge into transitions.
	for _, in := range []string{
		"---\nname: r\nphases: [a, b]\nterminal: b\napprovals: a\nblocking: no\nttl: 1h\n---\n",
		"---\nphases: [a, b, c]\nterminal: [c]\nt: &t {a: [b]}\ntransitions:\n  <<: *t\n  b: c\n---\n",
	} {
		if _, err := (yamldoc.Codec{}).ParseDefinition("shape.md", []byte(in)); err != nil && !strings.Contains(err.Error(), `unknown key "t"`) {
			t.Errorf("%q: %v", in, err)
		}
	}
}

// A name refused for a letter that only looks like an ASCII one (Cyrillic 'а' in "аnalyze",
// 'е' in a file named "dеbug.md") was quoted as written: the author read 'phase name
// "analyze" is not valid: use lowercase letters', which it seems to be. The letter is shown
// escaped, so the one to retype is plain.
func TestParseDefinitionShowsALookalikeLetterInAName(t *testing.T) {
	for _, tc := range []struct{ file, in, want string }{
		{"flow.md", "---\nphases: [\u0430nalyze, done]\n---\n", `phase name "\u0430nalyze" is not valid`},
		{"d\u0435bug.md", "---\nphases: [a, done]\n---\n", `name "d\u0435bug" is not valid`},
	} {
		_, err := yamldoc.Codec{}.ParseDefinition(tc.file, []byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want it to say %s", tc.file, err, tc.want)
		}
	}
}

// Front matter after other text (a license comment, a title) was read as no front matter, and
// the file, opening with no key, as documentation: skipped in silence, and "cairn start TYPE"
// said only that the type is unknown. It is refused at the "---", with the step. A README
// whose example definition sits in a fenced code block is still documentation.
func TestParseDefinitionRefusesFrontMatterAfterText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		line int // 0: documentation
	}{
		{"<!-- SPDX-License-Identifier: MIT -->\n---\nphases: [a, b]\n---\n", 2},
		{"# Release flow\r\n\r\n---\r\nname: release\r\nphases: [a, b]\r\n---\r\n", 3},
		{"# Our workflows\n\nWrite one like this:\n\n```yaml\n---\nname: x\nphases: [a, b]\n---\n```\n", 0},
		{"# Notes\n\n---\n\nname: a word\n", 0},
	} {
		_, err := yamldoc.Codec{}.ParseDefinition("late.md", []byte(tc.in))
		var de *workflow.DefinitionError
		if !errors.As(err, &de) {
			t.Fatalf("%q: %v, want a *DefinitionError", tc.in, err)
		}
		if doc := errors.Is(err, workflow.ErrNotDefinition); doc != (tc.line == 0) || tc.line != 0 && (de.Line != tc.line || !strings.Contains(de.Reason, "move the front matter to the top of the file")) {
			t.Errorf("%q: %v (documentation: %v); want line %d (0: documentation)", tc.in, err, doc, tc.line)
		}
	}
}

// A definition left mid-merge by git (a pull of the shared project) was refused in YAML's
// words at the line after the marker ("mapping values are not allowed in this context"), or,
// with the markers around the whole front matter, skipped as documentation. It is refused at
// the "<<<<<<<" line as the merge conflict it is; markers in the body alone are not in the way.
func TestParseDefinitionNamesAMergeConflict(t *testing.T) {
	for _, tc := range []struct {
		in   string
		line int
	}{
		{"---\n<<<<<<< HEAD\nphases: [a, b]\n=======\nphases: [a, c]\n>>>>>>> other\n---\n", 2},
		{"<<<<<<< HEAD\n---\nphases: [a, b]\n---\n=======\n---\nphases: [a, c]\n---\n>>>>>>> other\n", 1},
		{"---\r\n<<<<<<< ours\r\nphases: [a, b]\r\n=======\r\nphases: [a, c]\r\n>>>>>>> theirs\r\n---\r\n", 2},
	} {
		_, err := yamldoc.Codec{}.ParseDefinition("merge.md", []byte(tc.in))
		var de *workflow.DefinitionError
		if !errors.As(err, &de) || de.Line != tc.line || !strings.Contains(de.Reason, "merge conflict") || errors.Is(err, workflow.ErrNotDefinition) {
			t.Errorf("%q: %v; want a *DefinitionError at line %d naming the merge conflict", tc.in, err, tc.line)
		}
	}
	// Markers in the body only leave a definition that reads: it still loads.
	_, err := yamldoc.Codec{}.ParseDefinition("merge.md", []byte("---\nphases: [a, b]\n---\n<<<<<<< ours\nx\n=======\ny\n>>>>>>> theirs\n"))
	if err != nil {
		t.Errorf("markers in the body: %v, want the definition loaded", err)
	}
}
