// Package yamldoc reads and writes the YAML that Cairn deals in: workflow definitions
// (Markdown with YAML front matter), the front matter of seed 001's milestone files, and
// WORKFLOW-STATUS.yaml. It is the only package that links a YAML library (adrg/frontmatter,
// gopkg.in/yaml.v3); every binary passes Codec to the engine.
package yamldoc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/adrg/frontmatter"
	"gopkg.in/yaml.v3"

	"github.com/cairn-dev/cairn/internal/lazyre"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// stringList accepts a YAML sequence of strings or a single string. (yaml.v3 never hands a
// null to an unmarshaler: it leaves the list nil.) A single string with a ',' in it is a list
// written without brackets ("phases: a, b"), which YAML reads as one string: no name holds a
// ',', so it is refused as that, with the line (in the form yamlErrLine reads).
type stringList []string

func (l *stringList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		if strings.Contains(n.Value, ",") && !strings.ContainsAny(n.Value, "\r\n") {
			return fmt.Errorf("line %d: %q is one item, and no name holds a ',': to list several, write them in brackets, [%s]", n.Line, n.Value, n.Value)
		}
		*l = stringList{n.Value}
		return nil
	}
	var s []string
	if err := n.Decode(&s); err != nil {
		return err
	}
	*l = s
	return nil
}

// frontMatter is the YAML a definition file opens with: workflow.Definition's fields, where a
// list may also be written as a single string and blocking, when left out, is true.
type frontMatter struct {
	Name        string                `yaml:"name"`
	Description string                `yaml:"description"`
	Phases      stringList            `yaml:"phases"`
	Transitions map[string]stringList `yaml:"transitions"`
	Terminal    stringList            `yaml:"terminal"`
	Verbs       map[string]string     `yaml:"verbs"`
	Approvals   stringList            `yaml:"approvals"`
	TTL         string                `yaml:"ttl"`
	Major       stringList            `yaml:"major"`
	Blocking    *bool                 `yaml:"blocking"`
}

// Compiled on first use: only an error needs them, and every hook process links this package.
var (
	yamlLineRE   = lazyre.New(`^(?:yaml: )?line (\d+): `)
	yamlAtLineRE = lazyre.New(`at line (\d+)`)
)

// indentedEnd reports the file line of the line that closed the front matter head, when it
// is an indented "---": YAML would read it as text (inside a block scalar, say), so the front
// matter the author meant goes on past it. offset is the file line of the opening "---".
func indentedEnd(data, head []byte, offset int) (int, bool) {
	start := 0
	for i := 0; i < offset && start < len(data); i++ { // the blank lines and the opening line
		if n := bytes.IndexByte(data[start:], '\n'); n >= 0 {
			start += n + 1
		} else {
			start = len(data)
		}
	}
	end := start + len(head)
	if end >= len(data) || !bytes.Equal(data[start:end], head) {
		return 0, false
	}
	closing, _, _ := bytes.Cut(data[end:], []byte("\n"))
	return offset + bytes.Count(head, []byte("\n")) + 1, len(closing) > 0 && (closing[0] == ' ' || closing[0] == '\t')
}

