package workflow

import (
	"slices"
	"strings"

	"github.com/cairn-dev/cairn/internal/secrets"
)

// L2 lines are the one-line summaries the write protocol puts in Claude Code's auto-memory.
// They say in Cairn's own words what Cairn knows; text that came from tool input (a
// workflow's context and outcome) appears only through quoted, capped by textsafe.Quote. The
// engine and internal/memory sanitise the whole line before writing.

// quoted caps a context or outcome on an L2 line.
const quoted = 120

// quote is s quoted and capped for an L2 line (textsafe.Quote). The cut may make a secret
// of a token glued to more text: the quote then ends before that word (secrets.Quote).
func quote(s string) string { return secrets.Quote(s, quoted) }

// PositionLine is the checkpoint-state line owed by a major transition from phase from:
// "Active {TYPE} workflow: {from} completed, {verb} {context}", the verb being the
// definition's verb for the phase entered (the phase name when it has none, or when def is nil).
// After a move back, from is to be done again (DoneSoFar), so the line says
// "back from {from}" instead of calling it completed.
func PositionLine(def *Definition, r *Record, from string) string {
	verb, done := r.State, from+" completed, "
	if def != nil {
		verb = secrets.Clip(def.Verb(r.State), maxNameLen) // the context after it stays in the line
		if len(def.DoneSoFar(r.State, []string{from})) == 0 {
			done = "back from " + from + ", "
		}
	}
	return "Active " + strings.ToUpper(r.Type) + " workflow: " + done + verb + " " + quote(r.Context)
}

// IsPositionOf reports whether line, an L2 line, is a position line (PositionLine) of r's
// type and context: of r or of another workflow of the same type and context.
func IsPositionOf(line string, r *Record) bool {
	return strings.HasPrefix(line, "Active "+strings.ToUpper(r.Type)+" workflow: ") && strings.HasSuffix(line, " "+quote(r.Context))
}

// CompletionLine is the mandatory line when a workflow completes:
// "Completed {TYPE} for {context}: {outcome}". The context and the outcome were each scanned
// alone when stored; when they join into a secret ("DB password": "Tr0ub4dor&3x") the outcome
// is withheld (secrets.NotShown), so the line still reaches L2 rather than being refused. The
// outcome Cairn gives a workflow completed without one ("reached {phase}") is its own words,
// not quoted.
func CompletionLine(r *Record) string {
	head := "Completed " + strings.ToUpper(r.Type) + " for "
	outcome := quote(r.Outcome)
	if r.Outcome == reachedOutcome(r.State) {
		outcome = r.Outcome
	}
	line := secrets.Joined(head+quote(r.Context)+":", " "+outcome)
	if line == secrets.Hidden { // the type and the context make one: the line still says what ended
		return head + secrets.NotShown
	}
	return line
}

// ExpiryLine is the line written when a workflow expires (it is archived, never deleted):
// "Expired {TYPE} workflow at {phase} for {context}, archived".
func ExpiryLine(r *Record) string {
	return "Expired " + strings.ToUpper(r.Type) + " workflow at " + r.State + " for " + quote(r.Context) + ", archived"
}

// AbandonLine is the line written when an active workflow is archived unfinished (`cairn
// archive`, or a start that replaces it): "Abandoned {TYPE} workflow at {phase} for
// {context}, archived".
func AbandonLine(r *Record) string {
	return "Abandoned " + strings.ToUpper(r.Type) + " workflow at " + r.State + " for " + quote(r.Context) + ", archived"
}

// IsEndingLine reports whether an L2 line records an ending (completion, expiry, archive):
// after one, there is nothing to resume.
func IsEndingLine(l string) bool {
	l = strings.TrimSpace(l)
	return slices.ContainsFunc([]string{"Completed ", "Expired ", "Abandoned "}, func(p string) bool { return strings.HasPrefix(l, p) })
}
