// Package secrets finds credentials in text and JSON before Cairn stores them or puts them in a
// model's context. A small set of rules, each behind a cheap keyword prefilter, covers the
// formats that turn up in agent sessions: AWS keys, GitHub, Anthropic, OpenAI and Slack tokens,
// Slack webhooks, private key blocks, JWTs and credentials in URLs.
//
// It is not a general secret scanner (no entropy guessing, no gitleaks rule set: that costs
// about 124 ms to start, too much for a hook), and it never returns or logs the secret it
// found: a Finding holds only the rule's name and where the secret is.
package secrets

import (
	"regexp"
	"strings"
	"sync"
)

// Finding says which rule matched and where. It never holds the secret.
type Finding struct {
	// Rule names the kind of secret, for example "github-token" (see Rules).
	Rule string
	// Path locates it in a JSON document, such as $.vars.TOKEN or $["odd key"][2]; empty for
	// ScanString. When InKey is set, Path is the object whose key holds the secret.
	Path string
	// InKey is set when the secret is an object key rather than a value.
	InKey bool
}

// Error names the rule and the path and says what to do instead. It never contains the secret.
func (f *Finding) Error() string {
	var b strings.Builder
	b.WriteString("secret found (")
	b.WriteString(f.Rule)
	b.WriteString(")")
	switch {
	case f.InKey:
		b.WriteString(" in an object key at ")
		b.WriteString(f.Path)
	case f.Path != "":
		b.WriteString(" at ")
		b.WriteString(f.Path)
	}
	b.WriteString(": secrets are not stored; keep it in an environment variable or a secret" +
		" manager and store a reference to it (the variable's name or the secret's path) instead")
	return b.String()
}

// Rules lists the rule names a Finding can carry, in the order they are tried.
func Rules() []string {
	names := make([]string, len(rules))
	for i, r := range rules {
		names[i] = r.name
	}
	return names
}

// ScanString reports a secret in s (from the first rule, in the order of Rules, that finds
// one), or nil when it finds none.
func ScanString(s string) *Finding {
	if r := match(s); r != nil {
		return &Finding{Rule: r.name}
	}
	return nil
}

type rule struct {
	name string
	// keywords start every match: the regexp runs only where one occurs, anchored there.
	// Case-sensitive unless fold.
	keywords []string
	fold     bool
	// re must begin with ^ and match from the keyword on. It is compiled on first use: most
	// scans meet no keyword, and compiling every rule at start-up cost each hook process
	// most of a millisecond.
	re func() *regexp.Regexp
	// before vets the text just before the keyword (word boundaries, a scheme before "://"):
	// RE2 has no lookbehind. nil means anything may precede.
	before func(s string, i int) bool
	// span bounds how far past the keyword a match can reach (default defaultSpan). The
	// regexp runs on that window only: Go's backtracker clears a bitmap the size of its
	// input, so a 4 KB tail per keyword made scans of keyword-heavy text ten times slower.
	span int
	// ok vets the submatches: it weeds out look-alikes (placeholders, hex SHAs, plain names)
	// the regexp cannot. m[0] is the match. nil accepts every match.
	ok func(s string, i int, m []string) bool
}

