package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/report"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/textsafe"
)

// Caps on what a hook prints, in UTF-16 code units: Claude Code is a JavaScript program and
// counts a string's length that way. It inlines additionalContext only up to 10,000
// characters; Cairn's report is a few hundred, and MaxContext keeps even a pathological one to
// a small fraction of the model's context.
const (
	MaxContext = 4000 // additionalContext
	MaxMessage = 300  // systemMessage: one line for the user
	// MaxReason caps a Stop block's reason, which the model reads: a fenced report of at most
	// report.MaxLen bytes (so as many units or fewer), passed on whole so that its closing
	// fence and next step are never cut off.
	MaxReason = report.MaxLen
	maxTitle  = 80 // a session title: the resume picker shows one short line
)

// cutNote replaces what Context leaves out; it names the tool that gives the whole answer.
const cutNote = "… (cut from %d characters: call mcp__plugin_cairn_cairn__resume_check for the whole report)"

// defaultReason stands in for a block with no reason: Claude Code needs one to tell the model.
const defaultReason = "Cairn: the active workflow has blocking violations; deal with them, or tell the user why not, before stopping."

// sessionTitleOutput is the JSON a SessionStart hook prints: additionalContext for the model
// (with the hookEventName Claude Code requires, or it drops the context), a systemMessage for
// the user and a session title (hookSpecificOutput.sessionTitle, which Claude Code 2.1.330
// applies at startup, resume and fork and shows in the resume picker). Empty parts are left
// out; with all empty it returns nil, and the hook prints nothing. additionalContext is capped
// by Context, systemMessage by OneLine.
func sessionTitleOutput(additionalContext, systemMessage, title string) []byte {
	type specific struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext,omitempty"`
		SessionTitle      string `json:"sessionTitle,omitempty"`
	}
	var out struct {
		HookSpecificOutput *specific `json:"hookSpecificOutput,omitempty"`
		SystemMessage      string    `json:"systemMessage,omitempty"`
	}
	// A title keeps its start: the picker shows the first words.
	c, t := Context(additionalContext, MaxContext), clip(textsafe.OneLine(title), maxTitle)
	if c != "" || t != "" {
		out.HookSpecificOutput = &specific{HookEventName: "SessionStart", AdditionalContext: c, SessionTitle: t}
	}
	out.SystemMessage = OneLine(systemMessage, MaxMessage)
	if out.HookSpecificOutput == nil && out.SystemMessage == "" {
		return nil
	}
	return encode(out)
}

// StopOutput is the JSON a Stop hook prints. block asks the agent to continue and deal with
// reason (Claude Code then runs the next Stop with stop_hook_active true); otherwise only a
// systemMessage for the user, or nil when there is nothing to say.
func StopOutput(block bool, reason, systemMessage string) []byte {
	var out struct {
		Decision      string `json:"decision,omitempty"`
		Reason        string `json:"reason,omitempty"`
		SystemMessage string `json:"systemMessage,omitempty"`
	}
	if block {
		out.Decision = "block"
		if out.Reason = Context(reason, MaxReason); out.Reason == "" {
			out.Reason = defaultReason
		}
	}
	out.SystemMessage = OneLine(systemMessage, MaxMessage)
	if !block && out.SystemMessage == "" {
		return nil
	}
	return encode(out)
}

// MessageOutput is a JSON object holding only a systemMessage (any hook), or nil for "".
func MessageOutput(systemMessage string) []byte { return StopOutput(false, "", systemMessage) }

// encode writes v as one line. HTML is not escaped: the text is read by a model and a person,
// not a browser.
func encode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only strings are encoded: this cannot happen.
		panic(fmt.Sprintf("hook: encoding output: %v", err))
	}
	return b.Bytes()
}

// Context returns s as multi-line text of at most max UTF-16 units: invalid UTF-8 and control
// characters other than newline and tab are dropped, line ends normalised. A longer text
// keeps its leading lines, a note saying it was cut and where the rest is, and its last line,
// which in a fenced report is the closing fence.
func Context(s string, max int) string {
	s = clean(s)
	if s == "" || max <= 0 {
		return ""
	}
	total := textsafe.Units(s)
	if total <= max {
		return s
	}
	note := fmt.Sprintf(cutNote, total)
	lines := strings.Split(s, "\n")
	last := ""
	if len(lines) > 1 {
		last = clip(lines[len(lines)-1], max/4)
		lines = lines[:len(lines)-1]
	}
	room := max - textsafe.Units(note) - textsafe.Units(last) - 2 // two newlines
	if room < 0 {
		return clip(s, max)
	}
	kept, used := 0, -1 // a newline before every line but the first
	for _, line := range lines {
		if used += 1 + textsafe.Units(line); used > room {
			break
		}
		kept++
	}
	head := strings.Join(lines[:kept], "\n")
	if kept == 0 { // one huge first line: keep its start
		head = clip(lines[0], room)
	}
	// head, the note and last, a line each; an empty head or last is left out.
	return strings.Join(slices.DeleteFunc([]string{head, note, last}, func(l string) bool { return l == "" }), "\n")
}