// ParseDefinition parses one definition file. file names it in errors and, when the front
// matter has no name, gives the name (its base name without ".md"). Every error is a
// *DefinitionError with the line in the file where one is known.
func (Codec) ParseDefinition(file string, data []byte) (*workflow.Definition, error) {
	var head []byte    // the front matter as the library split it
	var root yaml.Node // the front matter as YAML, once it reads as such
	// A file left mid-merge by git fails for the markers, whatever the reader then says.
	conflict := conflictLine(data)
	fail := func(line int, format string, args ...any) (*workflow.Definition, error) {
		reason := fmt.Sprintf(format, args...)
		if conflict > 0 {
			line, reason = conflict, `the file is in the middle of a git merge conflict ("<<<<<<<" here, then "=======" and ">>>>>>>"): resolve it, keeping the lines meant, and remove the three marker lines`
		} else if f := headSecret(head); f != nil {
			// The reason may quote it, lowercased as names are.
			reason = fmt.Sprintf("the reason is not shown: the front matter holds text of a secret's shape (%s), which it may quote; take that out of the file, and the reason is shown", f.Rule)
		}
		return nil, &workflow.DefinitionError{File: file, Line: line, Reason: reason, Name: declaredName(&root, head)}
	}
	if len(data) > workflow.MaxDefinitionSize {
		return fail(0, "file is %d bytes, more than the %d allowed", len(data), workflow.MaxDefinitionSize)
	}
	data = withoutBOM(data)
	// The front matter parser skips blank lines before the opening "---"; count them so that
	// YAML line numbers can be shifted to file line numbers.
	offset := 0
	for _, l := range bytes.SplitAfter(data, []byte("\n")) {
		offset++
		if len(bytes.TrimSpace(l)) != 0 {
			break
		}
	}
	body, err := frontmatter.MustParse(bytes.NewReader(data), &root, frontmatter.NewFormat("---", "---", func(b []byte, v any) error {
		head = b
		return unmarshalOne(b, v, `a "..." line, or a "---" line with more on it, ended the first: write the front matter as one document, ended by a line that is just "---"`)
	}))
	if at, reason := lineBreakIn(head); reason != "" {
		return fail(offset+1+bytes.Count(head[:at], []byte("\n")), "front matter: %s", reason)
	}
	if err == nil {
		if line, ok := indentedEnd(data, head, offset); ok {
			return fail(line, `the indented "---" on this line ends the front matter (adrg/frontmatter ends it at any line that is "---" once trimmed), and the rest is read as the body: write that line another way, and end the front matter with "---" at the start of a line`)
		}
	}
	if err != nil {
		if errors.Is(err, frontmatter.ErrNotFound) {
			opening := bytes.SplitN(bytes.TrimLeft(data, " \t\r\n"), []byte("\n"), 2)[0]
			switch string(bytes.TrimSpace(opening)) {
			case "---":
				if line := lineOf(data, "..."); line > 0 {
					return fail(line, `a "..." line ends a YAML document but not the front matter, which is never closed: write "---" here instead`)
				}
				return fail(offset, "front matter opened with \"---\" is never closed: end it with another line \"---\"")
			case "+++":
				return fail(offset, `TOML front matter ("+++") is not read: write the front matter in YAML, between two lines "---"`)
			}
			if o := bytes.TrimSpace(opening); string(o) == "{" || bytes.HasPrefix(o, []byte(`{"`)) {
				// Hugo's JSON front matter: a definition, not documentation (which opens with
				// no JSON object). JSON is YAML, so the two lines are the whole fix.
				return fail(offset, `JSON front matter ("{") is not read as it is: put a line "---" before it and another after it (JSON reads as YAML)`)
			}
			if bytes.HasPrefix(bytes.TrimLeft(data, " \t\r"), []byte("---\r")) && !bytes.Contains(data, []byte("\n")) {
				return fail(1, "the file starts with \"---\", but its lines end in a carriage return alone (classic Mac OS line endings), so it reads as one line: save it with LF or CRLF line endings")
			}
			if bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff}) {
				return fail(1, "the file is UTF-16 (it starts with a UTF-16 byte order mark): save it as UTF-8")
			}
			if line := lateFrontMatter(data); line > 0 {
				return fail(line, `front matter opens here, after other text, and is read only at the start of the file: move the front matter to the top of the file (text before it can go after its closing "---")`)
			}
			_, err := fail(1, "no YAML front matter: the file must start with a line \"---\", the YAML, then another \"---\"")
			if key, _ := keyInBody(data); key == "" && len(bytes.TrimSpace(data)) > 0 && conflict == 0 {
				// Text that does not open with a key, as a README: documentation, not a
				// definition whose front matter was forgotten.
				err.(*workflow.DefinitionError).Err = workflow.ErrNotDefinition
			}
			return nil, err
		}
		if at, n := longKey(head); n > 0 {
			// yaml.v3 says "could not find expected ':'" or the like, at times with no line.
			return fail(offset+1+bytes.Count(head[:at], []byte("\n")), "front matter: the key on this line is %d characters long, more than the %d YAML reads in a key: shorten it", n, maxKeyLen)
		}
		line := yamlErrLine(err.Error(), offset)
		if end := offset + bytes.Count(head, []byte("\n")); line > end {
			// Past the front matter ("phases: [" and then its end): the line left unfinished,
			// the last one with text, is where to look.
			line = offset + len(bytes.Split(bytes.TrimRight(head, " \t\r\n"), []byte("\n")))
		}
		if strings.HasSuffix(err.Error(), "found unexpected end of stream") { // only a quoted scalar left open says this
			return fail(offset+bytes.Count(head, []byte("\n"))+1, `the "---" on this line ends the front matter (it ends at the first line that is "---", even inside a quoted value), so the quote opened before it is never closed: close it before this line (a value cannot hold a line that is just "---")`)
		}
		if line == 0 { // yaml.v3's reader names no line for bytes it cannot read
			if at, reason := unreadable(head); reason != "" {
				return fail(offset+1+bytes.Count(head[:at], []byte("\n")), "front matter: %s", reason)
			}
		}
		reason := yamlErrReason(err.Error(), offset)
		if reason == "found character that cannot start any token" && line > 0 && bytes.ContainsRune(leadingSpace(data, line), '\t') {
			reason += ": the line is indented with a tab, and YAML indents with spaces only: replace the tab with spaces"
		}
		if depth, ok := strings.CutPrefix(reason, "exceeded max depth of "); ok {
			// yaml.v3 names no line for it.
			reason = "lists and mappings nest more than " + depth + " levels deep, more than YAML reads: a definition needs two (transitions: {draft: [review]})"
		}
		return fail(line, "front matter: %s", reason)
	}
	closing := offset + bytes.Count(head, []byte("\n")) + 1 // the line of the "---" that ended it
	if root.Kind == 0 || len(root.Content) == 0 {
		if key, at := keyInBody(body); key != "" {
			return fail(closing, bodyKeyReason, key, closing+at)
		}
		return fail(offset, "front matter is empty: it needs at least phases")
	}
	doc := root.Content[0]
	if doc.Kind != yaml.MappingNode {
		return fail(doc.Line+offset, "front matter must be a YAML mapping of keys (name, phases, transitions, ...)")
	}
	if alias := aliasOverflow(doc, maxExpandedNodes); alias != nil {
		return fail(alias.Line+offset, "front matter: aliases (*%s) repeat its values more than %d times over: write the lists out instead", alias.Value, maxExpandedNodes)
	}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k := doc.Content[i]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" { // not a name misspelled
			return fail(k.Line+offset, `the merge key "<<" is not read at the top level of the front matter: write the keys it merges in out there`)
		}
		if k.Kind != yaml.ScalarNode { // an alias's Value is its anchor's name, not the key yaml.v3 decodes
			return fail(k.Line+offset, "this key is a YAML %s, not text: write each key as a plain name (%s)", kindName(k.Kind), strings.Join(workflow.SpecKeys, ", "))
		}
		if !slices.Contains(workflow.SpecKeys, k.Value) {
			return fail(k.Line+offset, "unknown key %q: known keys are %s", k.Value, strings.Join(workflow.SpecKeys, ", "))
		}
	}
	if at, reason := nodeTrouble(doc, offset); at != nil {
		return fail(at.Line+offset, "front matter: %s", reason)
	}
	if n := localTag(doc); n != nil {
		return fail(n.Line+offset, "tag %s is not read, and Cairn would take the value as if it were not there: remove it and write the value itself", strconv.Quote(n.Tag))
	}
	if n, where := nullItem(doc); n != nil {
		shown := n.Value
		if shown == "" {
			shown = "an empty item"
		}
		return fail(n.Line+offset, "%s is null (%s), which YAML reads as no value: write it out, or remove it", where, shown)
	}
	if at, reason := shapeTrouble(doc); at != nil {
		return fail(at.Line+offset, "%s", reason)
	}
	var fm frontMatter
	if err := doc.Decode(&fm); err != nil {
		var te *yaml.TypeError
		msg := err.Error()
		if errors.As(err, &te) && len(te.Errors) > 0 {
			msg = te.Errors[0]
		}
		return fail(yamlErrLine(msg, offset), "front matter: %s", yamlErrReason(msg, offset))
	}
	if key, at := keyInBody(body); key != "" && fm.Phases == nil {
		return fail(closing, bodyKeyReason, key, closing+at)
	}
	d, err := workflow.BuildDefinition(file, fm.spec(string(body)), locator{doc: doc, offset: offset, end: closing})
	if de, ok := errors.AsType[*workflow.DefinitionError](err); ok {
		return fail(de.Line, "%s", de.Reason)
	}
	if f := headSecret(head); f != nil && err == nil {
		// Its names and description are repeated wherever the type is told (cairn types, a
		// refused move's next phases).
		return nil, &workflow.DefinitionError{File: file, Line: secretLine(head, offset),
			Reason: fmt.Sprintf("front matter: it holds text of a secret's shape (%s), which Cairn would repeat where it names the type's phases: take that out of the file", f.Rule),
			Name:   declaredName(&root, head)}
	}
	return d, err
}

