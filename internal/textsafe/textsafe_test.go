package textsafe_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/textsafe"
)

func TestLine(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"plain", "analyze the auth module", 80, "analyze the auth module"},
		{"empty", "", 10, ""},
		{"only-spaces", " \t\n\r ", 10, ""},
		{"newlines->space", "line one\nline two\r\nline three", 80, "line one line two line three"},
		{"tabs-and-runs-folded", "a\t\tb    c \v\f d", 80, "a b c d"},
		{"trimmed", "   padded   ", 80, "padded"},
		{"unicode-line-separators", "a\u2028b\u2029c\u0085d", 80, "a b c d"},
		{"nbsp-is-space", "a\u00a0\u00a0b", 80, "a b"},
		{"c0-dropped", "a\x00b\x07c\x1bd", 80, "abcd"},
		{"ansi-escape-dropped", "\x1b[31mred\x1b[0m", 80, `\[31mred\[0m`},
		{"del-and-c1-dropped", "a\x7fb\u0080c\u009bd", 80, "abcd"},
		{"bidi-dropped", "user\u202eexe.txt\u202c \u2066x\u2069 \u200e\u200f\u061c", 80, "userexe.txt x"},
		{"zero-width-dropped", "pa\u200bss\u200cwo\u200drd\u2060\ufeff", 80, "password"},
		{"tag-block-dropped", "hi\U000e0001\U000e0041\U000e0042\U000e007f\U000e0000!", 80, "hi!"},
		{"variation-selectors-dropped", "ok\ufe0f\U000e0100\U000e01ef.", 80, "ok."},
		{"soft-hyphen-dropped", "in\u00advisible", 80, "invisible"},
		{"invalid-utf8-dropped", "a\xffb\xc3(c\xed\xa0\x80d", 80, "ab(cd"},
		{"replacement-char-kept", "a\ufffdb", 80, "a\ufffdb"},
		{"link-escaped", "[click](https://evil.example/x)", 80, `\[click\](https://evil.example/x)`},
		{"image-escaped", "![img](https://evil.example/p.png?d=secret)", 80, `!\[img\](https://evil.example/p.png?d=secret)`},
		{"reference-escaped", "[x]: https://evil.example", 80, `\[x\]: https://evil.example`},
		{"autolink-escaped", "<https://evil.example>", 80, `\<https://evil.example>`},
		{"html-escaped", `<img src=x onerror="alert(1)">`, 80, `\<img src=x onerror="alert(1)">`},
		{"arrows-readable", "plan->implement => review", 80, "plan->implement => review"},
		{"leading-blockquote-escaped", "> quoted > not", 80, `\> quoted > not`},
		{"leading-blockquote-after-trim", " \u200b > x", 80, `\> x`},
		{"backticks-escaped", "run `rm x` then ```", 80, "run \\`rm x\\` then \\`\\`\\`"},
		{"backslash-escaped", `\[not escaped]`, 80, `\\\[not escaped\]`},
		{"fence-close-escaped", `</cairn-state nonce="x">`, 80, `\</cairn-state nonce="x">`},
		{"emphasis-kept", "PLAN_PATH *bold* ~x~ # h", 80, "PLAN_PATH *bold* ~x~ # h"},
		{"bare-url-kept", "see https://example.com/a_b", 80, "see https://example.com/a_b"},
		{"parens-kept", "review (done)", 80, "review (done)"},
		{"emoji-kept", "ship it 🚀 ✓ ünïcödé 日本", 80, "ship it 🚀 ✓ ünïcödé 日本"},
		{"cap-exact-fits", "abcde", 5, "abcde"},
		{"cap-cut", "abcdef", 5, "abcd…"},
		{"cap-cut-on-word-space", "abc def", 5, "abc…"},
		{"cap-one", "abc", 1, "…"},
		{"cap-one-fits", "a", 1, "a"},
		{"cap-zero", "abc", 0, ""},
		{"cap-negative", "abc", -3, ""},
		{"cap-counts-runes-not-bytes", "日本語日本語", 4, "日本語…"},
		{"cap-counts-escapes", "[[[[", 5, `\[\[…`},
		{"cap-never-splits-escape", "a[b", 3, "a…"},
		{"cap-two-with-escape", `\x`, 2, "…"},
		{"cap-after-fold", "a                  b", 3, "a b"},
		{"dropped-do-not-count", "a\u200b\u200b\u200b\u200bb", 2, "ab"},
		{"space-around-dropped-folds", "a \u200b b", 80, "a b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := textsafe.Line(tt.in, tt.max)
			if got != tt.want {
				t.Errorf("Line(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
			if err := checkLine(got, tt.max); err != "" {
				t.Errorf("Line(%q, %d) = %q: %s", tt.in, tt.max, got, err)
			}
		})
	}
}

