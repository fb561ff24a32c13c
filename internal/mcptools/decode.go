package mcptools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/strictjson"
)

// MaxArgsBytes bounds a tool call's arguments: a 1 MiB checkpoint plus room for its name and
// the JSON around it. Anything larger is refused before any part of it is decoded.
const MaxArgsBytes = strictjson.MaxSize + 16<<10

// maxArgsDepth allows a checkpoint nested as deep as the store accepts (64) inside the
// arguments object.
const maxArgsDepth = strictjson.MaxDepth + 2

// argError is a bad-argument report: every problem found, each saying what was wrong and what
// would be right. It becomes a tool result with isError set, never a protocol error.
type argError struct {
	tool     string
	problems []string
}

func (e *argError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s was not run (nothing was changed): ", e.tool)
	if len(e.problems) == 1 {
		b.WriteString(e.problems[0])
		return b.String()
	}
	b.WriteString("the arguments have problems:")
	for _, p := range e.problems {
		b.WriteString("\n- ")
		b.WriteString(p)
	}
	return b.String()
}

// args holds decoded arguments by name: string, bool, []string, json.RawMessage,
// map[string]string or []engine.Violation, according to the field's kind.
type args map[string]any

// maxProblems keeps a report about hostile input short.
const maxProblems = 6

var argsLimits = strictjson.Limits{MaxSize: MaxArgsBytes, MaxDepth: maxArgsDepth}

// beyondFloat says what is wrong with an argument that holds a number encoding/json cannot
// read (the number is not repeated).
const beyondFloat = strictjson.BeyondFloat + "; write it as a string or as a smaller number"

