package memory

import (
	"os"
	"strings"
	"testing"
)

// An example of Cairn's index line in a fenced code block of MEMORY.md (a note on what the line
// looks like) is text: Cairn neither rewrites it nor counts it as its line, and the real line
// below it is the one kept, rewritten and removed.
func TestIndexLineInCodeFence(t *testing.T) {
	example := "- [Cairn workflow](cairn-workflow.md) — example"
	ours := IndexLine(TopicTitle, TopicFile, "real")
	next := IndexLine(TopicTitle, TopicFile, "next")
	for _, tc := range []struct {
		name, open, close string
	}{
		{"backticks", "```", "```"},
		{"backticks with info", "```markdown", "```"},
		{"tildes", "~~~", "~~~"},
		{"longer close", "````", "`````  "},
		{"indented", "   ```", "  ```"},
		{"crlf", "```\r", "```\r"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			block := "# Memory\n\nCairn's line looks like this:\n" + tc.open + "\n" + example + "\n" + tc.close + "\n"
			in := block + ours + "\n"
			if got, ok := FindEntry([]byte(in), TopicFile); !ok || got != ours {
				t.Errorf("FindEntry = %q, %v; want %q", got, ok, ours)
			}
			if got, want := string(SetEntry([]byte(in), TopicFile, next)), block+next+"\n"; got != want {
				t.Errorf("SetEntry:\n%s\nwant:\n%s", got, want)
			}
			if got := string(RemoveEntry([]byte(in), TopicFile)); got != block {
				t.Errorf("RemoveEntry:\n%s\nwant:\n%s", got, block)
			}
			if !entryIs([]byte(in), TopicFile, ours) || loadedEntry([]byte(in), TopicFile) != ours {
				t.Errorf("entryIs/loadedEntry do not see the line below the block")
			}
			// Only the example: Cairn's line is missing, and goes in after the block.
			if got, want := string(SetEntry([]byte(block), TopicFile, next)), block+next+"\n"; got != want {
				t.Errorf("SetEntry without a line:\n%s\nwant:\n%s", got, want)
			}
		})
	}
	// A fence nothing closes (a hand edit left it open) is text, not a block to the file's end:
	// Cairn's line below it is still Cairn's, rewritten in place, not added a second time.
	open := "# Memory\n```\nsome text\n" + ours + "\n"
	if got, want := string(SetEntry([]byte(open), TopicFile, next)), "# Memory\n```\nsome text\n"+next+"\n"; got != want {
		t.Errorf("SetEntry below a fence left open:\n%s\nwant:\n%s", got, want)
	}
	// A closed block after an unclosed fence of the same kind is still a block.
	twice := "~~~~\n~~~\n" + example + "\n~~~\n" + ours + "\n"
	if got, _ := FindEntry([]byte(twice), TopicFile); got != ours {
		t.Errorf("after an unclosed ~~~~ and a closed block: FindEntry = %q, want %q", got, ours)
	}
	// What a learning's refusal counts: the example is a line of another's, Cairn's line not.
	if n := othersLoaded([]byte("\n \n```\n"+example+"\n```\n"+ours+"\n"), TopicFile); n != 3 {
		t.Errorf("othersLoaded = %d, want 3 (the block's three lines)", n)
	}
	// Not fences: two backticks, four spaces of indent, a backtick fence with a backtick after it.
	for _, notFence := range []string{"``", "    ```", "``` a`b"} {
		in := notFence + "\n" + ours + "\n"
		if got, _ := FindEntry([]byte(in), TopicFile); got != ours {
			t.Errorf("after %q: FindEntry = %q, want %q", notFence, got, ours)
		}
	}
}

// uninstall's footprint and removal leave the example alone.
func TestRemoveCairnKeepsFencedExample(t *testing.T) {
	m, dir := newTestMemory(t)
	if err := m.Record("Active APEX workflow: planning"); err != nil {
		t.Fatal(err)
	}
	block := "```\n- [Cairn workflow](cairn-workflow.md) — example\n```\n"
	if err := os.WriteFile(dir+"/"+IndexFile, []byte(block+readFile(t, dir+"/"+IndexFile)), 0o600); err != nil {
		t.Fatal(err)
	}
	fp, err := m.Footprint()
	if err != nil || len(fp.Lines) != 1 || strings.Contains(fp.Lines[0], "example") {
		t.Fatalf("Footprint lines = %q, %v; want only Cairn's line", fp.Lines, err)
	}
	if _, err := m.RemoveCairn(nil); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, dir+"/"+IndexFile); got != block {
		t.Errorf("MEMORY.md after RemoveCairn:\n%s\nwant:\n%s", got, block)
	}
}

// An example of Cairn's index line in an HTML comment or an indented code block of MEMORY.md is
// text as it is in a fenced block: Cairn neither rewrites it nor takes it for its line.
func TestIndexLineInCommentOrIndentedCode(t *testing.T) {
	example := "- [Cairn workflow](cairn-workflow.md) — example"
	ours := IndexLine(TopicTitle, TopicFile, "real")
	next := IndexLine(TopicTitle, TopicFile, "next")
	for _, tc := range []struct{ name, block string }{
		{"comment", "# Memory\n<!--\n" + example + "\n-->\n"},
		{"comment opened after text", "# Memory\nnote <!-- was:\n" + example + "\nend -->\n"},
		{"second comment on the line", "<!-- a --> <!-- b\n" + example + "\n-->\n"},
		{"indented", "# Memory\n\n    " + example + "\n\n"},
		{"tab indented", "Cairn's line:\n\n\t" + example + "\n"},
		{"indented at the top", "    " + example + "\n"},
		{"indented with a blank line inside", "text\n\n    a\n\n    " + example + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.block + ours + "\n"
			if got, ok := FindEntry([]byte(in), TopicFile); !ok || got != ours {
				t.Errorf("FindEntry = %q, %v; want %q", got, ok, ours)
			}
			if got, want := string(SetEntry([]byte(in), TopicFile, next)), tc.block+next+"\n"; got != want {
				t.Errorf("SetEntry:\n%s\nwant:\n%s", got, want)
			}
			if got := string(RemoveEntry([]byte(in), TopicFile)); got != tc.block {
				t.Errorf("RemoveEntry:\n%s\nwant:\n%s", got, tc.block)
			}
			if got, want := string(SetEntry([]byte(tc.block), TopicFile, next)), tc.block+next+"\n"; got != want {
				t.Errorf("SetEntry without a line:\n%s\nwant:\n%s", got, want)
			}
		})
	}
	// Still Cairn's line: a comment closed on its own line, one nothing closes (a hand edit
	// left it open), a line indented under a list item (a nested item, not code), and an
	// indented line right below text (a continuation, which cannot start a code block).
	for _, in := range []string{
		"<!-- note -->\n" + ours + "\n",
		"<!-- note\n" + ours + "\n",
		ours + " <!-- see below\n",
		// Escaped, as Cairn's lines carry it (a learning titled "the <!-- parser"): no
		// comment, and the lines below it are entries.
		"- [The \\<!-- parser](cairn-learning-the-parser.md) — x\n" + ours + "\n- [x](a.md) -->\n",
		"- Projects\n\n    " + ours + "\n",
		"Some text\n    " + ours + "\n",
	} {
		if got, _ := FindEntry([]byte(in), TopicFile); !strings.Contains(got, ours) {
			t.Errorf("in %q: FindEntry = %q, want Cairn's line", in, got)
		}
	}
}