// checkLine returns what is wrong with out as the output of Line(_, max), or "".
func checkLine(out string, max int) string {
	if !utf8.ValidString(out) {
		return "invalid UTF-8"
	}
	if n := utf8.RuneCountInString(out); n > max && !(max < 1 && n == 0) {
		return "over the rune cap"
	}
	if strings.HasPrefix(out, " ") || strings.HasSuffix(out, " ") {
		return "not trimmed"
	}
	if strings.Contains(out, "  ") {
		return "space run not folded"
	}
	rs := []rune(out)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case i == 0 && r == '>':
			return "leading > would open a block quote"
		case r == '\\':
			if i+1 >= len(rs) || !(textsafe.Escaped(rs[i+1]) || i == 0 && rs[1] == '>') {
				return "backslash that is not an escape"
			}
			i++ // the escaped character is literal
		case textsafe.Escaped(r):
			return "unescaped " + string(r) + ": Markdown syntax could form"
		case r != ' ' && isSpaceOrBreak(r):
			return "line break or non-ASCII space left"
		case textsafe.Dropped(r):
			return "forbidden character left"
		}
	}
	return ""
}

func isSpaceOrBreak(r rune) bool { return unicode.IsSpace(r) }

func TestLineBiggerInputs(t *testing.T) {
	long := strings.Repeat("word [x](y) ", 10000)
	got := textsafe.Line(long, 200)
	if err := checkLine(got, 200); err != "" {
		t.Fatalf("long input: %s: %q", err, got)
	}
	if !strings.HasSuffix(got, textsafe.Ellipsis) {
		t.Errorf("long input not marked as cut: %q", got)
	}
	if utf8.RuneCountInString(got) < 190 {
		t.Errorf("long input cut too short: %d runes", utf8.RuneCountInString(got))
	}
}

func FuzzLine(f *testing.F) {
	for _, s := range []string{
		"", "plain", "a\nb", "[x](y)", "![i](u)", "<b>", "`c`", `\`, `\\[`, "\u202e", "\U000e0041",
		"\xff\xfe", "日本語", "a \u200b b", `</cairn-state nonce="n">`, "  lead", "x\r\n\r\ny",
	} {
		f.Add(s, 10)
		f.Add(s, 1)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max > 1<<16 {
			max = 1 << 16
		}
		out := textsafe.Line(s, max)
		if err := checkLine(out, max); err != "" {
			t.Fatalf("Line(%q, %d) = %q: %s", s, max, out, err)
		}
		if max >= 1 && out == "" {
			// Only input with nothing visible may vanish.
			for _, r := range s {
				if r != utf8.RuneError && !textsafe.Dropped(r) && !isSpaceOrBreak(r) && r != ' ' {
					t.Fatalf("Line(%q, %d) lost all visible text", s, max)
				}
			}
		}
	})
}

func BenchmarkLine(b *testing.B) {
	s := strings.Repeat("Implement the [OAuth](x) flow\tfor <users> \u202e ", 8)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		textsafe.Line(s, 200)
	}
}

func TestOneLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"  plain  ", "plain"},
		{"a\n\tb\r\n  c", "a b c"},
		{"bidi \u202eevil\u202c and zero\u200bwidth", "bidi evil and zerowidth"},
		{"esc \x1b[31mred\x1b[0m", "esc [31mred[0m"},
		{"bad \xff utf8", "bad utf8"},
		{"a \u200b b", "a b"},
		{"[link](x) <b> `code`", "[link](x) <b> `code`"}, // nothing escaped: Line is for Markdown
	}
	for _, tt := range tests {
		if got := textsafe.OneLine(tt.in); got != tt.want {
			t.Errorf("OneLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestClip(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "ab…"},
		{"𝔸𝔸𝔸", 2, "𝔸…"},
		{"", 1, ""},
	} {
		if got := textsafe.Clip(tc.in, tc.max); got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

func TestLineQuoted(t *testing.T) {
	long := strings.Repeat("ab ", 30) // 90 runes
	for _, tc := range []struct {
		name, in string
		max      int
		want     string
	}{
		{"fits", "Completed X for “a”: “b”", 40, "Completed X for “a”: “b”"},
		{"longest cut first", "Done “" + long + "”: “kept whole”, archived", 60, "Done “ab ab ab ab ab ab ab ab ab a…”: “kept whole”, archived"},
		{"both cut alike", "Done “" + long + "”: “" + long + "”", 40, "Done “ab ab ab ab a…”: “ab ab ab ab a…”"},
		{"escapes counted", "Done “" + strings.Repeat("[x] ", 10) + "” ok", 30, `Done “\[x\] \[x\] \[x\]…” ok`},
		{"no quote: end cut", strings.Repeat("x", 50), 10, "xxxxxxxxx…"},
		{"unclosed quote: end cut", "Done “" + long, 20, "Done “ab ab ab ab a…"},
		{"words too long for quotes: end cut", strings.Repeat("y", 40) + " “" + long + "”", 30, strings.Repeat("y", 29) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := textsafe.LineQuoted(tc.in, tc.max)
			if got != tc.want {
				t.Errorf("LineQuoted(%q, %d) =\n%q\nwant\n%q", tc.in, tc.max, got, tc.want)
			}
			if n := utf8.RuneCountInString(got); n > tc.max {
				t.Errorf("%d runes, over %d", n, tc.max)
			}
		})
	}
}