// decodeArgs checks raw against spec and decodes it. Unknown, missing, mistyped, oversized and
// malformed arguments and embedded secrets are all reported; nothing reaches the engine unless
// every argument is right.
func decodeArgs(spec *toolSpec, raw json.RawMessage) (args, error) {
	fail := func(problems ...string) (args, error) {
		return nil, &argError{tool: spec.name, problems: problems}
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	if len(raw) > MaxArgsBytes {
		return fail(fmt.Sprintf("the arguments are %d bytes, more than the limit of %d; keep large content in a file and pass its path instead", len(raw), MaxArgsBytes))
	}
	// One pass checks the arguments and gathers what the secret scan needs (below).
	spans, err := argsLimits.AppendSpans(nil, raw, nil)
	// A rule broken inside one argument's value (a number beyond float64, a key twice, too
	// deep, bytes that are not UTF-8): the argument holding it is named below.
	var inValue *strictjson.Error
	if err != nil {
		if f := secrets.InRefusal(raw, err); f != nil {
			return fail(f.Error())
		}
		je, ok := errors.AsType[*strictjson.Error](err)
		switch {
		case ok && slices.Contains([]strictjson.Kind{strictjson.NumberRange, strictjson.DuplicateKey, strictjson.TooDeep, strictjson.InvalidUTF8}, je.Kind):
			inValue = je
		case ok:
			return fail(wholeProblem(je))
		default:
			return fail(fmt.Sprintf("the arguments are not acceptable JSON (%v); send one JSON object", err))
		}
	}
	if raw[0] != '{' {
		return fail(fmt.Sprintf("the arguments must be a JSON object of named arguments (%s), not %s", spec.signature(), strictjson.KindOf(raw)))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return fail(fmt.Sprintf("the arguments could not be read as a JSON object (%v)", err))
	}

	var problems []string
	add := func(format string, a ...any) {
		if len(problems) < maxProblems {
			problems = append(problems, fmt.Sprintf(format, a...))
		}
	}
	// inAValue: the rule inValue broke was broken inside some argument's value, known or not,
	// rather than by the arguments object itself (an argument named twice).
	inAValue := false
	var unknown []string // arguments neither the tool's nor near one of its names: said once
	for _, k := range slices.Sorted(maps.Keys(m)) {
		// The near miss is named by the tool's own name for it.
		switch near := spec.near(k); {
		case slices.ContainsFunc(spec.fields, func(f field) bool { return f.name == k }):
			continue
		case near != "":
			add("an unknown argument: did you mean %q? (%s takes %s)", near, spec.name, spec.signature())
		default:
			unknown = append(unknown, k)
		}
		if inValue != nil && !inAValue {
			vp, _ := valueProblem("", m[k])
			inAValue = vp != ""
		}
	}
	switch {
	case len(unknown) == 1:
		add("an unknown argument%s (%s takes %s)", unknownNames(unknown), spec.name, spec.signature())
	case len(unknown) > 1:
		add("%d unknown arguments%s (%s takes %s)", len(unknown), unknownNames(unknown), spec.name, spec.signature())
	}

	out := make(args, len(spec.fields))
	for i := range spec.fields {
		f := &spec.fields[i]
		v, ok := m[f.name]
		if !ok || string(bytes.TrimSpace(v)) == "null" {
			if f.required {
				add("missing required argument %q%s", f.name, f.takes())
			}
			continue
		}
		val, problem := f.decode(v)
		if inValue != nil {
			// Bytes that are not UTF-8 come first: the decoder read them as U+FFFD.
			if vp, notUTF8 := valueProblem(f.name, v); vp != "" {
				inAValue = true
				if problem == "" || notUTF8 {
					problem = vp
				}
			}
		}
		if problem != "" {
			add("%s", problem)
			continue
		}
		out[f.name] = val
	}
	// Secrets are looked for over the whole object, so the path names the argument, and
	// before any problem is reported: a problem with a variable's value quotes its name,
	// which may be where the secret is.
	var finding *secrets.Finding
	if inValue != nil {
		finding = secrets.ScanJSON(raw) // the check stopped where the rule was broken: no spans
	} else {
		finding = secrets.ScanChecked(raw, spans)
	}
	if finding != nil {
		return fail(finding.Error())
	}
	if inValue != nil && !inAValue {
		// Broken by the arguments object itself; an unknown argument is reported above.
		add("%s", wholeProblem(inValue))
	}
	if len(problems) > 0 {
		return fail(problems...)
	}
	return out, nil
}

// valueLimits are the store's limits on one argument's JSON value (a checkpoint's data, a log
// entry), as large as the arguments may be.
var valueLimits = strictjson.Limits{MaxSize: MaxArgsBytes, MaxDepth: strictjson.MaxDepth}

// valueProblem says what is wrong with the JSON value v of the argument named name under the
// store's rules, or "", and whether it is bytes that are not UTF-8. Offsets count from the
// start of the value.
func valueProblem(name string, v json.RawMessage) (problem string, notUTF8 bool) {
	je, ok := errors.AsType[*strictjson.Error](valueLimits.Check(v))
	switch {
	case !ok:
		return "", false
	case je.Kind == strictjson.NumberRange:
		return fmt.Sprintf("argument %q %s", name, beyondFloat), false
	case je.Kind == strictjson.DuplicateKey:
		return fmt.Sprintf("argument %q is not acceptable JSON (%s at byte %d of it); send it with each key once in each object", name, je.Reason, je.Offset), false
	case je.Kind == strictjson.TooDeep:
		return fmt.Sprintf("argument %q is not acceptable JSON (%s at byte %d of it); nest it less deeply, or keep the deep part in a file and pass its path", name, je.Reason, je.Offset), false
	case je.Kind == strictjson.InvalidUTF8:
		return fmt.Sprintf("argument %q holds bytes that are not UTF-8 (at byte %d of it); send it as UTF-8 text", name, je.Offset), true
	}
	return fmt.Sprintf("argument %q is not acceptable JSON (%s at byte %d of it)", name, je.Reason, je.Offset), false
}

// wholeProblem says what is wrong with the arguments object itself.
func wholeProblem(je *strictjson.Error) string {
	switch je.Kind {
	case strictjson.NumberRange:
		return "an argument " + beyondFloat
	case strictjson.InvalidUTF8:
		return fmt.Sprintf("the arguments hold bytes that are not UTF-8 (at byte %d); send them as UTF-8 text", je.Offset)
	}
	return fmt.Sprintf("the arguments are not acceptable JSON (%s at byte %d); send one JSON object with each argument named once", je.Reason, je.Offset)
}

// decode checks one argument's value against the field. It returns a problem sentence, or "".
func (f *field) decode(v json.RawMessage) (any, string) {
	got := strictjson.KindOf(v)
	want := func(what string) string {
		return fmt.Sprintf("argument %q must be %s, not %s", f.name, what, got)
	}
	switch f.kind {
	case kString:
		if got != "a string" {
			return nil, want("a string" + f.example())
		}
		s, problem := stringValue(f.name, v)
		if problem != "" {
			return nil, problem
		}
		return f.checkString(f.name, s)
	case kBool:
		if got != "a boolean" {
			return nil, want("a boolean (true or false)")
		}
		return string(bytes.TrimSpace(v)) == "true", ""
	case kStrings:
		// An item is a string field of its own, with the item limits and no description.
		item := field{max: f.itemMax, pattern: f.pattern, hint: f.hint, rule: f.rule}
		return decodeArray(f, v, "an array of strings", func(name string, it json.RawMessage) (string, string) {
			if k := strictjson.KindOf(it); k != "a string" {
				return "", fmt.Sprintf("argument %q must be a string, not %s", name, k)
			}
			s, problem := stringValue(name, it)
			if problem != "" {
				return "", problem
			}
			if s == "" {
				return "", fmt.Sprintf("argument %q is empty", name)
			}
			return item.checkString(name, s)
		})
	case kObject, kJSON:
		what, keep := f.shape(), "record its path"
		if f.kind == kJSON {
			keep = "save its path instead"
			// Claude Code parses a string holding an object into the object for this type
			// (object or array) but leaves one holding an array a string. A string is never a
			// value of this argument, so one holding an object or array is read as that value.
			if inner, ok := jsonInString(v); ok {
				if at := strictjson.LoneSurrogate(v); at >= 0 {
					return nil, halfPair(f.name, fmt.Sprintf("byte %d of it", at)) // inner has U+FFFD
				}
				v, got = inner, strictjson.KindOf(inner)
			}
		}
		// Kept as sent, such a half would come back (load_checkpoint) to a client that cannot
		// send it on: the API refuses a request holding one, and every request after it.
		if at := strictjson.LoneSurrogate(v); at >= 0 && (got == "an object" || got == "an array") {
			return nil, halfPair(f.name, fmt.Sprintf("byte %d of it", at))
		}
		if got != "an object" && (f.kind == kObject || got != "an array") {
			if got == "a string" { // the common mistake: JSON as text inside a string
				what += " (pass the JSON value itself, not JSON text inside a string)"
			}
			return nil, want(what)
		}
		if f.max > 0 && len(v) > f.max {
			return nil, fmt.Sprintf("argument %q is %d bytes, more than the limit of %d; keep large content in a file and %s", f.name, len(v), f.max, keep)
		}
		return json.RawMessage(bytes.Clone(v)), ""
	case kStringMap:
		if got != "an object" {
			return nil, want(`an object of names to string values, such as {"PLAN_PATH": "docs/plan.md"}`)
		}
		var m map[string]json.RawMessage
		_ = json.Unmarshal(v, &m)
		if f.max > 0 && len(m) > f.max {
			return nil, fmt.Sprintf("argument %q has %d entries, more than the limit of %d", f.name, len(m), f.max)
		}
		out := make(map[string]string, len(m))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if f.pattern != nil && !f.pattern.MatchString(k) {
				return nil, fmt.Sprintf("argument %q has a name that is not %s", f.name, f.hint)
			}
			if n := utf8.RuneCountInString(k); f.keyMax > 0 && n > f.keyMax {
				return nil, fmt.Sprintf("argument %q has a name of %d characters, more than the limit of %d", f.name, n, f.keyMax)
			}
			name := f.name + "." + k
			if kk := strictjson.KindOf(m[k]); kk != "a string" {
				return nil, fmt.Sprintf("argument %q must be a string, not %s (write numbers and booleans as strings, such as \"3\")", name, kk)
			}
			s, problem := stringValue(name, m[k])
			if problem == "" {
				problem = lineProblem(name, s, f.itemMax, true)
			}
			if problem != "" {
				return nil, problem
			}
			out[k] = s
		}
		return out, ""
	case kViolations:
		return decodeArray(f, v, f.shape()+" (an empty array clears the list)", decodeViolation)
	}
	return nil, fmt.Sprintf("argument %q has a type this server cannot read", f.name)
}

