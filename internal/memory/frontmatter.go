package memory

// Memory-file front matter without a YAML library.
//
// The hook binaries link this package and start at every Claude Code session start and after
// every turn. adrg/frontmatter (which brings BurntSushi/toml, whose init reads /etc/localtime,
// and yaml.v2) and yaml.v3 together cost about 0.15-0.3 ms of package init and binary size on
// each start, for a header of three fixed string fields. So this file splits the header off
// by the same delimiter rules adrg/frontmatter applies, and writes the three values as YAML
// scalars the way yaml.v3's Marshal chose to. The YAML libraries stay where the full binaries
// parse YAML written by people; the tests check this file against both of them.

import (
	"bytes"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// frontMatter is Claude Code's memory file header. The tags name the keys for the tests,
// which read headers back with yaml.v3.
type frontMatter struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Metadata    struct {
		Type string `yaml:"type"`
	} `yaml:"metadata"`
}

// splitMemoryFile splits a memory file, less a leading BOM, into the text between its front
// matter delimiters and the body after them. The rules are adrg/frontmatter's for "---": blank
// lines (after bytes.TrimSpace) may come first; the first other line, trimmed, must be "---"
// and must end in a newline; the front matter ends at the next line that trims to "---", which
// may be the last line without a newline. CRLF needs nothing of its own: the CR goes with the
// trimming. Without front matter, or without a closing line, ok is false and the body is the
// whole file.
//
// Unlike the old adrg/frontmatter + yaml.v3 reading, the header's YAML is not checked: a file
// whose header is there but broken yields the body after the closing line, where the old
// reading fell back to the whole file. That is what Claude Code itself does (2.1.330's front
// matter reader keeps the content after the closing "---" and drops the metadata when the
// YAML fails to parse), so Cairn reads the body the model is shown; the lines of a broken header are not
// L2 lines anyway. Files Cairn writes always have a valid header, so their body is unchanged.
func splitMemoryFile(data []byte) (head, body []byte, ok bool) {
	data = bytes.TrimPrefix(data, []byte(bom))
	start := -1 // offset just past the opening line, once found
	for off := 0; ; {
		nl := bytes.IndexByte(data[off:], '\n')
		if start < 0 && nl < 0 {
			return nil, data, false // adrg/frontmatter stops at a last line without a newline
		}
		end := len(data)
		if nl >= 0 {
			end = off + nl + 1
		}
		line := bytes.TrimSpace(data[off:end])
		switch {
		case start < 0 && len(line) == 0:
		case start < 0 && string(line) == "---":
			start = end
		case start < 0:
			return nil, data, false
		case string(line) == "---":
			return data[start:off], data[end:], true
		case nl < 0:
			return nil, data, false // no closing line
		}
		off = end
	}
}

// memoryBody is the body of a memory file: what follows the front matter, or the whole file.
func memoryBody(data []byte) []byte {
	_, body, _ := splitMemoryFile(data)
	return body
}

// renderMemoryFile writes the header as yaml.Marshal(fm) did (yaml.v3: four-space indent, no
// line folding) and the body after a blank line.
func renderMemoryFile(fm frontMatter, body string) []byte {
	b := make([]byte, 0, 64+len(fm.Name)+len(fm.Description)+len(fm.Metadata.Type)+len(body))
	b = append(b, "---\nname: "...)
	b = appendYAMLString(b, fm.Name)
	b = append(b, "\ndescription: "...)
	b = appendYAMLString(b, fm.Description)
	b = append(b, "\nmetadata:\n    type: "...)
	b = appendYAMLString(b, fm.Metadata.Type)
	b = append(b, "\n---\n\n"...)
	return append(b, body...)
}

