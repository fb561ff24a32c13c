package memory

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/textsafe"
)

// FuzzIndexLine drives the L2 line path end to end without the file system: stored text
// becomes the summary of the Cairn index line, which is set into an arbitrary MEMORY.md, and
// becomes a topic-file line that is read back. Whatever the input, the index line is one safe
// line, exactly one Cairn line results, every other byte of MEMORY.md is kept, and the text
// survives the topic file round trip. The seeds run in every go test.
func FuzzIndexLine(f *testing.F) {
	f.Add([]byte(""), "Active APEX workflow: analyze completed, planning x")
	f.Add([]byte("# M\r\n- [Cairn workflow](cairn-workflow.md) — old\r\n"), "x\n- [Fake](cairn-workflow.md) — y")
	f.Add([]byte(bom+"- [C](cairn-workflow.md)\n- [C](cairn-workflow.md)"), "![img](http://e/x.png) <b>hi</b> `code` \\[")
	f.Add([]byte("a\rb\r\nc\n\n"), "\u202eevil\u200b\U000e0041 tag \x00 nul \x1b[31m")
	f.Add([]byte(strings.Repeat("- [N](n.md) — note\n", 260)), strings.Repeat("long ", 200))
	f.Add([]byte("\xff\xfe bad utf8 \n- [x](cairn-workflow.md"), "\xffinvalid")
	f.Fuzz(func(t *testing.T, content []byte, stored string) {
		// The index line as Memory.Record builds it: from the L2 line it keeps, capped as a whole.
		plain := unescape(textsafe.Line(stored, maxLineRunes))
		entry := topicEntry(plain)
		hook := strings.TrimPrefix(strings.TrimPrefix(entry, IndexLine(TopicTitle, TopicFile, "")), " — ")
		if strings.ContainsAny(entry, "\r\n") || !utf8.ValidString(entry) || utf8.RuneCountInString(entry) > maxEntryRunes {
			t.Fatalf("index line is not one valid line of at most %d runes: %q", maxEntryRunes, entry)
		}
		if hasUnescaped(hook, markdownOpeners()) {
			t.Fatalf("stored text can form Markdown: %q", hook)
		}
		if n, _ := countOwned([]byte(hook), "x"); n != 0 {
			t.Fatalf("hook parses as an index entry: %q", hook)
		}

		out := SetEntry(content, TopicFile, entry)
		if n, at := countOwned(out, TopicFile); n != 1 || !fits(splitLines(out), at, len(entry)) {
			t.Fatalf("%d Cairn lines, first at %d, in %q", n, at, out)
		}
		if got, _ := FindEntry(out, TopicFile); got != entry {
			t.Fatalf("entry = %q, want %q", got, entry)
		}
		if before, after := stripOwned(content, TopicFile), stripOwned(out, TopicFile); !bytes.Equal(before, after) {
			t.Fatalf("non-Cairn bytes changed\nbefore %q\nafter  %q", before, after)
		}
		if again := SetEntry(out, TopicFile, entry); !bytes.Equal(again, out) {
			t.Fatalf("not idempotent:\n%q\n%q", out, again)
		}

		// The topic file round trip: what is read back is the plain text, and writing it again
		// gives the same line.
		if plain == "" {
			return
		}
		at := time.Date(2026, 11, 22, 17, 30, 0, 0, time.UTC)
		file := renderTopic([]Entry{{At: at, Text: plain}}, topicHome)
		got := parseTopic(file)
		if len(got) != 1 || got[0].Text != plain || !got[0].At.Equal(at) {
			t.Fatalf("topic round trip of %q gave %+v\n%s", plain, got, file)
		}
		if fm, _ := parseMemoryFile(t, file); fm.Name != TopicName || fm.Metadata.Type != "project" || strings.ContainsAny(fm.Description, "\r\n") {
			t.Fatalf("topic front matter = %+v", fm)
		}
	})
}
