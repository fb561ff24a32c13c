package cli

import (
	"cmp"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/lazyre"
	"github.com/cairn-dev/cairn/internal/secrets"
)

// parseArgs parses a command's flags, before or after its arguments ("--" ends flags). It
// is the flag package's syntax (-x, --x, --x=v, --x v) with four differences that make it a
// command line people can use: an argument that reads as a negative number (-1, -0.5) is an
// argument, not a flag, since no command has numeric flags; an unknown flag is named with
// the nearest known one; a flag that takes one value given two is refused, where the flag
// package keeps the last; and its errors are Cairn's words, not the flag package's.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	given := map[string]string{} // the value of each flag that takes one
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			return append(pos, args[i+1:]...), nil
		}
		if len(arg) < 2 || arg[0] != '-' || isNumber(arg) {
			pos = append(pos, arg)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(arg[1:], "-"), "=")
		if name == "h" || name == "help" {
			return nil, flag.ErrHelp
		}
		f := fs.Lookup(name)
		if f == nil { // "---x" names "-x", which no flag is
			dashes := arg[:len(arg)-len(strings.TrimPrefix(arg[1:], "-"))]
			return nil, unknownFlag(fs, dashes, name)
		}
		if isBool(f) {
			if !hasValue {
				value = "true"
			}
		} else if !hasValue {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("--%s needs a value: --%s %s", name, name, cmp.Or(f.Usage, valueName(f)))
			}
			i++
			value = args[i]
		}
		if _, repeatable := f.Value.(*strs); !repeatable && !isBool(f) {
			// A second value would replace the first without a word.
			if v, ok := given[name]; ok && v != value {
				return nil, fmt.Errorf("--%s given twice: it takes one value", name)
			}
			given[name] = value
		}
		if err := fs.Set(name, value); err != nil {
			return nil, fmt.Errorf("--%s: the value is not %s", name, valueName(f))
		}
	}
	return pos, nil
}

// isNumber: -1, -2.5, -1e3 are values, never flags.
func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// isBool: f takes no value (--json), or true or false (--json=false).
func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func valueName(f *flag.Flag) string {
	if isBool(f) {
		return "true or false"
	}
	if g, ok := f.Value.(flag.Getter); ok {
		switch g.Get().(type) {
		case int, int64, uint, uint64:
			return "a whole number"
		}
	}
	return strings.ToUpper(f.Name)
}

// plainFlag: 1 to 24 lowercase letters, digits and '-', which cannot hold a secret of any
// known shape.
var plainFlag = lazyre.New(`^[-0-9a-z]{1,24}$`)

// plain: s is a short word (plainFlag) as a person types one, in lower case, upper case or
// capitalised (Status, STATUS, --Json), and holds no secret. Cases mixed otherwise (qT7xWb2L)
// are a token's shape, and are never repeated.
func plain(s string) bool {
	lower := strings.ToLower(s)
	if !plainFlag().MatchString(lower) {
		return false
	}
	typed := s == lower || s == strings.ToUpper(s) || s[1:] == lower[1:]
	return typed && secrets.ScanString(s) == nil
}

// named is ` "s"`, for a message that names what it refuses, when s is plain enough to repeat
// (plain); "" for anything else, which may be anything pasted.
func named(s string) string {
	if plain(s) {
		return " " + strconv.Quote(s)
	}
	return ""
}

// unknownFlag refuses the flag name, named as it was typed: with dashes, "-" or "--".
func unknownFlag(fs *flag.FlagSet, dashes, name string) error {
	var known []string // sorted: VisitAll goes in lexicographical order
	fs.VisitAll(func(f *flag.Flag) { known = append(known, f.Name) })
	if !plain(name) {
		// Not a flag's shape (a pasted PEM key starts with -----): never repeated.
		return fmt.Errorf("an argument starting with - is not a flag; this command's flags are --%s (a value that starts with - goes after --)", strings.Join(known, ", --"))
	}
	// The nearest flag is the one step; without one, it may have been a value.
	if m := meant("--", name, known); m != "" {
		return fmt.Errorf("no flag %s%s; %s", dashes, name, m)
	}
	return fmt.Errorf("no flag %s%s; this command's flags are --%s (a value that starts with - goes after --)", dashes, name, strings.Join(known, ", --"))
}

// suggest returns the candidates nearest to s: those it begins with its first three letters
// or more (hist is history, not list one letter away), else those at most two edits away (one
// for short words, a swap of two letters counting as one), else those starting with s; at
// most three.
func suggest(s string, candidates []string) []string {
	var out []string // only the nearest: "stauts" is status, not also start
	best := 0
	ls := strings.ToLower(s)
	limit := 2
	if len([]rune(s)) <= 3 {
		limit = 1
	}
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if c == s {
			continue
		}
		d := distance(ls, lc)
		switch {
		case lc == ls: // only the case differs: cairn STATUS is status, not statusline
			d = -1
		case len([]rune(ls)) >= 3 && strings.HasPrefix(lc, ls):
			d = 0
		case d <= limit:
		case len(ls) >= 2 && strings.HasPrefix(lc, ls):
			d = limit + 1
		default:
			continue
		}
		switch {
		case out == nil || d < best:
			out, best = []string{c}, d
		case d == best && len(out) < 3 && !slices.Contains(out, c):
			out = append(out, c)
		}
	}
	return out
}

