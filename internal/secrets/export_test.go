package secrets

// MatchSpan exposes where the first finding in s lies, so tests can check that no message
// or path ever carries it.
func MatchSpan(s string) (rule, span string) {
	r, start, end := matchAt(s)
	if r == nil {
		return "", ""
	}
	return r.name, s[start:end]
}
