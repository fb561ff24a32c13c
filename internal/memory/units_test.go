package memory

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Claude Code cuts MEMORY.md at 25,000 UTF-16 units, not bytes. Cairn measured its room in
// bytes: in an index of CJK or accented text (three or two bytes a unit) its line, loaded where
// it stood, was taken for cut off and moved to the top at every write, above the person's
// lines and against where they put it. It counts units now: the line stays where Claude Code
// loads it, and where Claude Code would not (emoji: two units, four bytes) it still moves up.
func TestIndexRoomInUTF16Units(t *testing.T) {
	ours := IndexLine(TopicTitle, TopicFile, "Active APEX workflow: planning")
	next := IndexLine(TopicTitle, TopicFile, "Active APEX workflow: implementing")
	userLines := func(n int, pad string) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "- [笔记 %d](note-%d.md) — %s\n", i, i, pad)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name, users string
		stays       bool // Cairn's line at the end is loaded, and stays there
	}{
		{"CJK: past 24,000 bytes, within 24,000 units", userLines(100, strings.Repeat("记", 95)), true},
		{"accented: past 24,000 bytes, within 24,000 units", userLines(60, strings.Repeat("é", 290)), true},
		{"ASCII past the room", userLines(100, strings.Repeat("a", 260)), false},
		{"emoji, two units each: past 24,000 units", userLines(40, strings.Repeat("😀", 310)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := "# Memory\n" + tc.users + ours + "\n"
			got := SetEntry([]byte(in), TopicFile, next)
			atEnd := strings.HasSuffix(string(got), "\n"+next+"\n")
			if atEnd != tc.stays {
				t.Errorf("Cairn's line at the end after SetEntry: %t, want %t", atEnd, tc.stays)
			}
			if !slices.Contains(slices.Collect(claudeLoads(got)), next) {
				t.Errorf("Claude Code does not load Cairn's line where SetEntry put it")
			}
			// The same from a write that finds no line of Cairn's yet.
			got = SetEntry([]byte("# Memory\n"+tc.users), TopicFile, next)
			if strings.HasSuffix(string(got), "\n"+next+"\n") != tc.stays || !slices.Contains(slices.Collect(claudeLoads(got)), next) {
				t.Errorf("a new line: at the end %t (want %t), or not loaded", !tc.stays, tc.stays)
			}
			if entryIs([]byte(in), TopicFile, ours) != tc.stays || (loadedEntry([]byte(in), TopicFile) == ours) != tc.stays {
				t.Errorf("entryIs/loadedEntry of the line at the end: want loaded %t", tc.stays)
			}
		})
	}
}
