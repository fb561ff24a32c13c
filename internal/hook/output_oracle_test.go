package hook_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/hook"
)

// The oracle: the outputs as encoding/json wrote them before the hand-written writer, frozen
// here as the definition of the bytes the hooks must print.

const oracleDefaultReason = "Cairn: the active workflow has blocking violations; deal with them, or tell the user why not, before stopping."

func oracleSessionStartOutput(additionalContext, systemMessage string) []byte {
	type specific struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	}
	var out struct {
		HookSpecificOutput *specific `json:"hookSpecificOutput,omitempty"`
		SystemMessage      string    `json:"systemMessage,omitempty"`
	}
	if c := hook.Context(additionalContext, hook.MaxContext); c != "" {
		out.HookSpecificOutput = &specific{HookEventName: "SessionStart", AdditionalContext: c}
	}
	out.SystemMessage = hook.OneLine(systemMessage, hook.MaxMessage)
	if out.HookSpecificOutput == nil && out.SystemMessage == "" {
		return nil
	}
	return oracleEncode(out)
}

func oracleStopOutput(block bool, reason, systemMessage string) []byte {
	var out struct {
		Decision      string `json:"decision,omitempty"`
		Reason        string `json:"reason,omitempty"`
		SystemMessage string `json:"systemMessage,omitempty"`
	}
	if block {
		out.Decision = "block"
		out.Reason = hook.Context(reason, hook.MaxReason)
		if out.Reason == "" {
			out.Reason = oracleDefaultReason
		}
	}
	out.SystemMessage = hook.OneLine(systemMessage, hook.MaxMessage)
	if !block && out.SystemMessage == "" {
		return nil
	}
	return oracleEncode(out)
}

func oracleMessageOutput(systemMessage string) []byte {
	if m := hook.OneLine(systemMessage, hook.MaxMessage); m != "" {
		return oracleEncode(struct {
			SystemMessage string `json:"systemMessage"`
		}{m})
	}
	return nil
}

func oracleEncode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("hook: encoding output: %v", err))
	}
	return b.Bytes()
}

// checkOutputs holds every output function to its oracle, byte for byte (nil included).
func checkOutputs(t *testing.T, a, b string) {
	t.Helper()
	same := func(what string, got, want []byte) {
		t.Helper()
		if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
			t.Errorf("%s(%q, %q):\n got %q\nwant %q", what, a, b, got, want)
		}
	}
	same("SessionStartOutput", hook.SessionStartOutput(a, b), oracleSessionStartOutput(a, b))
	same("StopOutput(block)", hook.StopOutput(true, a, b), oracleStopOutput(true, a, b))
	same("StopOutput", hook.StopOutput(false, a, b), oracleStopOutput(false, a, b))
	same("MessageOutput", hook.MessageOutput(a), oracleMessageOutput(a))
}

// outputSeeds are texts at the edges: what the writer escapes (quotes, backslashes, control
// characters, U+2028, invalid UTF-8), what encoding/json would escape by default but these
// outputs must not (<, >, &), what Context and OneLine cut or drop, and the empty cases.
var outputSeeds = []string{
	"", " \n ", "Cairn resume report\nworkflow apex at plan", `say "hi" \ bye /`, "a <b> & c",
	"tab\there\r\nCRLF\rCR\f\b\x00\x1b[31m\x7f", "line\u2028sep\u2029para", "\xff\xfe invalid \xc3",
	"é 𝔸 😀 \ufffd \u0085 \u00a0 \u200b \u202e", "```cairn-report-5f3a```\n" + strings.Repeat("phase done\n", 500) + "```",
	strings.Repeat("x", 5000), strings.Repeat("𝔸", 3000) + "\nend",
}

func TestOutputsMatchEncodingJSON(t *testing.T) {
	for _, a := range outputSeeds {
		for _, b := range outputSeeds {
			checkOutputs(t, a, b)
		}
	}
}

func FuzzOutputs(f *testing.F) {
	for i, s := range outputSeeds {
		f.Add(s, outputSeeds[(i+3)%len(outputSeeds)])
	}
	f.Fuzz(checkOutputs)
}
