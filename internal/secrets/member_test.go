package secrets_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/store"
)

// A member is one name and value: the JSON scan refuses it exactly when ScanString refuses
// its text form, "name": "value" (unquoted for a number or literal), and says so with the
// same rule.
type member struct {
	key   string
	value string
	lit   bool   // value is a number or literal, written unquoted
	rule  string // what ScanString finds in the text form; "" for nothing
}

var b64Key88 = strings.Repeat("Ab3/", 21) + "Xy9+==" // an Azure storage key's shape

var members = []member{
	// The defect's two payloads.
	{key: "password", value: "Hunter2Hunter2", rule: "password-assignment"},
	{key: "api_key", value: "Ab1Cd2Ef3Gh4Ij5Kl6Mn7", rule: "provider-credential"},
	// Other spellings: cases and separators.
	{key: "PASSWORD", value: "Hunter2Hunter2", rule: "password-assignment"},
	{key: "db_password", value: "s3cr3t-Pa55", rule: "password-assignment"},
	{key: "Db.Passwd", value: "s3cr3t-Pa55", rule: "password-assignment"},
	{key: "my password", value: "Hunter2Hunter2", rule: "password-assignment"},
	{key: "pass\u200bword", value: "Hunter2Hunter2", rule: "password-assignment"}, // stored without the U+200B
	// The name glued to a word before it: libpq's variable, camelCase settings.
	{key: "PGPASSWORD", value: "Hunter2Hunter2", rule: "password-assignment"},
	{key: "dbPassword", value: "s3cr3t-Pa55", rule: "password-assignment"},
	{key: "adminpasswd", value: "s3cr3t-Pa55", rule: "password-assignment"},
	{key: "API-KEY", value: "Ab1Cd2Ef3Gh4Ij5Kl6Mn7", rule: "provider-credential"},
	{key: "ApiKey", value: "Ab1Cd2Ef3Gh4Ij5Kl6Mn7", rule: "provider-credential"},
	{key: "x-api-key", value: "Ab1Cd2Ef3Gh4Ij5Kl6Mn7", rule: "provider-credential"},
	{key: "DATADOG_API_KEY", value: "Zq8Wm3Rt6Yp1Ks4Lv7Nb0Xc", rule: "provider-credential"},
	{key: "client_secret", value: "Zq8Wm3Rt6Yp1Ks4Lv7Nb0Xc", rule: "provider-credential"},
	{key: "access_token", value: "Zq8Wm3Rt6Yp1Ks4Lv7Nb0Xc", rule: "provider-credential"},
	// A name that ends in "secret", and camelCase names.
	{key: "secret", value: "Zq8Wm3Rt6Yp1Ks4Lv7Nb0Xc", rule: "provider-credential"},
	{key: "JWT_SECRET", value: "Zq8Wm3Rt6Yp1Ks4Lv7Nb0Xc", rule: "provider-credential"},
	{key: "webhookSecret", value: "Zq8Wm3Rt6Yp1Ks4Lv7Nb0Xc", rule: "provider-credential"},
	{key: "clientSecret", value: "Zq8Wm3Rt6Yp1Ks4Lv7Nb0Xc", rule: "provider-credential"},
	{key: "secretKey", value: "Zq8Wm3Rt6Yp1Ks4Lv7Nb0Xc", rule: "provider-credential"},
	{key: "accessToken", value: "Zq8Wm3Rt6Yp1Ks4Lv7Nb0Xc", rule: "provider-credential"},
	{key: "refresh_token", value: "Zq8Wm3Rt6Yp1Ks4Lv7Nb0Xc", rule: "provider-credential"},
	{key: "aws_secret_access_key", value: awsSecret, rule: "aws-secret-access-key"},
	{key: "AWS-Secret-Access-Key", value: awsSecret, rule: "aws-secret-access-key"},
	{key: "aws.secret.access.key", value: awsSecret, rule: "aws-secret-access-key"},
	{key: "awsSecretAccessKey", value: awsSecret, rule: "aws-secret-access-key"},
	{key: "backupSecretAccessKey", value: awsSecret, rule: "aws-secret-access-key"},
	{key: "aws_secret", value: awsSecret, rule: "aws-secret-access-key"},
	{key: "AccountKey", value: b64Key88, rule: "azure-storage-key"},
	{key: "Authorization", value: "Token Zq8Wm3Rt6Yp1Ks4Lv7Nb0Xc", rule: "authorization-header"},
	// A quoted passphrase: words joined by single spaces.
	{key: "password", value: "correct horse battery staple", rule: "password-assignment"},
	{key: "passphrase", value: "Tumble Orbit Falcon Pickle 42", rule: "password-assignment"},
	// A hex key or a UUID after a key's name.
	{key: "api_key", value: "3f9a0c1d2e4b5a6978877665544332211ffeeddc", rule: "provider-credential"},
	{key: "api_key", value: "550e8400-e29b-41d4-a716-446655440000", rule: "provider-credential"},
	// A number where the rule allows one: a password with two kinds of character.
	{key: "password", value: "1234567.5", lit: true, rule: "password-assignment"},

	// Ordinary members stay accepted: names that only start like a credential, short values,
	// references, masks, digests, UUIDs, sentences, numbers and literals.
	{key: "password_hint", value: "see vault"},
	{key: "api_key_name", value: "prod"},
	{key: "api_key_env", value: "STRIPE_API_KEY"},
	{key: "password", value: "short1"},
	{key: "password", value: "$DB_PASSWORD"},
	{key: "password", value: "${DB_PASSWORD}"},
	{key: "password", value: "********"},
	{key: "password", value: "see the vault entry for prod"},
	{key: "password", value: "Must be at least 8 characters"},
	{key: "password", value: "/run/secrets/db_password"},
	{key: "password", value: "12345678", lit: true},
	// A time kept by a task's id (claims.json's), which a name may end in password.
	{key: "reset-password", value: "2026-12-02T02:25:07.398861442Z"},
	{key: "rotate_db_passwd", value: "2024-05-01T10:00:00+02:00"},
	{key: "rotate-secret", value: "2026-12-02T02:25:07.398861442Z"},
	{key: "add-api-key", value: "2026-12-02T02:25:07Z"},
	{key: "fix-pwd", value: "2026-12-02T02:25:07Z"},
	{key: "password", value: "true", lit: true},
	{key: "password", value: "null", lit: true},
	{key: "api_key_id", value: "550e8400-e29b-41d4-a716-446655440000"},
	{key: "access_token", value: "authentication2"},
	{key: "aws_secret_access_key", value: gitSHA},
	{key: "secret", value: awsSecret},
	{key: "topsecret_key", value: awsSecret},
	// Separators inside the word "secret" name nothing, in text as in JSON: the gate that
	// decides whether a document is walked looks for "secret" itself.
	{key: "aws_sec-ret_access_key", value: awsSecret},
	{key: "s_e_c_r_e_t_access_key", value: awsSecret},
	{key: "Authorization", value: "Basic see-the-vault"},
	{key: "token_path", value: "/run/secrets/api_key"},
	// Names that say where a secret is, not what it is.
	{key: "secret_name", value: "prod-db-2024-v2-main"},
	{key: "secretRef", value: "app-secrets-v2-2024x"},
	{key: "secret_version", value: "v2-2024-11-main-9"},
}