// keyExamples show each front matter key written as it takes its value.
var keyExamples = map[string]string{
	"name": "name: review", "description": "description: Review a change", "ttl": "ttl: 24h",
	"phases": "phases: [draft, review, done]", "terminal": "terminal: [done]",
	"approvals": "approvals: [review]", "major": "major: [draft->review]",
	"transitions": "transitions: {draft: [review], review: [draft, done]}",
	"verbs":       "verbs: {draft: drafting, review: reviewing}",
}

// shapeTrouble finds, before the front matter doc is decoded, a key whose value has another
// shape than the key takes (a list where text belongs, a mapping where a list does), and
// says what the key takes and how to write it: yaml.v3 says "cannot unmarshal !!seq into
// map[string]yamldoc.stringList". The node to blame is the value as written (an alias
// where it stands).
func shapeTrouble(doc *yaml.Node) (*yaml.Node, string) {
	// list checks a list of names: one name, or a sequence of them.
	list := func(n *yaml.Node, what, example string) (*yaml.Node, string) {
		v := resolveAlias(n)
		switch v.Kind {
		case yaml.ScalarNode:
			return nil, ""
		case yaml.SequenceNode:
			for i, c := range v.Content {
				if k := resolveAlias(c).Kind; k != yaml.ScalarNode {
					return c, fmt.Sprintf("%s: item %d is a %s, not a name: write each item as a plain name, as in %q", what, i+1, kindName(k), example)
				}
			}
			return nil, ""
		}
		return n, fmt.Sprintf("%s must be a list of names, not a %s: write it as in %q", what, kindName(v.Kind), example)
	}
	text := func(n *yaml.Node, what, example string) (*yaml.Node, string) {
		if k := resolveAlias(n).Kind; k != yaml.ScalarNode {
			return n, fmt.Sprintf("%s must be text, not a %s: write it as in %q", what, kindName(k), example)
		}
		return nil, ""
	}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		key, n := doc.Content[i].Value, doc.Content[i+1]
		v, example := resolveAlias(n), keyExamples[key]
		var at *yaml.Node
		var reason string
		switch key {
		case "name", "description", "ttl":
			at, reason = text(n, key, example)
		case "phases", "terminal", "approvals", "major":
			at, reason = list(n, key, example)
		case "blocking":
			var b bool
			if v.Kind != yaml.ScalarNode {
				at, reason = n, fmt.Sprintf("blocking must be true or false, not a %s", kindName(v.Kind))
			} else if v.Decode(&b) != nil {
				at, reason = n, fmt.Sprintf("blocking must be true or false, not %q", v.Value)
			}
		case "transitions", "verbs":
			if v.Kind != yaml.MappingNode {
				if v.Kind == yaml.ScalarNode && isNull(v) {
					continue // left empty: as if left out
				}
				takes := map[string]string{"transitions": "each phase to the phases it may move to", "verbs": "each phase to a word for being in it"}[key]
				was := "a " + kindName(v.Kind)
				if v.Kind == yaml.ScalarNode {
					was = strconv.Quote(v.Value)
				}
				at, reason = n, fmt.Sprintf("%s must be a mapping of %s, not %s: write it as in %q", key, takes, was, example)
				break
			}
			for j := 0; j+1 < len(v.Content) && at == nil; j += 2 {
				k := v.Content[j]
				if k.ShortTag() == "!!merge" { // yaml.v3 merges it in as it decodes
					continue
				}
				if kk := resolveAlias(k).Kind; kk != yaml.ScalarNode { // a "? [a]" complex key
					at, reason = k, fmt.Sprintf("%s: key %d is a %s, not a phase name: write each key as a plain name, as in %q", key, j/2+1, kindName(kk), example)
					break
				}
				what := fmt.Sprintf("%s of %q", key, resolveAlias(k).Value)
				if key == "verbs" {
					at, reason = text(v.Content[j+1], what, example)
				} else {
					at, reason = list(v.Content[j+1], what, example)
				}
			}
		}
		if at != nil {
			return at, reason
		}
	}
	return nil, ""
}