// appendYAMLString appends s as the scalar value of a block mapping entry. The style is the
// one yaml.v3's Marshal picks, so that files written before keep their bytes: plain when the
// text cannot be read as anything else; single-quoted when plain would misparse (an indicator
// in front, ": " or " #" inside, a space at either end) but the text is printable; otherwise
// double-quoted with escapes, which is also how text is quoted that a plain scalar would turn
// into a bool, null, number or timestamp. yaml.v3 does not fold long scalars (its line width is
// unlimited), so neither does this.
//
// It departs from yaml.v3 in four cases, each time so that yaml.v3 and Claude Code (Bun's
// YAML 1.2 parser behind a `^---\s*\n([\s\S]*?)---` split) read back the same string. Only
// the first can occur in what Cairn writes (textsafe.Line output):
//   - text holding "---" is double-quoted with every third dash of a run escaped (\x2D):
//     Claude Code ends the front matter at the first "---" anywhere, even inside a value, so
//     with yaml.v3's bytes (say, for a description quoting a Markdown table rule) it lost
//     the whole header;
//   - invalid UTF-8 becomes U+FFFD: yaml.v3 would write a !!binary tag, which Claude Code
//     reads as bytes rather than a string, and no YAML string can hold the raw bytes;
//   - LF, LS and PS are escaped in a double-quoted scalar, as yaml.v3 does CR and NEL, where
//     it writes a literal block or a single-quoted scalar running over lines: one line per
//     field keeps the header easy to read, by eye and by line-based tools;
//   - text starting with a BOM escapes only that BOM (yaml.v3 escapes every character then).
func appendYAMLString(b []byte, s string) []byte {
	s = strings.ToValidUTF8(s, "\uFFFD")
	plain, single := scalarStyles(s)
	switch {
	case plain:
		return append(b, s...)
	case single:
		b = append(b, '\'')
		for i := 0; i < len(s); i++ {
			if s[i] == '\'' {
				b = append(b, '\'')
			}
			b = append(b, s[i])
		}
		return append(b, '\'')
	}
	return appendDoubleQuoted(b, s)
}

// scalarStyles reports whether s may be written plain, and failing that single-quoted, as
// yaml.v3 decides it for a block mapping value (encoder.stringv, then the emitter's
// analyze_scalar and select_scalar_style), with the departures appendYAMLString lists.
func scalarStyles(s string) (plain, single bool) {
	if strings.Contains(s, "---") {
		return false, false
	}
	if !resolvesToString(s) {
		// yaml.v3 goes straight to double quotes for text that would resolve to another type.
		return false, false
	}
	plain, single = true, true
	if strings.HasPrefix(s, "...") {
		plain = false // a document end marker
	}
	blankBefore := true
	for i, r := range s {
		next := i + utf8.RuneLen(r)
		blankAfter := next == len(s) || s[next] == ' ' || s[next] == '\t'
		if i == 0 {
			switch r {
			case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
				plain = false
			case '?', ':', '-':
				if blankAfter {
					plain = false
				}
			}
		} else if r == ':' && blankAfter || r == '#' && blankBefore {
			plain = false
		}
		switch {
		case r == ' ':
			if i == 0 || next == len(s) {
				plain = false
			}
		case !yamlPrintable(r) || isYAMLBreak(r): // a tab is not printable either
			return false, false
		}
		blankBefore = r == ' ' // tabs, breaks and NUL, blank to yaml.v3 too, returned above
	}
	return plain, single
}

// yamlPrintable is yaml.v3's is_printable for a valid rune: what it writes unescaped. Note
// that it escapes everything beyond the Basic Multilingual Plane (emoji among it).
func yamlPrintable(r rune) bool {
	return r == '\n' || r >= 0x20 && r <= 0x7e || r >= 0xa0 && r <= 0xd7ff ||
		r >= 0xe000 && r <= 0xfffd && r != 0xfeff
}

func isYAMLBreak(r rune) bool {
	return r == '\n' || r == '\r' || r == 0x85 || r == 0x2028 || r == 0x2029
}

// appendDoubleQuoted writes s as a double-quoted scalar with yaml.v3's escapes (upper-case
// hex, the shortest of \x, \u and \U).
func appendDoubleQuoted(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	b = append(b, '"')
	dashes := 0 // dashes just written unescaped
	for _, r := range s {
		if r == '-' {
			if dashes == 2 {
				b = append(b, `\x2D`...)
				dashes = 0
				continue
			}
			dashes++
		} else {
			dashes = 0
		}
		if yamlPrintable(r) && !isYAMLBreak(r) && r != '"' && r != '\\' {
			b = utf8.AppendRune(b, r)
			continue
		}
		b = append(b, '\\')
		if i := strings.IndexRune(yamlEscaped, r); i >= 0 {
			b = append(b, yamlEscapes[utf8.RuneCountInString(yamlEscaped[:i])])
		} else {
			n := 8
			switch {
			case r <= 0xff:
				b, n = append(b, 'x'), 2
			case r <= 0xffff:
				b, n = append(b, 'u'), 4
			default:
				b = append(b, 'U')
			}
			for k := (n - 1) * 4; k >= 0; k -= 4 {
				b = append(b, hex[r>>k&0xf])
			}
		}
	}
	return append(b, '"')
}

