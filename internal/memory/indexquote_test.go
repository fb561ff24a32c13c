package memory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/textsafe"
)

// A long L2 line loses part of a quoted context on MEMORY.md's line, not Cairn's own words
// after it: every quote stays closed, the outcome and ", archived" stay, and the line reads
// back as the position it shows.
func TestIndexLineShortensQuotes(t *testing.T) {
	long := strings.Repeat("word ", 40)
	ctx := textsafe.Quote(long, 120)
	for _, tc := range []struct {
		name, line string
		keep       []string // must be on the index line whole
	}{
		{"completed", "Completed APEX for " + ctx + ": " + textsafe.Quote("merged as abc123", 120), []string{"Completed APEX for “word", "”: “merged as abc123”"}},
		{"long outcome", "Completed APEX for " + textsafe.Quote("login fix", 120) + ": " + textsafe.Quote(long, 120), []string{"Completed APEX for “login fix”: “word"}},
		{"archived", "Abandoned APEX workflow at analyze for " + ctx + ", archived", []string{"Abandoned APEX workflow at analyze for “word", "”, archived"}},
		{"expired", "Expired DEBUG workflow at reproduce for " + ctx + ", archived", []string{"”, archived"}},
		{"position", "Active APEX workflow: analyze completed, planning " + ctx, []string{"Active APEX workflow: analyze completed, planning “word"}},
		{"short", "Completed APEX for “login fix”: “merged”", []string{"Completed APEX for “login fix”: “merged”"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, dir := newTestMemory(t)
			if err := m.Record(tc.line); err != nil {
				t.Fatal(err)
			}
			index := strings.TrimSuffix(readFile(t, filepath.Join(dir, IndexFile)), "\n")
			if n := utf8.RuneCountInString(index); n > maxEntryRunes {
				t.Errorf("index line has %d runes, over %d: %s", n, maxEntryRunes, index)
			}
			if strings.Count(index, "“") != strings.Count(index, "”") || !strings.HasSuffix(index, "”") && !strings.HasSuffix(index, ", archived") {
				t.Errorf("index line leaves a quote open or loses its end: %s", index)
			}
			for _, k := range tc.keep {
				if !strings.Contains(index, k) {
					t.Errorf("index line lost %q: %s", k, index)
				}
			}
			// Read back from the index line alone, as when the topic file is gone.
			hook := index[strings.Index(index, " — ")+len(" — "):]
			if err := os.Remove(filepath.Join(dir, TopicFile)); err != nil {
				t.Fatal(err)
			}
			last, ok, err := m.LastPosition()
			if err != nil || !ok || last.Text != hook || last.Source != IndexFile {
				t.Errorf("LastPosition = %+v, %v, %v; want %q from %s", last, ok, err, hook, IndexFile)
			}
		})
	}
}