// text is m's text form.
func (m member) text() string {
	if m.lit {
		return `"` + m.key + `": ` + m.value
	}
	return `"` + m.key + `": "` + m.value + `"`
}

// encode writes s as a JSON string; escapeAll writes every ASCII letter and digit as \u00XX
// too, so that no keyword appears in the document's bytes.
func encode(s string, escapeAll bool) string {
	if !escapeAll {
		b, _ := json.Marshal(s)
		return string(b)
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			q, _ := json.Marshal(string(r))
			b.Write(q[1 : len(q)-1])
		}
	}
	b.WriteByte('"')
	return b.String()
}

// placements put a member in a document: the JSON text of the member and the path to its
// value (a key step) give the document and the path a finding must carry.
var placements = []struct {
	name string
	doc  func(member, step string) (doc, path string)
}{
	{"flat", func(m, s string) (string, string) { return `{` + m + `}`, "$" + s }},
	{"among-others", func(m, s string) (string, string) {
		return `{"version":"2.0","n":[1,2.5,true,null],` + m + `,"after":"x"}`, "$" + s
	}},
	{"nested", func(m, s string) (string, string) {
		return `{"config":{"db":{"prod":{` + m + `,"port":5432}}}}`, "$.config.db.prod" + s
	}},
	{"array-of-objects", func(m, s string) (string, string) {
		return `{"users":[{"name":"a"},{"name":"b",` + m + `}]}`, "$.users[1]" + s
	}},
	{"top-level-array", func(m, s string) (string, string) { return `[{"x":1},{` + m + `}]`, "$[1]" + s }},
	{"deep", func(m, s string) (string, string) {
		return strings.Repeat(`{"l":`, 20) + `{` + m + `}` + strings.Repeat(`}`, 20), "$" + strings.Repeat(".l", 20) + s
	}},
}

