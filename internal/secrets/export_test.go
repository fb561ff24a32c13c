package secrets

import "strings"

// MatchSpan exposes where the first finding in s lies, so tests can check that no message
// or path ever carries it.
func MatchSpan(s string) (rule, span string) {
	r, span := matchAt(s)
	if r == nil {
		return "", ""
	}
	return r.name, span
}

// Unescape exposes the JSON string decoder used by the walk and the fast path.
func Unescape(body string) string {
	var b strings.Builder
	unescape(&b, body)
	return b.String()
}

// BuildIndex exposes the keyword index's construction for its benchmark.
func BuildIndex() { buildIndex() }
