package secrets_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/cairn-dev/cairn/internal/textsafe"
)

// caseVariants are the spellings of kw a scan must find: kw itself, and for a rule that
// ignores case its lower, upper and alternating forms.
func caseVariants(kw string, fold bool) []string {
	if !fold {
		return []string{kw}
	}
	alt := []byte(strings.ToLower(kw))
	for i := 0; i < len(alt); i += 2 {
		alt[i] = byte(unicode.ToUpper(rune(alt[i])))
	}
	return []string{kw, strings.ToLower(kw), strings.ToUpper(kw), string(alt)}
}

// The gate (three bytes, then four) is only a shortcut: every keyword of every rule, in every
// case its rule allows, at every alignment against the eight-byte reads and at the very end of
// the text, is a position the scan looks at.
func TestGateKeepsEveryKeyword(t *testing.T) {
	kws, fold := secrets.GateKeywords()
	for k, kw := range kws {
		for _, v := range caseVariants(kw, fold[k]) {
			for pad := range 14 {
				for _, tail := range []string{"", "x", "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3Ab4Cd5Ef6"} {
					for _, filler := range []string{" ", "z", "."} {
						s := strings.Repeat(filler, pad) + v + tail
						if !slices.Contains(secrets.Candidates(s), pad) {
							t.Fatalf("keyword %q (rule fold %v) at %d of %q is skipped", v, fold[k], pad, s)
						}
					}
				}
			}
		}
	}
}

// Every shape of the hostile corpus, moved across the eight-byte reads and written in other
// cases, is found by the scan exactly where and as a scan of every position finds it.
func TestGateMatchesEveryPositionScan(t *testing.T) {
	var inputs []string
	for _, sh := range secrettest.Shapes() {
		for pad := range 14 {
			for _, text := range []string{sh.Text, strings.ToUpper(sh.Text), strings.ToLower(sh.Text)} {
				inputs = append(inputs, strings.Repeat(" ", pad)+text, "the path "+strings.Repeat("x", pad)+" "+text+" end")
			}
		}
	}
	inputs = append(inputs, secrettest.Ordinary()...)
	for _, s := range inputs {
		fast, slow, fastAt, slowAt := secrets.ScanBoth(s)
		if fast != slow || fastAt != slowAt {
			t.Fatalf("scan of %q: %s at %v, every position: %s at %v", s, fast, fastAt, slow, slowAt)
		}
	}
	for _, sh := range secrettest.Shapes() {
		for pad := range 14 {
			if f := secrets.ScanString(strings.Repeat(" ", pad) + sh.Text); f == nil || f.Rule != sh.Rule {
				t.Errorf("%s at %d: %v, want %s", sh.Name, pad, f, sh.Rule)
			}
		}
	}
}

func FuzzGate(f *testing.F) {
	for _, s := range []string{"", "ghp_", "xoxb-1-2-abcdefgh", "PASSWORD=Hunter2Hunter2", "SK" + strings.Repeat("a1", 16),
		"9Q~" + strings.Repeat("x", 33), "path text path text", `{"password":"x","api_key":"y"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fast, slow, fastAt, slowAt := secrets.ScanBoth(s)
		if fast != slow || fastAt != slowAt {
			t.Fatalf("scan of %q: %s at %v, every position: %s at %v", s, fast, fastAt, slow, slowAt)
		}
	})
}

// An invisible character anywhere inside a keyword, in any case the rule allows, does not hide
// the secret: the text is scanned again without it.
func TestInvisibleInsideKeyword(t *testing.T) {
	for _, tc := range []struct{ kw, body, rule string }{
		{"ghp_", ghClassic[4:], "github-token"},
		{"AKIA", awsID[4:], "aws-access-key-id"},
		{"password", "=Hunter2Hunter2", "password-assignment"},
		{"PASSWORD", "=Hunter2Hunter2", "password-assignment"},
		{"PaSsWoRd", "=Hunter2Hunter2", "password-assignment"},
		{"xoxb-", slackBot[5:], "slack-token"},
	} {
		for i := 1; i < len(tc.kw); i++ {
			for _, inv := range []string{"\u200b", "\u202e", "\u2060", "\ufeff"} {
				s := "note " + tc.kw[:i] + inv + tc.kw[i:] + tc.body
				if f := secrets.ScanString(s); f == nil || f.Rule != tc.rule {
					t.Errorf("ScanString(%q) = %v, want %s", s, f, tc.rule)
				}
				enc, _ := json.Marshal(s)
				if f := secrets.ScanJSON([]byte(`{"k":` + string(enc) + `}`)); f == nil || f.Rule != tc.rule {
					t.Errorf("ScanJSON(%s) = %v, want %s", enc, f, tc.rule)
				}
			}
		}
	}
}

// firstDropped, which skips printable ASCII 32 and eight bytes at a time and judges two-byte
// characters by their code point, finds the first character that textsafe drops at every
// offset, and passes kept ones (tab, newline, spaces beyond ASCII, accents).
func TestFirstDropped(t *testing.T) {
	ref := func(s string) int {
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 || !unicode.IsSpace(r) && textsafe.Dropped(r) {
				return i
			}
			i += n
		}
		return len(s)
	}
	cs := []string{"\x00", "\x01", "\x1f", "\x7f", "\u200b", "\u202e", "\xff", "\xc3", "\xc3(", "\xd7", "\t", "\n", "\r", "\v", "\u00a0", "é", "日", "~"}
	for r := rune(0x80); r < 0x800; r++ { // every two-byte character
		cs = append(cs, string(r))
	}
	for _, c := range cs {
		for _, pad := range []int{0, 1, 7, 8, 9, 15, 31, 32, 33, 40, 63} {
			for _, tail := range []string{"", "abc", "abcdefghijklmnop", strings.Repeat("xyz", 12)} {
				s := strings.Repeat("a", pad) + c + tail
				if got, want := secrets.FirstDropped(s), ref(s); got != want {
					t.Errorf("FirstDropped(%q) = %d, want %d", s, got, want)
				}
			}
		}
	}
}

// A keyword of two or three bytes passes the gate whatever byte follows it (and, for two
// bytes, whatever byte comes before): the index sets those bits for "any byte".
func TestGateKeepsShortKeywordsBesideEveryByte(t *testing.T) {
	kws, fold := secrets.GateKeywords()
	for k, kw := range kws {
		if len(kw) > 3 {
			continue
		}
		for _, v := range caseVariants(kw, fold[k]) {
			for c := range 256 {
				for pad := range 2 {
					s := strings.Repeat(" ", pad) + v + string([]byte{byte(c)})
					if !slices.Contains(secrets.Candidates(s), pad) {
						t.Fatalf("keyword %q followed by byte %#x at %d of %q is skipped", v, c, pad, s)
					}
					if len(kw) == 2 {
						s = strings.Repeat(" ", pad) + string([]byte{byte(c)}) + v
						if !slices.Contains(secrets.Candidates(s), pad+1) {
							t.Fatalf("keyword %q after byte %#x at %d of %q is skipped", v, c, pad+1, s)
						}
					}
				}
			}
		}
	}
}
