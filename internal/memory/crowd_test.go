package memory

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
)

// claudeLoadsJS is what Claude Code 2.1.330 loads of MEMORY.md, line by line: the content
// trimmed, its first 200 lines, then cut at the last line end before 25,000 UTF-16 units.
func claudeLoadsJS(content []byte) []string {
	s := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(content)), bom))
	if s == "" {
		return nil
	}
	ls := strings.Split(s, "\n")
	if len(ls) > 200 {
		ls = ls[:200]
	}
	s = strings.Join(ls, "\n")
	if u := utf16.Encode([]rune(s)); len(u) > 25_000 {
		cut := string(utf16.Decode(u[:25_000]))
		s = cut[:max(strings.LastIndex(cut, "\n"), 0)]
	}
	return strings.Split(s, "\n")
}

// A new learning's index line goes near the top of a MEMORY.md that is long, so that every
// session loads it: it must not push out of what Claude Code loads a line of the user's that
// it loaded before. Such a learning is refused, and MEMORY.md is left as it was.
func TestLearningPushesNoUserLineOut(t *testing.T) {
	userLines := func(n int, text string) string {
		var b strings.Builder
		for i := range n {
			b.WriteString("- [Note " + strconv.Itoa(i) + "](u" + strconv.Itoa(i) + ".md) — " + text + "\n")
		}
		return b.String()
	}
	exact := func(n, width int) string { // n lines of width characters each
		var b strings.Builder
		for i := range n {
			l := "- [Note " + strconv.Itoa(i) + "](u" + strconv.Itoa(i) + ".md) — "
			b.WriteString(l + strings.Repeat("a", width-len([]rune(l))) + "\n")
		}
		return b.String()
	}
	long := strings.Repeat("a", 480)
	wide := strings.Repeat("é", 400) // 800 bytes, 400 UTF-16 units
	for _, tc := range []struct {
		name    string
		index   string
		refused bool
	}{
		{"empty MEMORY.md", "", false},
		{"blank lines only", "\n\n", false},
		{"150 lines", userLines(150, "x"), false},
		{"195 lines", userLines(195, "x"), false},
		{"199 lines", userLines(199, "x"), false},
		{"200 lines", userLines(200, "x"), true},
		{"230 lines", userLines(230, "x"), true},
		{"under 25,000 units", userLines(45, long), false},
		{"25,000 characters, all loaded", exact(50, 499), true},
		{"cut within 25,000 characters, room to the cut", userLines(50, long+"aaaaaaaaaaaaaaa"), false},
		{"wide letters, 40,000 bytes but 20,000 units", userLines(25, wide+wide), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, dir := newTestMemory(t)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, IndexFile)
			if err := os.WriteFile(p, []byte(tc.index), 0o644); err != nil {
				t.Fatal(err)
			}
			before := claudeLoadsJS([]byte(tc.index))
			rec, err := m.RecordLearning(Learning{Title: "Deploys", Body: "run make deploy from the root"})
			after := []byte(readFile(t, p))
			if _, full := errors.AsType[*LearningsFullError](err); full {
				if !tc.refused {
					t.Fatalf("refused though every line still loads: %v", err)
				}
				if !bytes.Equal(after, []byte(tc.index)) {
					t.Fatal("a refused learning changed MEMORY.md")
				}
				if _, err := os.Lstat(filepath.Join(dir, LearningFile("Deploys"))); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("a refused learning left its file: %v", err)
				}
				if !strings.Contains(err.Error(), "push") {
					t.Errorf("the refusal does not say why: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.refused {
				t.Errorf("recorded, though it pushes the user's lines out")
			}
			loaded := claudeLoadsJS(after)
			if !slices.ContainsFunc(loaded, func(l string) bool { return owns(l, rec.Name) }) {
				t.Errorf("the learning's line is not loaded")
			}
			for _, l := range before {
				if !slices.Contains(loaded, l) {
					t.Errorf("the user's line %.40q is no longer loaded", l)
					break
				}
			}
		})
	}
}
