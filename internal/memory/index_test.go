package memory

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// stripOwned removes every index entry for target from content by the ownership rule
// SetEntry documents (a line and its terminator; a last unterminated line with the
// terminator before it), written independently of SetEntry so the two check each other. Lines
// are Claude Code's: each ends at "\n", with the "\r" before it.
func stripOwned(content []byte, target string) []byte {
	var out []byte
	pieces := bytes.SplitAfter(content, []byte("\n"))
	for k, p := range pieces {
		text := strings.TrimSuffix(strings.TrimSuffix(string(p), "\n"), "\r")
		if len(text) == len(p) {
			text = string(p) // unterminated: a "\r" it ends in is its own
		}
		isBOM := k == 0 && strings.HasPrefix(text, bom)
		if !owns(text, target) {
			out = append(out, p...)
			continue
		}
		if isBOM {
			out = append(out, bom...)
			continue
		}
		if k == len(pieces)-1 && len(text) == len(p) { // last, unterminated: drop the eol before it
			out = bytes.TrimSuffix(bytes.TrimSuffix(out, []byte("\n")), []byte("\r"))
		}
	}
	return out
}

func countOwned(content []byte, target string) (n, firstLine int) {
	firstLine = -1
	for i, l := range splitLines(content) {
		if owns(l.text, target) {
			if firstLine < 0 {
				firstLine = i
			}
			n++
		}
	}
	return n, firstLine
}

func numbered(n int, eol string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "- [Note %d](note-%d.md) — something the model remembered%s", i, i, eol)
	}
	return b.String()
}

func TestSetEntryGolden(t *testing.T) {
	entry := IndexLine(TopicTitle, TopicFile, "Active APEX workflow: analyze completed, planning the \\[login\\] fix")
	cairn := "- [Cairn workflow](cairn-workflow.md) — old summary"
	tests := []struct {
		name string
		in   []byte
	}{
		{"missing", nil},
		{"empty", []byte{}},
		{"one-line-no-eol", []byte("# Memory")},
		{"lines-250", []byte("# Project memory\n\n" + numbered(248, "\n"))},
		{"lines-250-cairn-at-230", []byte("# Project memory\n" + numbered(229, "\n") + cairn + "\n" + numbered(20, "\n"))},
		{"foreign-odd-endings", []byte(bom + "# Memory\r\n\r\n- [A](a.md) — crlf line\r\nold mac line\rtrailing\ttab \n\x00binary\xff\xfe bytes\n- no final newline")},
		{"cr-only", []byte("# Memory\r- [A](a.md) — x\r")},
		{"cr-inside-a-line", []byte("# Memory\n- [Notes](notes.md) — see\r[Cairn](cairn-workflow.md) for status\n")},
		{"hand-edited", []byte("# Memory\n\n* [Cairn  Workflow ](./cairn-workflow.md \"state\") -- edited by hand\n- [B](b.md) — kept\n")},
		{"hand-edited-angle-numbered", []byte("1. [cairn](<cairn-workflow.md>): numbered\n- [B](b.md)\n")},
		{"duplicate", []byte("- [A](a.md) — a\n" + cairn + "\n- [B](b.md) — b\n" + cairn + " again\r\n- [C](c.md) — c\n" + cairn)},
		{"cairn-first-with-bom", []byte(bom + cairn + "\n- [A](a.md)\n" + cairn + "\n")},
		{"mentions-but-not-entry", []byte("- [Notes](notes.md) — see [Cairn](cairn-workflow.md)\nprose about cairn-workflow.md\n")},
		{"big-bytes-short-lines", []byte("# M\n" + strings.Repeat(strings.Repeat("x", 999)+"\n", 30))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := SetEntry(tc.in, TopicFile, entry)

			golden := filepath.Join("testdata", "index", tc.name+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(out, want) {
				t.Errorf("SetEntry output differs from %s\n got %q\nwant %q", golden, out, want)
			}

			// Every byte Cairn does not own is unchanged.
			if before, after := stripOwned(tc.in, TopicFile), stripOwned(out, TopicFile); !bytes.Equal(before, after) {
				t.Errorf("non-Cairn bytes changed\nbefore %q\nafter  %q", before, after)
			}
			// Exactly one entry, the new one, where Claude Code loads it.
			n, at := countOwned(out, TopicFile)
			if n != 1 {
				t.Fatalf("%d Cairn entries, want 1", n)
			}
			if got, _ := FindEntry(out, TopicFile); got != entry {
				t.Errorf("entry = %q, want %q", got, entry)
			}
			if !fits(splitLines(out), at, len(entry)) {
				t.Errorf("entry at line %d is beyond what Claude Code loads", at+1)
			}
			// Idempotent: a second write changes nothing.
			if again := SetEntry(out, TopicFile, entry); !bytes.Equal(again, out) {
				t.Errorf("second SetEntry changed the file\nfirst  %q\nsecond %q", out, again)
			}
		})
	}
}

func TestSetEntryKeepsOtherTargets(t *testing.T) {
	in := []byte("- [Cairn workflow](cairn-workflow.md) — w\n- [Learn](cairn-learning-x.md) — l\n")
	out := SetEntry(in, "cairn-learning-x.md", "- [Learn](cairn-learning-x.md) — new")
	want := "- [Cairn workflow](cairn-workflow.md) — w\n- [Learn](cairn-learning-x.md) — new\n"
	if string(out) != want {
		t.Errorf("got %q, want %q", out, want)
	}
}

func TestRemoveEntry(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"middle", "a\n- [C](cairn-workflow.md)\nb\n", "a\nb\n"},
		{"last-unterminated", "a\r\n- [C](cairn-workflow.md)", "a"},
		{"bom-first", bom + "- [C](cairn-workflow.md)\n- [C](cairn-workflow.md)\nb\n", bom + "b\n"},
		{"only", "- [C](cairn-workflow.md)\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(RemoveEntry([]byte(tc.in), TopicFile)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSplitJoinRoundTrip(t *testing.T) {
	for _, s := range []string{"", "a", "a\n", "a\r\nb\rc\n\nd", "\r\r\n\n", bom + "x\r"} {
		if got := string(joinLines(splitLines([]byte(s)))); got != s {
			t.Errorf("round trip of %q gave %q", s, got)
		}
	}
}

// entryIs answers as comparing FindEntry's line does, for the lines Cairn writes.
func TestEntryIsFindEntry(t *testing.T) {
	mine := IndexLine(TopicTitle, TopicFile, "Active APEX workflow: plan completed, implementing \\[x\\]")
	other := IndexLine(TopicTitle, TopicFile, "an older summary")
	for _, content := range []string{
		"", "# Memory\n", mine, mine + "\n", "# Memory\n" + mine + "\n- [Note](note.md) — x\n",
		bom + mine + "\n", other + "\n" + mine + "\n", mine + "\n" + other + "\n",
		"* [hand edit](./cairn-workflow.md)\n" + mine + "\n", "- [Note](note.md) — " + mine + "\n",
		strings.ToUpper(mine) + "\n", mine + "\r\n", "x\r" + mine,
	} {
		e, ok := FindEntry([]byte(content), TopicFile)
		if got, want := entryIs([]byte(content), TopicFile, mine), ok && e == mine; got != want {
			t.Errorf("entryIs(%q) = %v, FindEntry gives %q, %v", content, got, e, ok)
		}
	}
	if !owns(mine, TopicFile) {
		t.Errorf("the line Cairn writes is not an entry for %s: %q", TopicFile, mine)
	}
}
