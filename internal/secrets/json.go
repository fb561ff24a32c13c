package secrets

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/cairn-dev/cairn/internal/strictjson"
)

// scanLimits are the walk's: any size, and nesting to 512 (deeper is scanned as plain text).
var scanLimits = strictjson.Limits{MaxSize: math.MaxInt, MaxDepth: 512}

// ScanJSON reports the first secret in a JSON document, in a value or in an object key, with
// its JSON path; nil when it finds none. Escapes are decoded first, so "\u0041KIA..." is seen
// as "AKIA...". Each object member is also read as the text "key": "value" (a number or
// literal unquoted), so a rule that needs a name and a value together (password, api_key,
// aws_secret_access_key...) finds {"password":"..."} at any depth, whatever the escapes. A
// document is never found cleaner than its own text: what ScanString finds in it, ScanJSON
// finds too, with the path "$" when no one string or member holds it. A document that is not
// strict JSON (or nests deeper than 512) is scanned as text and a finding gets the path "$".
func ScanJSON(doc []byte) *Finding {
	spans, err := scanLimits.AppendSpans(nil, doc, nil)
	if err != nil {
		return scanText(doc, false)
	}
	return ScanChecked(doc, spans)
}

// InRefusal returns the secret in doc when err, strictjson's refusal of doc, is for a
// repeated key, or nil: such a document is refused for the secret it holds (the finding names
// the rule, not the text), which must go whatever is done about the key.
func InRefusal(doc []byte, err error) *Finding {
	je, ok := errors.AsType[*strictjson.Error](err)
	if !ok || je.Kind != strictjson.DuplicateKey {
		return nil
	}
	return ScanJSON(doc)
}

// ScanChecked is ScanJSON for a document that strictjson's gate has just accepted, given the
// spans of its escaped strings (strictjson.Limits.AppendSpans): the check and the scan are then
// one pass over the document, plus a walk for the path only when something was found or a
// named rule's keyword occurs.
func ScanChecked(doc []byte, spans []int) *Finding {
	p := ProbeText(doc)
	return p.Or(ProbeEscaped(doc, spans, &p)).Finish(doc)
}

// Probe is what a scan of a document's text, or of some of its escaped strings decoded,
// found: ScanChecked in parts, so that they can run on two cores while strictjson checks the
// document. Or joins the parts; Finish ends the scan.
type Probe struct {
	found *rule // the rule ScanString finds in the document's text, if any
	some  bool  // a rule matches in the text or in decoded strings
	named bool  // a named rule's keyword occurs in them
	// met lists where a keyword occurs in the document's text, when exact: the text holds
	// nothing normalize drops, so every keyword it holds was met where it stands.
	met   []int
	exact bool
}

// ProbeText scans doc as text.
func ProbeText(doc []byte) Probe {
	// The texts are read only while a call runs and nothing found keeps a piece of them, so
	// they are viewed in place: copying a 1 MB document cost a tenth of its check.
	var p Probe
	p.found, p.named, p.exact = probe(view(doc), &p.met, false)
	p.some = p.found != nil
	return p
}

// ProbeEscaped scans the decoded text of the strings of doc at spans (start and end offsets,
// as strictjson.Limits.AppendSpans gives them), each followed by a newline. Given the probe
// of doc's text (nil while it is not known), it decodes only the strings whose decoded text
// may hold a keyword: those where the text holds one, and those with an escape that stands for
// a keyword's byte or a character normalize drops. In any other string every run of
// keywords' bytes is written as it is, where the text holds no keyword.
func ProbeEscaped(doc []byte, spans []int, text *Probe) Probe {
	if len(spans) == 0 || text != nil && text.some { // found: Finish reads every string
		return Probe{}
	}
	ix := index()
	buf := decoded.Get().(*[]byte)
	defer decoded.Put(buf)
	out := (*buf)[:0]
	for i := 0; i+1 < len(spans); i += 2 {
		a, b := spans[i], spans[i+1]
		if text != nil && text.exact && !ix.hides(doc[a:b]) && !text.metIn(a, b) {
			continue
		}
		out = append(strictjson.AppendUnescaped(out, doc[a:b]), '\n')
	}
	if cap(out) <= maxPooled {
		*buf = out
	}
	r, named := probeDecoded(view(out))
	return Probe{some: r != nil, named: named}
}

// metIn reports whether a keyword was met in the text between a and b.
func (p *Probe) metIn(a, b int) bool {
	i, _ := slices.BinarySearch(p.met, a)
	return i < len(p.met) && p.met[i] < b
}

// decoded holds buffers for ProbeEscaped: a 1 MB checkpoint with escapes in every item would
// otherwise grow one from nothing at each save (1.1 MB allocated).
var decoded = sync.Pool{New: func() any { return new([]byte) }}

const maxPooled = 2 * strictjson.MaxSize

// Or joins what two probes of the same document found.
func (p Probe) Or(q Probe) Probe {
	return Probe{found: cmp.Or(p.found, q.found), some: p.some || q.some, named: p.named || q.named}
}

