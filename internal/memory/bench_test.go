package memory

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkRecord is one L2 write as the Stop hook makes it: topic file and index line, each
// a synced temp file swapped in, under the default lock.
func BenchmarkRecord(b *testing.B) {
	m := New(Location{Dir: b.TempDir()}, Options{})
	for i := 0; b.Loop(); i++ {
		if err := m.Record(fmt.Sprintf("Active APEX workflow: step%d completed, implementing bench", i)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSetEntry is the pure MEMORY.md edit on a 250-line index.
func BenchmarkSetEntry(b *testing.B) {
	content := []byte("# Memory\n" + strings.Repeat("- [Note](note.md) — something remembered\n", 249))
	entry := IndexLine(TopicTitle, TopicFile, "Active APEX workflow: plan completed, implementing x")
	for b.Loop() {
		SetEntry(content, TopicFile, entry)
	}
}
