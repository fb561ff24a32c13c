package engine

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/memory"
)

// notOwed's text says what was not written and not kept, whatever the write said before: a
// write that failed and was owed, none (only lines owed untried, after an older one owed), a
// line refused for good, or only the lines the write pushed past what Claude Code loads. It
// began "; nor could it be kept" when the write had said nothing, and said "it" of a line
// refused for good, or of the pushed lines.
func TestNotOwedText(t *testing.T) {
	t.Parallel()
	err := errors.New("l2-state.json could not be written: the disk is full")
	pushed := (&memory.PushedError{N: 2}).Error()
	for _, c := range []struct{ name, warning, want string }{
		{"a write owed", "auto-memory line not written" + retryNote + ": MEMORY.md is read-only",
			"auto-memory line not written: MEMORY.md is read-only; nor could it be kept to be retried: " + err.Error()},
		{"only untried lines", "", "an auto-memory line to be written later could not be kept: " + err.Error()},
		{"a line refused for good", "auto-memory line not written: it holds a secret",
			"auto-memory line not written: it holds a secret; an auto-memory line to be written later could not be kept: " + err.Error()},
		{"lines pushed", pushed, pushed + "; an auto-memory line to be written later could not be kept: " + err.Error()},
	} {
		if got := notOwed(c.warning, err); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
		if strings.HasPrefix(notOwed(c.warning, err), ";") {
			t.Errorf("%s: starts with a separator", c.name)
		}
	}
}
