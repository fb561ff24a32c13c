package memory

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/adrg/frontmatter"
	"gopkg.in/yaml.v3"

	"github.com/cairn-dev/cairn/internal/textsafe"
)

// The tests read what renderMemoryFile writes back with yaml.v3 and adrg/frontmatter, and
// check the body against the reading this package did before (adrg/frontmatter with yaml.v3).

// frontMatter is Claude Code's memory file header. The tests read headers back into it
// with yaml.v3.
type frontMatter struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Metadata    struct {
		Type string `yaml:"type"`
	} `yaml:"metadata"`
}

// yamlMatter is how this package read memory files before: adrg/frontmatter's "---" format
// with yaml.v3.
var yamlMatter = frontmatter.NewFormat("---", "---", yaml.Unmarshal)

// oldParse is the reading this package did before: on any error (no front matter, no closing
// line, YAML that does not decode into frontMatter) the body was the whole file.
func oldParse(data []byte) (frontMatter, []byte, error) {
	var fm frontMatter
	data = bytes.TrimPrefix(data, []byte(bom))
	rest, err := frontmatter.Parse(bytes.NewReader(data), &fm, yamlMatter)
	if err != nil {
		return frontMatter{}, data, err
	}
	return fm, rest, nil
}

// parseMemoryFile reads a memory file Cairn wrote: the header that splitMemoryFile finds,
// decoded by yaml.v3, and the body. It fails the test unless adrg/frontmatter with yaml.v3
// reads the same header and body.
func parseMemoryFile(t testing.TB, data []byte) (frontMatter, []byte) {
	t.Helper()
	head, body, ok := splitMemoryFile(data)
	if !ok {
		t.Fatalf("no front matter in %q", data)
	}
	var fm frontMatter
	if err := yaml.Unmarshal(head, &fm); err != nil {
		t.Fatalf("yaml.v3 cannot read the header: %v\n%s", err, data)
	}
	old, oldBody, err := oldParse(data)
	if err != nil || old != fm || !bytes.Equal(oldBody, body) {
		t.Fatalf("adrg/frontmatter reads %+v %q (err %v), the split %+v %q", old, oldBody, err, fm, body)
	}
	return fm, body
}

// quotedHeader is the header renderMemoryFile writes: three double-quoted values, one a line.
var quotedHeader = regexp.MustCompile(`^name: "[^"\n\\]*(?:\\.[^"\n\\]*)*"\ndescription: "[^"\n\\]*(?:\\.[^"\n\\]*)*"\nmetadata:\n    type: "[^"\n\\]*(?:\\.[^"\n\\]*)*"\n$`)

// claudeMatter is Claude Code's front matter pattern (2.1.330): the header ends at the first
// "---" anywhere after the opening line, not only on a line of its own.
var claudeMatter = regexp.MustCompile(`^---\s*\n([\s\S]*?)---\s*\n?`)

// claudeHead is the header Claude Code splits off (it drops a leading BOM first).
func claudeHead(data []byte) ([]byte, bool) {
	m := claudeMatter.FindSubmatch(bytes.TrimPrefix(data, []byte(bom)))
	if m == nil {
		return nil, false
	}
	return m[1], true
}

func header(name, desc, typ string) frontMatter {
	fm := frontMatter{Name: name, Description: desc}
	fm.Metadata.Type = typ
	return fm
}

// checkRendered renders fm and checks what every reader gets back: yaml.v3 after the split
// and adrg/frontmatter with yaml.v3 (parseMemoryFile) read the three values, less invalid
// UTF-8, and the body; Claude Code splits off the same header; and every value is one
// double-quoted line.
func checkRendered(t *testing.T, fm frontMatter) []byte {
	t.Helper()
	const body = "- 2026-11-22T17:30:00Z a line\n"
	file := renderMemoryFile(fm.Name, fm.Description, fm.Metadata.Type, body)
	want := header(strings.ToValidUTF8(fm.Name, "\uFFFD"), strings.ToValidUTF8(fm.Description, "\uFFFD"), strings.ToValidUTF8(fm.Metadata.Type, "\uFFFD"))
	got, gotBody := parseMemoryFile(t, file)
	if got != want || string(gotBody) != "\n"+body {
		t.Fatalf("read back %+v %q, want %+v\n%s", got, gotBody, want, file)
	}
	head, _, _ := splitMemoryFile(file)
	if ch, ok := claudeHead(file); !ok || !bytes.Equal(ch, head) {
		t.Fatalf("Claude Code's split finds the header %q, want %q\n%s", ch, head, file)
	}
	if !quotedHeader.Match(head) {
		t.Fatalf("a value is not one double-quoted line:\n%s", head)
	}
	return file
}

