package workflow

import (
	"regexp"
	"strings"
	"testing"
)

// The name, id and variable checks are hand-written character classes (no regexp compiled in
// every hook process); they must accept exactly what these patterns accept.
func TestShapedMatchesPatterns(t *testing.T) {
	cases := []struct {
		name  string
		re    *regexp.Regexp
		check func(string) bool
	}{
		{"type or phase name", regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`), func(s string) bool { return ValidName(s) == nil }},
		// ValidID has rules beyond the class (no "..", no device names): only its class error counts.
		{"workflow id", regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`), func(s string) bool {
			err := ValidID(s)
			return s != "" && (err == nil || !strings.Contains(err.Error(), "use letters, digits"))
		}},
		{"variable name", regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`), func(s string) bool { return validVarKey(s) == nil }},
	}
	alphabet := []byte("aZ09_-. /é\x00")
	var all []string
	var gen func(prefix []byte, n int)
	gen = func(prefix []byte, n int) {
		all = append(all, string(prefix))
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			gen(append(prefix, c), n-1)
		}
	}
	gen(nil, 3)
	for _, tc := range cases {
		for _, s := range all {
			if got, want := tc.check(s), tc.re.MatchString(s); got != want {
				t.Errorf("%s %q: accepted %v, the pattern says %v", tc.name, s, got, want)
			}
		}
	}
}