// jsonInString is the JSON object or array that the JSON string v holds as text, when it holds
// one the store accepts (strictjson's limits: no repeated key, not too deep).
func jsonInString(v json.RawMessage) (json.RawMessage, bool) {
	if strictjson.KindOf(v) != "a string" {
		return nil, false
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return nil, false
	}
	inner := bytes.TrimSpace([]byte(s))
	if len(inner) == 0 || inner[0] != '{' && inner[0] != '[' || strictjson.Check(inner) != nil {
		return nil, false
	}
	return inner, true
}

// decodeArray reads an array argument within the field's limit on items, each item named
// name[i] and read by item.
func decodeArray[T any](f *field, v json.RawMessage, what string, item func(name string, raw json.RawMessage) (T, string)) (any, string) {
	if got := strictjson.KindOf(v); got != "an array" {
		return nil, fmt.Sprintf("argument %q must be %s, not %s", f.name, what, got)
	}
	var items []json.RawMessage
	_ = json.Unmarshal(v, &items)
	if f.max > 0 && len(items) > f.max {
		return nil, fmt.Sprintf("argument %q has %d items, more than the limit of %d", f.name, len(items), f.max)
	}
	out := make([]T, 0, len(items))
	for i, it := range items {
		x, problem := item(fmt.Sprintf("%s[%d]", f.name, i), it)
		if problem != "" {
			return nil, problem
		}
		out = append(out, x)
	}
	return out, ""
}

