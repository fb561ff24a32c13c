package cli_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/textsafe"
)

// TestHumanOutputHasNoRawControls stores text full of terminal escapes, bidi overrides,
// zero-width, tag and other invisible characters in every field a person sees (context,
// notes, outputs, outcome, vars, checkpoint and log content), then runs every
// human-readable command: no output may carry one of those characters raw.
func TestHumanOutputHasNoRawControls(t *testing.T) {
	t.Parallel()
	nasty := "ctx\x1b[31mred\x1b[0m \u202eevil\u202c \u200bzw\u2066iso\u2069 tag\U000E0041 \u00adsoft \x07bell\rreturn\x7fdel \u0085nel \ufe0fvs \u061calm"
	p := newCLIProject(t)
	mustRun(t, p, "", "start", "apex", nasty)
	// A new task id with such a character would read as another task's: refused.
	if code, out := p.run("", "task", "t1"+"\u202e", "running"); code == 0 || !strings.Contains(out, "control or invisible") {
		t.Fatalf("a look-alike task id: exit %d: %s", code, out)
	}
	mustRun(t, p, "", "task", "t1", "running", "--note", nasty)
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

// TestJSONOutputHasNoRawControls: JSON output reaches terminals too (cairn show --json, a
// checkpoint or log printed to look at it). JSON lets DEL, C1 controls (U+009B is a CSI),
// bidi overrides and invisible characters stand raw in a string; every command's JSON carries
// them \u-escaped instead, which any JSON reader decodes to the same value.
func TestJSONOutputHasNoRawControls(t *testing.T) {
	t.Parallel()
	nasty := "ctx \u202eevil\u202c \u200bzw tag\U000E0041 \u00adsoft \x7fdel \u0085nel \u009b31m \ufe0fvs \u061calm"
	doc, err := json.Marshal(map[string]string{"n": nasty})
	if err != nil {
		t.Fatal(err)
	}
	p := newCLIProject(t)
	mustRun(t, p, "", "start", "apex", nasty)
	mustRun(t, p, "", "task", "t1", "running", "--note", nasty)
	mustRun(t, p, "", "vars", "set", "PLAN_NOTE", nasty)
	mustRun(t, p, "", "checkpoint", "save", "plan", string(doc))
	mustRun(t, p, "", "log", "append", "events", string(doc))
	commands := [][]string{{"status", "--json"}, {"list", "--json"}, {"show", "--json"}, {"history", "--json"},
		{"vars", "get", "PLAN_NOTE", "--json"}, {"vars", "export", "--json"}, {"checkpoint", "load", "plan"},
		{"log", "show", "events"}, {"log", "show", "events", "--json"}, {"transition", "plan", "--json"}}
	for _, args := range commands {
		code, out := p.run("", args...)
		if code != 0 {
			t.Fatalf("cairn %s: exit %d: %s", strings.Join(args, " "), code, out)
		}
		for i, r := range out {
			if r != '\n' && (r == utf8.RuneError || unicode.IsControl(r) || textsafe.Dropped(r)) {
				t.Errorf("cairn %s printed U+%04X raw at byte %d: %q", strings.Join(args, " "), r, i, out)
				break
			}
		}
		if args[0] != "status" && args[0] != "list" && args[0] != "history" && !strings.Contains(out, `\u202e`) {
			t.Errorf("cairn %s: the text is not there, escaped: %q", strings.Join(args, " "), out)
		}
	}
	// The escaped JSON is the same value.
	_, out := p.run("", "checkpoint", "load", "plan")
	var got map[string]string
	if err := json.Unmarshal([]byte(out), &got); err != nil || got["n"] != nasty {
		t.Errorf("checkpoint load gave %q (%v), want the saved value", out, err)
	}
	_, out = p.run("", "log", "show", "events")
	got = nil
	if err := json.Unmarshal([]byte(out), &got); err != nil || got["n"] != nasty {
		t.Errorf("log show gave %q (%v), want the appended value", out, err)
	}
}