// trickyScalars are values yaml.v3 would write in each of its styles (plain, single-quoted,
// double-quoted), values a plain scalar would turn into another type, and text that needs an
// escape.
var trickyScalars = []string{
	// Plain.
	"a", "project", "user", "feedback", "reference", "cairn-learning-run-migrations-first",
	"Cairn workflow position for this project", "a:b", "a#b", "a  b", "-x", "?x", ":x", "<<", "=",
	"a...", "é", "日本語", "\u00a0", "a\u00a0", "\ue000", "\ud7ff", "\ufffd",
	"x\\y", "plan->implement", "a'b", `a"b`, "100%", "a@b", "1 day", "2026-01-01 release",
	"0x", "0b2", "0o8", "1:60", "1_", "_1", "+", "-.", ".", ".infinity", "1e", "1e3x",
	strings.Repeat("word ", 60) + "end", strings.Repeat("x", 300),
	// Single-quoted: plain would misparse, but the text is printable.
	" ", " a", "a ", "a: b", "a:", "it's: x", "a #b", "#a", ",a", "[a]", "]", "{a}", "}",
	"&a", "*a", "!a", "|a", ">a", "'a", `"a`, "%a", "@a", "`a", "-", "- x", "?", "? x",
	":", ": x", "...", "...x", "Cairn workflow position for this project: Active APEX workflow: analyze completed, planning x",
	"run migrations FIRST: Use make migrate-test now.", `\[link\]: \<b\>`, "Tom & Jerry: a -> b",
	strings.Repeat("long: ", 60),
	// Double-quoted: plain would read as another type.
	"", "yes", "no", "on", "off", "y", "n", "Y", "N", "YES", "Off", "true", "False", "NULL",
	"null", "~", "1", "-1", "+1", "1e3", "1E3", "1.", ".5", "-.5", "0x1F", "0X1f", "0o17",
	"0b101", "-0b101", "-0o7", "0b-1", "1_000", "1__0", "017", "089", "99999999999999999999",
	"-99999999999999999999", "1:20", "-1:20:30.5", "190:20:30", "2026-01-01", "2026-1-1",
	"2001-12-14t21:59:43.10-05:00", "2001-12-14T21:59:43Z", "2001-12-14 21:59:43.10",
	".inf", "-.Inf", "+.INF", ".nan", ".NaN",
	// Double-quoted: not printable, or a tab.
	"a\tb", "\ta", "a\rb", "a\u0085b", "a\x00b", "\x07\x08\x0b\x0c\x1b\x7f", "\u0080\u009f",
	"😀", "a😀b", "a\ufeffb", "\ufeff", "\ufffe", "\uffff", `a\"b	`, "yes\t",
	// Plain in yaml.v3 (it parses neither), which YAML 1.1 readers might not keep as text.
	"2026-13-45", "2001-12-14 21:59:43.10 -5",
	// The departures.
	"a\nb", "a\n", "\n", "a\r\nb", "a\u2028b", "a\u2029b", "---", "a---b", "a ---- b",
	"Title: |---|---|", "--- x", "\ufeffa", "\xff", "a\xffb", "\xc3(", "yes\xff",
}

func TestRenderReadsBack(t *testing.T) {
	for _, s := range trickyScalars {
		checkRendered(t, header(s, s, s))
		checkRendered(t, header("cairn-learning-x", s, "project"))
	}
}

// shortStrings is every string of up to n symbols from an alphabet of the characters a YAML
// reader's choice of type and style turns on, and every timestamp-like string of up to two
// more.
func shortStrings(n int) []string {
	var out []string
	var gen func(prefix string, alphabet []string, depth int)
	gen = func(prefix string, alphabet []string, depth int) {
		out = append(out, prefix)
		if depth == 0 {
			return
		}
		for _, c := range alphabet {
			gen(prefix+c, alphabet, depth-1)
		}
	}
	gen("", []string{"0", "1", "5", "9", "-", "+", ":", ".", "_", "e", "x", "o", "b", "t", "T", "Z", " ", "#", "'", "n", "y", "a", "é", "\t", "\x00"}, n)
	for _, p := range []string{"2001-1-1", "2001-12-14", "2001-12-14T21:59", "2001-12-14 2:5:4", "2001-12-14t21:59:43.1"} {
		gen(p, strings.Split("0 1 5 - + : . t T Z", " "), 2)
	}
	return out
}

// TestShortStringsReadBack reads every short string back.
func TestShortStringsReadBack(t *testing.T) {
	for _, s := range shortStrings(3) {
		checkRendered(t, header("n", s, "project"))
	}
}

