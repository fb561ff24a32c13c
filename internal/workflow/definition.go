package workflow

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/secrets"
)

// MaxDefinitionSize caps one definition file; a larger one is refused, not parsed.
const MaxDefinitionSize = 256 << 10

// MaxPhases caps a definition's phases. The checks compare phases with each other, and the
// hooks read definitions under their deadline: 40,000 phases (a valid 250 KB file) took 1.8 s.
const MaxPhases = 200

// Definition is one workflow type: its phases, the moves allowed between them, the terminal
// phases that complete it, the approval gates, the verbs for L2 lines, its TTL, and the
// Markdown body of instructions for the agent.
type Definition struct {
	Name        string
	Description string
	// Phases in order; the first is where a workflow starts.
	Phases      []string
	Transitions map[string][]string
	Terminal    []string
	Verbs       map[string]string
	// Approvals lists the gate phases: entering one requests an approval, leaving it forward
	// records it.
	Approvals []string
	TTL       string
	// Major lists "from->to" moves that owe an L2 position line; when empty, every move into a
	// different non-terminal phase does.
	Major []string
	// Blocking is false when the definition turns Stop-hook blocking off (front matter
	// `blocking: false`); true otherwise.
	Blocking bool
	Body     string
	// Source names where the definition came from: "builtin:apex.md" or the user's file path.
	Source string
	// NameLine is the line of Source that gives the name (its front matter's name key), 0
	// when the file's name gives it: where a second file of the type is told to change.
	NameLine int
	// Doubts are what the file says that loads but may not be what its author meant: an entry
	// listed twice under terminal, a phase's transitions, approvals or major, where another
	// phase was likely meant; a major move into a terminal phase, which writes no position
	// line. Each has its line; cairn doctor names them.
	Doubts []*DefinitionError
}

// DefinitionError says why a definition file could not be used: the file, the line (1-based,
// in the file, 0 when unknown) and the reason.
type DefinitionError struct {
	File   string
	Line   int
	Reason string
	// Name is the type the file's front matter names, when its name line reads ("" when
	// not): a broken file stands for that type, not for the one its file name gives.
	Name string
	// Err is what kind of error it is, for errors.Is (ErrNotDefinition); nil for most.
	Err error
}

func (e *DefinitionError) Unwrap() error { return e.Err }

// ErrNotDefinition marks a file in .claude/workflows that is plainly documentation, not a
// definition (Markdown with no front matter that does not open with a definition key, as a
// README): it is skipped without a warning at every start, and cairn doctor names it.
var ErrNotDefinition = errors.New("not a workflow definition")

func (e *DefinitionError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("workflow definition %s:%d: %s", ShownPath(e.File), e.Line, e.Reason)
	}
	return fmt.Sprintf("workflow definition %s: %s", ShownPath(e.File), e.Reason)
}