var rules = []*rule{
	{
		name:     "aws-access-key-id",
		keywords: []string{"AKIA", "ASIA", "ABIA", "ACCA"},
		re:       lazyRegexp(`^(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?:$|[^A-Za-z0-9])`),
		before:   notAlnum,
	},
	{
		// A secret access key is 40 base64 characters with nothing to recognise it by, so it
		// is only reported after a name that says what it is: secret_access_key,
		// SecretAccessKey, aws_secret, aws-secret-key...
		name:     "aws-secret-access-key",
		keywords: []string{"secret"},
		fold:     true,
		re: lazyRegexp(`(?i)^secret(?:([_.\- ]?access[_.\- ]?key)|[_.\- ]?key)?` +
			`["']?\s{0,16}(?::|=>?)\s{0,16}["']?([A-Za-z0-9/+]{40})(?:$|[^A-Za-z0-9/+=])`),
		before: notAlnumOrAWS,
		ok: func(s string, i int, m []string) bool {
			if m[1] == "" && !awsBefore(s, i) {
				return false // "secret:" or "secret_key:" alone could be anything's secret
			}
			return mixedCase(m[2])
		},
	},
	{
		name:     "github-token",
		keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
		re:       lazyRegexp(`^(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{36,251})(?:$|[^A-Za-z0-9_-])`),
		before:   notWord,
	},
	{
		name:     "anthropic-api-key",
		keywords: []string{"sk-ant-"},
		re:       lazyRegexp(`^sk-ant-[a-z]{2,10}[0-9]{2}-([A-Za-z0-9_-]{32,})`),
		before:   notWord,
		ok:       func(_ string, _ int, m []string) bool { return mixed(m[1]) },
	},
	{
		name:     "openai-api-key",
		keywords: []string{"sk-"},
		re: lazyRegexp(`^sk-(?:(?:proj|svcacct|admin)-([A-Za-z0-9_-]{40,})|([A-Za-z0-9]{32,}))` +
			`(?:$|[^A-Za-z0-9_-])`),
		before: notWord,
		ok:     func(_ string, _ int, m []string) bool { return mixed(m[1] + m[2]) },
	},
	{
		name:     "slack-token",
		keywords: []string{"xox", "xapp-"},
		re: lazyRegexp(`^(?:xox[abeprs]-(?:[0-9]+-)+[A-Za-z0-9]{8,}|` +
			`xox[abeprs]-[A-Za-z0-9]{10,}-[A-Za-z0-9-]{10,}|xapp-[0-9]+-[A-Z0-9]+-[0-9]+-[A-Za-z0-9]{8,})`),
		before: notWord,
	},
	{
		name:     "slack-webhook",
		keywords: []string{"hooks.slack.com/"},
		re:       lazyRegexp(`^hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}`),
	},
	{
		name:     "private-key",
		keywords: []string{"-----BEGIN"},
		re:       lazyRegexp(`^-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----`),
	},
	{
		name:     "jwt",
		keywords: []string{"eyJ"},
		re:       lazyRegexp(`^eyJ[A-Za-z0-9_-]{5,}\.ey[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}`),
		before:   notWord,
		span:     64 << 10, // claims can be long; "eyJ" is rare enough for a wide window
	},
	{
		// scheme://user:password@host. An empty user is allowed (redis://:pw@host); the host
		// must follow the @ directly, so user@host, host:port/path@x and mailto: do not match.
		name:     "url-credentials",
		keywords: []string{"://"},
		re:       lazyRegexp(`^://[^\s:/?#@"'<>\[\]]*:([^\s/?#@"'<>\[\]]+)@[A-Za-z0-9\[]`),
		before:   schemeBefore,
		ok:       func(_ string, _ int, m []string) bool { return notPlaceholder(m[1]) },
	},
}

// match returns the first rule that finds a secret in s.
func match(s string) *rule {
	r, _, _ := matchAt(s)
	return r
}

// matchAt returns the first rule that finds a secret in s and where the match lies.
func matchAt(s string) (r *rule, start, end int) {
	for _, r := range rules {
		if start, end, ok := r.find(s); ok {
			return r, start, end
		}
	}
	return nil, 0, 0
}

// find runs r at every occurrence of its keywords. Anchoring the regexp there keeps a 4 KB
// scan in the tens of microseconds even when keywords are common (a regexp without a
// literal prefix would try every position).
func (r *rule) find(s string) (start, end int, ok bool) {
	for _, k := range r.keywords {
		for off := 0; off < len(s); {
			var j int
			if r.fold {
				j = indexFold(s[off:], k)
			} else {
				j = strings.Index(s[off:], k)
			}
			if j < 0 {
				break
			}
			i := off + j
			off = i + 1
			if r.before != nil && !r.before(s, i) {
				continue
			}
			span := r.span
			if span == 0 {
				span = defaultSpan
			}
			w := s[i:min(len(s), i+span)]
			if r.ok == nil {
				if loc := r.re().FindStringIndex(w); loc != nil {
					return i, i + loc[1], true
				}
				continue
			}
			if m := r.re().FindStringSubmatch(w); m != nil && r.ok(s, i, m) {
				return i, i + len(m[0]), true
			}
		}
	}
	return 0, 0, false
}

