package hook_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/hook"
	"github.com/cairn-dev/cairn/internal/report"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/cairn-dev/cairn/internal/textsafe"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/<name>, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run go test -update to create it): %v", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs (run go test -update after checking):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

func TestSessionStartOutput(t *testing.T) {
	tests := []struct {
		name, context, message string
	}{
		{"nothing", "", ""},
		{"report", "Cairn resume report\nworkflow apex at plan", ""},
		{"report-and-message", "Cairn resume report\nworkflow apex at plan", "Cairn: workflow apex expired\nand was archived"},
		{"message-only", "", "Cairn: the state directory is not writable"},
		{"blank-report", "\n\r\n", ""},
		{"html-is-not-escaped", "a <b> & c", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := hook.SessionStartOutput(tt.context, tt.message)
			golden(t, "sessionstart/"+tt.name+".json", got)
			if got == nil {
				return
			}
			var out struct {
				HookSpecificOutput *struct {
					HookEventName     string `json:"hookEventName"`
					AdditionalContext string `json:"additionalContext"`
				} `json:"hookSpecificOutput"`
			}
			if err := json.Unmarshal(got, &out); err != nil {
				t.Fatalf("output is not JSON: %v", err)
			}
			if out.HookSpecificOutput != nil && out.HookSpecificOutput.HookEventName != "SessionStart" {
				t.Fatalf("hookEventName = %q: Claude Code drops context without SessionStart", out.HookSpecificOutput.HookEventName)
			}
		})
	}
}

func TestStopOutput(t *testing.T) {
	tests := []struct {
		name            string
		block           bool
		reason, message string
	}{
		{"silent", false, "", ""},
		{"silent-reason-without-block", false, "ignored", ""},
		{"block", true, "Blocking violations: V-TEST-03 (HIGH) tests missing", ""},
		{"block-without-reason", true, "", ""},
		{"block-and-message", true, "fix V-TEST-03", "Cairn asked the agent to deal with 1 blocking violation"},
		{"message", false, "", "Cairn: L2 memory is not writable; position line not written"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			golden(t, "stop/"+tt.name+".json", hook.StopOutput(tt.block, tt.reason, tt.message))
		})
	}
}

func TestMessageOutput(t *testing.T) {
	if got := hook.MessageOutput(" \n "); got != nil {
		t.Fatalf("MessageOutput(blank) = %q, want nil", got)
	}
	golden(t, "message.json", hook.MessageOutput("Cairn: internal error\n(boom)"))
}

// The caps hold whatever the engine hands over: huge reports, one huge line, astral
// characters (two UTF-16 units each), invalid UTF-8 and control characters.
func TestCapsHold(t *testing.T) {
	fence := "```cairn-report-5f3a```"
	inputs := map[string]string{
		"many-lines":   fence + "\n" + strings.Repeat("phase analyze complete, outputs kept\n", 2000) + fence,
		"one-line":     strings.Repeat("x", 50000),
		"astral":       strings.Repeat("𝔸", 9000) + "\nend",
		"invalid-utf8": strings.Repeat("\xff\xfe a\x00\x1b[31m\n", 3000),
		"huge-last":    "head\n" + strings.Repeat("y", 40000),
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			out := hook.SessionStartOutput(in, in)
			if !utf8.Valid(out) {
				t.Fatal("output is not valid UTF-8")
			}
			var got struct {
				HookSpecificOutput struct {
					AdditionalContext string `json:"additionalContext"`
				} `json:"hookSpecificOutput"`
				SystemMessage string `json:"systemMessage"`
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			ctx := got.HookSpecificOutput.AdditionalContext
			if n := textsafe.Units(ctx); n > hook.MaxContext || n == 0 {
				t.Fatalf("additionalContext is %d units, want 1..%d", n, hook.MaxContext)
			}
			if n := textsafe.Units(got.SystemMessage); n > hook.MaxMessage {
				t.Fatalf("systemMessage is %d units, want at most %d", n, hook.MaxMessage)
			}
			if strings.Contains(got.SystemMessage, "\n") {
				t.Fatal("systemMessage spans lines")
			}
			if strings.ContainsAny(ctx, "\x00\x1b\r") {
				t.Fatalf("control characters left in context: %q", ctx[:min(len(ctx), 80)])
			}
			if !strings.Contains(ctx, "resume_check for the whole report") {
				t.Fatal("a cut report does not say where the rest is")
			}
			if name == "many-lines" && !strings.HasSuffix(ctx, fence) {
				t.Fatal("the closing fence (last line) was not kept")
			}
			stop := hook.StopOutput(true, in, "")
			var s struct{ Reason string }
			if err := json.Unmarshal(stop, &s); err != nil {
				t.Fatal(err)
			}
			if n := textsafe.Units(s.Reason); n > hook.MaxReason {
				t.Fatalf("reason is %d units, want at most %d", n, hook.MaxReason)
			}
		})
	}
}