// bodyKeyReason says why a front matter that lacks phases is refused when its body opens with
// a front matter key (keyInBody): the key, then its line in the file.
const bodyKeyReason = `the "---" on this line ends the front matter, so %q on line %d is read as the body: remove this line, so that the keys below it are front matter too`

// keyInBody reports the key when the first line of body that is not blank starts, at the
// margin, with a front matter key and a ':' (front matter the author meant, after a "---" that
// ended it early), and that line's place in body (1-based); "" when it does not.
func keyInBody(body []byte) (string, int) {
	n := 0
	for l := range bytes.SplitSeq(body, []byte("\n")) {
		n++
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		key, _, ok := bytes.Cut(l, []byte(":"))
		if ok && slices.Contains(workflow.SpecKeys, string(key)) {
			return string(key), n
		}
		return "", 0
	}
	return "", 0
}

// conflictLine is the line of a "<<<<<<<" marker that "=======" and ">>>>>>>" lines follow,
// as git leaves a file it could not merge; 0 when there is none.
func conflictLine(data []byte) int {
	open, sep, i := 0, false, -1
	for l := range bytes.SplitSeq(data, []byte("\n")) { // on every parse: no slice of lines
		i++
		l = bytes.TrimRight(l, "\r")
		switch {
		case open == 0 && (string(l) == "<<<<<<<" || bytes.HasPrefix(l, []byte("<<<<<<< "))):
			open = i + 1
		case open > 0 && string(l) == "=======":
			sep = true
		case sep && (string(l) == ">>>>>>>" || bytes.HasPrefix(l, []byte(">>>>>>> "))):
			return open
		}
	}
	return 0
}