// The runes yaml.v3 writes as a short escape, and the letter of each.
const (
	yamlEscaped = "\x00\a\b\t\n\v\f\r\x1b\"\\\u0085\u2028\u2029"
	yamlEscapes = "0abtnvfre\"\\NLP"
)

// resolvesToString reports whether yaml.v3 would read s, written plain, back as the string s
// and would also write it plain (it quotes YAML 1.1 booleans and base 60 floats too, so that
// YAML 1.1 readers agree). It follows yaml.v3's resolve: a first-character hint, a table of
// special words, then timestamps, integers and floats.
func resolvesToString(s string) bool {
	if s == "" {
		return false // null
	}
	switch s {
	case "true", "True", "TRUE", "false", "False", "FALSE", "~", "null", "Null", "NULL",
		".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF",
		"y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "n", "N", "no", "No", "NO", "off", "Off", "OFF":
		return false
	}
	switch c := s[0]; {
	case c == '.':
		_, err := strconv.ParseFloat(s, 64)
		return err != nil
	case c == '+' || c == '-' || c >= '0' && c <= '9':
		return !isYAMLNumberOrTime(s) && !isBase60Float(s)
	}
	return true
}

// isYAMLNumberOrTime is the digit-or-sign branch of yaml.v3's resolve.
func isYAMLNumberOrTime(s string) bool {
	if isYAMLTimestamp(s) {
		return true
	}
	plain := strings.ReplaceAll(s, "_", "")
	if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return true
	}
	if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return true
	}
	if isYAMLStyleFloat(plain) {
		if _, err := strconv.ParseFloat(plain, 64); err == nil {
			return true
		}
	}
	for _, p := range []struct {
		prefix string
		base   int
	}{{"0b", 2}, {"0o", 8}} {
		if digits, ok := strings.CutPrefix(plain, p.prefix); ok {
			if _, err := strconv.ParseInt(digits, p.base, 64); err == nil {
				return true
			}
			if _, err := strconv.ParseUint(digits, p.base, 64); err == nil {
				return true
			}
		} else if digits, ok := strings.CutPrefix(plain, "-"+p.prefix); ok {
			if _, err := strconv.ParseInt("-"+digits, p.base, 64); err == nil {
				return true
			}
		}
	}
	return false
}

// isYAMLTimestamp is yaml.v3's parseTimestamp: four digits and a dash, then one of the
// layouts it tries.
func isYAMLTimestamp(s string) bool {
	if len(s) < 5 || s[4] != '-' {
		return false
	}
	for i := range 4 {
		if !isDigit(s[i]) {
			return false
		}
	}
	for _, layout := range []string{"2006-1-2T15:4:5.999999999Z07:00", "2006-1-2t15:4:5.999999999Z07:00", "2006-1-2 15:4:5.999999999", "2006-1-2"} {
		if _, err := time.Parse(layout, s); err == nil {
			return true
		}
	}
	return false
}

// isYAMLStyleFloat matches yaml.v3's ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
// (written out: package regexp would be compiled on each render).
func isYAMLStyleFloat(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	if i < len(s) && s[i] == '.' {
		i++
		if n := digitRun(s[i:]); n > 0 {
			i += n
		} else {
			return false
		}
	} else {
		n := digitRun(s[i:])
		if n == 0 {
			return false
		}
		i += n
		if i < len(s) && s[i] == '.' {
			i++
			i += digitRun(s[i:])
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		n := digitRun(s[i:])
		if n == 0 {
			return false
		}
		i += n
	}
	return i == len(s)
}

// isBase60Float matches yaml.v3's ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$: YAML
// 1.1 sexagesimal numbers such as 1:30, which yaml.v3 quotes for YAML 1.1 readers.
func isBase60Float(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	if i == len(s) || !isDigit(s[i]) {
		return false
	}
	for i++; i < len(s) && (isDigit(s[i]) || s[i] == '_'); i++ {
	}
	groups := 0
	for i < len(s) && s[i] == ':' {
		// [0-5]?[0-9]: one digit, or two with the first at most 5.
		n := digitRun(s[i+1:])
		if n == 0 || n > 2 || n == 2 && s[i+1] > '5' {
			return false
		}
		i += 1 + n
		groups++
	}
	if groups == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && (isDigit(s[i]) || s[i] == '_'); i++ {
		}
	}
	return i == len(s)
}

func digitRun(s string) int {
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return n
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