// OneLine returns s as one line of at most max UTF-16 units for a systemMessage
// (textsafe.OneLine). A longer line keeps its start (what happened) and its end (where Cairn's
// messages put the next step), "…" in place of the middle. A path (a file kept in
// quarantine/, a temp file: isPath) is never cut in two (see cutAt).
func OneLine(s string, max int) string {
	s = textsafe.OneLine(s)
	total := textsafe.Units(s)
	if total <= max {
		return s
	}
	if max < 1 {
		return ""
	}
	// at[k] is the byte offset where unit k begins, -1 inside an astral character.
	at := slices.Repeat([]int{-1}, total+1)
	n := 0
	for i, r := range s {
		at[n] = i
		n += utf16.RuneLen(r)
	}
	at[total] = len(s)
	start, end := cutAt(s, total, max)
	for at[start] < 0 {
		start-- // never inside an astral character: one unit fewer kept
	}
	for at[end] < 0 {
		end++
	}
	b, e := atWords(s, at[start], at[end], max/8)
	// A start cut right after the body of a key glued to more text is one: it ends before
	// that word (secrets.Cut).
	return secrets.Cut(s, s[:b]+"…") + s[e:]
}

// atWords moves the part OneLine leaves out of s, bytes b to e, so that it cuts no word, by at
// most slack bytes: earlier when its end falls in a word, so that the end (the next
// step) keeps that word whole, unless that moves its start into a path; then its start back to
// the start of the word it falls in. A word longer than slack is cut where it was.
func atWords(s string, b, e, slack int) (int, int) {
	inWord := func(i int) bool { return i > 0 && i < len(s) && s[i-1] != ' ' && s[i] != ' ' }
	wordStart := func(i int) int { return strings.LastIndexByte(s[:i], ' ') + 1 }
	if inWord(e) {
		ws := wordStart(e)
		nb := b // as many units fewer kept before the cut as after it are kept more
		for need := textsafe.Units(s[ws:e]); need > 0 && nb > 0; {
			r, size := utf8.DecodeLastRuneInString(s[:nb])
			nb, need = nb-size, need-utf16.RuneLen(r)
		}
		if e-ws <= slack && nb > 0 && !(inWord(nb) && isPath(s[wordStart(nb):nb+strings.IndexByte(s[nb:]+" ", ' ')])) {
			b, e = nb, ws
		} else if i := strings.IndexByte(s[e:], ' '); i >= 0 && i < slack {
			e += i + 1
		}
	}
	if inWord(b) && b-wordStart(b) <= slack {
		b = wordStart(b)
	}
	return b, e
}

// cutAt is the part of s, in units from start to end, that OneLine leaves out to fit s (total
// units) in limit, "…" taking the place of one: from the middle, and never a path in two. It
// begins and ends beside paths, a quarter of limit at least kept on each side (what happened,
// and the next step), taking in as few whole paths as it can, nearest the middle. With no such
// place, a path the middle falls in is left out whole, or kept when an eighth of limit is
// still left after it; one the end falls in is left out whole.
func cutAt(s string, total, limit int) (start, end int) {
	type span struct{ from, to int } // in units; in order, apart
	var paths []span
	pos := 0
	for _, w := range strings.SplitAfter(s, " ") {
		if isPath(w) {
			paths = append(paths, span{pos, pos + textsafe.Units(w)})
		}
		pos += textsafe.Units(w)
	}
	// after(u) is the index of the first path ending after u.
	after := func(u int) int { return sort.Search(len(paths), func(i int) bool { return paths[i].to > u }) }
	inside := func(u int) (span, bool) {
		if i := after(u); i < len(paths) && paths[i].from < u {
			return paths[i], true
		}
		return span{}, false
	}
	want, cut := limit/2, total-limit+1
	places := []int{want} // the middle, or beside a path
	for _, p := range paths {
		places = append(places, p.from, p.to, p.from-cut, p.to-cut)
	}
	best, fewest := -1, 0
	for _, at := range places {
		_, in1 := inside(at)
		_, in2 := inside(at + cut)
		if at < limit/4 || at+cut > total-limit/4 || in1 || in2 {
			continue
		}
		n := after(at+cut) - after(at) // the whole paths it takes in
		if best < 0 || n < fewest || n == fewest && abs(at-want) < abs(best-want) {
			best, fewest = at, n
		}
	}
	if best >= 0 {
		return best, best + cut
	}
	start = want
	if p, ok := inside(start); ok {
		start = p.from
		if total-(p.to+cut) >= limit/8 {
			start = p.to
		}
	}
	end = start + cut
	if p, ok := inside(end); ok {
		end = p.to
	}
	return start, end
}

// isPath reports whether w, a word of a line, names a file: it holds a "/" (a file kept in
// quarantine/, a temp file, a directory), or a "." between a letter or digit and a letter
// (workflow-state.json).
func isPath(w string) bool {
	if strings.Contains(w, "/") {
		return true
	}
	for i := 1; i+1 < len(w); i++ {
		if w[i] == '.' && isAlnum(w[i-1]) && isAlnum(w[i+1]) && !isDigit(w[i+1]) {
			return true
		}
	}
	return false
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }
func isAlnum(b byte) bool { return isDigit(b) || 'a' <= b|0x20 && b|0x20 <= 'z' }

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// clip cuts s to at most max UTF-16 units, ending a cut with "…".
func clip(s string, max int) string {
	if textsafe.Units(s) <= max {
		return s
	}
	if max < 1 {
		return ""
	}
	n := 0
	for i, r := range s {
		w := utf16.RuneLen(r)
		if n+w > max-1 { // one unit for "…"
			return s[:i] + "…"
		}
		n += w
	}
	return s
}

// clean drops invalid UTF-8 and control characters but newline and tab, and turns CRLF and
// lone CR into LF.
func clean(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	if utf8.ValidString(s) && strings.IndexFunc(s, dropInContext) < 0 {
		return strings.TrimRight(s, "\n")
	}
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		if dropInContext(r) {
			return -1
		}
		return r
	}, s)
	return strings.TrimRight(s, "\n")
}

func dropInContext(r rune) bool {
	return r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f)
}