// lateFrontMatter is the line of a "---" that opens front matter after other text (a license
// comment, a title): a "---" line, outside a fenced code block (a README's example), directly
// followed by a definition key. 0 when there is none.
func lateFrontMatter(data []byte) int {
	lines := bytes.Split(data, []byte("\n"))
	fence := false
	for i, l := range lines {
		t := bytes.TrimSpace(l)
		if bytes.HasPrefix(t, []byte("```")) || bytes.HasPrefix(t, []byte("~~~")) {
			fence = !fence
			continue
		}
		if !fence && i > 0 && string(t) == "---" && i+1 < len(lines) {
			if key, _ := keyInBody(lines[i+1]); key != "" {
				return i + 1
			}
		}
	}
	return 0
}

// headSecret reports text of a secret's shape in front matter head, as written or lowercased:
// names are read lowercased, so "GLPAT-..." is the name "glpat-...".
func headSecret(head []byte) *secrets.Finding {
	if f := secrets.ScanString(string(head)); f != nil {
		return f
	}
	return secrets.ScanString(string(bytes.ToLower(head)))
}

// secretLine is the line in the file of the first line of front matter head, opened on line
// offset, that has a secret's shape by itself (headSecret); offset when none has (the secret
// spans lines).
func secretLine(head []byte, offset int) int {
	n := offset
	for l := range bytes.SplitSeq(head, []byte("\n")) {
		n++
		if headSecret(l) != nil {
			return n
		}
	}
	return offset
}

// declaredName is the type a broken front matter names: the value of its top-level name key
// when it reads as YAML (root), however the key is written ("name", 'name', name :); else its
// first line that starts with that key at the margin, read as YAML on its own ("" when there
// is none, or it does not read). A broken file stands for that type
// (workflow.Definitions.NotLoaded).
func declaredName(root *yaml.Node, head []byte) string {
	if len(root.Content) > 0 && root.Content[0].Kind == yaml.MappingNode {
		doc := root.Content[0]
		for i := 0; i+1 < len(doc.Content); i += 2 {
			if k, v := resolveAlias(doc.Content[i]), resolveAlias(doc.Content[i+1]); k.Value == "name" && v.Kind == yaml.ScalarNode {
				return workflow.NormalizeName(v.Value)
			}
		}
		return ""
	}
	for l := range bytes.SplitSeq(head, []byte("\n")) {
		key, ok := bytes.CutPrefix(bytes.TrimLeft(l, `"'`), []byte("name"))
		if ok && bytes.HasPrefix(bytes.TrimLeft(key, `"' `), []byte(":")) {
			var v struct {
				Name string `yaml:"name"`
			}
			if yaml.Unmarshal(l, &v) != nil {
				return ""
			}
			return workflow.NormalizeName(v.Name)
		}
	}
	return ""
}

// lineOf returns the number of the first line of data that is text once trimmed, 0 if none.
func lineOf(data []byte, text string) int {
	n := 0
	for l := range bytes.SplitSeq(data, []byte("\n")) {
		n++
		if string(bytes.TrimSpace(l)) == text {
			return n
		}
	}
	return 0
}

// leadingSpace returns the spaces and tabs that line n (1-based) of data starts with.
func leadingSpace(data []byte, n int) []byte {
	for l := range bytes.SplitSeq(data, []byte("\n")) {
		if n--; n == 0 {
			return l[:len(l)-len(bytes.TrimLeft(l, " \t"))]
		}
	}
	return nil
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	case yaml.AliasNode:
		return "alias"
	}
	return "node"
}

