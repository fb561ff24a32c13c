package memory

// Memory-file front matter: read with adrg/frontmatter, written by hand with every value
// double-quoted, so that no text can be read back as another type or end the header early.

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/adrg/frontmatter"
)

// rawHeader is the "---" format with the header handed back undecoded: Cairn reads only the
// body of memory files.
var rawHeader = frontmatter.NewFormat("---", "---", func(data []byte, v any) error {
	*v.(*[]byte) = data
	return nil
})

// splitMemoryFile splits a memory file, less a leading BOM, into the text between its front
// matter delimiters and the body after them, by adrg/frontmatter's rules. Without front
// matter, or without a closing line, ok is false and the body is the whole file.
//
// The header's YAML is not checked: a file whose header is there but broken yields the body
// after the closing line. That is what Claude Code itself does (2.1.330's front matter reader
// keeps the content after the closing "---" and drops the metadata when the YAML fails to
// parse), so Cairn reads the body the model is shown.
func splitMemoryFile(data []byte) (head, body []byte, ok bool) {
	data = bytes.TrimPrefix(data, []byte(bom))
	body, err := frontmatter.MustParse(bytes.NewReader(data), &head, rawHeader)
	if err != nil {
		return nil, data, false
	}
	return head, body, true
}

// renderMemoryFile writes Claude Code's memory file header (name, description and
// metadata.type, four-space indent, one line a field) and the body after a blank line.
func renderMemoryFile(name, description, typ, body string) []byte {
	b := make([]byte, 0, 64+len(name)+len(description)+len(typ)+len(body))
	b = append(b, "---\nname: "...)
	b = appendYAMLString(b, name)
	b = append(b, "\ndescription: "...)
	b = appendYAMLString(b, description)
	b = append(b, "\nmetadata:\n    type: "...)
	b = appendYAMLString(b, typ)
	b = append(b, "\n---\n\n"...)
	return append(b, body...)
}

// appendYAMLString appends s as a double-quoted scalar, always: no style to choose, and no
// text (yes, 1e3, 2026-01-01, ": ") that a plain scalar would turn into something else. Every
// YAML reader, yaml.v3 and Claude Code's (Bun's YAML 1.2 parser behind a
// `^---\s*\n([\s\S]*?)---` split), reads back the same string:
//   - "---" is written with every third dash of a run escaped (\x2D): Claude Code ends the
//     front matter at the first "---" anywhere, even inside a value;
//   - invalid UTF-8 becomes U+FFFD: no YAML string can hold the raw bytes;
//   - line breaks, tabs, controls and what lies beyond the Basic Multilingual Plane are
//     escaped, so a field stays on one line.
func appendYAMLString(b []byte, s string) []byte {
	return appendDoubleQuoted(b, strings.ToValidUTF8(s, "\uFFFD"))
}

// yamlPlain reports whether yaml.v3 writes r as it stands inside a double-quoted scalar: its
// is_printable for a valid rune, less line breaks, '"' and '\\'.
func yamlPlain(r rune) bool {
	return r >= 0x20 && r <= 0x7e && r != '"' && r != '\\' || r >= 0xa0 && r <= 0xd7ff && r != 0x2028 && r != 0x2029 ||
		r >= 0xe000 && r <= 0xfffd && r != 0xfeff
}

// appendDoubleQuoted writes s as a double-quoted scalar with yaml.v3's escapes (upper-case
// hex, the shortest of \x, \u and \U).
func appendDoubleQuoted(b []byte, s string) []byte {
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
		if yamlPlain(r) {
			b = utf8.AppendRune(b, r)
			continue
		}
		b = append(b, '\\')
		if i := strings.IndexRune(yamlEscaped, r); i >= 0 {
			b = append(b, yamlEscapes[utf8.RuneCountInString(yamlEscaped[:i])])
		} else if r <= 0xff {
			b = fmt.Appendf(b, "x%02X", r)
		} else if r <= 0xffff {
			b = fmt.Appendf(b, "u%04X", r)
		} else {
			b = fmt.Appendf(b, "U%08X", r)
		}
	}
	return append(b, '"')
}

// The runes yaml.v3 writes as a short escape, and the letter of each.
const (
	yamlEscaped = "\x00\a\b\t\n\v\f\r\x1b\"\\\u0085\u2028\u2029"
	yamlEscapes = "0abtnvfre\"\\NLP"
)