// Finish ends the scan of doc, which p probed all of: the document's text and its escaped
// strings decoded.
func (p Probe) Finish(doc []byte) *Finding {
	// Every string of the document, decoded, is a substring of the document (no escapes) or
	// of the decoded text, so when neither holds a secret no string does; and a member's text
	// "key": "value" matches a named rule only where one of its keywords occurs in the key
	// or the value (no keyword holds `": "`), so when neither holds one, no member does.
	some, named := p.some, p.named
	if !some && !named {
		return nil
	}
	var f *Finding
	var member []byte
	// A named rule's match in a member's text starts at its keyword. One that starts in the
	// value lies in the value, which the string check reads (when it holds a match, the
	// text or escaped did too, so some is set); so only a member whose key holds a keyword
	// is read. A scalar value is visited right after its key.
	keyNames := false
	// A value one level down is also read with its parent's key, "parent": {"key": value}
	// ({"password": {"value": ...}}, {"auth": {"token": ...}}), when that key holds a keyword
	// (bit d of names: the key at depth d, up to 63) or the text holds a match.
	var names uint64
	err := scanLimits.Walk(doc, func(s string, part strictjson.Part, path []strictjson.Step) bool {
		if some && part != strictjson.Literal {
			if r := match(s); r != nil {
				f = &Finding{Rule: r.name, Path: render(path), InKey: part == strictjson.Key}
				return true
			}
		}
		n := len(path)
		if part == strictjson.Key {
			r, named := probeDecoded(s)
			keyNames = r != nil || named
			if n < 64 {
				names &^= 1 << n
				if keyNames {
					names |= 1 << n
				}
			}
			// A key no name has the shape of, under a name, may be the name's value held as
			// a key: {"pwd": {"summer(2024)!": 1}}. It is read unquoted, as code is.
			if n >= 1 && path[n-1].Index < 0 && (some || n-1 < 64 && names&(1<<(n-1)) != 0) && keyValue(s) {
				member = appendMember(member[:0], path[n-1].Key, s, false)
				if r := match(view(member)); r != nil {
					f = &Finding{Rule: r.name, Path: render(path), InKey: true}
					return true
				}
			}
			return false
		}
		quoted := part == strictjson.String
		if n >= 2 && path[n-1].Index >= 0 && path[n-2].Index < 0 && (some || n-2 < 64 && names&(1<<(n-2)) != 0) {
			// An item of a list under a name is read with it: {"password": ["..."]}.
			member = appendMember(member[:0], path[n-2].Key, s, quoted)
			if r := match(view(member)); r != nil {
				f = &Finding{Rule: r.name, Path: render(path)}
				return true
			}
			return false
		}
		if n == 0 || path[n-1].Index >= 0 {
			return false
		}
		if keyNames {
			member = appendMember(member[:0], path[n-1].Key, s, quoted)
			if r := match(view(member)); r != nil {
				f = &Finding{Rule: r.name, Path: render(path)}
				return true
			}
		}
		if n >= 2 && path[n-2].Index < 0 && (some || n-2 < 64 && names&(1<<(n-2)) != 0) {
			member = append(append(append(member[:0], '"'), path[n-2].Key...), `": {`...)
			member = append(appendMember(member, path[n-1].Key, s, quoted), '}')
			if r := match(view(member)); r != nil {
				f = &Finding{Rule: r.name, Path: render(path)}
				return true
			}
		}
		return false
	})
	if err != nil {
		return scanText(doc, false)
	}
	if f == nil && p.found != nil {
		// The text holds a secret that spans strings (["api_key", "..."], a command split
		// in two): refused all the same, as ScanString refuses the text.
		f = &Finding{Rule: p.found.name, Path: "$"}
	}
	return f
}

// keyValue: an object key no name has the shape of, a digit and a symbol names do not hold
// (_ - . : / @ $ and spaces they do), as a password does: RequireDigit, minLength, ui:widget
// and pbkdf2_sha256 are names.
func keyValue(k string) bool {
	return strings.ContainsAny(k, "0123456789") && strings.IndexFunc(k, func(r rune) bool {
		return r < utf8.RuneSelf && !isAlnum(byte(r)) && !strings.ContainsRune("_-.:/@$ ", r)
	}) >= 0
}

// appendMember appends the text a member is read as: "key": "value", or "key": value for a
// number or literal.
func appendMember(dst []byte, key, value string, quoted bool) []byte {
	dst = append(append(append(dst, '"'), key...), `": `...)
	if !quoted {
		return append(dst, value...)
	}
	return append(append(append(dst, '"'), value...), '"')
}