// unreadable finds the first bytes of b that yaml.v3's reader refuses (invalid UTF-8, or a
// character outside YAML's printable set) and says what they are and what to do.
func unreadable(b []byte) (int, string) {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return i, fmt.Sprintf("byte 0x%02X is not valid UTF-8: save the file as UTF-8", b[i])
		case !(r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r <= 0x7e || r == 0x85 || r >= 0xa0 && r <= 0xd7ff || r >= 0xe000 && r <= 0xfffd || r >= 0x10000):
			esc := fmt.Sprintf(`\u%04X`, r)
			if r <= 0xff {
				esc = fmt.Sprintf(`\x%02X`, r)
			}
			return i, fmt.Sprintf("character U+%04X is not allowed in YAML: remove it (in a double-quoted string, write it as %s)", r, esc)
		}
		i += size
	}
	return 0, ""
}

// maxKeyLen is the most characters YAML reads in a key written without "?" (yaml.v3 follows
// the YAML spec's limit on implicit keys).
const maxKeyLen = 1024

// longKey finds the first key in b longer than maxKeyLen: where it starts, and its length in
// characters; 0, 0 when there is none. A key is the text before a colon that a space or the
// line's end follows, from the line's indent or the flow collection's "{", "[" or ",", less
// a "- " or "? "; text holding ": " is a value, not a key.
func longKey(b []byte) (at, n int) {
	for start := 0; start < len(b); {
		l, _, _ := bytes.Cut(b[start:], []byte("\n"))
		from := 0 // where the key being read starts; -1 in a value, until the next "{", "[" or ","
		for c := 0; c < len(l); c++ {
			switch l[c] {
			case '{', '[', ',':
				from = c + 1
			case ':':
				if from < 0 || c+1 < len(l) && l[c+1] != ' ' && l[c+1] != '\t' && l[c+1] != '\r' {
					continue
				}
				key := bytes.TrimLeft(l[from:c], " \t")
				key = bytes.TrimPrefix(bytes.TrimPrefix(key, []byte("- ")), []byte("? "))
				if k := utf8.RuneCount(key); k > maxKeyLen {
					return start + from, k
				}
				from = -1
			}
		}
		start += len(l) + 1
	}
	return 0, 0
}

// unmarshalOne is yaml.Unmarshal for YAML that must be one document: yaml.Unmarshal reads
// the first and drops the rest without a word (in a definition, after a "..." line or a line
// such as "--- # more" that adrg/frontmatter does not take for the end, a gate listed there
// would guard nothing). A second document is an error at its line, fix saying what to do.
func unmarshalOne(b []byte, v any, fix string) error {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) { // no document at all, as yaml.Unmarshal reads it
			return nil
		}
		return parserLine(err)
	}
	var next yaml.Node
	err := dec.Decode(&next)
	if errors.Is(err, io.EOF) {
		return nil
	}
	line := next.Line
	if len(next.Content) > 0 {
		line = next.Content[0].Line
	}
	if err != nil { // text after "..." with no "---" before it: blamed at its first line
		line = yamlErrLine(parserLine(err).Error(), 0)
	}
	return fmt.Errorf("yaml: line %d: a second YAML document starts here, and only the first would be read (%s)", line, fix)
}

// yamlParserProblems are the errors of yaml.v3's parser (parserc.go), whose line it counts
// from 0 (decode.go's fail adds 1 for its scanner's only): "line 2" is the third line.
var yamlParserProblems = []string{
	"did not find expected <stream-start>", "did not find expected <document start>",
	"found duplicate %YAML directive", "found incompatible YAML document", "found duplicate %TAG directive",
	"found undefined tag handle", "did not find expected node content", "did not find expected '-' indicator",
	"did not find expected key", "did not find expected ',' or ']'", "did not find expected ',' or '}'",
}

// parserLine is err, a yaml.v3 error, with the line of a parser's error counted from 1, as
// its scanner's are and as a person counts them. With no line (yaml.v3 names none for the
// first line, 0) it is the first.
func parserLine(err error) error {
	msg := err.Error()
	rest, ok := strings.CutPrefix(msg, "yaml: ")
	if !ok {
		return err
	}
	n := 0
	if m := yamlLineRE().FindStringSubmatch(msg); m != nil {
		n, _ = strconv.Atoi(m[1])
		rest = yamlLineRE().ReplaceAllString(msg, "")
	}
	if !slices.Contains(yamlParserProblems, rest) {
		return err
	}
	return fmt.Errorf("yaml: line %d: %s", n+1, rest)
}

