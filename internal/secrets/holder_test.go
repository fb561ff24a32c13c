package secrets

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// holderWhole is credential-field's expression as it was, one program with the eight members
// written out: the reference holderMembers is held to.
var holderWhole = regexp.MustCompile(`(?i)^(?:o?auth2?|credentials?|creds|access|refresh)["']?\s{0,3}(?:=|:|=>)\s{0,16}(?:\{\s{0,16})?` +
	`(?:["']?[a-z0-9_-]{1,32}["']?\s{0,3}:\s{0,3}(?:"[^"\n]{0,64}"|'[^'\n]{0,64}'|[a-z0-9_.-]{0,64})\s{0,3}[,\n]\s{0,16}){0,8}` +
	`["']?(?:token|key|secret)["']?\s{0,3}[:=]\s{0,5}["'\x60]?` + credentialHead)

// Whatever the whole expression finds under a holder, its parts find: generated holders with
// members of every length around the bounds, blanks around the bounds, and values random or
// not. The parts may find more: they judge each credential member, where the expression
// judged only the last it could reach.
func TestHolderMembersFindWhatTheWholeFound(t *testing.T) {
	var r *rule
	for _, x := range rules() {
		if x.name == "credential-field" {
			r = x
		}
	}
	g := rand.New(rand.NewPCG(5, 6))
	pick := func(xs ...string) string { return xs[g.IntN(len(xs))] }
	pickN := func(xs ...int) int { return xs[g.IntN(len(xs))] }
	blanks := func(max int) string { // mostly short, at times around the bound
		if g.IntN(4) > 0 {
			max = 2
		}
		return strings.Repeat(pick(" ", "\n", "\t"), g.IntN(max+1))
	}
	word := func(n int) string {
		const set = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
		b := make([]byte, n)
		for i := range b {
			b[i] = set[g.IntN(len(set))]
		}
		return string(b)
	}
	found, more, holders := 0, 0, Corpus(10000)
	for range holders {
		var b strings.Builder
		b.WriteString(pick("auth", "OAuth2", "credentials", "creds", "access", "refresh"))
		b.WriteString(pick("", `"`, "'") + blanks(4) + pick("=", ":", "=>") + blanks(18) + pick("", "{"+blanks(18)))
		for n := pickN(g.IntN(3), g.IntN(10)); n > 0; n-- {
			q := pick("", `"`, "'")
			b.WriteString(q + word(1+pickN(g.IntN(8), g.IntN(34))) + q + blanks(4) + ":" + blanks(4))
			switch v := word(pickN(g.IntN(8), g.IntN(68))); g.IntN(4) {
			case 0:
				b.WriteString(`"` + v + pick(`"`, `"`, `"`, `"`, "", "\n"))
			case 1:
				b.WriteString(`'` + v + `'`)
			case 2:
				b.WriteString(strings.ToLower(strings.ReplaceAll(v, "_", ".")))
			default:
				b.WriteString("Qk7aB9cD3eF5gH7jK9mN1pQ3")
			}
			b.WriteString(blanks(4) + pick(",", "\n", ",", "\n", ",", "\n", ";", "") + blanks(18))
		}
		q := pick("", `"`, "'")
		b.WriteString(q + pick("token", "key", "Secret", "KEY", "keys", "value") + q + blanks(4) + pick(":", "=", " ") + blanks(6) +
			pick("", `"`, "`") + pick("Qk7aB9cD3eF5gH7jK9mN1pQ3", "Qk7aB9cD3eF5gH7jK9mN1pQ3", "abcdefghijklmnopqrst", "Qk7aB9cD3eF5", "Qk7aB9cD3eF5gH7jK9/x"))
		s := b.String()
		whole := false
		if m := holderWhole.FindStringSubmatch(s); m != nil && r.before(s, 0) {
			j := len(m[0])
			if stop, ok := credentialTail(s, j); ok {
				whole = credentialValue(s[j-len(m[1]) : stop])
			}
		}
		_, parts := r.at(s, 0, new(look))
		if whole && !parts {
			t.Fatalf("the whole expression finds a credential in %q, its parts do not", s)
		}
		if whole {
			found++
		} else if parts {
			more++
		}
	}
	if found < holders/25 {
		t.Errorf("only %d of the generated holders hold a credential", found)
	}
	t.Logf("%d found by both, %d by the parts alone", found, more)
}