// ShownPath is path as a message names it: each character no one sees or that breaks the
// line (unclearRune's) and each byte that is not UTF-8 escaped as Go writes it (\u200b, \xff).
// Every one-line message drops them, so "x\u200by.md" would be named "xy.md", a file that is
// not there.
func ShownPath(path string) string {
	if utf8.ValidString(path) && !strings.ContainsFunc(path, unclearRune) {
		return path
	}
	var b strings.Builder
	for i := 0; i < len(path); {
		r, size := utf8.DecodeRuneInString(path[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, path[i])
		case unclearRune(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(path[i : i+size])
		}
		i += size
	}
	return b.String()
}

// maxNameLen bounds type and phase names: they appear in file names and one-line summaries.
const maxNameLen = 64

// ValidName checks a workflow type or phase name (already lowercased).
func ValidName(s string) error {
	if len(s) > maxNameLen {
		return fmt.Errorf("name %s is longer than %d characters", Quote(s), maxNameLen)
	}
	if !shaped(s, lowerOrDigit, nameByte) {
		// Escaped past ASCII: a letter that only looks like one ('а', Cyrillic) is then seen.
		shown := Quote(s)
		if shown != NotRepeated {
			shown = strconv.QuoteToASCII(secrets.Clip(s, maxQuoted))
		}
		return fmt.Errorf("name %s is not valid: use lowercase letters, digits, '-' and '_', starting with a letter or digit", shown)
	}
	return nil
}

// NormalizeName lowercases and trims a type or phase name, as the seeds' APEX or
// REQUIREMENTS are accepted for apex and requirements.
func NormalizeName(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// SpecKeys are the front matter keys a definition may use, in the order they are documented.
var SpecKeys = []string{"name", "description", "phases", "transitions", "terminal",
	"verbs", "approvals", "ttl", "major", "blocking"}

// Lines finds the line in the definition's file of a front matter key, or of a value under
// one, so that a validation error can point at it. Each method returns 0 when it cannot tell.
type Lines interface {
	// Key is the line of key name.
	Key(name string) int
	// MapKey is the line of the key want (lowercased) in the mapping under name.
	MapKey(name, want string) int
	// Nth is the line of the n-th (0-based) sequence item under name equal to want.
	Nth(name, want string, n int) int
	// Item is the line of any entry under name whose text, lowercased, is want.
	Item(name, want string) int
	// End is the line that ends the front matter: where a missing key is to be added.
	End() int
}

type noLines struct{}

func (noLines) Key(string) int              { return 0 }
func (noLines) MapKey(string, string) int   { return 0 }
func (noLines) Nth(string, string, int) int { return 0 }
func (noLines) Item(string, string) int     { return 0 }
func (noLines) End() int                    { return 0 }

// ParseFunc reads one definition file: file names it in errors (and gives the name when the
// front matter has none); every error is a *DefinitionError. yamldoc.Codec.ParseDefinition is one.
type ParseFunc func(file string, data []byte) (*Definition, error)

// ErrNoParser is why a user definition was not read by a process that has no definition
// parser: the hook binaries link no YAML library and hand such projects to the cairn binary.
var ErrNoParser = errors.New("this binary has no YAML reader for workflow definitions")

// BuildDefinition validates and normalises s, the definition read from file as its author
// wrote it (front matter and Markdown body; Source is not read): nil Transitions and Terminal
// mean "omitted" (each phase leads to the next; the last phase is terminal), which is not the
// same as empty. lines (nil for none) points errors at the file's lines. Every error is a
// *DefinitionError.
func BuildDefinition(file string, s Definition, lines Lines) (*Definition, error) {
	if lines == nil {
		lines = noLines{}
	}
	d, line, reason := buildDefinition(file, s, lines)
	if reason != "" {
		return nil, &DefinitionError{File: file, Line: line, Reason: reason, Name: NormalizeName(s.Name)}
	}
	d.Body = strings.TrimLeft(s.Body, "\r\n")
	d.Source = file
	return d, nil
}

// buildDefinition validates the decoded front matter; on failure it returns the line and the
// reason.
func buildDefinition(file string, fm Definition, loc Lines) (*Definition, int, string) {
	d := &Definition{Description: strings.TrimSpace(fm.Description), Blocking: fm.Blocking}
	d.Name = cmp.Or(NormalizeName(fm.Name), FileType(file))
	if err := ValidName(d.Name); err != nil {
		if NormalizeName(fm.Name) == "" { // the file's name is the one to change
			return nil, 0, "the file name gives the workflow its name, as the front matter has none: " + err.Error() + "; rename the file, or give the front matter a name line"
		}
		return nil, loc.Key("name"), "workflow " + err.Error()
	}
	if NormalizeName(fm.Name) != "" {
		d.NameLine = loc.Key("name")
	}

	if len(fm.Phases) == 0 {
		return nil, cmp.Or(loc.Key("phases"), loc.End()), "phases is missing or empty: list the phases in order, the first being where the workflow starts"
	}
	if len(fm.Phases) > MaxPhases {
		return nil, loc.Key("phases"), fmt.Sprintf("phases lists %d phases, more than the %d a definition may have", len(fm.Phases), MaxPhases)
	}
	for _, p := range fm.Phases {
		p = NormalizeName(p)
		if err := ValidName(p); err != nil {
			return nil, loc.Item("phases", p), "phase " + err.Error()
		}
		if slices.Contains(d.Phases, p) {
			return nil, loc.Nth("phases", p, 1), fmt.Sprintf("phase %q is listed twice", p)
		}
		d.Phases = append(d.Phases, p)
	}
	notPhase := func(key, p string) string {
		return fmt.Sprintf("%s names phase %q, which is not in phases (%s)", key, p, strings.Join(d.Phases, ", "))
	}
	// Merged, an entry listed twice works as listed once; the doubt is at its second line.
	twice := func(line int, where, entry, what string) {
		reason := fmt.Sprintf("%s %s twice: remove one, or name the %s you meant", where, entry, what)
		if !slices.ContainsFunc(d.Doubts, func(e *DefinitionError) bool { return e.Reason == reason }) { // listed thrice: said once
			d.Doubts = append(d.Doubts, &DefinitionError{File: file, Line: line, Reason: reason, Name: d.Name})
		}
	}

	for _, p := range fm.Terminal {
		p = NormalizeName(p)
		if !d.HasPhase(p) {
			return nil, loc.Item("terminal", p), notPhase("terminal", p)
		}
		if slices.Contains(d.Terminal, p) {
			twice(loc.Nth("terminal", p, 1), "terminal lists", fmt.Sprintf("phase %q", p), "phase")
		}
		d.Terminal = appendNew(d.Terminal, p)
	}
	if fm.Terminal == nil {
		// Omitted: the last phase completes the workflow.
		d.Terminal = []string{d.Phases[len(d.Phases)-1]}
	}
	if len(d.Terminal) == 0 {
		return nil, loc.Key("terminal"), "terminal is empty: name at least one phase that completes the workflow"
	}

	d.Transitions = map[string][]string{}
	if fm.Transitions == nil {
		// Omitted: each phase leads to the next.
		for i := 0; i+1 < len(d.Phases); i++ {
			if !slices.Contains(d.Terminal, d.Phases[i]) {
				d.Transitions[d.Phases[i]] = []string{d.Phases[i+1]}
			}
		}
	}
	for _, rawFrom := range slices.Sorted(maps.Keys(fm.Transitions)) {
		from := NormalizeName(rawFrom)
		if !slices.Contains(d.Phases, from) {
			return nil, loc.MapKey("transitions", from), notPhase("transitions", from)
		}
		if _, dup := d.Transitions[from]; dup {
			return nil, loc.MapKey("transitions", from), fmt.Sprintf("transitions lists phase %q twice", from)
		}
		var tos []string
		for _, to := range fm.Transitions[rawFrom] {
			to = NormalizeName(to)
			if !d.HasPhase(to) {
				return nil, loc.Item("transitions", to), notPhase("transitions", to)
			}
			if to == from {
				return nil, loc.MapKey("transitions", from), fmt.Sprintf("transitions from %q to itself: staying in a phase needs no transition", from)
			}
			if slices.Contains(tos, to) {
				twice(loc.MapKey("transitions", from), fmt.Sprintf("transitions of %q list", from), fmt.Sprintf("phase %q", to), "phase")
			}
			tos = appendNew(tos, to)
		}
		if slices.Contains(d.Terminal, from) && len(tos) > 0 {
			return nil, loc.MapKey("transitions", from), fmt.Sprintf("terminal phase %q has transitions out of it: a terminal phase completes the workflow", from)
		}
		d.Transitions[from] = tos
	}
	for _, p := range d.Phases {
		if !slices.Contains(d.Terminal, p) && len(d.Transitions[p]) == 0 {
			// With transitions left out there is no key to point at: the phase is.
			return nil, cmp.Or(loc.Key("transitions"), loc.Item("phases", p)), fmt.Sprintf("phase %q is not terminal and has no transitions out of it: add some, or list it under terminal", p)
		}
	}
	// Every phase must be reachable from the start, or a workflow could never use it.
	reached := d.reach(d.Phases[0], nil)
	for _, p := range d.Phases {
		if !slices.Contains(reached, p) {
			return nil, loc.Item("phases", p), fmt.Sprintf("phase %q cannot be reached from the start phase %q through transitions", p, d.Phases[0])
		}
	}
	// And every phase must lead on to a terminal one, or a workflow that enters it (a loop
	// with no way out) could never complete. Walked back from the terminal phases; a phase
	// found is not looked at again.
	finishes := make([]bool, len(d.Phases))
	queue := slices.Clone(d.Terminal)
	for i := 0; i < len(queue); i++ {
		for j, p := range d.Phases {
			if !finishes[j] && (p == queue[i] || slices.Contains(d.Transitions[p], queue[i])) {
				finishes[j] = true
				if p != queue[i] {
					queue = append(queue, p)
				}
			}
		}
	}
	for j, p := range d.Phases {
		if !finishes[j] {
			return nil, loc.Item("phases", p), fmt.Sprintf("phase %q cannot lead to a terminal phase (%s) through transitions: a workflow that enters it could never complete", p, strings.Join(d.Terminal, ", "))
		}
	}

	d.Verbs = map[string]string{}
	for _, raw := range slices.Sorted(maps.Keys(fm.Verbs)) {
		p, v := NormalizeName(raw), fm.Verbs[raw]
		if !slices.Contains(d.Phases, p) {
			return nil, loc.MapKey("verbs", p), notPhase("verbs", p)
		}
		if _, dup := d.Verbs[p]; dup {
			return nil, loc.MapKey("verbs", p), fmt.Sprintf("verbs lists phase %q twice", p)
		}
		v = strings.TrimSpace(v)
		if v == "" || strings.ContainsAny(v, "\r\n") {
			return nil, loc.MapKey("verbs", p), fmt.Sprintf("verb for phase %q must be one non-empty line", p)
		}
		d.Verbs[p] = v
	}

	for _, p := range fm.Approvals {
		p = NormalizeName(p)
		if !d.HasPhase(p) {
			return nil, loc.Item("approvals", p), notPhase("approvals", p)
		}
		if slices.Contains(d.Terminal, p) {
			return nil, loc.Item("approvals", p), fmt.Sprintf("approval gate %q is a terminal phase: a gate must be a phase the workflow leaves", p)
		}
		if slices.Contains(d.Approvals, p) {
			twice(loc.Nth("approvals", p, 1), "approvals lists", fmt.Sprintf("phase %q", p), "phase")
		}
		d.Approvals = appendNew(d.Approvals, p)
	}

	for _, m := range fm.Major {
		from, to, ok := strings.Cut(m, "->")
		from, to = NormalizeName(from), NormalizeName(to)
		if !ok || !slices.Contains(d.Transitions[from], to) {
			return nil, loc.Item("major", NormalizeName(m)), fmt.Sprintf("major entry %q is not an allowed transition written as from->to", m)
		}
		if slices.Contains(d.Major, from+"->"+to) {
			twice(loc.Nth("major", NormalizeName(m), 1), "major lists", strconv.Quote(from+"->"+to), "move")
		}
		if slices.Contains(d.Terminal, to) && !slices.Contains(d.Major, from+"->"+to) {
			d.Doubts = append(d.Doubts, &DefinitionError{File: file, Line: loc.Item("major", NormalizeName(m)), Name: d.Name,
				Reason: fmt.Sprintf("major lists %q, a move into terminal phase %q, which writes the completion line, never a position line: remove it", from+"->"+to, to)})
		}
		d.Major = append(d.Major, from+"->"+to)
	}

	d.TTL = cmp.Or(strings.TrimSpace(fm.TTL), DefaultTTL)
	if _, err := ParseTTL(d.TTL); err != nil {
		return nil, loc.Key("ttl"), err.Error()
	}
	return d, 0, ""
}

// Start is the phase a new workflow of this type begins in.
func (d *Definition) Start() string { return d.Phases[0] }

// HasPhase reports whether p is one of the definition's phases.
func (d *Definition) HasPhase(p string) bool { return slices.Contains(d.Phases, p) }

// Allowed lists the phases a workflow in from may move to (a copy).
func (d *Definition) Allowed(from string) []string { return slices.Clone(d.Transitions[from]) }

// CanMove reports whether from->to is an allowed transition.
func (d *Definition) CanMove(from, to string) bool {
	return slices.Contains(d.Transitions[from], to)
}

// IsTerminal reports whether entering p completes the workflow.
func (d *Definition) IsTerminal(p string) bool { return slices.Contains(d.Terminal, p) }

// TerminalAhead is what a step that names the moves tos adds when some of them enter a
// terminal phase: entering one completes (and archives) the workflow at once, so the work it
// stands for (git-commit's commit) comes before the move, not after it, outside the workflow.
// "" when none does.
func (d *Definition) TerminalAhead(tos []string) string {
	if d == nil {
		return ""
	}
	ends := slices.DeleteFunc(slices.Clone(tos), func(p string) bool { return !d.IsTerminal(p) })
	if len(ends) == 0 {
		return ""
	}
	return "entering " + strings.Join(ends, " or ") + " completes the workflow: do its work first"
}

// IsGate reports whether p is an approval gate.
func (d *Definition) IsGate(p string) bool { return slices.Contains(d.Approvals, p) }

// Verb is the word for being in phase p in L2 lines ("implementing"); the phase name when the
// definition gives none.
func (d *Definition) Verb(p string) string {
	if v, ok := d.Verbs[p]; ok {
		return v
	}
	return p
}

// IsMajor reports whether from->to owes an L2 position line: a move listed under major when
// the definition has that list, else every move into a different non-terminal phase (entering
// a terminal phase owes the completion line instead).
func (d *Definition) IsMajor(from, to string) bool {
	if len(d.Major) > 0 {
		return slices.Contains(d.Major, from+"->"+to)
	}
	return from != to && !d.IsTerminal(to)
}

// DoneSoFar is done, the phases marked completed, without those after phase at in d's order:
// the work went back before them (a move back marks the phase it leaves completed and reopens
// only the one it enters), so they are to be done again. With a nil d, or at not one of its
// phases, done as it is. It works in done's backing array.
func (d *Definition) DoneSoFar(at string, done []string) []string {
	i := -1
	if d != nil {
		i = slices.Index(d.Phases, at)
	}
	if i < 0 {
		return done
	}
	return slices.DeleteFunc(done, func(p string) bool { return slices.Index(d.Phases, p) > i })
}

// forward reports whether from->to is not a back-edge: to comes after from in the phase
// order, or the workflow can complete from to without entering from again (a step back
// leads back through it, wherever to is listed).
func (d *Definition) forward(from, to string) bool {
	return slices.Index(d.Phases, to) > slices.Index(d.Phases, from) ||
		slices.ContainsFunc(d.reach(to, func(p string) bool { return p == from }), d.IsTerminal)
}

// GateAhead names the approval gate a workflow in phase p cannot complete without entering:
// "" when some way from p to a terminal phase enters no gate (p itself is not entered, so a
// workflow in a gate has none ahead but those after it). Of several, the nearest. "" for a
// nil d.
func (d *Definition) GateAhead(p string) string {
	if d == nil {
		return ""
	}
	reached := d.reach(p, d.IsGate)
	if slices.ContainsFunc(reached, d.IsTerminal) {
		return ""
	}
	for _, q := range reached {
		for _, to := range d.Transitions[q] {
			if d.IsGate(to) && to != p {
				return to
			}
		}
	}
	return ""
}

// GatelessRoute is a shortest way from the start phase to a terminal one that enters no
// approval gate, start and end included: a gate such a way passes by guards nothing on it,
// which may be meant (an optional gate) or not. nil when the definition has no gates, starts
// in one, or every way to the end enters one.
func (d *Definition) GatelessRoute() []string {
	if len(d.Approvals) == 0 || d.IsGate(d.Start()) {
		return nil
	}
	from := map[string]string{} // each phase reached, by the phase it was reached from
	queue := []string{d.Start()}
	for i := 0; i < len(queue); i++ {
		p := queue[i]
		if d.IsTerminal(p) {
			route := []string{p}
			for p != d.Start() {
				p = from[p]
				route = append(route, p)
			}
			slices.Reverse(route)
			return route
		}
		for _, to := range d.Transitions[p] {
			if _, seen := from[to]; !seen && to != d.Start() && !d.IsGate(to) {
				from[to] = p
				queue = append(queue, to)
			}
		}
	}
	return nil
}

// reach lists the phases a workflow in phase p can reach through transitions, p included,
// without entering a phase avoid reports (nil for none).
func (d *Definition) reach(p string, avoid func(string) bool) []string {
	reached := []string{p}
	for i := 0; i < len(reached); i++ {
		for _, to := range d.Transitions[reached[i]] {
			if avoid == nil || !avoid(to) {
				reached = appendNew(reached, to)
			}
		}
	}
	return reached
}

// appendNew appends to list the items it does not hold yet, each once.
func appendNew(list []string, items ...string) []string {
	for _, it := range items {
		if !slices.Contains(list, it) {
			list = append(list, it)
		}
	}
	return list
}

// shaped reports whether s is not empty, its first byte passes first and every later byte
// passes rest: the names and ids Cairn accepts are ASCII character classes, checked without
// compiling a regexp in every process.
func shaped(s string, first, rest func(c byte) bool) bool {
	if s == "" || !first(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !rest(s[i]) {
			return false
		}
	}
	return true
}

func lowerOrDigit(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

// nameByte is what a type or phase name holds after its first byte.
func nameByte(c byte) bool { return lowerOrDigit(c) || c == '_' || c == '-' }

func letter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func letterOrDigit(c byte) bool { return letter(c) || '0' <= c && c <= '9' }
