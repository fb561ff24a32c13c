package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// The user's line is cut once, by the hook that prints it (hook.OneLine: between characters,
// in the UTF-16 units Claude Code counts). Resume cut it at 600 bytes too, which could split
// a character: the hook then dropped the broken bytes, and the message, in a language with
// accented names, lost a character and ended in "..." rather than "…".
func TestSystemMessageIsNotCutMidCharacter(t *testing.T) {
	t.Parallel()
	for pad := range 6 {
		t.Run(fmt.Sprint(pad), func(t *testing.T) {
			e := newEnv(t)
			// Broken definitions, whose names the user's line repeats, past 600 bytes.
			for i := range 8 {
				e.write(fmt.Sprintf(".claude/workflows/%02d%s%s.md", i, strings.Repeat("x", pad), strings.Repeat("é", 40)), "phases: [a, b]\n") // no front matter: broken, not documentation
			}
			res := e.openYAML(yamldoc.Codec{}).Resume(engine.ResumeOptions{})
			if !utf8.ValidString(res.SystemMessage) {
				t.Errorf("the user's line is not valid UTF-8: %q", res.SystemMessage)
			}
			if n := strings.Count(res.SystemMessage, "(not loaded until fixed)"); n != 8 {
				t.Errorf("the user's line names %d of the 8 broken definitions: %q", n, res.SystemMessage)
			}
		})
	}
}