// maxExpandedNodes bounds the YAML nodes of a front matter with its aliases expanded. Without
// aliases a file within MaxDefinitionSize has fewer; with them a small file could name one list
// millions of times (a "billion laughs"), and stringList decodes each copy with a fresh yaml.v3
// decoder, which yaml.v3's own alias limit does not count.
const maxExpandedNodes = workflow.MaxDefinitionSize

// aliasOverflow counts the nodes under doc, following aliases, and when there are more than
// limit returns the first alias met (in document order, shallowest first); nil otherwise. It
// stops there, so an alias that contains itself ends too.
func aliasOverflow(doc *yaml.Node, limit int) *yaml.Node {
	var first *yaml.Node
	queue := []*yaml.Node{doc}
	for i := 0; i < len(queue); i++ {
		n := queue[i]
		if n.Kind == yaml.AliasNode {
			if first == nil {
				first = n
			}
			if n.Alias != nil {
				queue = append(queue, n.Alias)
			}
		} else {
			queue = append(queue, n.Content...)
		}
		if len(queue) > limit {
			return first
		}
	}
	return nil
}

// localTag finds a node with a tag outside YAML's own (!!str, !!int, ...): a "!foo" or one a
// %TAG directive names. yaml.v3 decodes the value as if the tag were not there, so whatever
// the author meant by it (an include, a variable) would not happen, without a word. Aliases
// are not followed: the nodes they name are met where they stand.
func localTag(n *yaml.Node) *yaml.Node {
	if t := n.ShortTag(); n.Style&yaml.TaggedStyle != 0 && t != "!" && !strings.HasPrefix(t, "!!") { // "!": plain text
		return n
	}
	for _, c := range n.Content {
		if t := localTag(c); t != nil {
			return t
		}
	}
	return nil
}

// binaryScalar finds a scalar tagged !!binary: yaml.v3 decodes it from base64 into a string
// unlike the text the file shows. Aliases are not followed: the nodes they name are met where
// they stand.
func binaryScalar(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.ScalarNode && n.Style&yaml.TaggedStyle != 0 && n.ShortTag() == "!!binary" {
		return n
	}
	for _, c := range n.Content {
		if b := binaryScalar(c); b != nil {
			return b
		}
	}
	return nil
}

// lineBreakIn finds the first NEL, LS or PS in text and says why it is refused: yaml.v3 breaks
// lines there, YAML 1.2 readers and editors do not, so "phases: [a]<LS>terminal: [a]" is one
// line to the eye and two keys to yaml.v3. The reason is "" when there is none.
func lineBreakIn(text []byte) (int, string) {
	at := bytes.IndexAny(text, "\u0085\u2028\u2029")
	if at < 0 {
		return 0, ""
	}
	r, _ := utf8.DecodeRune(text[at:])
	esc := `\N`
	switch r {
	case '\u2028':
		esc = `\L`
	case '\u2029':
		esc = `\P`
	}
	return at, fmt.Sprintf("character U+%04X is a line break to Cairn's YAML reader (YAML 1.1) and ordinary text to YAML 1.2 readers and editors, so the file would not mean what it shows: remove it (in a double-quoted string, write it as %s)", r, esc)
}

// nullItem finds a null item in the front matter's lists, or a null key in its mappings, and
// says where it is. Decoding into strings, yaml.v3 skips both, so without this check the item
// would vanish without a word (a phase left out, a gate that guards nothing).
func nullItem(doc *yaml.Node) (*yaml.Node, string) {
	for i := 0; i+1 < len(doc.Content); i += 2 {
		key, v := doc.Content[i].Value, resolveAlias(doc.Content[i+1])
		if n, at := nullIn(v); n != nil {
			return n, fmt.Sprintf("%s: item %d", key, at)
		}
		if n, where := nullInMapping(key, v, 0); n != nil {
			return n, where
		}
	}
	return nil, ""
}

// nullInMapping finds a null key, or a null item of a sequence value, in the mapping m under
// key, and in the mappings merged into it with "<<" (up to a few merges deep).
func nullInMapping(key string, m *yaml.Node, merges int) (*yaml.Node, string) {
	if m.Kind != yaml.MappingNode || merges > 8 {
		return nil, ""
	}
	for j := 0; j+1 < len(m.Content); j += 2 {
		k, v := m.Content[j], resolveAlias(m.Content[j+1])
		if k.ShortTag() == "!!merge" {
			merged := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				merged = v.Content
			}
			for _, mm := range merged {
				if n, where := nullInMapping(key, resolveAlias(mm), merges+1); n != nil {
					return n, where
				}
			}
			continue
		}
		if isNull(k) {
			return k, fmt.Sprintf("%s: key %d", key, j/2+1)
		}
		if n, at := nullIn(v); n != nil {
			return n, fmt.Sprintf("%s of %q: item %d", key, k.Value, at)
		}
	}
	return nil, ""
}

