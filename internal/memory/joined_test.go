package memory

import "testing"

// TestLearningExtendedIsNotReplaced: a learning recorded again under its title with every line
// it held kept (a line added, or another learning joined to it, as the refusal of a full
// MEMORY.md says to do) replaces nothing: the result says so only when a line it held is gone,
// and then hands back all it held.
func TestLearningExtendedIsNotReplaced(t *testing.T) {
	tests := []struct {
		name, was, body string
		replaced        bool
	}{
		{"a line added after", "run go clean -cache\nafter a bump", "run go clean -cache\nafter a bump\nbody new", false},
		{"a learning joined before", "run go clean -cache", "the cache is shared\n\nrun go clean -cache", false},
		{"the same body", "run go clean -cache", "run go clean -cache", false},
		{"a line changed", "body 1\nbody 2", "body 1\nbody 22", true},
		{"a line dropped", "body 1\nbody 2", "body 1", true},
		{"another body", "body 1", "something else", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := newTestMemory(t)
			if _, err := m.RecordLearning(Learning{Title: "Build cache", Body: tt.was}); err != nil {
				t.Fatal(err)
			}
			rec, err := m.RecordLearning(Learning{Title: "Build cache", Body: tt.body})
			if err != nil {
				t.Fatal(err)
			}
			if rec.Replaced != tt.replaced {
				t.Errorf("Replaced = %v, want %v (Was %q)", rec.Replaced, tt.replaced, rec.Was)
			}
			if tt.replaced && rec.Was != tt.was {
				t.Errorf("Was = %q, want %q", rec.Was, tt.was)
			}
		})
	}
}
