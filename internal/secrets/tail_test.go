package secrets

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// wordTail ends a value where the expression it stands for, [^\s<stop>]{8,128} after the
// first 8, would: at a blank, a stop character or the 128th character, counted as runes (an
// invalid byte is one).
func TestWordTailIsTheExpression(t *testing.T) {
	const stop = "\"'`,;“”‘’"
	re := regexp.MustCompile("^[^\\s\"'`,;“”‘’]{8,128}")
	alphabet := []string{"a", "Z", "7", " ", "\t", "\n", "\v", "\"", "'", "`", ",", ";", "“", "’", "é", "\xff", "=", "/"}
	r := rand.New(rand.NewPCG(3, 4))
	for range Corpus(20000) {
		s := "AAAAAAAA"
		for n := r.IntN(200); n > 0; n-- {
			if r.IntN(4) == 0 {
				s += alphabet[r.IntN(len(alphabet))]
			} else {
				s += "x"
			}
		}
		want := len(re.FindString(s))
		got, ok := wordTail(stop)(s, 8)
		if !ok || got != want {
			t.Fatalf("wordTail(%q) ends at %d, the expression at %d", s, got, want)
		}
	}
}