// nullIn returns the first null item of a sequence and its place (1-based).
func nullIn(seq *yaml.Node) (*yaml.Node, int) {
	if seq.Kind != yaml.SequenceNode {
		return nil, 0
	}
	for i, c := range seq.Content {
		if isNull(c) {
			return c, i + 1
		}
	}
	return nil, 0
}

func isNull(n *yaml.Node) bool {
	n = resolveAlias(n)
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

func (fm frontMatter) spec(body string) workflow.Definition {
	s := workflow.Definition{Name: fm.Name, Description: fm.Description, Phases: fm.Phases,
		Terminal: fm.Terminal, Verbs: fm.Verbs, Approvals: fm.Approvals, TTL: fm.TTL,
		Major: fm.Major, Blocking: fm.Blocking == nil || *fm.Blocking, Body: body}
	if fm.Transitions != nil {
		s.Transitions = make(map[string][]string, len(fm.Transitions))
		for k, v := range fm.Transitions {
			s.Transitions[k] = v
		}
	}
	return s
}

func yamlErrLine(msg string, offset int) int {
	m := yamlLineRE().FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0
	}
	return n + offset
}

func yamlErrReason(msg string, offset int) string {
	msg = yamlLineRE().ReplaceAllString(msg, "")
	// "already defined at line 3" counts from the front matter too.
	msg = yamlAtLineRE().ReplaceAllStringFunc(msg, func(m string) string {
		n, err := strconv.Atoi(strings.TrimPrefix(m, "at line "))
		if err != nil {
			return m
		}
		return fmt.Sprintf("at line %d", n+offset)
	})
	return strings.TrimPrefix(msg, "yaml: ")
}

// locator finds the file line of a key (or of a value inside a key's mapping or sequence).
type locator struct {
	doc    *yaml.Node
	offset int
	end    int // the line of the "---" that ends the front matter
}

func (l locator) End() int { return l.end }

func (l locator) Key(name string) int {
	if i := l.keyIndex(name); i >= 0 {
		return l.doc.Content[i].Line + l.offset
	}
	return 0
}

func (l locator) keyIndex(name string) int {
	for i := 0; i+1 < len(l.doc.Content); i += 2 {
		if l.doc.Content[i].Value == name {
			return i
		}
	}
	return -1
}

func (l locator) value(name string) *yaml.Node {
	if i := l.keyIndex(name); i >= 0 {
		return l.doc.Content[i+1]
	}
	return nil
}

// MapKey finds the line of key want (lowercased) in the mapping under name.
func (l locator) MapKey(name, want string) int {
	v := l.value(name)
	if v == nil || v.Kind != yaml.MappingNode {
		return l.Key(name)
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		if workflow.NormalizeName(v.Content[i].Value) == want {
			return v.Content[i].Line + l.offset
		}
	}
	return l.Key(name)
}

// Nth finds the line of the n-th (0-based) sequence item under name equal to want.
func (l locator) Nth(name, want string, n int) int {
	v := l.value(name)
	if v == nil || v.Kind != yaml.SequenceNode {
		return l.Key(name)
	}
	for _, c := range v.Content {
		if workflow.NormalizeName(c.Value) == want {
			if n == 0 {
				return c.Line + l.offset
			}
			n--
		}
	}
	return l.Key(name)
}

// Item finds the line of an entry of the key's value whose text, lowercased, is want: a
// sequence item, a mapping key, or an item of a mapping value's sequence.
func (l locator) Item(name, want string) int {
	v := l.value(name)
	if v == nil {
		return 0
	}
	var find func(n *yaml.Node) int
	find = func(n *yaml.Node) int {
		switch n.Kind {
		case yaml.ScalarNode:
			if workflow.NormalizeName(n.Value) == want {
				return n.Line
			}
		case yaml.SequenceNode, yaml.MappingNode:
			for _, c := range n.Content {
				if ln := find(c); ln > 0 {
					return ln
				}
			}
		}
		return 0
	}
	if ln := find(v); ln > 0 {
		return ln + l.offset
	}
	return l.Key(name)
}
