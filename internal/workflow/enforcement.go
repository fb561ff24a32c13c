package workflow

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Severity ranks a violation or an integrity finding.
type Severity string

// Severities, most serious first.
const (
	Critical Severity = "CRITICAL"
	High     Severity = "HIGH"
	Medium   Severity = "MEDIUM"
	Low      Severity = "LOW"
	Info     Severity = "INFO"
)

var severityOrder = []Severity{Critical, High, Medium, Low, Info}

// ParseSeverity accepts a severity in any letter case.
func ParseSeverity(s string) (Severity, error) {
	v := Severity(strings.ToUpper(strings.TrimSpace(s)))
	if slices.Contains(severityOrder, v) {
		return v, nil
	}
	return "", fmt.Errorf("unknown severity %s: use CRITICAL, HIGH, MEDIUM, LOW or INFO", Quote(s))
}

// Blocks reports whether a violation of this severity blocks the workflow (CRITICAL or HIGH).
func (s Severity) Blocks() bool { return s == Critical || s == High }

// rank orders severities, 0 the most serious; unknown ones sort last.
func (s Severity) rank() int {
	if i := slices.Index(severityOrder, s); i >= 0 {
		return i
	}
	return len(severityOrder)
}

// Violation is one rule broken, as written by review or implement steps (seed 001).
type Violation struct {
	Code     string                     `json:"code"`
	Severity Severity                   `json:"severity"`
	Details  string                     `json:"details,omitempty"`
	Extra    map[string]json.RawMessage `json:"-"`
}

// Enforcement is the record's optional enforcement field. A missing field means no
// violations; Blocking and Summary are derived from the violations by NewEnforcement.
type Enforcement struct {
	Violations []Violation                `json:"violations"`
	Blocking   bool                       `json:"blocking"`
	Summary    string                     `json:"summary,omitempty"`
	Extra      map[string]json.RawMessage `json:"-"`
}

type (
	violationJSON   Violation
	enforcementJSON Enforcement
)

func (v Violation) MarshalJSON() ([]byte, error) { return EncodeKnown(violationJSON(v), v.Extra) }

func (v *Violation) UnmarshalJSON(b []byte) error {
	return DecodeKnown(b, (*violationJSON)(v), &v.Extra)
}

func (e Enforcement) MarshalJSON() ([]byte, error) {
	if e.Violations == nil {
		e.Violations = []Violation{}
	}
	return EncodeKnown(enforcementJSON(e), e.Extra)
}

func (e *Enforcement) UnmarshalJSON(b []byte) error {
	return DecodeKnown(b, (*enforcementJSON)(e), &e.Extra)
}

// NewEnforcement normalises the violations' severities and derives Blocking (true exactly when
// a CRITICAL or HIGH violation is present) and the summary. It refuses an unknown severity or
// a violation without a code.
func NewEnforcement(vs []Violation) (Enforcement, error) {
	out := make([]Violation, 0, len(vs))
	for i, v := range vs {
		sev, err := ParseSeverity(string(v.Severity))
		if err != nil {
			return Enforcement{}, fmt.Errorf("violation %d (code %s): %w", i+1, Quote(v.Code), err)
		}
		if strings.TrimSpace(v.Code) == "" {
			return Enforcement{}, fmt.Errorf("violation %d: code is empty: give each violation a code such as V-TEST-03", i+1)
		}
		v.Severity = sev
		v.Extra = deepCopy(v.Extra)
		out = append(out, v)
	}
	e := Enforcement{Violations: out, Blocking: slices.ContainsFunc(out, func(v Violation) bool { return v.Severity.Blocks() })}
	e.Summary = e.summary()
	return e, nil
}

// RepeatedFinding refuses a list that gives one finding twice: the same code (in any letter
// case) with the same details, whatever the severities. The same code with other details is
// another finding (one rule broken in two places). The refusal names the two by position, not
// by code: a code may hold anything. Only new lists are checked; stored ones read as written.
func RepeatedFinding(vs []Violation) error {
	seen := make(map[string]int, len(vs))
	for i, v := range vs {
		key := strings.ToUpper(strings.TrimSpace(v.Code)) + "\x00" + strings.TrimSpace(v.Details)
		if j, ok := seen[key]; ok {
			return fmt.Errorf("violations %d and %d are the same finding (the same code and details): give each finding once, with its most serious severity", j+1, i+1)
		}
		seen[key] = i
	}
	return nil
}

// summary counts the violations, their severities normalised, by severity, the blocking ones
// (CRITICAL, HIGH) apart from the rest, so that no LOW reads as blocking: "1 HIGH violation
// (blocking)", "1 CRITICAL violation (blocking) and 2 LOW violations", "1 MEDIUM, 1 INFO
// violations", "no violations". Records store it as written: older ones may hold the form
// that counted all severities before one "(blocking)".
func (e Enforcement) summary() string {
	if len(e.Violations) == 0 {
		return "no violations"
	}
	counts := map[Severity]int{}
	for _, v := range e.Violations {
		counts[v.Severity]++
	}
	group := func(blocks bool) string {
		var parts []string
		n := 0
		for _, s := range severityOrder {
			if c := counts[s]; c > 0 && s.Blocks() == blocks {
				parts = append(parts, fmt.Sprintf("%d %s", c, s))
				n += c
			}
		}
		if n == 0 {
			return ""
		}
		return strings.Join(parts, ", ") + " violation" + Plural(n)
	}
	blocking, rest := group(true), group(false)
	switch {
	case blocking == "":
		return rest
	case rest == "":
		return blocking + " (blocking)"
	}
	return blocking + " (blocking) and " + rest
}

// BlockingViolations returns the CRITICAL and HIGH violations of r, most serious first. It
// trusts the violations, not the stored blocking flag, and a missing field means none.
func (r *Record) BlockingViolations() []Violation {
	var out []Violation
	for _, v := range r.violations() {
		v.Severity = Severity(strings.ToUpper(string(v.Severity)))
		if v.Severity.Blocks() {
			out = append(out, v)
		}
	}
	slices.SortStableFunc(out, func(a, b Violation) int { return a.Severity.rank() - b.Severity.rank() })
	return out
}

// violations are r's violations: none when r or its enforcement field is missing.
func (r *Record) violations() []Violation {
	if r == nil || r.Enforcement == nil {
		return nil
	}
	return r.Enforcement.Violations
}

// Blocking reports whether the record has a CRITICAL or HIGH violation.
func (r *Record) Blocking() bool { return len(r.BlockingViolations()) > 0 }

// StopShouldBlock reports whether the Stop hook should ask the agent to deal with the
// violations: the workflow is active, has a blocking violation, and its definition has not
// turned Stop-hook blocking off (def may be nil: blocking stays on).
func StopShouldBlock(def *Definition, r *Record) bool {
	if r == nil || r.Status != StatusActive || !r.Blocking() {
		return false
	}
	return def == nil || def.Blocking
}