// TestContextAndOneLine: Context keeps the lines (head and last, when cut), OneLine folds them
// into one; both drop what is invisible and cut to max units.
func TestContextAndOneLine(t *testing.T) {
	long := strings.Repeat("l1\nl2\nl3\nl4\n", 30) + "end" // 363 units
	cut := "… (cut from 363 characters: call mcp__plugin_cairn_cairn__resume_check for the whole report)"
	funcs := map[string]func(string, int) string{"Context": hook.Context, "OneLine": hook.OneLine}
	for _, tt := range []struct {
		fn, name, in string
		max          int
		want         string
	}{
		{"Context", "fits", "a\nb", 10, "a\nb"},
		{"Context", "crlf", "a\r\nb\rc\n\n", 10, "a\nb\nc"},
		{"Context", "tab-kept", "a\tb", 10, "a\tb"},
		{"Context", "controls-dropped", "a\x00b\x07c\u0085d", 10, "abcd"},
		{"Context", "zero-max", "abc", 0, ""},
		{"Context", "keeps-head-and-last", long, textsafe.Units(cut) + 13, "l1\nl2\nl3\n" + cut + "\nend"},
		{"Context", "tiny-cap", "0123456789abcdef", 5, "0123…"},
		{"OneLine", "plain", "Cairn: ok", 50, "Cairn: ok"},
		{"OneLine", "folds", "  a\n\n b\t c  ", 50, "a b c"},
		{"OneLine", "drops-invisible", "a\u200bb\u202ec\x1bd", 50, "abcd"},
		{"OneLine", "no-escaping", "see [x](y) `z`", 50, "see [x](y) `z`"},
		{"OneLine", "cut-keeps-both-ends", "abcdefghij", 5, "ab…ij"},
		{"OneLine", "keeps-the-step", "Cairn: it failed: " + strings.Repeat("x", 100) + "; try again", 40, "Cairn: it failed: …xxxxxxxx; try again"},
		// Words are not cut: the part left out moves earlier, so that the step keeps its
		// first word, and its start goes back to a word's start.
		{"OneLine", "cuts-at-words", "Cairn: the workflow state could not be written: writing the journal entry for the task update failed because the disk is full; tell the user to free space, then try again", 100,
			"Cairn: the workflow state could not be written: …full; tell the user to free space, then try again"},
		{"OneLine", "astral-cut", "𝔸𝔸𝔸", 4, "𝔸…"},
		{"OneLine", "invalid", "a\xffb", 5, "ab"},
		// A path is never cut in two: the part left out moves beside it, nearest the middle;
		// with no room beside it, the path goes whole.
		{"OneLine", "path-after-the-middle", "Cairn: snapshot damaged (" + strings.Repeat("x", 60) + ") and moved to quarantine/workflow-state.json-20261129T201042.494Z, where it is kept", 110,
			"Cairn: snapshot damaged (xxxxxxxxxxxxxxx…quarantine/workflow-state.json-20261129T201042.494Z, where it is kept"},
		{"OneLine", "path-in-the-middle", "Cairn: kept in quarantine/" + strings.Repeat("p", 30) + ", and " + strings.Repeat("y", 60) + "; look there", 80,
			"Cairn: kept in quarantine/pppppppppppppppppppppppppppppp, …yyyyyyyyy; look there"},
		{"OneLine", "file-name-kept", "Cairn: read workflow-state.json: " + strings.Repeat("y", 80) + " end", 60, "Cairn: read workflow-state.json: …yyyyyyyyyyyyyyyyyyyyyy end"},
		// Too long for any place that takes in no path: the fewest whole paths go, and the
		// next step (with its path) stays.
		{"OneLine", "whole-paths-go-the-step-stays", "Cairn: could not be opened: opening state directory " + longDir + ": " + longDir + " is a file, not a directory. Cairn left it untouched; move or rename it (for example to " + longDir + ".bak); Cairn then opens its state at its next hook", 200,
			"Cairn: could not be opened: opening state …untouched; move or rename it (for example to " + longDir + ".bak); Cairn then opens its state at its next hook"},
		{"OneLine", "no-room-for-the-path", "Cairn: kept in quarantine/" + strings.Repeat("p", 30) + ", and " + strings.Repeat("y", 60) + "; look there", 60,
			"Cairn: kept in …yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy; look there"},
		{"OneLine", "path-before-the-middle", "Cairn: moved to quarantine/workflow-state.json-20261129T201042.494Z (" + strings.Repeat("x", 60) + "); check the disk", 80,
			"Cairn: moved to quarantine/workflow-state.json-20261129T201042.494Z …the disk"},
		{"OneLine", "path-between-paths", "Cairn: a/b " + strings.Repeat("x", 40) + " c/d", 20, "Cairn: a/b …xxxx c/d"},
		{"OneLine", "no-room-beside-the-path", "Cairn: " + strings.Repeat("a/", 30) + " kept", 20, "Cairn: …kept"},
	} {
		t.Run(tt.fn+"/"+tt.name, func(t *testing.T) {
			if got := funcs[tt.fn](tt.in, tt.max); got != tt.want {
				t.Errorf("%s(%q, %d) =\n%q\nwant\n%q", tt.fn, tt.in, tt.max, got, tt.want)
			}
		})
	}
}

