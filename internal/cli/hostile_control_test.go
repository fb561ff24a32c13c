package cli_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/textsafe"
)

// TestHumanOutputHasNoRawControls stores text full of terminal escapes, bidi overrides,
// zero-width, tag and other invisible characters in every field a person sees (context,
// notes, task ids, outputs, outcome, vars, checkpoint and log content), then runs every
// human-readable command: no output may carry one of those characters raw.
func TestHumanOutputHasNoRawControls(t *testing.T) {
	nasty := "ctx\x1b[31mred\x1b[0m \u202eevil\u202c \u200bzw\u2066iso\u2069 tag\U000E0041 \u00adsoft \x07bell\rreturn\x7fdel \u0085nel \ufe0fvs \u061calm"
	p := newCLIProject(t)
	mustRun(t, p, "", "start", "apex", nasty)
	mustRun(t, p, "", "task", "t1"+"\u202e", "running", "--note", nasty)
	mustRun(t, p, "", "transition", "plan", "--note", nasty, "--output", "out\u202e.md")
	mustRun(t, p, "", "vars", "set", "PLAN_NOTE", nasty)
	mustRun(t, p, "", "checkpoint", "save", "plan", `{"n":"\u001b[2J\u202e"}`)
	mustRun(t, p, "", "log", "append", "events", `{"n":"\u001b[2J\u202e"}`)
	mustRun(t, p, "", "archive")
	mustRun(t, p, "", "start", "debug", nasty)
	commands := [][]string{{"status"}, {"list"}, {"show"}, {"history"}, {"doctor"}, {"vars", "get", "PLAN_NOTE"},
		{"checkpoint", "list"}, {"expire", "--dry-run"}, {"complete", nasty}, {"list"}}
	for _, args := range commands {
		_, out := p.run("", args...)
		// vars get prints the value as stored, for scripts (like cat): not human output.
		if args[0] == "vars" {
			continue
		}
		for i, r := range out {
			if r == '\n' || r == '\t' {
				continue
			}
			if r == utf8.RuneError || unicode.IsControl(r) || textsafe.Dropped(r) {
				t.Errorf("cairn %s printed U+%04X at byte %d: %q", strings.Join(args, " "), r, i, out)
				break
			}
		}
	}
}
