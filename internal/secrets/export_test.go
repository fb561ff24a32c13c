package secrets

import "github.com/cairn-dev/cairn/internal/jsonx"

// MatchSpan exposes where the first finding in s lies, so tests can check that no message
// or path ever carries it.
func MatchSpan(s string) (rule, span string) {
	r, span := matchAt(s)
	if r == nil {
		return "", ""
	}
	return r.name, span
}

// Unescape exposes the JSON string decoder the text fallback uses (jsonx's).
func Unescape(body string) string { return string(jsonx.AppendUnescaped(nil, []byte(body))) }

// BuildIndex exposes the keyword index's construction for its benchmark.
func BuildIndex() { buildIndex() }