// OneLine keeps a long message's start and end: a start cut right after the body of a key
// glued to more text ("sk_live_...-x", no secret) is one. The start ends before that word.
func TestOneLineCutMakesNoSecret(t *testing.T) {
	head := "Cairn: task " + strings.Repeat("w", 40) + " "
	msg := head + secrettest.GluedKey(t, 100-len(head)+1) + " " + strings.Repeat("z", 300) + "; try again" // the start keeps 100 units
	if got := hook.OneLine(msg, 200); secrets.ScanString(got) != nil || !strings.HasPrefix(got, strings.TrimSuffix(head, " ")) || !strings.HasSuffix(got, "; try again") {
		t.Errorf("OneLine = %q", got)
	}
}

// longDir is a state directory under a long temp directory, as a test's.
const longDir = "/tmp/TestSomethingLong1234567890/001/project/.claude/cairn"

func FuzzContext(f *testing.F) {
	f.Add("a\nb\nc", 5)
	f.Add(strings.Repeat("𝔸\n", 20), 7)
	f.Add("Cairn: a/𝔸 "+strings.Repeat("𝔸", 9)+" c/d 𝔸/", 9)
	f.Fuzz(func(t *testing.T, s string, max int) {
		max = max%5000 + 1
		if max < 1 {
			max = -max + 1
		}
		got := hook.Context(s, max)
		if n := textsafe.Units(got); n > max {
			t.Fatalf("Context(_, %d) is %d units", max, n)
		}
		if !utf8.ValidString(got) {
			t.Fatal("invalid UTF-8")
		}
		line := hook.OneLine(s, max)
		if n := textsafe.Units(line); n > max || strings.ContainsAny(line, "\n\r") {
			t.Fatalf("OneLine(_, %d) = %q", max, line)
		}
	})
}

// The Stop block's reason is a fenced report (report.Render); the longest Render gives is
// passed on whole, so its closing fence and the next step after it are never cut off.
func TestStopReasonKeepsAWholeReport(t *testing.T) {
	var vs []report.Violation
	for i := range 8 {
		vs = append(vs, report.Violation{Code: fmt.Sprintf("V-%d", i), Severity: "HIGH", Details: strings.Repeat("the retry path is not tested. ", 12)})
	}
	in, _ := report.Render(report.Input{Tier: "Full", WorkflowID: "apex-1", Type: "apex", Phase: "review",
		Context: strings.Repeat("x", 200), Blocking: vs, Next: "Deal with them before finishing"})
	if len(in) < 1500 {
		t.Fatalf("the report is %d bytes: not long enough to test the cap", len(in))
	}
	var s struct{ Reason string }
	if err := json.Unmarshal(hook.StopOutput(true, in, ""), &s); err != nil {
		t.Fatal(err)
	}
	if s.Reason != strings.TrimSuffix(in, "\n") {
		t.Errorf("the reason was cut:\n%s", s.Reason)
	}
}