// defaultSpan is longer than any token the rules know (GitHub's 255, OpenAI project keys'
// ~170, a URL's user:password), so cutting there changes no answer: a run of token
// characters cut at the window's end still ends in a match, as it would at its real end.
const defaultSpan = 1024

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// notAlnum: the keyword is not glued to a letter or digit before it.
func notAlnum(s string, i int) bool { return i == 0 || !isAlnum(s[i-1]) }

// notWord: nor to _ or -, so sk- inside task-list or xghp_ do not count.
func notWord(s string, i int) bool {
	return i == 0 || !isAlnum(s[i-1]) && s[i-1] != '_' && s[i-1] != '-'
}

// notAlnumOrAWS accepts "secret" at a word start or right after aws, AWS_, aws-, awsSecret.
func notAlnumOrAWS(s string, i int) bool { return notAlnum(s, i) || awsBefore(s, i) }

// awsBefore reports "aws" just before i, with at most one separator between.
func awsBefore(s string, i int) bool {
	if i > 0 && strings.ContainsRune("_.- ", rune(s[i-1])) {
		i--
	}
	return i >= 3 && strings.EqualFold(s[i-3:i], "aws")
}

// schemeBefore: "://" follows a scheme (letters, digits, + . -).
func schemeBefore(s string, i int) bool {
	if i == 0 {
		return false
	}
	c := s[i-1]
	return isAlnum(c) || c == '+' || c == '.' || c == '-'
}

// mixedCase: real keys have upper- and lowercase letters; a 40-character git SHA does not.
func mixedCase(s string) bool {
	return strings.ContainsAny(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") &&
		strings.ContainsAny(s, "abcdefghijklmnopqrstuvwxyz")
}

// mixed: random key material has upper, lower and digits; names such as
// sk-proj-frontend-refactor-plan-for-oauth do not.
func mixed(s string) bool {
	return mixedCase(s) && strings.ContainsAny(s, "0123456789")
}

// notPlaceholder refuses passwords that are references or masks, which is what we ask users
// to store: $DB_PASS, ${DB_PASS}, {{ .Pass }}, %DB_PASS%, ****, xxxx.
func notPlaceholder(pw string) bool {
	switch {
	case strings.HasPrefix(pw, "$"), strings.HasPrefix(pw, "{"), strings.HasPrefix(pw, "%") && strings.HasSuffix(pw, "%"):
		return false
	case strings.Trim(pw, "*") == "", strings.Trim(pw, "xX") == "", strings.Trim(pw, ".") == "":
		return false
	}
	return true
}

// awsSecretKeyName reports JSON keys that name an AWS secret access key, so that
// {"aws_secret_access_key": "<40 chars>"} is caught although neither string is one alone.
func awsSecretKeyName(k string) bool {
	if len(k) > 64 {
		return false
	}
	n := strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', '.', ' ':
			return -1
		}
		return r
	}, strings.ToLower(k))
	return strings.HasSuffix(n, "secretaccesskey") || n == "awssecret" || n == "awssecretkey"
}

// indexFold returns the index of the lowercase ASCII keyword kw in s in any case, or -1.
// It jumps between candidates for the first byte with IndexByte, which is vectorised, and
// remembers the next candidate of each case so that no stretch is searched twice.
func indexFold(s, kw string) int {
	lo, up := kw[0], kw[0]-('a'-'A')
	nextLo, nextUp := -2, -2 // next index of lo / up at or after i; -1: none left
	for i := 0; i+len(kw) <= len(s); {
		nextLo = nextAt(s, i, lo, nextLo)
		nextUp = nextAt(s, i, up, nextUp)
		c := nextLo
		if c < 0 || (nextUp >= 0 && nextUp < c) {
			c = nextUp
		}
		if c < 0 || c+len(kw) > len(s) {
			return -1
		}
		if strings.EqualFold(s[c:c+len(kw)], kw) {
			return c
		}
		i = c + 1
	}
	return -1
}

// nextAt returns the index of c at or after i, reusing prev when it is still ahead.
func nextAt(s string, i int, c byte, prev int) int {
	if prev == -1 || prev >= i {
		return prev
	}
	if j := strings.IndexByte(s[i:], c); j >= 0 {
		return i + j
	}
	return -1
}

var awsSecretValue = lazyRegexp(`^[A-Za-z0-9/+]{40}$`)

// lazyRegexp compiles expr once, on first use.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