var violationFields = []*field{
	{name: "code", kind: kString, required: true, max: 64, pattern: violCodePattern, hint: "a short rule code such as V-TEST-03"},
	{name: "severity", kind: kString, required: true, enum: severities, fold: true},
	{name: "details", kind: kString, required: true, max: 2000, multiline: true},
}

func decodeViolation(name string, raw json.RawMessage) (engine.Violation, string) {
	if k := strictjson.KindOf(raw); k != "an object" {
		return engine.Violation{}, fmt.Sprintf(`argument %q must be an object {"code", "severity", "details"}, not %s`, name, k)
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	for k := range m {
		if k != "code" && k != "severity" && k != "details" {
			return engine.Violation{}, fmt.Sprintf("argument %q has an unknown field (a violation has code, severity and details)", name)
		}
	}
	vals := map[string]string{}
	for _, f := range violationFields {
		v, ok := m[f.name]
		fname := name + "." + f.name
		if !ok || string(v) == "null" {
			return engine.Violation{}, fmt.Sprintf("argument %q is missing (a violation needs code, severity and details)", fname)
		}
		if k := strictjson.KindOf(v); k != "a string" {
			return engine.Violation{}, fmt.Sprintf("argument %q must be a string, not %s", fname, k)
		}
		s, problem := stringValue(fname, v)
		if problem == "" {
			s, problem = f.checkString(fname, s)
		}
		if problem != "" {
			return engine.Violation{}, problem
		}
		vals[f.name] = s
	}
	return engine.Violation{Code: vals["code"], Severity: vals["severity"], Details: vals["details"]}, ""
}

// stringValue reads v, a JSON string, as the argument named name. Half of a UTF-16 surrogate
// pair is a problem: encoding/json would read it as U+FFFD, a character that was not sent.
func stringValue(name string, v json.RawMessage) (string, string) {
	var s string
	_ = json.Unmarshal(v, &s)
	body := bytes.TrimSpace(v)
	body = body[1 : len(body)-1]
	if at := strictjson.LoneSurrogate(body); at >= 0 {
		n := utf8.RuneCount(strictjson.AppendUnescaped(nil, body[:at]))
		return "", halfPair(name, fmt.Sprintf("character %d", n))
	}
	return s, ""
}

// halfPair says that the argument named name holds, at where, half of a UTF-16 surrogate pair.
func halfPair(name, where string) string {
	return fmt.Sprintf(`argument %q holds half of a UTF-16 surrogate pair (a \u escape from D800 to DFFF without its other half) at %s, which is no character; send the whole pair or remove it`, name, where)
}

// checkString applies the field's rules to a string value named name.
func (f *field) checkString(name, s string) (string, string) {
	if len(f.enum) > 0 {
		is := func(e string) bool { return s == e || f.fold && strings.EqualFold(s, e) }
		if i := slices.IndexFunc(f.enum, is); i >= 0 {
			return f.enum[i], ""
		}
		for word, v := range f.synonyms {
			if is(word) {
				return v, ""
			}
		}
		return "", fmt.Sprintf("argument %q is not one of %s", name, strings.Join(f.enum, ", "))
	}
	if f.required && utf8.RuneCountInString(s) < max(f.minLen, 1) {
		return "", fmt.Sprintf("argument %q is empty%s", name, f.takes())
	}
	if problem := lineProblem(name, s, f.max, f.multiline); problem != "" {
		return "", problem
	}
	if f.pattern != nil && !f.pattern.MatchString(s) || f.rule != nil && f.rule(s) != nil {
		if f.same != nil {
			// Computed, not the value quoted back: nothing pasted in it is repeated.
			if v := f.same(s); v != "" {
				return "", fmt.Sprintf("argument %q is not %s; write %s, the same in that form", name, f.hint, v)
			}
		}
		if f.why != nil {
			if w := f.why(s); w != "" {
				return "", fmt.Sprintf("argument %q is not %s: %s", name, f.hint, w)
			}
		}
		return "", fmt.Sprintf("argument %q is not %s", name, f.hint)
	}
	if f.fileName != nil {
		// The pattern's shape passed: what is left is a name Windows keeps for a device.
		if ne, ok := errors.AsType[*store.NameError](f.fileName(s)); ok {
			return "", fmt.Sprintf("argument %q cannot be used: %s; choose another", name, ne.Reason)
		}
	}
	if f.glob {
		if _, err := path.Match(s, ""); err != nil {
			return "", fmt.Sprintf("argument %q is not a valid glob (a '[' needs its ']' and at least one character between them): '*' matches any run of characters, '?' one character, '[0-9]' one of a set; such as implement-* or plan-v[0-9]", name)
		}
	}
	return s, ""
}

// lineProblem rejects control characters (newlines and tabs too, unless multiline) and strings
// longer than maxRunes. Control characters have no place in names, paths or one-line notes, and
// a NUL in a path is a classic way to cut it short.
func lineProblem(name, s string, maxRunes int, multiline bool) string {
	if maxRunes > 0 {
		if n := utf8.RuneCountInString(s); n > maxRunes {
			return fmt.Sprintf("argument %q is %d characters, more than the limit of %d; shorten it (keep long text in a file and pass its path)", name, n, maxRunes)
		}
	}
	for i, r := range s {
		if r == '\n' || r == '\t' || r == '\r' {
			if multiline {
				continue
			}
			return fmt.Sprintf("argument %q holds a line break or tab at character %d; it must be one line", name, utf8.RuneCountInString(s[:i]))
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Sprintf("argument %q holds the control character U+%04X at character %d; remove it", name, r, utf8.RuneCountInString(s[:i]))
		}
	}
	return ""
}

// takes says what the field takes, after a colon, for a refusal that it is missing: the values
// of an enum or the JSON shape, and the description, or else what a valid value looks like;
// "" when nothing is known.
func (f *field) takes() string {
	var say []string
	if s := f.shape(); s != "" {
		// The description of such a field is its limit or its use ("At most 1 MiB."), which
		// says nothing of what to send.
		say = append(say, s)
	}
	if len(f.enum) > 0 {
		say = append(say, "one of "+strings.Join(f.enum, ", "))
	}
	if d := strings.TrimSuffix(f.desc, "."); d != "" {
		say = append(say, d)
	} else if len(f.enum) == 0 && f.hint != "" {
		say = append(say, f.hint)
	}
	if say == nil {
		return ""
	}
	// After the colon a description goes on in lower case ("such as plan-v1"), an acronym as it is.
	s := strings.Join(say, ". ")
	if len(s) > 1 && s[1] >= 'a' && s[1] <= 'z' {
		s = strings.ToLower(s[:1]) + s[1:]
	}
	return ": " + s + "."
}

// shape is the JSON shape of a field's value, as its refusals say it; "" for the kinds whose
// refusals say it otherwise.
func (f *field) shape() string {
	switch f.kind {
	case kObject:
		return "a JSON object"
	case kJSON:
		return "a JSON object or array"
	case kViolations:
		return `an array of {"code", "severity", "details"} objects`
	}
	return ""
}

func (f *field) example() string {
	switch {
	case len(f.enum) > 0:
		return " (one of " + strings.Join(f.enum, ", ") + ")"
	case f.hint != "":
		return " (" + f.hint + ")"
	}
	return ""
}

// argNamePattern is what an argument's name looks like: an unknown key of this shape is a
// misspelt or guessed name, said back so the model sees which one it sent (a key of a secret's
// shape never gets here: the secret scan refuses the call first).
var argNamePattern = regexp.MustCompile(`^[A-Za-z][\w-]{0,31}$`)

// maxUnknownNamed keeps the naming of many unknown arguments short.
const maxUnknownNamed = 3

// unknownNames names the unknown arguments (sorted) of an argument name's shape, at most
// maxUnknownNamed of them, and counts the rest: `, "kyes" and 1 more`, or "" when none has
// that shape. Any other key may be text pasted in the wrong place: it is counted, not repeated.
func unknownNames(unknown []string) string {
	var named []string
	for _, k := range unknown {
		if len(named) < maxUnknownNamed && argNamePattern.MatchString(k) {
			named = append(named, strconv.Quote(k))
		}
	}
	if len(named) == 0 {
		return ""
	}
	if rest := len(unknown) - len(named); rest > 0 {
		return fmt.Sprintf(", %s and %d more", strings.Join(named, ", "), rest)
	}
	if len(named) == 1 {
		return " " + named[0]
	}
	return ", " + strings.Join(named[:len(named)-1], ", ") + " and " + named[len(named)-1]
}

// Refused values and other keys are never quoted back: the caller may have pasted a secret into
// the wrong argument, and the message goes into the model's context.

// near finds the argument a misspelt name most likely meant: same letters ignoring case, '_'
// and '-', or those with two neighbours swapped ("kyes").
func (t *toolSpec) near(name string) string {
	norm := func(s string) string {
		return strings.NewReplacer("_", "", "-", "", " ", "").Replace(strings.ToLower(s))
	}
	n := norm(name)
	if i := slices.IndexFunc(t.fields, func(f field) bool { return norm(f.name) == n || swapped(norm(f.name), n) }); i >= 0 {
		return t.fields[i].name
	}
	return ""
}

// swapped reports whether b is a with one pair of neighbouring bytes swapped.
func swapped(a, b string) bool {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return len(a) == len(b) && i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:]
}

// signature lists the arguments, optional ones marked with '?'.
func (t *toolSpec) signature() string {
	if len(t.fields) == 0 {
		return "no arguments: send {}"
	}
	parts := make([]string, 0, len(t.fields))
	for _, f := range t.fields {
		if f.required {
			parts = append(parts, f.name)
		} else {
			parts = append(parts, f.name+"?")
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