// keyStep is how a finding's path names the member's key.
func keyStep(k string) string {
	ident := k != "" && len(k) <= 40
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			ident = false
		}
	}
	if ident {
		return "." + k
	}
	return "[" + strconv.QuoteToGraphic(k) + "]"
}

// big pads a document past the size from which CheckDocument scans on a second core.
func big(doc string) string {
	pad := `{"pad":"` + strings.Repeat("lorem ipsum dolor sit amet ", 2600) + `","doc":`
	return pad + doc + `}`
}

func TestMembersMatchTheirText(t *testing.T) {
	for _, m := range members {
		// The table's expectation is ScanString's on the text form, also as name=value.
		text := secrets.ScanString(m.text())
		if rule(text) != m.rule {
			t.Fatalf("ScanString(%s) = %v, the table says %q", m.text(), text, m.rule)
		}
		// Unquoted, words with spaces are prose: a passphrase is found when quoted only.
		if m.rule != "" && !m.lit && !strings.Contains(m.value, " ") && secrets.ScanString(m.key+"="+m.value) == nil {
			t.Errorf("ScanString(%s=%s) finds nothing, the quoted form %s", m.key, m.value, m.rule)
		}
		for _, p := range placements {
			for _, esc := range []struct {
				name     string
				key, val bool
			}{{"plain", false, false}, {"escaped-key", true, false}, {"escaped-both", true, true}} {
				v := m.value
				if !m.lit {
					v = encode(m.value, esc.val)
				}
				doc, path := p.doc(encode(m.key, esc.key)+":"+v, keyStep(m.key))
				name := fmt.Sprintf("%s=%s/%s/%s", m.key, m.value, p.name, esc.name)
				for _, d := range []struct {
					how  string
					doc  string
					path string
				}{{"ScanJSON", doc, path}, {"CheckDocument", doc, path}, {"CheckDocument-padded", big(doc), "$.doc" + path[1:]}} {
					var f *secrets.Finding
					if d.how == "ScanJSON" {
						f = secrets.ScanJSON([]byte(d.doc))
					} else if err := store.CheckDocument([]byte(d.doc)); err != nil {
						var ok bool
						if f, ok = err.(*secrets.Finding); !ok {
							t.Fatalf("%s: %s(%s) = %v, not a secret finding", name, d.how, doc, err)
						}
					}
					switch {
					case m.rule == "" && f != nil:
						t.Errorf("%s: %s refuses %s: %v", name, d.how, doc, f)
					case m.rule == "":
					case f == nil:
						t.Errorf("%s: %s accepts %s, whose text %s is refused (%s)", name, d.how, doc, m.text(), m.rule)
					case f.Rule != m.rule || f.Path != d.path || f.InKey:
						t.Errorf("%s: %s(%s) = %+v, want %s at %s", name, d.how, doc, *f, m.rule, d.path)
					default:
						noPiece(t, f.Error(), m.value)
					}
				}
			}
		}
	}
}

func rule(f *secrets.Finding) string {
	if f == nil {
		return ""
	}
	return f.Rule
}

// noPiece fails when msg holds any 6-byte window of the refused value.
func noPiece(t *testing.T, msg, value string) {
	t.Helper()
	for i := 0; i+6 <= len(value); i++ {
		if strings.Contains(msg, value[i:i+6]) {
			t.Errorf("refusal %q holds %q from the value", msg, value[i:i+6])
			return
		}
	}
}

// The text rules also see what spans strings in a document's bytes (a name and a value side
// by side in an array, a value followed by a key, a command split in two): no one string or
// member holds it, and the document is refused all the same, at "$", without the value.
func TestTextAcrossStringsRefused(t *testing.T) {
	for _, doc := range []string{
		`["api_key", "Ab1Cd2Ef3Gh4Ij5Kl6Mn7"]`,
		`{"k":"api_key","Ab1Cd2Ef3Gh4Ij5Kl6Mn7":1}`,
		`{"cmd":["curl https://x.example", " -u bob:Tr0ub4dor3x"]}`,
	} {
		if secrets.ScanString(doc) == nil {
			t.Fatalf("ScanString(%s) finds nothing: the case tests nothing", doc)
		}
		f := secrets.ScanJSON([]byte(doc))
		if f == nil || f.Path != "$" {
			t.Fatalf("ScanJSON(%s) = %v, want a finding at $", doc, f)
		}
		err := store.CheckDocument([]byte(doc))
		if err == nil || err.Error() != f.Error() {
			t.Fatalf("CheckDocument(%s) = %v, want %v", doc, err, f)
		}
		noPiece(t, f.Error(), "Ab1Cd2Ef3Gh4Ij5Kl6Mn7 Tr0ub4dor3x")
	}
}
