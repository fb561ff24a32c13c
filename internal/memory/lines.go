package memory

import (
	"strings"

	"github.com/cairn-dev/cairn/internal/lazyre"
	"github.com/cairn-dev/cairn/internal/textsafe"
)

// The L2 line formats of seed 001 (internal/workflow writes them): "Active APEX workflow:
// analyze completed, planning <context>", "Completed APEX for <context>: <outcome>" and
// "Expired APEX workflow at <phase> for <context>, archived".

// Kinds of L2 line, as ParseLine recognises them.
const (
	KindPosition   = "position"
	KindCompletion = "completion"
	KindExpiry     = "expiry"
	KindOther      = "other" // a hand-written or unknown line, kept as text
)

// Parsed is an L2 line taken apart. Fields a kind lacks are empty.
type Parsed struct {
	Kind      string
	Type      string // as written, usually uppercase
	Completed string // position: the phase completed
	Verb      string // position: what the next phase is doing
	Phase     string // expiry: the phase it stopped at
	Context   string
	Outcome   string // completion
}

var (
	positionRE   = lazyre.New(`^Active (\S+) workflow: (.+?) completed, (\S+) ?(.*)$`)
	completionRE = lazyre.New(`^Completed (\S+) for (.*?): (.*)$`)
	// Lines written before ", archived" was added read "Expired workflow: APEX at ...".
	expiryRE = lazyre.New(`^Expired (?:workflow: (\S+)|(\S+) workflow) at (\S+) for (.*?)(?:, archived)?$`)
)

// ParseLine recognises the seed's line formats in plain (unescaped) text, tolerating the
// spacing and case a hand edit may change; anything else is KindOther.
func ParseLine(text string) Parsed {
	t := strings.Join(strings.Fields(text), " ")
	if m := positionRE().FindStringSubmatch(t); m != nil {
		return Parsed{Kind: KindPosition, Type: m[1], Completed: m[2], Verb: m[3], Context: m[4]}
	}
	if m := completionRE().FindStringSubmatch(t); m != nil {
		return Parsed{Kind: KindCompletion, Type: m[1], Context: m[2], Outcome: m[3]}
	}
	if m := expiryRE().FindStringSubmatch(t); m != nil {
		return Parsed{Kind: KindExpiry, Type: m[1] + m[2], Phase: m[3], Context: m[4]}
	}
	return Parsed{Kind: KindOther, Context: t}
}

// unescape undoes textsafe's backslash escapes, so text read back is plain and can be
// sanitised again without doubling them. That includes the escape of a leading > (textsafe
// escapes > only there): text that begins with a backslash has it escaped, so "\>" in front
// is always that escape.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (s[i+1] < 0x80 && textsafe.Escaped(rune(s[i+1])) || i == 0 && s[1] == '>') {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
