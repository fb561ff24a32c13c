package migrate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/workflow"
)

func asString(v any) (string, bool) {
	s, ok := v.(string)
	return s, ok
}

// asText accepts a string, or a number where an identifier was expected (a task id 7).
func asText(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case json.Number:
		return t.String(), true
	}
	return "", false
}

// asBool accepts a boolean or the strings "true" and "false" in any case.
func asBool(v any) (bool, bool) {
	switch t := v.(type) {
	case bool:
		return t, true
	case string:
		s := strings.ToLower(strings.TrimSpace(t))
		return s == "true", s == "true" || s == "false"
	}
	return false, false
}

// asCount accepts a non-negative whole number, also written as a string ("2") or as 2.0.
func asCount(v any) (int, bool) {
	var s string
	switch t := v.(type) {
	case json.Number:
		s = t.String()
	case string:
		s = strings.TrimSpace(t)
	default:
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > math.MaxInt32 || f != math.Trunc(f) {
		return 0, false
	}
	return int(f), true
}

// asStrings accepts an array of strings, or one string as a one-element list. clean is false
// when some element was not a string (those are dropped from the list).
func asStrings(v any) (list []string, clean bool) {
	switch t := v.(type) {
	case string:
		return []string{t}, true
	case []any:
		clean = true
		for _, e := range t {
			if s, ok := e.(string); ok {
				list = append(list, s)
			} else {
				clean = false
			}
		}
		return list, clean
	}
	return nil, false
}

// Times are accepted in RFC 3339 and the other ISO 8601 forms the seeds' writers produce
// (no zone, meaning UTC; a space for the T; "+0100" offsets; a date alone), and as Unix
// seconds or milliseconds, and always written back as UTC RFC 3339.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999Z0700",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02",
}

// Unix times are believed only between 2000 and 2200, so a count or a version is not
// mistaken for one.
const (
	minUnix = 946684800  // 2000-01-01
	maxUnix = 7258118400 // 2200-01-01
)

func parseTime(v any) (time.Time, bool) {
	var s string
	switch t := v.(type) {
	case string:
		s = strings.ToUpper(strings.TrimSpace(t))
		s = strings.TrimSuffix(s, " UTC")
	case json.Number:
		s = t.String()
	default:
		return time.Time{}, false
	}
	if s != "" && strings.Trim(s, "0123456789") == "" && len(s) <= 13 {
		n, _ := strconv.ParseInt(s, 10, 64) // at most 13 digits: it cannot fail
		switch {
		case n >= minUnix && n < maxUnix:
			return time.Unix(n, 0).UTC(), true
		case n >= minUnix*1000 && n < maxUnix*1000:
			return time.UnixMilli(n).UTC(), true
		}
		return time.Time{}, false
	}
	if _, isNum := v.(json.Number); isNum {
		return time.Time{}, false
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			// Not Go's zero time (the record reads it as unset; Go programs write it for a
			// time never set), and a year encoding/json can write once in UTC.
			if t = t.UTC(); t.IsZero() || t.Year() < 0 || t.Year() > 9999 {
				return time.Time{}, false
			}
			return t, true
		}
	}
	return time.Time{}, false
}

// rawJSON encodes a value decoded from an original document (strings, json.Number, bools,
// nil, maps and slices of them), which cannot fail.
func rawJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// normTTL accepts a ttl the record reads (workflow.ParseTTL), any other form of a time it
// reads too ("1h30m", "1d12h", "0.5d": workflow.SameTTL, in the largest unit that keeps it
// whole) and the seeds' weeks ("2w" is "14d"), in any case and spacing. Seconds and ttls
// past ParseTTL's limit are refused (and so kept under legacy).
func normTTL(v any) (string, bool) {
	s, ok := v.(string)
	if !ok {
		return "", false
	}
	s = strings.ToLower(strings.TrimSpace(s))
	if n, ok := strings.CutSuffix(s, "w"); ok && len(n) <= 3 && n != "" && strings.Trim(n, "0123456789") == "" {
		w, _ := strconv.Atoi(n)
		s = strconv.Itoa(7*w) + "d"
	}
	if _, err := workflow.ParseTTL(s); err == nil && s != "" {
		return s, true
	}
	s = workflow.SameTTL(s)
	return s, s != ""
}

// sanitizeName turns a seed's name ("APEX", "Git Commit", "REQUIREMENTS") into a Cairn name
// ([a-z0-9][a-z0-9_-]*, at most 64 bytes; dots too when dots is set, for workflow ids): lower
// case, any other character a dash, runs of dashes or dots collapsed, no leading or trailing
// punctuation. It returns "" when nothing usable is left.
func sanitizeName(s string, dots bool) string {
	s = strings.ToLower(strings.TrimSpace(s))
	b := make([]byte, 0, len(s))
	for _, r := range s {
		var c byte
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			c = byte(r)
		case r == '.' && dots:
			c = '.'
		default:
			c = '-'
		}
		if (c == '-' || c == '.') && len(b) > 0 && (b[len(b)-1] == '-' || b[len(b)-1] == '.') {
			if c == '.' {
				b[len(b)-1] = '.' // "a-.b" and "a..b" both become "a.b": never "..".
			}
			continue
		}
		b = append(b, c)
	}
	out := strings.TrimLeft(string(b), "-._")
	if len(out) > 64 {
		out = out[:64]
	}
	return strings.TrimRight(out, "-.")
}

// sanitizeID is sanitizeName for workflow ids, which name files: dots allowed, and never a
// Windows device name (the store refuses those).
func sanitizeID(s string) string {
	id := sanitizeName(s, true)
	stem, _, _ := strings.Cut(id, ".")
	if stem == "con" || stem == "prn" || stem == "aux" || stem == "nul" || (len(stem) == 4 && (strings.HasPrefix(stem, "com") || strings.HasPrefix(stem, "lpt")) && stem[3] >= '0' && stem[3] <= '9') {
		id = sanitizeName("wf-"+id, true)
	}
	return id
}

// deriveID makes a workflow id for formats that have none, in the shape workflow.NewID gives
// new workflows: the type, the creation time and four hex digits, e.g.
// "apex-20261122T173000Z-3f9a". The digits come from the original's hash rather than a random
// source, so the same input always gets the same id. An original with no time at all (t is
// zero) gets the type and twelve hex digits of its hash, "oneshot-aaf35f14c702": never the
// migration's own time. typ is already a valid name.
func deriveID(typ string, t time.Time, data []byte) string {
	sum := sha256.Sum256(data)
	typ = typ[:min(len(typ), 42)]
	if t.IsZero() {
		return workflow.NormalizeName(typ) + "-" + hex.EncodeToString(sum[:6])
	}
	// 42 + len("-20261122T173000Z-3f9a") = 64, the longest id. Two bytes cannot fail to read.
	id, _ := workflow.NewID(typ, t, bytes.NewReader(sum[:2]))
	return id
}