// distance is the optimal string alignment distance: insertions, deletions, substitutions
// and swaps of two neighbours each cost one.
func distance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

// meant is "did you mean X or Y?" for the candidates nearest to s (suggest), each named after
// prefix; "" when none is near.
func meant(prefix, s string, candidates []string) string {
	if sg := suggest(s, candidates); len(sg) > 0 {
		return "did you mean " + prefix + strings.Join(sg, " or "+prefix) + "?"
	}
	return ""
}

// hint is "; did you mean X?" when s is close to one of the candidates, else ": " + fallback,
// or "" when fallback is "".
func hint(s string, candidates []string, fallback string) string {
	if m := meant("", s, candidates); m != "" {
		return "; " + m
	}
	if fallback != "" {
		return ": " + fallback
	}
	return ""
}

// argNames are the required arguments a usage line names, in order: "start TYPE CONTEXT
// [--id ID]" has TYPE and CONTEXT, "completion bash|zsh|fish" has bash|zsh|fish; optional
// ones ([FROM]) too when optional is true; flags' values are left out.
func argNames(usage, name string, optional bool) []string {
	rest := strings.Fields(strings.TrimPrefix(usage, name))
	var out []string
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		if strings.HasPrefix(w, "[") {
			if optional && !strings.HasPrefix(w, "[-") && strings.HasSuffix(w, "]") {
				out = append(out, strings.TrimSuffix(strings.Trim(w, "[]"), "|-"))
			}
			for !strings.Contains(rest[i], "]") && i+1 < len(rest) {
				i++
			}
			continue
		}
		w = strings.TrimSuffix(w, "...")
		if w != "" && (strings.ToUpper(w) == w || strings.Contains(w, "|")) && !strings.HasPrefix(w, "-") {
			out = append(out, w)
		}
	}
	return out
}

// notText refuses an argument or a flag's value that is not UTF-8 (Latin-1 "café" from a
// terminal set to another encoding), as the agent's tools refuse it: stored text is UTF-8,
// and free text would lose the bytes, a path be stored as another. The value is not repeated.
func notText(fs *flag.FlagSet, pos []string, usage, name string) error {
	const step = " (a terminal or file in another encoding?); nothing was changed: give it in UTF-8"
	for i, p := range pos {
		if utf8.ValidString(p) {
			continue
		}
		return &codeError{code: ExitRefused, msg: argName(pos, i, usage, name) + " is not UTF-8 text" + step}
	}
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err == nil && !utf8.ValidString(f.Value.String()) {
			err = &codeError{code: ExitRefused, msg: "--" + f.Name + ": the value is not UTF-8 text" + step}
		}
	})
	return err
}

// argName names the positional argument pos[i] as the usage line of the command name does
// (CONTEXT, TO; each of KEY... is KEY), or by its place (argument 2) when the count given
// leaves it unclear.
func argName(pos []string, i int, usage, name string) string {
	all, req := argNames(usage, name, true), argNames(usage, name, false)
	switch {
	case len(pos) == len(all):
		return all[i]
	case len(pos) == len(req):
		return req[i]
	case len(req) > 0 && i >= len(req)-1 && strings.Contains(usage, " "+req[len(req)-1]+"..."):
		return req[len(req)-1]
	}
	return fmt.Sprintf("argument %d", i+1)
}

// secretArg refuses an argument or a flag's value of a command that stores what it is given
// when it holds text of a secret's shape, named as the person typed it (ID, --note), as the
// agent's tools name the argument: the store's refusal named the place in the record the
// value was bound for ($.tasks[0].id), which no one typed. A JSON value (checkpoint save's,
// --checkpoint) is left to the store, whose refusal names the path inside it. An argument
// only looked up (c.lookup) is refused as finding nothing.
func secretArg(fs *flag.FlagSet, pos []string, c *command) error {
	refuse := func(f *secrets.Finding, place string) error {
		return &codeError{code: ExitRefused, msg: f.ErrorIn(place) + "; nothing was changed"}
	}
	for i, p := range pos {
		if what := argName(pos, i, c.usage, c.name); what != "JSON" {
			if f := secrets.ScanString(p); f != nil && c.lookup != "" {
				return &codeError{code: ExitRefused, msg: fmt.Sprintf("%s has a secret's shape (%s): %s; nothing was changed", what, f.Rule, c.lookup)}
			} else if f != nil {
				return refuse(f, what)
			}
		}
	}
	var err error
	fs.Visit(func(fl *flag.Flag) {
		values := []string{fl.Value.String()}
		if many, ok := fl.Value.(*strs); ok {
			values = *many // each --output alone: joined, two could make one
		}
		for _, v := range values {
			if err == nil && fl.Name != "checkpoint" && !isBool(fl) {
				if f := secrets.ScanString(v); f != nil {
					err = refuse(f, "--"+fl.Name)
				}
			}
		}
	})
	return err
}