// TestRenderStyles pins the bytes: always double quotes, escapes where needed.
func TestRenderStyles(t *testing.T) {
	tests := []struct{ in, want string }{
		{"project", `"project"`},
		{"a: b", `"a: b"`},
		{"it's: x", `"it's: x"`},
		{`say "hi" \ bye`, `"say \"hi\" \\ bye"`},
		{"yes", `"yes"`},
		{"", `""`},
		{"2026-01-01", `"2026-01-01"`},
		{"a\tb", `"a\tb"`},
		{"😀\x00\u0080\u00a0\u2028", `"\U0001F600\0\x80` + "\u00a0" + `\L"`},
		{"a\nb", `"a\nb"`},
		{"a---b", `"a--\x2Db"`},
		{"------- x", `"--\x2D--\x2D- x"`},
		{"\ufeffa", `"\uFEFFa"`},
		{"a\xffb", `"a` + "\ufffd" + `b"`},
	}
	for _, tc := range tests {
		if got := string(appendYAMLString(nil, tc.in)); got != tc.want {
			t.Errorf("appendYAMLString(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestCairnFilesReadBack renders files as Cairn writes them and checks that they read back
// and that the body, hence every L2 line, reads as before.
func TestCairnFilesReadBack(t *testing.T) {
	at := time.Date(2026, 11, 22, 17, 30, 0, 0, time.UTC)
	for _, s := range append([]string{"Active APEX workflow: analyze completed, planning x", "x", "Completed APEX for login fix: merged as abc123"}, trickyScalars...) {
		checkCairnFiles(t, at, s, s)
	}
}

// checkCairnFiles writes the topic file and a learning from stored text as Cairn does.
func checkCairnFiles(t *testing.T, at time.Time, title, text string) {
	t.Helper()
	var files [][]byte
	if plain := unescape(textsafe.Line(text, maxLineRunes)); plain != "" {
		files = append(files, renderTopic([]Entry{{At: at, Text: "first"}, {At: at, Text: plain}}, topicHome))
	}
	for _, typ := range []string{"user", "feedback", "project", "reference"} {
		if file, _, _, err := renderLearning(Learning{Title: title, Body: text, Type: typ}, LearningFile(title)); err == nil {
			files = append(files, file)
		}
	}
	for _, file := range files {
		fm, _ := parseMemoryFile(t, file) // also: adrg/frontmatter reads the same body
		checkRendered(t, fm)
		_, body, _ := splitMemoryFile(file)
		if _, oldBody, _ := oldParse(file); !bytes.Equal(body, oldBody) {
			t.Fatalf("body %q, was %q", body, oldBody)
		}
	}
}

// FuzzRenderMemoryFile: for any three strings, and for what Cairn makes of them, every reader
// gets the values back.
func FuzzRenderMemoryFile(f *testing.F) {
	f.Add("cairn-workflow", "Cairn workflow position for this project: Active APEX workflow", "project")
	f.Add("yes", "a: b #c", "0x1F")
	f.Add("- x", "it's", "2026-01-01")
	f.Add("\ufeffa", "a---b", "a\nb\u2028")
	f.Add("\xff", "😀\t\x00", " ")
	f.Fuzz(func(t *testing.T, name, desc, typ string) {
		checkRendered(t, header(name, desc, typ))
		checkCairnFiles(t, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), name, desc)
	})
}

// TestSplitMemoryFile covers adrg/frontmatter's delimiter rules and the broken-header choice.
func TestSplitMemoryFile(t *testing.T) {
	tests := []struct {
		name, in, head, body string
		ok                   bool
	}{
		{"plain", "---\nname: a\n---\n\nbody\n", "name: a\n", "\nbody\n", true},
		{"crlf", "---\r\nname: a\r\n---\r\nbody\r\n", "name: a\r\n", "body\r\n", true},
		{"bom", bom + "---\nname: a\n---\nbody", "name: a\n", "body", true},
		{"blank-lines-first", "\n \t\r\n---\nname: a\n---\nbody", "name: a\n", "body", true},
		{"delimiters-trimmed", "  ---  \nname: a\n\t--- \nbody", "name: a\n", "body", true},
		{"closing-at-eof", "---\nname: a\n---", "name: a\n", "", true},
		{"empty-header", "---\n---\nbody", "", "body", true},
		{"no-front-matter", "# Title\n---\nx\n---\n", "", "# Title\n---\nx\n---\n", false},
		{"bom-only-stripped", bom + "text\n", "", "text\n", false},
		{"no-closing", "---\nname: a\nbody\n", "", "---\nname: a\nbody\n", false},
		{"opening-at-eof", "---", "", "---", false},
		{"blank-then-eof", "\n\n", "", "\n\n", false},
		{"four-dashes", "----\nname: a\n----\n", "", "----\nname: a\n----\n", false},
		{"dashes-in-line", "---\nname: a---\n--- x\n---\nbody", "name: a---\n--- x\n", "body", true},
		{"broken-yaml", "---\nname: [a\n---\n- 2026-01-01T00:00:00Z x\n", "name: [a\n", "- 2026-01-01T00:00:00Z x\n", true},
	}
	for _, tc := range tests {
		head, body, ok := splitMemoryFile([]byte(tc.in))
		if string(head) != tc.head || string(body) != tc.body || ok != tc.ok {
			t.Errorf("%s: split = %q %q %v, want %q %q %v", tc.name, head, body, ok, tc.head, tc.body, tc.ok)
		}
	}
}

// TestBrokenHeaderBody pins the one change in reading: a header that is there but does not
// decode no longer makes the whole file the body, so its lines are not L2 lines.
func TestBrokenHeaderBody(t *testing.T) {
	file := []byte("---\nname: [cairn-workflow\n- 2026-01-01T00:00:00Z from the header\n---\n\n- 2026-01-02T00:00:00Z from the body\n")
	if _, body, err := oldParse(file); err == nil || !bytes.Equal(body, file) {
		t.Fatalf("old reading: %q, %v", body, err)
	}
	got := parseTopic(file)
	if len(got) != 1 || got[0].Text != "from the body" {
		t.Errorf("entries = %+v, want only the body's", got)
	}
}

// FuzzSplitMemoryFile: for any bytes, a file without front matter is its own body, and with
// yaml.v3 behind adrg/frontmatter (the reading before) the body is the same whenever the
// header decodes.
func FuzzSplitMemoryFile(f *testing.F) {
	for _, tc := range []string{
		"---\nname: a\n---\n\nbody\n", "---\r\nname: a\r\n---\r\n", bom + "---\n---", "\n\n---\nx\n",
		" \u0085\u00a0\n---\nname: a\n---\nb", "---\nname: [a\n---\nb", "x", "",
	} {
		f.Add([]byte(tc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		head, body, ok := splitMemoryFile(data)
		if !ok && (head != nil || !bytes.Equal(body, bytes.TrimPrefix(data, []byte(bom)))) {
			t.Fatalf("no front matter, yet the split is %q %q", head, body)
		}
		if _, oldBody, err := oldParse(data); err == nil && !bytes.Equal(body, oldBody) {
			t.Fatalf("with yaml.v3 the body was %q, now %q", oldBody, body)
		}
	})
}

// TestRenderReadByBun reads rendered headers as Claude Code does: its front matter pattern,
// then Bun.YAML.parse, the parser of the Bun that Claude Code 2.1.330 is built on (1.4.4).
// Set CAIRN_BUN_BIN to a bun executable to run it: `npm install @oven/bun-linux-x64@1.4.4`
// puts one in node_modules/@oven/bun-linux-x64/bin/bun.
func TestRenderReadByBun(t *testing.T) {
	bun := os.Getenv("CAIRN_BUN_BIN")
	if bun == "" {
		t.Skip("CAIRN_BUN_BIN is not set")
	}
	values := append(shortStrings(3), trickyScalars...)
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("aZ09 -:#?,'\"[]{}&*!|>%@`~.+_eExob\t\\/<=\u00a0é😀\u2028\ufeff\x00\x7f\r\n")
	for range 5000 {
		r := make([]rune, rng.IntN(12))
		for i := range r {
			r[i] = alphabet[rng.IntN(len(alphabet))]
		}
		values = append(values, string(r))
	}
	var files []string
	for _, v := range values {
		files = append(files, string(renderMemoryFile(v, v, v, "body\n")))
	}
	in, err := json.Marshal(files)
	if err != nil {
		t.Fatal(err)
	}
	const script = `
const pattern = /^---\s*\n([\s\S]*?)---\s*\n?/;
const out = JSON.parse(await Bun.stdin.text()).map((f) => {
	const e = f.charCodeAt(0) === 0xfeff ? f.slice(1) : f;
	const m = e.indexOf("---", 3) < 0 ? null : e.match(pattern);
	if (!m) return "no front matter";
	try {
		const v = Bun.YAML.parse(m[1] || "");
		return [v.name, v.description, v.metadata.type];
	} catch (err) {
		return "error: " + err;
	}
});
console.log(JSON.stringify(out));
`
	cmd := exec.Command(bun, "-e", script)
	cmd.Stdin = bytes.NewReader(in)
	outb, err := cmd.Output()
	if err != nil {
		t.Fatalf("bun: %v", err)
	}
	var got []any // each the three values, or what went wrong
	if err := json.Unmarshal(outb, &got); err != nil || len(got) != len(values) {
		t.Fatalf("bun output (%v): %.300s", err, outb)
	}
	for i, v := range values {
		want := strings.ToValidUTF8(v, "\uFFFD")
		if g, ok := got[i].([]any); !ok || len(g) != 3 || g[0] != want || g[1] != want || g[2] != want {
			t.Errorf("Bun reads %#v, want %q three times\n%s", got[i], want, files[i])
		}
	}
}