// view returns b as a string without copying it; b must not change while the string is used.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// probe returns the rule match finds in s, if any, and whether a named rule's keyword occurs
// in s or in s as normalize leaves it (told for sure only when no rule matched); exact says,
// when no rule matched, that s holds nothing normalize drops. When met is not nil, it gets
// the places in s where a keyword occurs (see scan). s is read decoded too, as match reads
// it (see decodings; json as there).
func probe(s string, met *[]int, json bool) (found *rule, named, exact bool) {
	r, _, _, named := scan(s, met)
	exact = true
	more := func(s string) {
		var m bool
		r, _, _, m = scan(s, nil)
		named, exact = named || m, false
		if n, ok := normalize(s); ok && r == nil {
			r, _, _, m = scan(n, nil)
			named = named || m
		}
	}
	if r == nil {
		if n, ok := normalize(s); ok {
			more(n)
		}
	}
	if r == nil {
		// Its keywords are not where they stand in s.
		for u := range decodings(s, json) {
			if more(u); r != nil {
				break
			}
		}
	}
	return r, named, exact
}

// probeDecoded is probe for decoded strings, read also decoded again as match reads them:
// JSON escaped twice or more in a document is found where ScanString finds it.
func probeDecoded(s string) (found *rule, named bool) {
	found, named, _ = probe(s, nil, true)
	return found, named
}

// scanText scans a document that is not JSON as text: its strings decoded, then as it is.
// in says the document starts inside a string (a piece of a longer text, see ScanReader).
func scanText(doc []byte, in bool) *Finding {
	s := string(doc)
	r := match(flatten(s, in))
	if r == nil {
		r = match(s)
	}
	if r != nil {
		return &Finding{Rule: r.name, Path: "$"}
	}
	return nil
}

// flatten returns the document with every string replaced by its decoded text between line
// breaks, the document starting inside a string when in. It checks no syntax: it only has to
// put every string's decoded text, and any text outside strings, somewhere in its result.
func flatten(s string, in bool) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	b := make([]byte, 0, len(s)+16)
	for i := 0; i < len(s); in = false {
		if !in {
			q := strings.IndexByte(s[i:], '"')
			if q < 0 {
				b = append(b, s[i:]...)
				break
			}
			b = append(append(b, s[i:i+q]...), '\n')
			i += q + 1
		}
		start := i
		for i < len(s) && s[i] != '"' {
			if s[i] == '\\' {
				i++
			}
			i++
		}
		b = append(strictjson.AppendUnescaped(b, []byte(s[start:min(i, len(s))])), '\n')
		i++
	}
	return string(b)
}

// quoted says whether the text after s is inside a string as flatten reads s, s starting
// inside one when in; escaped, that s ends inside a string with the backslash of an escape.
func quoted(s []byte, in bool) (inside, escaped bool) {
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '"':
			in = !in
		case s[i] == '\\' && in:
			if i+1 == len(s) {
				return true, true
			}
			i++
		}
	}
	return in, false
}

// Paths stay short in error messages: keys are cut at maxKeyRunes and a path longer than
// maxPathBytes keeps its start and its end.
const (
	maxKeyRunes  = 40
	maxPathBytes = 200
)

// render writes a path: $.a.b[2], $["odd key"], keys quoted with Go escapes so control, bidi
// and other invisible characters show as escapes, and a key with a secret's shape as […]. It
// runs only on a finding.
func render(path []strictjson.Step) string {
	segs := make([]string, len(path))
	for i, p := range path {
		if p.Index < 0 && secretShapedKey(path[:i], p.Key) {
			segs[i] = "[…]"
			continue
		}
		segs[i] = step(p)
	}
	out := "$" + strings.Join(segs, "")
	if len(out) <= maxPathBytes {
		return out
	}
	// Keep "$" and the first segment, then as many trailing segments as fit.
	head := "$" + segs[0] + "…"
	tail := ""
	for i := len(segs) - 1; i > 0; i-- {
		if len(head)+len(segs[i])+len(tail) > maxPathBytes {
			break
		}
		tail = segs[i] + tail
	}
	return head + tail
}

// secretShapedKey: a key the refusal must not repeat, one a rule finds as it is or read as
// the value of its parent's key (a password held as a key under "password"), or a random
// credential-shaped string. A key found on its own is refused before any path through it is
// rendered; this catches the ones only their place makes secrets.
func secretShapedKey(parents []strictjson.Step, key string) bool {
	if match(key) != nil || credentialValue(key) {
		return true
	}
	if n := len(parents); n > 0 && parents[n-1].Index < 0 {
		return match(view(appendMember(nil, parents[n-1].Key, key, true))) != nil
	}
	return false
}

func step(p strictjson.Step) string {
	if p.Index >= 0 {
		return "[" + strconv.Itoa(p.Index) + "]"
	}
	if isIdent(p.Key) {
		return "." + p.Key
	}
	k := p.Key
	if utf8.RuneCountInString(k) > maxKeyRunes {
		k = string([]rune(k)[:maxKeyRunes]) + "…"
	}
	return "[" + strconv.QuoteToGraphic(k) + "]"
}

func isIdent(k string) bool {
	if k == "" || len(k) > maxKeyRunes {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9') {
			continue
		}
		return false
	}
	return true
}
