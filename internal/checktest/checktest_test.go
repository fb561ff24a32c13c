package checktest_test

import (
	"testing"

	"github.com/cairn-dev/cairn/internal/checktest"
)

// TestRecorder: the check's errors are noted, not reported; Helper and Logf reach the test
// (they panicked on the nil TB the docs tests' own recorders embedded).
func TestRecorder(t *testing.T) {
	for _, c := range []struct {
		name  string
		check func(testing.TB)
		fails bool
	}{
		{"passes", func(tb testing.TB) { tb.Helper(); tb.Logf("looked") }, false},
		{"errorf", func(tb testing.TB) { tb.Helper(); tb.Errorf("wrong %d", 1) }, true},
		{"error", func(tb testing.TB) { tb.Error("wrong") }, true},
	} {
		rec := checktest.New(t)
		c.check(rec)
		if rec.Failed() != c.fails {
			t.Errorf("%s: Failed() = %v, want %v", c.name, rec.Failed(), c.fails)
		}
	}
}
