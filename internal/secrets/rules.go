package secrets

import (
	"encoding/base64"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/lazyre"
)

// end is what may follow a token: the end of the text or a character that cannot continue it.
const end = `(?:$|[^A-Za-z0-9_-])`

const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// ruleTable holds the providers of gitleaks' default rule set (Cairn's own expressions, each
// behind its prefixes or names as keywords), plus private keys, JWTs and URL credentials.
// A token with its own prefix has a rule of its own; a provider whose keys are bare random
// strings is caught by provider-credential, where its name is assigned a key-like value.
// A rule for a token that announces itself by a fixed prefix, such as ghp_ or glpat-, has
// the prefixes as keywords, its regexp matches from the prefix on, and notWord keeps the
// prefix from being glued to a word before it.
// The table is static data, laid out by the compiler: no code runs and nothing is allocated
// for it at start-up or at the first scan (built by a function on first use, it cost the
// first scan 0.1 M instructions and its 53 KB of code paged in).
var ruleTable = [...]rule{
	{
		name:     "aws-access-key-id",
		keywords: []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"},
		rx:       lazyre.Regexp{Expr: `^(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?:$|[^A-Za-z0-9])`},
		before:   notAlnum,
	},
	{
		// A secret access key is 40 base64 characters with nothing to recognise it by, so it
		// is only reported after a name that says what it is: secret_access_key,
		// SecretAccessKey, aws_secret, aws-secret-key... After the whole name (secret access
		// key), a blank may set it too, as aws configure set does, or the gap between two
		// words of a command's list (["aws", "configure", "set", "aws_secret_access_key", ...]).
		// A JSON member is read as this text too ("key": "value"), so this one expression
		// is also the rule for keys, and every name it accepts holds "secret", which the
		// gate sees (a key spelled "sec-ret" names nothing here, in text or in JSON).
		name:     "aws-secret-access-key",
		keywords: []string{"secret"},
		fold:     true,
		named:    true,
		before:   func(s string, i int) bool { return awsBefore(s, i) || accessKeyAfter(s, i+len("secret")) },
		ahead:    ahead{base64: 54},
		rx: lazyre.Regexp{Expr: `(?i)^secret(?:([_.\- ]?access[_.\- ]?key)|[_.\- ]?key)?` +
			`(?:["']?\s{0,16}(?::|=>?)\s{0,16}["']?|([ \t]{1,16}|` + argvSep + `["']))([A-Za-z0-9/+]{40})(?:$|[^A-Za-z0-9/+=])`},
		ok: func(s string, i int, m []string) bool {
			if m[1] == "" && (m[2] != "" || !awsBefore(s, i)) {
				// "secret:" or "secret_key:" alone could be anything's secret; "secret
				// access key" may follow any word (dbSecretAccessKey, mysecretaccesskey).
				// Without a : or =, only the whole name says the key follows.
				return false
			}
			return mixedCase(m[3])
		},
	},
	{name: "github-token", keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, rx: lazyre.Regexp{Expr: `^(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{36,251})(?:$|[^A-Za-z0-9_-])`}, before: notWord},
	// Anthropic keys are caught whatever their body looks like: letters only, lower case and
	// digits, or mixed. The prefix alone is specific enough.
	{name: "anthropic-api-key", keywords: []string{"sk-ant-"}, rx: lazyre.Regexp{Expr: `^sk-ant-(?:api|admin|oat|sid|ort)[0-9]{2}-[A-Za-z0-9_-]{32,}`}, before: notWord},
	{
		name:     "openai-api-key",
		keywords: []string{"sk-"},
		rx: lazyre.Regexp{Expr: `^sk-(?:(?:proj|svcacct|admin|None)-([A-Za-z0-9_-]{40,})|([A-Za-z0-9]{32,}))` +
			`(?:$|[^A-Za-z0-9_-])`},
		before: notWord,
		ok: func(_ string, _ int, m []string) bool {
			body := m[1] + m[2]
			return mixed(body) || strings.Contains(body, "T3BlbkFJ")
		},
	},
	{
		name:     "slack-token",
		keywords: []string{"xox", "xapp-"},
		rx: lazyre.Regexp{Expr: `^(?:xox[abeprs]-(?:[0-9]+-)+[A-Za-z0-9]{8,}|` +
			`xox[abeprs]-[A-Za-z0-9]{10,}-[A-Za-z0-9-]{10,}|xapp-[0-9]+-[A-Z0-9]+-[0-9]+-[A-Za-z0-9]{8,}|` +
			`xoxe\.xox[bp]-[0-9]-[A-Za-z0-9]{100,})`},
		before: notWord,
	},
	{
		name:     "slack-webhook",
		keywords: []string{"hooks.slack.com/"},
		rx:       lazyre.Regexp{Expr: `^hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}`},
	},
	{
		// PEM and PGP blocks, SSH.com's (---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----) and
		// PuTTY's key files, by their first two lines (written out, JSON-escaped, made one
		// line as a note is, or strings: a list of the lines, strings joined in code). A
		// block's header counts with the start of its body only, after
		// any headers (Proc-Type:, Version:, Comment:): alone, it is prose about keys ("paste
		// the -----BEGIN RSA PRIVATE KEY----- block here"). The body is 8 base64 characters
		// with a digit, + or /, or 16 of any. The regexp runs only where PRIVATE KEY follows
		// a BEGIN within the 40 bytes it allows between them: text full of -----BEGIN
		// stepped a long program through those 40 at each.
		name:     "private-key",
		keywords: []string{"-----BEGIN", "---- BEGIN", "PuTTY-User-Key-File-"},
		window:   privateKeyWindow,
		rx: lazyre.Regexp{Expr: `^(?:(?:-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----|---- BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY ----)` +
			`(?:\s|\\{1,2}[rn]|["'\x60]\s*[,+]?\s*["'\x60]){0,4}(?:[A-Za-z][A-Za-z0-9-]{0,31}: [^\n]{0,128}?(?:\s|\\{1,2}[rn]){1,4}){0,4}([A-Za-z0-9+/]{8,})|` +
			`PuTTY-User-Key-File-[0-9]{1,2}: [A-Za-z0-9@._-]{1,64}(?:\s{1,4}|\\r\\n|\\n)Encryption: )`},
		ok: func(_ string, _ int, m []string) bool {
			return m[1] == "" || len(m[1]) >= 16 || strings.ContainsAny(m[1], "0123456789+/")
		},
	},
	{
		name:     "jwt",
		keywords: []string{"eyJ"},
		rx:       lazyre.Regexp{Expr: `^eyJ[A-Za-z0-9_-]{5,}\.ey[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}`},
		before:   notWord,
		span:     64 << 10, // claims can be long; "eyJ" is rare enough for a wide window
	},
	{
		// scheme://user:password@host. An empty user is allowed (redis://:pw@host); the host
		// must follow the @ directly, so user@host and mailto: do not match. A password may
		// hold a /; what starts with a port (or nothing) then a / is host:port/path@x.
		// The whole URL may be percent-encoded, as a query parameter: scheme%3A%2F%2Fuser%3A
		// password%40host, judged decoded.
		name:     "url-credentials",
		keywords: []string{"://", "%3A%2F%2F", "%3a%2f%2f"},
		rx: lazyre.Regexp{Expr: `^(?:://[^\s:/?#@"'<>\[\]]*:([^\s?#@"'<>\[\]]+)@[A-Za-z0-9\[]|` +
			`%3[Aa]%2[Ff]%2[Ff][A-Za-z0-9._~+-]*%3[Aa]((?:[A-Za-z0-9._~!$'()*+,;=-]|%[0-9A-Fa-f]{2})+?)%40(?:[A-Za-z0-9]|%5[Bb]))`},
		before: schemeBefore, window: urlWindow,
		ok: func(_ string, _ int, m []string) bool {
			pw := m[1]
			if pw == "" {
				pw = percentDecode(m[2])
			}
			port, _, path := strings.Cut(pw, "/")
			return notPlaceholder(pw) && !(path && strings.Trim(port, "0123456789") == "")
		},
	},
	{
		// base64 of a JSON object holding a secret ({" encodes as eyJ): a config, a state
		// parameter or a cookie pasted whole. The run is decoded and scanned only where eyJ
		// starts it (not after / or +, so a run is read once) and when it ends within the
		// span: runs do not overlap, so a flood costs each byte a bounded number of reads.
		name: "base64-json", keywords: []string{"eyJ"}, span: 2048,
		before: func(s string, i int) bool { return notWord(s, i) && (i == 0 || s[i-1] != '/' && s[i-1] != '+') },
		rx:     lazyre.Regexp{Expr: `^eyJ[A-Za-z0-9+/_-]{13,}={0,2}`},
		ok: func(s string, i int, m []string) bool {
			if j := i + len(m[0]); j < len(s) && (isAlnum(s[j]) || strings.IndexByte("+/=_-", s[j]) >= 0) {
				return false // longer than the span
			}
			return encodedSecret(m[0])
		},
	},
	{
		// A key block in base64 (LS0tLS1CRUdJTi is "-----BEGIN"), as a kubeconfig's
		// client-key-data or a Kubernetes secret's tls.key holds it: the run's first 300
		// characters, in whole groups of four, are decoded and judged as text, where
		// private-key finds a block by its header and the start of its body.
		name: "base64-private-key", keywords: []string{"LS0tLS1CRUdJTi"},
		before: func(s string, i int) bool { return notWord(s, i) && (i == 0 || s[i-1] != '/' && s[i-1] != '+') },
		rx:     lazyre.Regexp{Expr: `^LS0tLS1CRUdJTi[A-Za-z0-9+/]{40,286}`},
		ok:     func(_ string, _ int, m []string) bool { return encodedSecret(m[0][:len(m[0])/4*4]) },
	},
	{
		// A prefixed token in base64 with nothing before it in the data (echo -n $TOKEN |
		// base64, a Kubernetes secret's data: holds one so): the keywords are the encodings
		// of the prefixes, so the run is decoded and judged only where one starts it.
		name: "base64-token", keywords: []string{"Z2hwX", "Z2hvX", "Z2h1X", "Z2hzX", "Z2hyX", "Z2l0aHViX3BhdF",
			"Z2xwYXQt", "c2stYW50L", "c2stcHJvai", "eG94Yi", "eG94cC", "QUtJQ", "QVNJQ", "bnBtX", "QUl6Y"},
		before: func(s string, i int) bool { return notWord(s, i) && (i == 0 || s[i-1] != '/' && s[i-1] != '+') },
		rx:     lazyre.Regexp{Expr: `^[A-Za-z0-9+/_-]{24,}`}, span: 400,
		ok: func(_ string, _ int, m []string) bool {
			v := m[0]
			if len(v)%4 == 1 {
				v = v[:len(v)-1] // no whole byte: the run was cut at the window
			}
			return encodedSecret(v)
		},
	},
	{
		// An AWS STS session token (aws_session_token = ..., "SessionToken": ... in the
		// output of aws sts assume-role): hundreds of base64 characters, with / and +,
		// which provider-credential's values may not hold. Any session token this long and
		// random is a credential, so the name need not say aws.
		name: "aws-session-token", keywords: []string{"session_token", "sessiontoken", "session-token"}, fold: true,
		named: true, asName: holderEnds, before: wordOrHump,
		ahead: ahead{base64: 25},
		rx: lazyre.Regexp{Expr: `(?i)^session[_-]?token["']?[ \t]{0,3}(?:=|:=|::?|=>)[ \t]{0,5}["'\x60]?` +
			`([A-Za-z0-9/+]{40,}={0,2})(?:$|[^A-Za-z0-9/+=])`},
		ok: func(_ string, _ int, m []string) bool { return mixed(m[1]) },
	},

	// Providers whose tokens carry their own prefix.
	{name: "stripe-key", keywords: []string{"sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_", "whsec_"}, rx: lazyre.Regexp{Expr: `^(?:[sr]k_(?:live|test|prod)_[A-Za-z0-9]{16,247}|whsec_[A-Za-z0-9+/]{32,})` + end}, before: notWord},
	{name: "google-api-key", keywords: []string{"AIza"}, rx: lazyre.Regexp{Expr: `^AIza[A-Za-z0-9_-]{35}` + end}, before: notWord},
	// Google's client secrets, access tokens and refresh tokens (1//0 then some 100
	// characters), which do not expire.
	{name: "google-oauth", keywords: []string{"GOCSPX-", "ya29.", "1//0"}, rx: lazyre.Regexp{Expr: `^(?:GOCSPX-[A-Za-z0-9_-]{28}|ya29\.[A-Za-z0-9_-]{30,}|1//0[A-Za-z0-9_-]{60,})`}, before: notWord},
	{name: "npm-token", keywords: []string{"npm_"}, rx: lazyre.Regexp{Expr: `^npm_[A-Za-z0-9]{36}` + end}, before: notWord},
	{
		name: "huggingface-token", keywords: []string{"hf_", "api_org_"}, before: notWord,
		rx: lazyre.Regexp{Expr: `^(?:hf|api_org)_([A-Za-z0-9]{30,40})` + end},
		ok: func(_ string, _ int, m []string) bool { return mixedCase(m[1]) },
	},
	{name: "gitlab-token", keywords: []string{"glpat-", "gldt-", "glptt-", "glrt-", "glcbt-", "glsoat-", "glffct-",
		"gloas-", "glimt-", "glagent-", "glft-", "glwt-", "GR1348941"}, rx: lazyre.Regexp{Expr: `^(?:gl(?:pat|dt|ptt|rt|cbt|soat|ffct|oas|imt|agent|ft|wt)-|GR1348941)[A-Za-z0-9_.-]{20,}`}, before: notWord},
	{name: "sendgrid-api-key", keywords: []string{"SG."}, rx: lazyre.Regexp{Expr: `^SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}`}, before: notWord},
	{
		name: "azure-storage-key", keywords: []string{"accountkey", "sharedaccesskey"}, fold: true, named: true,
		rx: lazyre.Regexp{Expr: `(?i)^(?:account|sharedaccess)key["']?\s{0,3}[=:]\s{0,3}["']?[A-Za-z0-9+/]{40,}={0,2}`},
	},
	{
		// Azure AD client secrets: three characters, a digit, "Q~", then 31 to 34 more.
		name: "azure-ad-client-secret", keywords: []string{"Q~"},
		rx: lazyre.Regexp{Expr: `^Q~[A-Za-z0-9_~.-]{31,34}(?:$|[^A-Za-z0-9_~.-])`},
		before: func(s string, i int) bool {
			if i < 4 || s[i-1] < '0' || s[i-1] > '9' {
				return false
			}
			for _, c := range []byte(s[i-4 : i-1]) {
				if !isAlnum(c) && c != '_' && c != '~' && c != '.' {
					return false
				}
			}
			return i == 4 || !isAlnum(s[i-5])
		},
	},
	{
		// An Azure shared access signature: its sig= parameter, after the sv= (service
		// version) every SAS URL and SharedAccessSignature= connection string carries.
		name: "azure-sas-token", keywords: []string{"sig="}, before: sasBefore,
		rx: lazyre.Regexp{Expr: `^sig=([A-Za-z0-9%+/]{30,128})`},
		ok: func(_ string, _ int, m []string) bool { return mixed(m[1]) },
	},
	{name: "digitalocean-token", keywords: []string{"dop_v1_", "doo_v1_", "dor_v1_"}, rx: lazyre.Regexp{Expr: `^do[por]_v1_[a-f0-9]{64}`}, before: notWord},
	{name: "doppler-token", keywords: []string{"dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."}, rx: lazyre.Regexp{Expr: `^dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9_.-]{40,}`}, before: notWord},
	{name: "dropbox-token", keywords: []string{"sl."}, rx: lazyre.Regexp{Expr: `^sl\.[A-Za-z0-9_=-]{130,160}`}, before: notWord},
	{name: "duffel-token", keywords: []string{"duffel_test_", "duffel_live_"}, rx: lazyre.Regexp{Expr: `^duffel_(?:test|live)_[A-Za-z0-9_=-]{43}`}, before: notWord},
	{name: "dynatrace-token", keywords: []string{"dt0c01."}, rx: lazyre.Regexp{Expr: `^dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}`}, before: notWord},
	{name: "easypost-token", keywords: []string{"EZAK", "EZTK"}, rx: lazyre.Regexp{Expr: `^EZ[AT]K[A-Za-z0-9]{54}`}, before: notWord},
	{name: "flutterwave-key", keywords: []string{"FLWSECK", "FLWPUBK"}, rx: lazyre.Regexp{Expr: `^FLW(?:SECK|PUBK)(?:_TEST)?-[a-hA-H0-9]{12,32}-X`}, before: notWord},
	{name: "frameio-token", keywords: []string{"fio-u-"}, rx: lazyre.Regexp{Expr: `^fio-u-[A-Za-z0-9_=-]{64}`}, before: notWord},
	{name: "grafana-token", keywords: []string{"glc_", "glsa_", "eyJrIjoi"}, rx: lazyre.Regexp{Expr: `^(?:glc_[A-Za-z0-9+/]{32,400}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|eyJrIjoi[A-Za-z0-9]{70,400}={0,2})`}, before: notWord},
	{
		name: "terraform-cloud-token", keywords: []string{"atlasv1."},
		rx: lazyre.Regexp{Expr: `^atlasv1\.[A-Za-z0-9_=-]{60,70}`},
		before: func(s string, i int) bool {
			return i >= 15 && s[i-1] == '.' && isAlnum(s[i-2])
		},
	},
	{name: "vault-token", keywords: []string{"hvs.", "hvb.", "hvr."}, rx: lazyre.Regexp{Expr: `^hv[sbr]\.[A-Za-z0-9_-]{90,400}`}, before: notWord},
	{name: "heroku-key", keywords: []string{"HRKU-"}, rx: lazyre.Regexp{Expr: `^HRKU-[A-Za-z0-9_-]{58,}`}, before: notWord},
	{name: "linear-api-key", keywords: []string{"lin_api_"}, rx: lazyre.Regexp{Expr: `^lin_api_[A-Za-z0-9]{40}`}, before: notWord},
	{name: "mapbox-secret-token", keywords: []string{"sk.eyJ"}, rx: lazyre.Regexp{Expr: `^sk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}`}, before: notWord},
	{name: "newrelic-key", keywords: []string{"NRAK-", "NRJS-", "NRII-"}, rx: lazyre.Regexp{Expr: `^(?:NRAK-[A-Z0-9]{27}|NRJS-[a-f0-9]{19}|NRII-[A-Za-z0-9-]{32})`}, before: notWord},
	{name: "octopus-deploy-key", keywords: []string{"API-"}, rx: lazyre.Regexp{Expr: `^API-[A-Z0-9]{26}` + end}, before: notWord},
	{name: "perplexity-api-key", keywords: []string{"pplx-"}, rx: lazyre.Regexp{Expr: `^pplx-[A-Za-z0-9]{48}`}, before: notWord},
	{name: "openrouter-api-key", keywords: []string{"sk-or-v1-"}, rx: lazyre.Regexp{Expr: `^sk-or-v1-[a-f0-9]{64}` + end}, before: notWord},
	{name: "groq-api-key", keywords: []string{"gsk_"}, rx: lazyre.Regexp{Expr: `^gsk_[A-Za-z0-9]{52}` + end}, before: notWord},
	{name: "xai-api-key", keywords: []string{"xai-"}, rx: lazyre.Regexp{Expr: `^xai-[A-Za-z0-9]{80}` + end}, before: notWord},
	{name: "planetscale-token", keywords: []string{"pscale_tkn_", "pscale_pw_", "pscale_oauth_"}, rx: lazyre.Regexp{Expr: `^pscale_(?:tkn|pw|oauth)_[A-Za-z0-9=._-]{32,64}`}, before: notWord},
	{name: "postman-api-key", keywords: []string{"PMAK-"}, rx: lazyre.Regexp{Expr: `^PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}`}, before: notWord},
	{name: "prefect-api-key", keywords: []string{"pnu_"}, rx: lazyre.Regexp{Expr: `^pnu_[A-Za-z0-9]{36}`}, before: notWord},
	{name: "pulumi-token", keywords: []string{"pul-"}, rx: lazyre.Regexp{Expr: `^pul-[a-f0-9]{40}`}, before: notWord},
	{name: "pypi-token", keywords: []string{"pypi-AgEIcHlwaS5vcmc"}, rx: lazyre.Regexp{Expr: `^pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}`}, before: notWord},
	{name: "readme-api-key", keywords: []string{"rdme_"}, rx: lazyre.Regexp{Expr: `^rdme_[a-z0-9]{70}`}, before: notWord},
	{name: "rubygems-key", keywords: []string{"rubygems_"}, rx: lazyre.Regexp{Expr: `^rubygems_[a-f0-9]{48}`}, before: notWord},
	{name: "scalingo-token", keywords: []string{"tk-us-"}, rx: lazyre.Regexp{Expr: `^tk-us-[A-Za-z0-9_-]{48}`}, before: notWord},
	{name: "sendinblue-key", keywords: []string{"xkeysib-", "xsmtpsib-"}, rx: lazyre.Regexp{Expr: `^x(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}`}, before: notWord},
	{name: "sentry-token", keywords: []string{"sntrys_", "sntryu_"}, rx: lazyre.Regexp{Expr: `^(?:sntrys_eyJ[A-Za-z0-9+/=_-]{50,}|sntryu_[a-f0-9]{64})`}, before: notWord},
	{name: "shippo-token", keywords: []string{"shippo_live_", "shippo_test_"}, rx: lazyre.Regexp{Expr: `^shippo_(?:live|test)_[a-fA-F0-9]{40}`}, before: notWord},
	{name: "shopify-token", keywords: []string{"shpat_", "shpca_", "shppa_", "shpss_"}, rx: lazyre.Regexp{Expr: `^shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}`}, before: notWord},
	{
		name: "square-token", keywords: []string{"sq0atp-", "sq0csp-", "EAAA"}, before: notWord,
		rx: lazyre.Regexp{Expr: `^(?:sq0(?:atp|csp)-[A-Za-z0-9_-]{22,60}|EAAA[A-Za-z0-9_+=-]{60,})`},
		ok: notZeroRun,
	},
	{name: "twilio-api-key", keywords: []string{"SK"}, rx: lazyre.Regexp{Expr: `^SK[0-9a-fA-F]{32}` + end}, before: notWord},
	{name: "typeform-token", keywords: []string{"tfp_"}, rx: lazyre.Regexp{Expr: `^tfp_[A-Za-z0-9_.=-]{59}`}, before: notWord},
	{name: "onepassword-token", keywords: []string{"ops_eyJ", "A3-"}, rx: lazyre.Regexp{Expr: `^(?:ops_eyJ[A-Za-z0-9+/]{250,}={0,3}|A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5})`}, before: notWord},
	{name: "age-secret-key", keywords: []string{"AGE-SECRET-KEY-1"}, rx: lazyre.Regexp{Expr: `^AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}`}, before: notWord},
	{name: "artifactory-key", keywords: []string{"AKCp", "cmVmd"}, rx: lazyre.Regexp{Expr: `^(?:AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59})` + end}, before: notWord},
	{name: "alibaba-access-key-id", keywords: []string{"LTAI"}, rx: lazyre.Regexp{Expr: `^LTAI[A-Za-z0-9]{20}` + end}, before: notWord},
	{name: "atlassian-token", keywords: []string{"ATATT3", "ATCTT3", "ATOAT3"}, rx: lazyre.Regexp{Expr: `^AT(?:AT|CT|OA)T3[A-Za-z0-9_=-]{100,}`}, before: notWord},
	{name: "adobe-client-secret", keywords: []string{"p8e-"}, rx: lazyre.Regexp{Expr: `^p8e-[A-Za-z0-9]{32}` + end}, before: notWord},
	{
		name: "clojars-token", keywords: []string{"clojars_"}, fold: true, before: notWord,
		rx: lazyre.Regexp{Expr: `(?i)^clojars_[a-z0-9]{60}`},
	},
	{name: "cloudflare-origin-ca-key", keywords: []string{"v1.0-"}, rx: lazyre.Regexp{Expr: `^v1\.0-[a-f0-9]{24}-[a-f0-9]{146}`}, before: notWord},
	{name: "databricks-token", keywords: []string{"dapi"}, rx: lazyre.Regexp{Expr: `^dapi[a-f0-9]{32}(?:-[0-9])?` + end}, before: notWord},
	{name: "flyio-token", keywords: []string{"fo1_", "fm1r_", "fm1a_", "fm2_"}, rx: lazyre.Regexp{Expr: `^(?:fo1_[A-Za-z0-9_-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3})`}, before: notWord},
	{name: "infracost-key", keywords: []string{"ico-"}, rx: lazyre.Regexp{Expr: `^ico-[A-Za-z0-9]{32}` + end}, before: notWord},
	{name: "notion-token", keywords: []string{"ntn_", "secret_"}, rx: lazyre.Regexp{Expr: `^(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})` + end}, before: notWord},
	{name: "sourcegraph-token", keywords: []string{"sgp_"}, rx: lazyre.Regexp{Expr: `^sgp_(?:[a-fA-F0-9]{16}|local)_[a-fA-F0-9]{40}`}, before: notWord},
	{name: "settlemint-token", keywords: []string{"sm_pat_", "sm_aat_", "sm_sat_"}, rx: lazyre.Regexp{Expr: `^sm_(?:pat|aat|sat)_[A-Za-z0-9]{16}` + end}, before: notWord},
	{
		name: "facebook-token", keywords: []string{"EAAC", "EAAM"}, before: notWord,
		rx: lazyre.Regexp{Expr: `^EAA[MC][A-Za-z0-9]{100,}`},
		ok: notZeroRun,
	},
	{
		// The SECRET_KEY Django's startproject writes: 50 characters of its alphabet after a
		// prefix that marks it as a development key, which signs sessions all the same.
		name: "django-secret-key", keywords: []string{"django-insecure-"}, before: notWord,
		rx: lazyre.Regexp{Expr: `^django-insecure-([a-z0-9!@#$%^&*(=+)_-]{40,64})(?:$|[^a-z0-9!@#$%^&*(=+)_-])`},
		ok: func(_ string, _ int, m []string) bool { return classes(m[1]) >= 3 },
	},
	{
		// Laravel's APP_KEY, which php artisan key:generate writes to .env: base64: and 32
		// random bytes encoded. A JSON member is read as this text too.
		name: "laravel-app-key", keywords: []string{"APP_KEY"}, named: true, before: notWord,
		rx: lazyre.Regexp{Expr: `^APP_KEY["']?\s{0,3}[=:]\s{0,3}["']?base64:([A-Za-z0-9+/]{43}=)`},
		ok: func(_ string, _ int, m []string) bool { return mixed(m[1]) },
	},
	{name: "adafruit-key", keywords: []string{"aio_"}, rx: lazyre.Regexp{Expr: `^aio_[A-Za-z0-9]{28}` + end}, before: notWord},
	{name: "intra42-secret", keywords: []string{"s-s4t2ud-", "s-s4t2af-"}, rx: lazyre.Regexp{Expr: `^s-s4t2(?:ud|af)-[a-f0-9]{64}`}, before: notWord},
	{name: "harness-token", keywords: []string{"pat.", "sat."}, rx: lazyre.Regexp{Expr: `^(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[0-9a-f]{24}\.[A-Za-z0-9]{20}`}, before: notWord},
	{name: "openshift-token", keywords: []string{"sha256~"}, rx: lazyre.Regexp{Expr: `^sha256~[A-Za-z0-9_-]{43}` + end}, before: notWord},
	{name: "kubernetes-token", keywords: []string{"k8s-aws-v1."}, rx: lazyre.Regexp{Expr: `^k8s-aws-v1\.[A-Za-z0-9_-]{40,}`}, before: notWord},
	{name: "authress-key", keywords: []string{"sc_", "ext_", "scauth_", "authress_"}, rx: lazyre.Regexp{Expr: `^(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}`}, before: notWord},
	{name: "defined-networking-token", keywords: []string{"dnkey-"}, rx: lazyre.Regexp{Expr: `^dnkey-[A-Za-z0-9=_-]{26}-[A-Za-z0-9=_-]{52}`}, before: notWord},
	{name: "dockerhub-token", keywords: []string{"dckr_pat_", "dckr_oat_"}, rx: lazyre.Regexp{Expr: `^dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,64}` + end}, before: notWord},
	{name: "tailscale-key", keywords: []string{"tskey-"}, rx: lazyre.Regexp{Expr: `^tskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{8,40}-[A-Za-z0-9]{20,64}` + end}, before: notWord},
	{name: "langsmith-key", keywords: []string{"lsv2_"}, rx: lazyre.Regexp{Expr: `^lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}` + end}, before: notWord},
	{name: "replicate-token", keywords: []string{"r8_"}, rx: lazyre.Regexp{Expr: `^r8_[A-Za-z0-9]{37}` + end}, before: notWord},
	{name: "nvidia-api-key", keywords: []string{"nvapi-"}, rx: lazyre.Regexp{Expr: `^nvapi-[A-Za-z0-9_-]{64}` + end}, before: notWord},
	{name: "supabase-token", keywords: []string{"sbp_"}, rx: lazyre.Regexp{Expr: `^sbp_[a-f0-9]{40}` + end}, before: notWord},
	{name: "hubspot-token", keywords: []string{"pat-na1-", "pat-eu1-"}, rx: lazyre.Regexp{Expr: `^pat-(?:na|eu)1-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}` + end}, before: notWord},
	{name: "elevenlabs-key", keywords: []string{"sk_"}, rx: lazyre.Regexp{Expr: `^sk_[a-f0-9]{48}` + end}, before: notWord},
	{
		// curl -u user:password (or --user), as pasted from a shell history or written as a
		// list of words (["curl", "-u", "user:password"]). The keyword is the flag and the
		// command is looked for before it (see commandBefore): with the command as the
		// keyword, each "curl" in a flood of them ran the regexp over its whole window.
		name: "curl-user", keywords: []string{"-u", "--user"}, span: 256,
		before: func(s string, i int) bool { return commandBefore(s, i, curlNames) != "" },
		rx:     lazyre.Regexp{Expr: `^(?:-u|--user)(?:=|\s{1,5}|` + argvSep + `)["']?[^\s:"']{1,64}:([^\s"']{3,128})`},
		ok:     func(_ string, _ int, m []string) bool { return notPlaceholder(m[1]) && classes(m[1]) >= 2 },
	},
	{
		// A password on a command line: mysql -pPASSWORD (glued; -p alone prompts for it),
		// sshpass -p PASSWORD, docker login -u USER -p PASSWORD. Found by the flag, as
		// curl-user is.
		name: "cli-password", keywords: []string{"-p"}, span: 176,
		before: func(s string, i int) bool {
			// mysql's -p is glued to the password (alone, it prompts for one); sshpass's and
			// a registry login's take the next word.
			glued := i+2 < len(s) && !isBlank(s[i+2]) && argvGap(s, i+2) == 0
			switch commandBefore(s, i, passwordCommands) {
			case "mysql", "mariadb":
				return glued
			case "sshpass", "login":
				return !glued
			}
			return false
		},
		rx: lazyre.Regexp{Expr: `^-p(?:\s{0,5}|` + argvSep + `)["']?([^\s"']{3,128})`},
		ok: func(s string, i int, m []string) bool {
			if !notPlaceholder(m[1]) || classes(m[1]) < 2 {
				return false
			}
			// A login's command may be followed on its line by another's -p (docker run -p
			// 8080:80): a port mapping holds no letter.
			return commandBefore(s, i, passwordCommands) != "login" || strings.ContainsAny(m[1], letters)
		},
	},
	{
		// A .netrc entry: machine HOST [login USER] password PASSWORD, on one line or several
		// (or a list's items, - machine HOST / - login USER / ...), and the default entry for
		// other hosts: default login USER password PASSWORD.
		name: "netrc-password", keywords: []string{"machine", "default"},
		before: func(s string, i int) bool {
			// "default" is code's word (switch cases, settings): the regexp runs only where
			// a login follows it.
			if !notAlnum(s, i) {
				return false
			}
			if s[i] == 'm' {
				return true
			}
			rest := s[i+len("default") : min(len(s), i+len("default")+24)]
			return rest != "" && isBlank(rest[0]) && strings.HasPrefix(strings.TrimLeft(rest, " \t\r\n"), "login")
		},
		rx: lazyre.Regexp{Expr: `^(?:machine\s+(\S{1,253})|default)(\s+(?:[-*+]\s+)?login\s+(\S{1,128}))?\s+(?:[-*+]\s+)?password\s+(\S{3,128})`},
		ok: func(_ string, _ int, m []string) bool {
			pw := m[4]
			if !notPlaceholder(pw) {
				return false
			}
			if slices.ContainsFunc(strings.Fields(m[0]), func(f string) bool { return len(f) == 1 && strings.Contains("-*+", f) }) {
				// Written as a list's items (- machine x / - login y / - password z), the
				// words may be a list of topics ("- machine learning", "- password reset"):
				// the password must hold a digit or three kinds of character.
				return strings.ContainsAny(pw, "0123456789") && classes(pw) >= 2 || classes(pw) >= 3
			}
			if m[1] == "" {
				// default: an anonymous login's password is an e-mail address by custom, and
				// prose ("the default login page password field") names no password with a
				// digit or three kinds of character.
				return m[3] != "anonymous" && m[3] != "ftp" && (strings.ContainsAny(pw, "0123456789") || classes(pw) >= 3)
			}
			// Without a login, prose ("the machine login password prompt") reads as an entry
			// whose host is a word: the password must then mix two kinds of character.
			return m[2] != "" || m[1] != "login" && classes(pw) >= 2
		},
	},
	{
		// A .pgpass line, host:port:database:user:password, found by its port: PostgreSQL's
		// 5432, a second cluster's 5433, PgBouncer's 6432, or * for any. The host starts the
		// line, or follows a blank or a quote (echo 'host:5432:...' >> ~/.pgpass). The password
		// ends, as libpq reads it, at a colon not escaped by \: so text full of host:*: (an
		// entry's fields glued to the next one's) reads each keyword's next fields, not 128
		// bytes on.
		name: "pgpass-password", keywords: []string{":5432:", ":5433:", ":6432:", ":*:"}, span: 400,
		before: pgpassHost,
		rx:     lazyre.Regexp{Expr: `^:(?:5432|5433|6432|\*):[^:\s]{1,63}:[^:\s]{1,63}:((?:[^:\s\\]|\\\S){3,128})`},
		ok: func(_ string, _ int, m []string) bool {
			pw := strings.TrimRight(m[1], `'"`)
			c := classes(pw)
			return notPlaceholder(pw) && (c >= 3 || c == 2 && strings.ContainsAny(pw, "0123456789")) &&
				strings.Trim(pw, "0123456789:*") != ""
		},
	},
	{
		// An .npmrc's credentials: //registry/:_authToken=... (a legacy token is a UUID,
		// which no other rule takes for a key) and _auth=, base64 of user:password. The
		// name follows the registry's ":" or starts a line; this._authToken in code does not.
		// Neither value holds a colon (base64, a registry's token), so text full of :_auth=
		// reads each value to the next one, not 512 bytes on.
		name: "npmrc-auth", keywords: []string{"_auth"}, fold: true, span: 600,
		before: func(s string, i int) bool { return i == 0 || s[i-1] == ':' || isBlank(s[i-1]) },
		rx:     lazyre.Regexp{Expr: `(?i)^_auth(token)?[ \t]{0,3}=[ \t]{0,3}["']?([^\s"':]{8,512})`},
		ok: func(_ string, _ int, m []string) bool {
			if m[1] == "" {
				return basicCredentials(m[2])
			}
			return notPlaceholder(m[2]) && classes(m[2]) >= 2
		},
	},
	{
		name: "telegram-bot-token", keywords: []string{":AA"},
		rx: lazyre.Regexp{Expr: `^:AA[A-Za-z0-9_-]{33}` + end},
		before: func(s string, i int) bool {
			j := i
			for j > 0 && s[j-1] >= '0' && s[j-1] <= '9' {
				j--
			}
			return i-j >= 5 && i-j <= 16 && notAlnum(s, j)
		},
	},
	{
		name: "webhook-url", keywords: []string{".webhook.office.com/", "discord.com/api/webhooks/", "discordapp.com/api/webhooks/"},
		rx: lazyre.Regexp{Expr: `^(?:\.webhook\.office\.com/webhookb2/[A-Za-z0-9@/-]{40,}|discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]{40,})`},
	},
	{
		// WireGuard's keys (PrivateKey = ..., PresharedKey = ... in a wg-quick file, or a
		// private_key member): 32 bytes in base64, 44 characters ending in =.
		name: "wireguard-key", keywords: []string{"privatekey", "private_key", "private-key", "presharedkey", "preshared_key"},
		fold: true, named: true, before: notAlnum,
		rx: lazyre.Regexp{Expr: `^(?i:private|preshared)[_-]?(?i:key)["']?\s{0,8}[=:]\s{0,8}["']?` +
			`[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=(?:$|[^A-Za-z0-9+/=])`},
	},
	{
		// A Docker config's registry credentials: "auth": base64 of user:password, judged
		// decoded as Basic credentials are. A JSON member is read as this text too.
		name: "docker-auth", keywords: []string{`"auth"`},
		rx: lazyre.Regexp{Expr: `^"auth"\s{0,3}:\s{0,3}"([A-Za-z0-9+/]{8,}={0,2})"`},
		ok: func(_ string, _ int, m []string) bool { return basicCredentials(m[1]) },
	},
	{
		// Authorization: Basic/Bearer/Token followed by credentials, and a bare "Bearer ..."
		// whose token looks random (letters and digits). Basic credentials are base64 of
		// user:password, which need not look random: they are judged decoded.
		name: "authorization-header", keywords: []string{"authorization", "bearer"}, fold: true, named: true, before: notAlnum,
		rx: lazyre.Regexp{Expr: `(?i)^(?:authorization["']?\s{0,3}[:=]\s{0,3}["']?(?:(basic)|bearer|token|digest)\s+|bearer\s+)([A-Za-z0-9._~+/-]{8,}={0,2})`},
		ok: func(_ string, _ int, m []string) bool {
			if m[1] != "" {
				if _, ok := decodeBasic(m[2]); ok {
					return basicCredentials(m[2])
				}
			}
			return len(m[2]) >= 16 && randomish(m[2])
		},
	},
	{
		// "Basic " then base64 of user:password outside an Authorization header (another
		// header, a proxy setting). Without the header's name, "Basic" is a common word, so
		// the run is held to what a client sends: padded standard base64 of printable ASCII
		// with a user, a colon and a password that is no placeholder. Base64 of user:password
		// with no "Basic " before it is not looked for: it cannot be told from other base64.
		name: "basic-credentials", keywords: []string{"basic"}, fold: true, before: notAlnum, span: 512,
		rx: lazyre.Regexp{Expr: `(?i)^basic[ \t]{1,3}([A-Za-z0-9+/]{8,}={0,2})(?:$|[^A-Za-z0-9+/=_-])`},
		ok: func(_ string, _ int, m []string) bool { return sentBasic(m[1]) },
	},
	{
		// A session cookie, which logs a browser in: a Cookie: or Set-Cookie: header's pair
		// (curl's --cookie too) whose name says session or auth (sessionid, PHPSESSID,
		// connect.sid, _app_session, remember_token) and whose value looks random, as
		// provider-credential's does, or is hex (JSESSIONID). See sessionCookie.
		name: "session-cookie", keywords: []string{"cookie"}, fold: true, named: true, asName: holderEnds,
		before:  notAlnum,
		rx:      lazyre.Regexp{Expr: `(?i)^cookie["']?(?:\s{0,3}[:=]\s{0,3}["']?|\s{1,3}["'])`},
		members: sessionCookie,
	},
	{
		// A provider or credential name assigned a key-like value: "asana_secret: ...",
		// DATADOG_API_KEY=..., "client_secret": "...", or a name then a value, as in an
		// environment list ({"name": "API_KEY", "value": "..."}). The value must look random (letters and
		// digits, not a hex hash, a UUID, a path or a reference) so that ordinary settings pass.
		// The name starts a word or a camelCase hump: webhookSecret, accessToken. The value
		// may sit one level down, under a key that only holds it ({"api_key": {"value": ...}}).
		name: "provider-credential", keywords: credentialNames, fold: true, named: true,
		before: func(s string, i int) bool { return wordOrHump(s, i) && nameAssigned(s, i) },
		ahead:  ahead{value: credentialSpan},
		rx: lazyre.Regexp{Expr: `(?i)^[a-z0-9]+(?:[_.-][a-z0-9]+){0,4}?` + quote + `?\s{0,3}(?:=|:=|::?|=>|\?=|,\s{0,16}["']?(?:parameter)?value["']?\s{0,3}[:=]|,|` + inHolder + `)\s{0,5}` + valueQuote + `?` +
			credentialHead},
		span: credentialSpan, tail: credentialTail,
		ok: func(_ string, _ int, m []string) bool {
			return (credentialValue(m[1]) || hexKey(m[1]) && namesKey(m[0])) && !secretNamesPlace(m[0])
		},
	},
	{
		// A key or secret with symbols, which provider-credential's values may not hold
		// (Django's SECRET_KEY, a key typed into a .env): a name that ends in secret, or in
		// key after a word that says it is one (ENCRYPTION_KEY, signingKey, api-key; see
		// secretKeyName), assigned a quoted value or in an environment's NAME=value. See
		// symbolSecret for the value.
		name: "symbol-secret", keywords: []string{"secret", "_key", "-key", "key"}, fold: true, named: true,
		asName: func(s string, i, n int) bool { return secretKeyName(s, i) && holderEnds(s, i, n) },
		before: secretKeyName,
		ahead:  ahead{symbol: true},
		rx: lazyre.Regexp{Expr: `(?i)^(?:secret(?:[_-]?key)?|[_-]?key)["']?(?:[ \t]{0,3}(?:=|:=|:|=>)|\s{0,16},?\s{0,16}["']?(?:parameter)?value["']?\s{0,3}[:=])[ \t]{0,3}` +
			`(["'\x60]?)([^\s"'\x60,;]{8})`},
		tail: wordTail("\"'`,;"),
		ok: func(s string, i int, m []string) bool {
			return (m[1] != "" || envAssigned(s, i, m[0])) && symbolSecret(m[2])
		},
	},
	{
		// password = ..., "passwd": "...": anything that is not a reference or a mask. The
		// name may be glued to a word before it: PGPASSWORD, dbPassword, adminpasswd. A name
		// then a value, as in a Kubernetes or ECS environment list ({"name": "DB_PASSWORD",
		// "value": "..."}, - name: DB_PASSWORD / value: ...) or CloudFormation's parameters
		// (ParameterKey=DbPassword,ParameterValue=...), assigns it too, and so does a
		// value one level down under a key that only holds it ({"password": {"value": ...}},
		// password:\n  value: ...). Prose says one too ("the password is ...", "password for
		// admin was ...", "set to ..."), with a stricter test of the value (see saidPassword).
		name: "password-assignment", keywords: []string{"password", "passwd", "passphrase"}, fold: true, named: true,
		rx: lazyre.Regexp{Expr: `(?i)^pass(?:w(?:or)?d|phrase)` + quote + `?(?:\s{0,3}(?:=|:=|:|=>)|\s{0,16},?\s{0,16}["']?(?:parameter)?value["']?\s{0,3}[:=]|` + inHolder +
			`|(\s{1,3}(?:for\s{1,3}[^\s"'“”‘’]{1,64}\s{1,3})?(?:is|was|is\s{1,3}now|set\s{1,3}to|changed\s{1,3}to)(?::|\s)))` +
			`\s{0,3}(?:(` + valueQuote + `?)([^\s"'\x60,;“”‘’]{8})|` + valueQuote + `([^"'\x60\n“”‘’]{15,128})` + valueQuote + `)`},
		tail: wordTail("\"'`,;“”‘’"),
		ok: func(s string, i int, m []string) bool {
			if m[4] != "" { // quoted, with spaces
				return passphrase(m[4])
			}
			// Closing brackets after an unquoted value are the syntax around it: in
			// {"a":{"password":null}}} the value is null, not "null}}}}".
			pw := m[3]
			if m[2] == "" {
				pw = strings.TrimRight(pw, ")]}>")
			}
			if m[1] != "" {
				return saidPassword(pw, m[2] != "")
			}
			if len(pw) < 8 || !notPlaceholder(pw) || strings.ContainsAny(pw, "/\\") || classes(pw) < 2 {
				return false
			}
			// Unquoted, the value may be code: a call, a field, another variable. And the
			// name may not be assigned at all: ${DB_PASSWORD:-default} reads a variable, and
			// psql's :'app_password' (a colon glued to the value, which YAML's is not) too.
			sigil := sigilBefore(s, i)
			if sigil == "${" || gluedColon(m[0]) {
				return false
			}
			// PowerShell, PHP and Perl quote a string: $password = Read-Host is a command's
			// output, $password = PASSWORD a constant.
			return m[2] != "" || sigil == "" && (!codeValue(pw) || envAssigned(s, i, m[0]) && camelWords(pw))
		},
	},
	{
		// A password given to a command's flag as the next word: --password VALUE,
		// --db-password VALUE, or the next item of a list of words (["--password", "..."]).
		// With = it is password-assignment's. The value is judged as password-variable's.
		name: "password-flag", keywords: []string{"password", "passwd"}, fold: true, span: 96,
		before: flagBefore,
		rx:     lazyre.Regexp{Expr: `(?i)^passw(?:or)?d(?:[ \t]{1,3}|` + argvSep + `)(["']?)([^\s"'\x60,;]{8})`},
		tail:   wordTail("\"'`,;"),
		ok: func(_ string, _ int, m []string) bool {
			return !strings.HasPrefix(m[2], "-") && passwordValue(m[2], m[1] != "")
		},
	},
	{
		// Oracle's user/password[@service] after sqlplus or its tools (sqlplus scott/tiger,
		// expdp hr/...@pdb) or in a JDBC URL (jdbc:oracle:thin:user/password@host), or after
		// SQL*Plus's CONNECT (CONN) at the start of a line, after its SQL> prompt or as
		// Python's drivers' cx_Oracle.connect("user/password@dsn"), where the @ must follow:
		// connect is a common word. Alone (scott/Hunter2x@db), the shape is a path's, a
		// package's or an asset's (images/Logo2Dark@2x.png), so a command, a driver or the
		// URL's scheme must name it.
		name: "oracle-connect", keywords: []string{"sqlplus", "conn", "expdp", "impdp", "sqlldr", "oracle:thin:"}, fold: true, span: 375,
		before: func(s string, i int) bool {
			if !bareKeyword(s, i, "conn") {
				return notWord(s, i)
			}
			if strings.HasSuffix(s[:i], "cx_Oracle.") || strings.HasSuffix(s[:i], "oracledb.") {
				return true // Python's drivers: cx_Oracle.connect("user/password@dsn")
			}
			k := sqlPromptBefore(s, i)
			return k == 0 || s[k-1] == '\n' || s[k-1] == '\r'
		},
		rx: lazyre.Regexp{Expr: `(?i)^(?:(sqlplus|conn(?:ect)?|expdp|impdp|sqlldr)(?:(?:\s{1,3}|` + argvSep + `["'])-[a-z]{1,8}){0,3}(?:\s{1,3}|\(\s{0,3}|` + argvSep +
			`)["']?(?:userid=)?|oracle:thin:)[a-z_][\w$#.]{0,63}/([^\s/@"'\x60]{4,128})(@|["'\s;]|$)`},
		ok: func(_ string, _ int, m []string) bool {
			if strings.HasPrefix(strings.ToLower(m[1]), "conn") && m[3] != "@" {
				return false
			}
			return notPlaceholder(m[2]) && !strings.HasPrefix(m[2], "&")
		},
	},
	{
		// A value given to a parameter store in one flag after a name for a secret in
		// another: aws ssm put-parameter --name /prod/db/password --value .... The last part
		// of the name must end in the secret's word (/prod/password-policy/min-length names
		// a setting). A secret manager's --secret-string holds the secret whatever its name.
		// The value is judged as password-variable's.
		name: "parameter-value", keywords: []string{"--value", "--secret-string"}, span: 160,
		before: func(s string, i int) bool {
			if bareKeyword(s, i, "--value") {
				return commandBefore(s, i, parameterCommands) != ""
			}
			return i == 0 || isBlank(s[i-1]) || isQuote(s[i-1])
		},
		rx:   lazyre.Regexp{Expr: `^--(value|secret-string)(?:=|[ \t]{1,3}|` + argvSep + `)(["']?)([^\s"'\x60,;]{8})`},
		tail: wordTail("\"'`,;"),
		ok: func(s string, i int, m []string) bool {
			return (m[1] != "value" || secretParameter(s, i)) && passwordValue(m[3], m[2] != "")
		},
	},
	{
		// A variable named for a password by a short word: export DB_PASS=..., MYSQL_PWD=...,
		// redis_pass: ..., and an ADO.NET or ODBC connection string's Pwd=. "pass" is a
		// common word, so it is a keyword with the _ that joins it to the rest of the name,
		// which must come before it, or alone where an assignment follows it (nodemailer's
		// auth: {user, pass: ...}, PASS=...), with a stricter test of the value (see
		// barePass); pwd is a name of its own (OLDPWD is not). The name ends at the
		// assignment (DB_PASS_FILE names a file).
		// Such names are also code's (first_pass = compute(x)) and the shell's (PWD=/home),
		// so the value is judged as code and paths are not written (see passwordValue). An
		// environment list's name then value ({"name": "DB_PASS", "value": ...}) assigns one.
		name: "password-variable", keywords: []string{"_pass", "_pwd", "_pw", "pwd", "pass"}, fold: true, span: 192,
		named: true, asName: holderEnds, before: func(s string, i int) bool {
			switch {
			case s[i] == '_':
				return i > 0 && isAlnum(s[i-1])
			case bareKeyword(s, i, "pass"):
				return notAlnum(s, i) && i+4 < len(s) && strings.IndexByte("\"' \t:=", s[i+4]) >= 0
			}
			return notAlnum(s, i)
		},
		rx: lazyre.Regexp{Expr: `(?i)^(?:_pass|_pwd?|pwd|pass)["']?[ \t]{0,3}(?:=|:=|:|=>|\s{0,16},?\s{0,16}["']?(?:parameter)?value["']?\s{0,3}[:=])` +
			`[ \t]{0,3}(?:(["'\x60]?)([^\s"'\x60,;]{8}))`},
		tail: wordTail("\"'`,;"),
		ok: func(s string, i int, m []string) bool {
			if bareKeyword(s, i, "pass") && !barePass(m[0][4:], m[2]) {
				return false
			}
			return passwordValue(m[2], m[1] != "") || (m[1] != "" || envAssigned(s, i, m[0])) && camelWords(m[2])
		},
	},
	{
		// A key-like value under a holder of credentials, one level down: {"auth": {"token":
		// ...}}, credentials:\n  key: ..., the nested spelling of auth_token or access_key.
		// Other members may come first ({"auth": {"type": "basic", "token": ...}}): in text
		// holderMembers passes over up to eight short ones after the regexp's holder, in JSON
		// the walk reads each member under the holder's key. The value must look random, as
		// provider-credential's.
		name: "credential-field", keywords: []string{"auth", "oauth", "credential", "creds", "access", "refresh"}, fold: true,
		named: true, asName: holderEnds, before: holderName,
		rx:      lazyre.Regexp{Expr: `(?i)^(?:o?auth2?|credentials?|creds|access|refresh)["']?\s{0,3}(?:=>|=|:)\s{0,16}(?:\{\s{0,16})?`},
		members: holderMembers,
	},
	{
		// TOKEN=..., GITHUB_TOKEN=..., "token": "...", X-Auth-Token: ..., a Makefile's
		// TOKEN ?= ..., an environment list's {"name": "GITHUB_TOKEN", "value": ...}: a
		// name that is or ends in "token" assigned a random-looking value, judged as
		// provider-credential judges one. "token" is a common word ("max_tokens", "the token
		// is refreshed"), so it counts as a name only where an assignment follows it
		// (holderEnds): elsewhere the JSON scan does not read members for it. The regexp's
		// match ends within 85 bytes of the keyword, so the window is cut there: prose
		// says "token" often.
		name: "token-assignment", keywords: []string{"token"}, fold: true, span: tokenSpan,
		named: true, asName: holderEnds, tail: credentialTail,
		before: wordOrHump,
		ahead:  ahead{value: tokenSpan},
		rx: lazyre.Regexp{Expr: `(?i)^tokens?["']?[ \t]{0,3}(?:=|:=|::?|=>|\?=|\s{0,16},?\s{0,16}["']?(?:parameter)?value["']?\s{0,3}[:=])[ \t]{0,5}["'\x60]?` +
			credentialHead},
		ok: func(s string, i int, m []string) bool {
			return !cursorName(s, i) && (credentialValue(m[1]) || hexKey(m[1]) && !pagingToken(s, i))
		},
	},
	{
		// A Discord bot token alone (see discordToken; after a name, provider-credential or
		// token-assignment finds it first). Its id's digits encode as M, N or O, then D, T,
		// j or z: those pairs are the keywords, and the two characters after them, which
		// encode its second and third digits, the gates'.
		name: "discord-bot-token", keywords: []string{"MT", "Mj", "Mz", "ND", "NT", "Nj", "Nz", "OD", "OT"},
		then: [2]string{discordSecond, discordThird}, span: 80,
		before: func(s string, i int) bool {
			return notWord(s, i) && i+3 < len(s) &&
				strings.IndexByte(discordSecond, s[i+2]) >= 0 && strings.IndexByte(discordThird, s[i+3]) >= 0
		},
		rx: lazyre.Regexp{Expr: `^([A-Za-z0-9_-]{23,28}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,40})` + end},
		ok: func(_ string, _ int, m []string) bool { return discordToken(m[1]) },
	},
}

// rules are ruleTable's rules, in its order.
var rules = sync.OnceValue(func() []*rule {
	rs := make([]*rule, len(ruleTable))
	for i := range ruleTable {
		rs[i] = &ruleTable[i]
	}
	return rs
})

// discordSecond and discordThird are the base64 characters a digit makes where a Discord
// token's id holds its second and third (0 to 9).
const (
	discordSecond = "AEIMQUYcgk"
	discordThird  = "wxyz012345"
)

// holderMembers reads a holder's members from j, where its name, its assignment and any
// brace end (credential-field's regexp): up to eight short ones are passed over, each a name
// of up to 32 characters and a value of up to 64, quoted or a word, ended by a comma or a
// line, and before each, and after the eighth, a key, token or secret assigned a random-
// looking value is looked for. It returns where that value ends. Each part is an expression
// of its own, run where the last ended: written out eight times in one, they made a program
// of 4,300 instructions, which the engine stepped through at every keyword of a flood.
func holderMembers(r *rule, s string, j int) (int, bool) {
	for k := 0; ; k++ {
		if loc := r.find(fieldRe.Get(), s[j:min(len(s), j+fieldSpan())]); loc != nil {
			v := j + loc[1]
			if stop, ok := credentialTail(s, v); ok && credentialValue(s[j+loc[2]:stop]) {
				return stop, true
			}
		}
		if k == 8 {
			return 0, false
		}
		loc := r.find(memberRe.Get(), s[j:min(len(s), j+memberSpan)])
		if loc == nil || utf8.RuneCountInString(s[j+loc[2]:j+loc[3]]) > 32 {
			return 0, false
		}
		for g := 4; g < len(loc); g += 2 {
			if loc[g] >= 0 && utf8.RuneCountInString(s[j+loc[g]:j+loc[g+1]]) > 64 {
				return 0, false
			}
		}
		j += loc[1]
	}
}

var (
	// memberRe is one member holderMembers passes over: a name, then a value in double or
	// single quotes or a word (groups 1 to 4), then a comma or a line. The lengths are held
	// to their bounds in Go: written as bounds, the program was ten times longer.
	memberRe = lazyre.Regexp{Expr: `(?i)^["']?([a-z0-9_-]+)["']?\s{0,3}:\s{0,3}(?:"([^"\n]*)"|'([^'\n]*)'|([a-z0-9_.-]*))\s{0,3}[,\n]\s{0,16}`}
	// fieldRe is the member that holds the credential, up to its value's head.
	fieldRe   = lazyre.Regexp{Expr: `(?i)^["']?(?:token|key|secret)["']?\s{0,3}[:=]\s{0,5}["'\x60]?` + credentialHead}
	fieldSpan = sync.OnceValue(func() int { return fitted(fieldRe.Get(), defaultSpan) })
)

// memberSpan holds the longest member memberRe may pass: a quote, a name of 32 characters
// (3 bytes each: K, the Kelvin sign, is k in any case), a quote, 3 blanks, a colon, 3 blanks,
// a quoted value of 64 (4 bytes each), 3 blanks, the comma or line, 16 blanks.
const memberSpan = 1 + 32*3 + 1 + 3 + 1 + 3 + 2 + 64*4 + 3 + 1 + 16

// sessionCookie reads a cookie header's pairs from j, where its name and assignment end
// (session-cookie's regexp), up to the end of the line, a quote, the next "cookie" or
// cookieSpan bytes: it returns where the value of the first pair that holds a session's
// token ends. A pair's name must say session or auth, and not CSRF (csrftoken is no login).
func sessionCookie(_ *rule, s string, j int) (int, bool) {
	w := s[j:min(len(s), j+cookieSpan)]
	if k := strings.IndexAny(w, "\"'\r\n"); k >= 0 {
		w = w[:k]
	}
	for k := 1; k+6 <= len(w); k++ { // the next header's name, in any case
		if strings.EqualFold(w[k:k+6], "cookie") {
			w = w[:k]
			break
		}
	}
	if readAround != nil {
		readAround(len(w))
	}
	for at := 0; at < len(w); {
		pair, _, _ := strings.Cut(w[at:], ";")
		name, value, ok := strings.Cut(pair, "=")
		if ok && sessionName(strings.ToLower(strings.TrimSpace(name))) {
			v := strings.TrimSpace(value)
			if credentialValue(v) || hexKey(v) {
				return j + at + len(name) + 1 + len(value), true
			}
		}
		at += len(pair) + 1
	}
	return 0, false
}

// cookieSpan bounds how far a cookie header is read for a session's pair.
const cookieSpan = 2048

// sessionName: a cookie's name (in lower case) that says it holds a login.
func sessionName(n string) bool {
	if strings.Contains(n, "csrf") || strings.Contains(n, "xsrf") {
		return false
	}
	for _, w := range []string{"sess", "sid", "auth", "token", "jwt", "login", "remember", "identity"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// secretKeyName: the keyword at i ends a name for a secret: "secret" starting a word or a
// camelCase hump (JWT_SECRET, clientSecret), or key (as _key, -key, or a hump: Key) after a
// word that names a secret's use (SECRET_KEY, ENCRYPTION_KEY, signingKey, api-key). Other
// keys (a cache's, a sort's, a public or a site key) are not secrets.
func secretKeyName(s string, i int) bool {
	switch {
	case bareKeyword(s, i, "secret"):
		return wordOrHump(s, i)
	case s[i] == '_' || s[i] == '-':
	case s[i] == 'K' && i > 0 && ('a' <= s[i-1] && s[i-1] <= 'z' || '0' <= s[i-1] && s[i-1] <= '9'):
	default:
		return false
	}
	j := i
	for j > 0 && i-j < 16 && isAlnum(s[j-1]) {
		if j--; s[i] == 'K' && 'A' <= s[j] && s[j] <= 'Z' {
			break // the hump's word starts here
		}
	}
	switch strings.ToLower(s[j:i]) {
	case "secret", "api", "encryption", "encrypt", "signing", "sign", "master", "hmac", "jwt", "app", "session",
		"crypto", "cipher", "aes", "client", "webhook", "signature", "auth", "private":
		return true
	}
	return false
}

// symbolAhead: after the name at i and its assignment, the value's first 128 bytes hold a
// symbol (see symbolSecret) and a digit, and the value is 16 bytes long or more: where it is
// not (secret=secret=..., a key of letters and digits, which provider-credential judges,
// client_secret: 1 repeated, whose values are 15 bytes), symbol-secret's regexp does not run.
func symbolAhead(l *look, s string, i int) bool {
	if !assignedNear(l, s, i) {
		return false // the value's 128 bytes were read at each keyword of -secret repeated
	}
	j := i + 1
	for j < len(s) && j-i < 16 && (isAlnum(s[j]) || s[j] == '_' || s[j] == '-') {
		j++
	}
	if readAround != nil {
		readAround(j - i)
	}
	assignment := func() {
		for n := 0; j < len(s) && n < 10 && strings.IndexByte("\"'` \t:=>", s[j]) >= 0; n++ {
			j++
		}
	}
	if assignment(); j < len(s) && (s[j] == ',' || isBlank(s[j])) {
		if g := valueNamed(s, j); g > 0 {
			if readAround != nil {
				readAround(g)
			}
			j += g
			assignment()
		}
	}
	// The value may start at the = or : skipped last (secret: ==x...), not before a quote or
	// a blank; symbolSecret takes 16 characters or more.
	from := j
	for from > i && strings.IndexByte(":=>", s[from-1]) >= 0 {
		from--
	}
	stop := min(len(s), j+128)
	end := stop
	if k := valueEndClass.first(&l.valueEnd, s, j, stop); k >= 0 && k < stop {
		end = k
	}
	return end-from >= 16 && digitClass.before(&l.valueDigit, s, j, end) && symbolClass.before(&l.symbol, s, j, end)
}

// assignedNear: a : or = follows the keyword at i within the 72 bytes where symbol-secret's
// regexp reads the one that assigns its name (at most 66 bytes in: secret_key, in any case
// 13 bytes, a quote, blanks, a comma, a quote and ParameterValue). Where none does, as in
// -secret repeated, it does not run: it cost each keyword of that flood its regexp's run
// and a value's 128 bytes. (aws-secret-access-key's name may be set by a blank: its value's
// run of 40, base64RunAhead, keeps that flood from its regexp.)
func assignedNear(l *look, s string, i int) bool {
	return assignClass.before(&l.assign, s, i, min(len(s), i+72))
}

// valueNamed returns the length of what a name then its value put between them from j, as
// an environment list or a parameter store writes them ("JWT_SECRET", "value": or
// - name: JWT_SECRET / value:): blanks, a comma, blanks, value or parametervalue in any case,
// quoted or not; or 0.
func valueNamed(s string, j int) int {
	k := blanksFrom(s, j, 1)
	if k < len(s) && s[k] == ',' {
		k = blanksFrom(s, k+1, 1)
	}
	if k < len(s) && isQuote(s[k]) {
		k++
	}
	if bareKeyword(s, k, "parameter") {
		k += len("parameter")
	}
	if !bareKeyword(s, k, "value") {
		return 0
	}
	return k + len("value") - j
}

// symbolByte: c is printable ASCII that credentialValue's values do not hold.
func symbolByte(c byte) bool { return c > ' ' && c < 0x7f && !credentialByte(c) }

// symbolSecret: v, assigned to a name for a secret, is one with symbols, which
// credentialValue does not take: 16 to 128 characters of ASCII, at least one of them a
// symbol (see symbolByte), letters and digits mixed as at random (see randomish), and no
// placeholder, template or path.
func symbolSecret(v string) bool {
	if len(v) < 16 || len(v) > 128 || !notPlaceholder(v) || !randomish(v) ||
		strings.ContainsAny(v, "/\\") || strings.Contains(v, "${") || strings.Contains(v, "{{") {
		return false
	}
	symbol := false
	for i := 0; i < len(v); i++ {
		if v[i] >= utf8.RuneSelf {
			return false // what normalize drops is judged without it
		}
		symbol = symbol || symbolByte(v[i])
	}
	return symbol
}

// accessKeyAfter: "access key" follows "secret" at j as aws-secret-access-key's regexp reads it
// (a _ . - or space before each word, or none; any case), which its ok needs unless "aws" is
// before the name; or a byte past ASCII is there, which (?i) may fold to a letter of it (the
// Kelvin sign to k), for the regexp to judge. Where neither is, as in secret= or a-secret=
// repeated, the regexp does not run: it cost each keyword of such a flood 149 instructions
// at each byte it read, a fifth of the flood's work.
func accessKeyAfter(s string, j int) bool {
	for k := j; k < min(len(s), j+len("_access_key")); k++ {
		if s[k] >= utf8.RuneSelf {
			return true
		}
	}
	word := func(w string) bool {
		if j < len(s) && strings.IndexByte("_.- ", s[j]) >= 0 {
			j++
		}
		ok := len(s)-j >= len(w) && strings.EqualFold(s[j:j+len(w)], w)
		j += len(w)
		return ok
	}
	return word("access") && word("key")
}

// digitAhead: a digit is in the stretch a match of provider-credential or token-assignment
// may cover from its keyword at i, its window of span bytes then the rest of a value of at
// most 128 bytes (see credentialTail): every value their checks take holds one (randomish,
// hexKey). Where none is, as in a-secret= or x-token= repeated, the regexp does not run:
// provider-credential's 256 instructions, token-assignment's 154, at each byte it read, at
// every keyword of such a flood, about 740 and 480 steps a byte of it.
func digitAhead(l *look, s string, i, span int) bool {
	return digitClass.before(&l.digit, s, i, min(len(s), i+span+128))
}

// valueEndsAhead: a value provider-credential or token-assignment may take can end in the
// stretch digitAhead reads: a run of credentialHead's bytes, 16 or more of them from i on,
// ends there (before a byte that cannot continue it, or at the end of s), as credentialTail
// requires. Where none does, as in a-secret=1 or x-token=1 repeated (one run that never
// stops) or client_secret: 1 repeated (runs too short), the regexp does not run: it cost
// each keyword of such a flood its program's steps over the name, some 660 a byte of it. A
// byte past ASCII, which (?i) may fold to a letter of the head, leaves it to the regexp.
func valueEndsAhead(l *look, s string, i, span int) bool {
	return valueClass.before(&l.value, s, i, min(len(s), i+span+128))
}

// base64RunAhead: a run of 40 or more of [A-Za-z0-9/+] starts within reach bytes of the
// keyword at i: the value of aws-session-token and of aws-secret-access-key, after the
// longest name, quotes, assignment and blanks their regexps read (25 and 54 bytes). Where
// none does, as in session_token= or aws_secret=1 repeated, their regexps do not run: they
// cost each keyword of such a flood some 170 steps a byte. A byte past ASCII, which (?i) may
// fold to a letter, leaves it to the regexp.
func base64RunAhead(l *look, s string, i, reach int) bool {
	return base64Class.before(&l.base64, s, i, min(len(s), i+reach+1+40))
}

// base64Byte: c is one of the standard alphabet's [A-Za-z0-9/+].
func base64Byte(c byte) bool { return isAlnum(c) || c == '/' || c == '+' }

// credentialHead is the first 16 bytes of a value provider-credential, credential-field and
// token-assignment judge: their regexps end there, and credentialTail reads the rest. It
// may hold a /, which credentialValue takes in base64 only.
const credentialHead = `([A-Za-z0-9_+=.~/-]{16})`

// tokenSpan cuts token-assignment's window: its regexp's match ends within 85 bytes of the
// keyword.
const tokenSpan = 85

// credentialSpan cuts provider-credential's window: a name of up to 100 bytes, an assignment
// (the longest is a holder's, {"value": ...) and the value's head.
const credentialSpan = 192

// credentialTail reads the rest of a value whose first 16 bytes end at j: 128 bytes in all
// at most, followed by the end of s or a byte that cannot continue it.
func credentialTail(s string, j int) (int, bool) {
	for stop := min(len(s), j+128-16); j < stop && credentialByte(s[j]); j++ {
	}
	return j, j == len(s) || !credentialByte(s[j])
}

// wordTail reads the rest of a value whose first 8 characters end at j, as the expression
// [^\s<stop>]{8,128} would: on to 128 characters in all, up to a blank (RE2's \s) or a
// character of stop. Any character may follow it.
func wordTail(stop string) func(s string, j int) (int, bool) {
	var ascii [utf8.RuneSelf]bool
	var wide []rune
	for _, r := range " \t\n\f\r" + stop {
		if r < utf8.RuneSelf {
			ascii[r] = true
		} else {
			wide = append(wide, r)
		}
	}
	return func(s string, j int) (int, bool) {
		for n := 8; n < 128 && j < len(s); n++ {
			if c := s[j]; c < utf8.RuneSelf {
				if ascii[c] {
					break
				}
				j++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[j:])
			if slices.Contains(wide, r) {
				break
			}
			j += size
		}
		return j, true
	}
}

func credentialByte(c byte) bool {
	return isAlnum(c) || c == '_' || c == '+' || c == '=' || c == '.' || c == '~' || c == '-' || c == '/'
}

// privateKeyWindow is private-key's window: the default span, or "" where the keyword is a
// BEGIN that "PRIVATE KEY" does not follow within the 41 bytes its regexp allows between
// (---- BEGIN, a blank, then 40).
func privateKeyWindow(s string, i int) string {
	const begin, key = len("-----BEGIN"), len("PRIVATE KEY")
	if s[i] != 'P' && !strings.Contains(s[i+begin:min(len(s), i+begin+41+key)], "PRIVATE KEY") {
		return ""
	}
	return s[i:min(len(s), i+defaultSpan)]
}

// urlWindow is url-credentials' window: it ends where the second "://" after the keyword
// starts (a password may hold one), or the next encoded one, since a flood of them, each
// keyword's regexp reading on to the end of the window for an @ that never came, is more
// common than a password that holds two. Encoded, a window without "%40" holds no match: the
// regexp is not run.
func urlWindow(s string, i int) string {
	w := s[i:min(len(s), i+defaultSpan)]
	if w[0] == ':' {
		if k := strings.Index(w[3:], "://"); k >= 0 {
			if k2 := strings.Index(w[6+k:], "://"); k2 >= 0 {
				w = w[:6+k+k2]
			}
		}
		return w
	}
	if k := strings.Index(w[9:], "%3A%2F%2F"); k >= 0 {
		w = w[:9+k]
	}
	if k := strings.Index(w[9:], "%3a%2f%2f"); k >= 0 {
		w = w[:9+k]
	}
	if !strings.Contains(w, "%40") {
		return ""
	}
	return w
}

// percentDecode undoes URL percent-encoding (%XX); a malformed escape is left as it is.
func percentDecode(s string) string {
	u, _ := unescaped(s, '%', hexAt)
	return u
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// pgpassHost: a host name (or *) of at most 253 bytes is before i, and before it the start
// of a line, a blank or a quote.
func pgpassHost(s string, i int) bool {
	j := i
	for j > 0 && i-j < 254 && (isAlnum(s[j-1]) || s[j-1] == '.' || s[j-1] == '-' || s[j-1] == '_' || s[j-1] == '*') {
		j--
	}
	if readAround != nil {
		readAround(i - j + 1)
	}
	return j < i && (j == 0 || isBlank(s[j-1]) || s[j-1] == '\r' || s[j-1] == '\'' || s[j-1] == '"')
}

// sasBefore: sig= is a parameter (after ? or &) of a query that has an sv= parameter in the
// 512 bytes before it.
func sasBefore(s string, i int) bool {
	if i == 0 || s[i-1] != '&' && s[i-1] != '?' {
		return false
	}
	lo := max(0, i-512)
	if readAround != nil {
		readAround(i - lo) // at most: LastIndex reads back to the sv= it finds
	}
	for w := s[lo : i-1]; ; {
		k := strings.LastIndex(w, "sv=")
		if k < 0 {
			return false
		}
		if k == 0 && lo == 0 || k > 0 && strings.IndexByte("?&=", w[k-1]) >= 0 {
			return true
		}
		w = w[:k]
	}
}

// quote closes a name and valueQuote opens a value: ASCII quotes, or the typographic ones
// Cairn's L2 lines quote text with (Completed DEBUG for “DB password”: “...”).
const (
	quote      = `["'“”‘’]`
	valueQuote = `["'\x60“”‘’]`
)

// inHolder follows a name assigned an object, or a YAML block, whose first member only holds
// the named value: "password": {"value": ..., password:\n  current: ..., password = {default = ...
const inHolder = `\s{0,3}(?:=|:|=>)\s{0,16}(?:\{\s{0,16})?["']?(?:value|val|current|default|plain(?:text)?)["']?\s{0,3}[:=]`

// A command that takes a credential in a flag, with the suffixes of its relatives (mysqldump,
// mariadb-admin) and how far before the flag it may stand (bytes between its word and the
// flag, as in "mysql -h db -u root -pPASSWORD").
type command struct {
	name     string
	suffixes []string
	within   int
}

var (
	curlNames         = []command{{"curl", nil, 200}}
	parameterCommands = []command{{"put-parameter", nil, 200}}
	passwordCommands  = []command{
		{"mysql", []string{"dump", "admin", "import", "check"}, 200},
		{"mariadb", []string{"-dump", "-admin"}, 200},
		{"sshpass", nil, 100},
		{"login", nil, 200}, // docker login, podman login, helm registry login
	}
)

// sqlPromptBefore returns where the blanks before i start, and before them SQL*Plus's
// prompt (SQL>) and its blanks, if it is there.
func sqlPromptBefore(s string, i int) int {
	k := i
	for k > 0 && i-k < 16 && (s[k-1] == ' ' || s[k-1] == '\t') {
		k--
	}
	if strings.HasSuffix(s[:k], "SQL>") {
		for k -= len("SQL>"); k > 0 && i-k < 36 && (s[k-1] == ' ' || s[k-1] == '\t'); k-- {
		}
	}
	return k
}

// secretParameter: the --value flag at i is given with a --name, after put-parameter before
// it or on the rest of its shell line, whose last part (after its last / or .) ends in a word
// for a secret.
func secretParameter(s string, i int) bool {
	w := s[max(0, i-216):i]
	if n := strings.LastIndex(w, "--name"); n >= 0 && n > strings.LastIndex(w, "put-parameter") {
		return secretName(w[n+len("--name"):])
	}
	w = s[i:min(len(s), i+216)]
	for k := 0; ; k++ { // the line ends at a newline that no backslash continues
		nl := strings.IndexByte(w[k:], '\n')
		if nl < 0 {
			break
		}
		if k += nl; k == 0 || w[k-1] != '\\' {
			w = w[:k]
			break
		}
	}
	n := strings.Index(w, "--name")
	return n >= 0 && secretName(w[n+len("--name"):])
}

// secretName: the argument at the start of arg (after = or blanks, quoted or not) is a name
// whose last part ends in a word for a secret.
func secretName(arg string) bool {
	name := strings.TrimLeft(arg, "= \t\\\n\"',")
	if k := strings.IndexAny(name, " \t\n\"',"); k >= 0 {
		name = name[:k]
	}
	name = strings.ToLower(name[strings.LastIndexAny(name, "/.")+1:])
	for _, word := range []string{"password", "passwd", "pwd", "secret", "token", "secret_key", "secret-key", "api_key", "api-key", "apikey"} {
		if strings.HasSuffix(name, word) {
			return true
		}
	}
	return false
}

// argvSep is argvGap's separator, as the rules' expressions read it after a flag.
const argvSep = `["']\s{0,16},\s{0,16}`

// argvGap returns the length of the separator of two words of a command written as a list
// (["curl", "-u", ...], ['mysql','-pX']) that starts at j: a quote, a comma and a quote, with
// up to 16 blanks (a list written one word a line) either side of the comma; or 0.
func argvGap(s string, j int) int {
	if j >= len(s) || !isQuote(s[j]) {
		return 0
	}
	k := blanksFrom(s, j+1, 1)
	if k >= len(s) || s[k] != ',' {
		return 0
	}
	if k = blanksFrom(s, k+1, 1); k >= len(s) || !isQuote(s[k]) {
		return 0
	}
	return k + 1 - j
}

// argvGapBefore returns where the argvGap that ends at i starts, or -1.
func argvGapBefore(s string, i int) int {
	if i == 0 || !isQuote(s[i-1]) {
		return -1
	}
	k := blanksFrom(s, i-2, -1)
	if k < 0 || s[k] != ',' {
		return -1
	}
	if k = blanksFrom(s, k-1, -1); k < 0 || !isQuote(s[k]) {
		return -1
	}
	return k
}

// blanksFrom passes over up to 16 blanks from k, forward (step 1) or back (step -1).
func blanksFrom(s string, k, step int) int {
	for n := 0; n < 16 && k >= 0 && k < len(s) && isBlank(s[k]); n++ {
		k += step
	}
	return k
}

func isQuote(c byte) bool { return c == '"' || c == '\'' }

// commandBefore returns the name of the command of cmds nearest before the flag at i, on the
// same shell line (a newline after a backslash continues it) or in the same list of words
// (see argvGap), or "". It reads at most 216 bytes back, with strings.Index (vectorised), so
// a flood of flags stays cheap.
func commandBefore(s string, i int, cmds []command) string {
	sep, argv := i-1, false // where the gap before the flag starts
	if i == 0 || !isBlank(s[i-1]) {
		if sep, argv = argvGapBefore(s, i), true; sep < 0 {
			return ""
		}
	}
	lo := max(0, sep-216)
	for k := i; !argv; { // a list may be written over several lines
		nl := strings.LastIndexByte(s[lo:k], '\n')
		if nl < 0 {
			break
		}
		if nl+lo == 0 || s[nl+lo-1] != '\\' {
			lo += nl + 1
			break
		}
		k = nl + lo - 1
	}
	if lo > sep {
		return "" // the flag starts a line
	}
	seg := s[lo:sep]
	if readAround != nil {
		readAround(i - lo + len(cmds)*len(seg)) // the line's start looked for, then each name
	}
	best, bestEnd := "", -1
	for _, c := range cmds {
		for from := 0; ; {
			k := strings.Index(seg[from:], c.name)
			if k < 0 {
				break
			}
			k += from
			from = k + 1
			if !notAlnum(s, lo+k) || lo+k > 0 && s[lo+k-1] == '-' {
				continue
			}
			end := lo + k + len(c.name) // the gap after the word, at most sep
			for _, x := range c.suffixes {
				if strings.HasPrefix(s[end:sep], x) {
					end += len(x)
					break
				}
			}
			if (end == sep || isBlank(s[end]) || argvGap(s, end) > 0) && sep-1-end <= c.within && end > bestEnd {
				best, bestEnd = c.name, end
			}
		}
	}
	return best
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' }

// passphrase: a quoted value of four to twelve words joined by single spaces, each of letters
// and digits, at least three long (a number may be shorter), none of them a word that prose,
// labels and references use ("see the vault entry", "Must be at least 8 characters").
func passphrase(v string) bool {
	words := strings.Split(v, " ")
	if len(words) < 4 || len(words) > 12 {
		return false
	}
	for _, w := range words {
		digits := strings.Trim(w, "0123456789") == ""
		if len(w) < 3 && !digits || w == "" {
			return false
		}
		for i := 0; i < len(w); i++ {
			if !isAlnum(w[i]) {
				return false
			}
		}
		if proseWord(strings.ToLower(w)) {
			return false
		}
	}
	return true
}

// passwordValue: a value assigned to a variable named for a password (password-variable) is
// one when it is at least 8 long, not a placeholder, path or call, and holds a digit or
// three kinds of character: config_value and settings.db_password are code's names.
func passwordValue(pw string, quoted bool) bool {
	if !quoted {
		pw = strings.TrimRight(pw, ")]}>")
	}
	if len(pw) < 8 || !notPlaceholder(pw) || strings.ContainsAny(pw, "/\\") {
		return false
	}
	if k := strings.IndexByte(pw, '('); k >= 0 && !bracketedNumber(pw[:k], pw[k:]) {
		return false
	}
	if !strings.ContainsAny(pw, "0123456789") && classes(pw) < 3 {
		return false
	}
	return !dottedName(pw)
}

// flagBefore: the keyword at i ends a command's flag: a - glued before it, and before that
// up to 40 bytes of a flag's name (letters, digits, -) that starts with - after a blank, a
// quote or the start of s.
func flagBefore(s string, i int) bool {
	if i == 0 || s[i-1] != '-' {
		return false
	}
	j := i
	for j > 0 && i-j < 40 && (isAlnum(s[j-1]) || s[j-1] == '-') {
		j--
	}
	return s[j] == '-' && (j == 0 || isBlank(s[j-1]) || isQuote(s[j-1]))
}

// bareKeyword: kw (lower case) starts at i, in any case.
func bareKeyword(s string, i int, kw string) bool {
	return len(s)-i >= len(kw) && strings.EqualFold(s[i:i+len(kw)], kw)
}

// barePass: what follows "pass" alone, rest, assigns it pw, a password: test results count
// passes under that name (pass: 12), and a status is one ({"result": "pass", "value": ...}),
// so the name must be assigned (not named, then given a value), and the value must hold a
// lower-case letter and not be hex: a date (2024-05-01T10:00:00Z), a number or a digest is no
// password.
func barePass(rest, pw string) bool {
	rest = strings.TrimLeft(rest, "\"' \t")
	return rest != "" && (rest[0] == ':' || rest[0] == '=') &&
		strings.ContainsAny(pw, "abcdefghijklmnopqrstuvwxyz") && strings.Trim(pw, "0123456789abcdef") != ""
}

// codeValue: an unquoted value that code, not a person, wrote, by names without digits: a
// call or an index (get_password(), os.environ[, crypt($1), a field (self.password,
// var.db_password), or a variable named as code names one: snake_case (config_value,
// DB_SECRET_VALUE) or camelCase (defaultPassword). Letters alone in camelCase are lost with
// them; a password with a digit or in PascalCase (HunterHunter) is kept.
func codeValue(v string) bool {
	name := v
	k := strings.IndexAny(v, "([")
	if k > 0 {
		name = v[:k]
	}
	if !identifier(name, true) || strings.ContainsAny(name, "0123456789") {
		return false // random text cut by a bracket holds a digit
	}
	switch {
	case k > 0:
		return !bracketedNumber(name, v[k:])
	case strings.IndexByte(name, '.') >= 0:
		return dottedName(name)
	case strings.IndexByte(name, '_') >= 0:
		return !mixedCase(name)
	}
	return 'a' <= name[0] && name[0] <= 'z' && mixedCase(name)
}

// envAssigned: the match at i is an environment's NAME=value (a .env line, export, docker
// run -e): a name in upper case that starts a line or follows a blank or a ;, then = glued
// to the value. There a value is text, never a variable's name.
func envAssigned(s string, i int, m string) bool {
	upper := func(c byte) bool { return 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' }
	k := 0
	for k < len(m) && upper(m[k]) {
		k++
	}
	if k+1 >= len(m) || m[k] != '=' || !isAlnum(m[k+1]) {
		return false
	}
	for i > 0 && upper(s[i-1]) {
		i--
	}
	return i == 0 || isBlank(s[i-1]) || s[i-1] == '\r' || s[i-1] == ';'
}

// camelWords: a password of letters in camelCase or PascalCase (correctHorseBattery), which
// code would take for a name; one that names a password or a secret (dbPassword,
// mysqlRootPwd, apiKeyName) is a name even where a value is text.
func camelWords(v string) bool {
	if len(v) < 8 || strings.Trim(v, letters) != "" || !mixedCase(v) || !notPlaceholder(v) {
		return false
	}
	v = strings.ToLower(v)
	for _, w := range []string{"pass", "pwd", "secret", "token", "key", "cred"} {
		if strings.Contains(v, w) {
			return false
		}
	}
	return true
}

// bracketedNumber: a word, a number in brackets, then what code does not write after a call
// (summer(2024)!, Winter(1999)#), a password's shape. A call may be followed by more code
// (.hex(), [0], (x)), and by TypeScript's ! alone when its name is code's (generatePassword,
// crypto.randomBytes, make_password): summer(2024)! is not.
func bracketedNumber(name, rest string) bool {
	end := strings.IndexByte(rest, ')')
	if end < 2 || rest[0] != '(' || strings.Trim(rest[1:end], "0123456789") != "" || end+1 == len(rest) {
		return false
	}
	switch after := rest[end+1:]; {
	case strings.IndexByte(".([", after[0]) >= 0:
		return false
	case after == "!":
		return name != "" && !strings.ContainsAny(name, "._") && !mixedCase(name[1:])
	}
	return true
}

// identifier: letters, digits and _ (and . when dotted), starting with a letter or _.
func identifier(v string, dotted bool) bool {
	if v == "" || '0' <= v[0] && v[0] <= '9' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !isAlnum(c) && c != '_' && !(dotted && c == '.') {
			return false
		}
	}
	return true
}

// sigilBefore returns what marks the name holding the keyword at i as a variable: "${" (a
// shell parameter expansion, ${NAME:-default}, reads it), "$" ($password in PowerShell,
// PHP, Perl) or "".
func sigilBefore(s string, i int) string {
	for i > 0 && (isAlnum(s[i-1]) || s[i-1] == '_') {
		i--
	}
	switch {
	case i >= 2 && s[i-2:i] == "${":
		return "${"
	case i >= 1 && s[i-1] == '$':
		return "$"
	}
	return ""
}

// gluedColon: the name is followed by blanks then a colon glued to what follows, as psql's
// :'variable' is; a YAML or JSON colon is glued to the name or followed by a blank.
func gluedColon(m string) bool {
	k := strings.IndexAny(m, ":=")
	return k > 0 && k+1 < len(m) && m[k] == ':' && isBlank(m[k-1]) && !isBlank(m[k+1]) && m[k+1] != '='
}

// dottedName: identifiers joined by dots (settings.db_password, os.environ), each starting
// with a letter or _.
func dottedName(s string) bool {
	if strings.IndexByte(s, '.') < 0 {
		return false
	}
	for part := range strings.SplitSeq(s, ".") {
		if part == "" || '0' <= part[0] && part[0] <= '9' {
			return false
		}
		for i := 0; i < len(part); i++ {
			if !isAlnum(part[i]) && part[i] != '_' {
				return false
			}
		}
	}
	return true
}

// saidPassword: a value prose gives a password ("the password is ...") is
// one when it mixes letters, digits and another kind of character, and no part of it names
// what is done to a password or what it must be ("sha256-hashed", "UTF-8-encoded",
// "min-8-chars"), which a sentence about passwords says in the same place.
func saidPassword(pw string, quoted bool) bool {
	if !quoted {
		pw = strings.TrimRight(pw, ".,:;!?")
	}
	if len(pw) < 8 || !notPlaceholder(pw) || strings.ContainsAny(pw, "/\\") || classes(pw) < 3 ||
		!strings.ContainsAny(pw, "0123456789") || strings.Trim(pw, "0123456789") == "" {
		return false
	}
	for part := range strings.FieldsFuncSeq(strings.ToLower(pw), func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
		switch part {
		case "min", "max", "chars", "characters", "length", "based", "only", "required", "optional":
			return false
		}
		for _, p := range []string{"sha", "md5", "hash", "bcrypt", "scrypt", "crypt", "argon", "pbkdf", "hmac", "utf", "base64", "encod", "encrypt", "salt"} {
			if strings.HasPrefix(part, p) {
				return false
			}
		}
	}
	return true
}

// proseWord: words of sentences, labels and references, rare in a passphrase.
func proseWord(w string) bool {
	switch w {
	case "the", "and", "for", "see", "use", "your", "our", "this", "that", "with", "from", "into", "not", "none",
		"set", "same", "are", "was", "has", "have", "will", "can", "must", "should", "least", "characters",
		"enter", "ask", "stored", "store", "vault", "secret", "secrets", "password", "passwords", "passphrase",
		"env", "environment", "variable", "manager", "keychain", "empty", "file", "path", "here", "there",
		"value", "prod", "production", "staging", "test", "example", "placeholder", "redacted", "changeme":
		return true
	}
	return false
}

// notZeroRun refuses a match whose body (past its four-byte prefix) holds "AAAA": base64 of
// binary data with small integers is full of such runs (A encodes six zero bits, "EAAA" is a
// 16 and zeros), while fewer than one random token in 100,000 holds one.
func notZeroRun(_ string, _ int, m []string) bool { return !strings.Contains(m[0][4:], "AAAA") }

// credentialNames start names whose assigned value is a credential when it looks random:
// the providers gitleaks knows by name only, and generic words for keys and tokens.
var credentialNames = []string{
	"adafruit", "adobe", "airtable", "algolia", "alibaba", "asana", "atlassian", "jira", "confluence",
	"beamer", "bitbucket", "bittrex", "meraki", "cloudflare", "codecov", "cohere", "co_api_key",
	"coinbase", "contentful", "datadog", "dd_api_key", "dd_app_key", "discord", "droneci", "dropbox", "etsy",
	"facebook", "fastly", "finicity", "finnhub", "flickr", "freshbooks", "gitter", "gocardless",
	"heroku", "hubspot", "intercom", "jfrog", "artifactory", "kraken", "kucoin", "launchdarkly",
	"linkedin", "lob_", "mailchimp", "mailgun", "mattermost", "messagebird", "netlify", "nytimes",
	"okta", "plaid", "privateai", "rapidapi", "sendbird", "squarespace", "sumologic", "travis",
	"twitch", "twitter", "yandex", "zendesk", "sidekiq", "snyk", "telegram", "twilio", "pagerduty",
	"circleci", "segment", "mixpanel", "sentry", "vercel", "supabase", "firebase", "openai",
	"anthropic", "azure", "gcp", "aws_session_token", "api_key", "api-key", "apikey", "api_secret",
	"api_token", "access_token", "auth_token", "client_secret", "secret_key", "private_token",
	"bot_token", "app_secret", "consumer_secret", "x-api-key",
	"secret", "accesstoken", "authtoken", "refresh_token", "refreshtoken",
}

// holderName: the keyword starts a word, and the word ends in a quote, a space or an
// assignment, as a name does: "author", OAuth and access_log are passed over without running
// the regexp.
func holderName(s string, i int) bool {
	if !notAlnum(s, i) {
		return false
	}
	for i < len(s) && isAlnum(s[i]) {
		i++
	}
	if i == len(s) {
		return false
	}
	switch s[i] {
	case '"', '\'', ' ', '\t', ':', '=':
		return true
	}
	return false
}

// holderEnds: the keyword of n bytes at i (with credential-field's 2 or s after it) ends s or
// is followed by what may end a name: a quote, an assignment (?= too), a newline (ProbeEscaped joins
// decoded strings with one) or a backslash (an escape, read decoded elsewhere), possibly after
// blanks. Ordinary prose ("Add OAuth login", "the author", "access the file") passes over it.
func holderEnds(s string, i, n int) bool {
	j := i + n
	if j < len(s) && (s[j] == '2' || s[j] == 's' || s[j] == 'S') {
		j++
	}
	for k := j; k < len(s); k++ {
		switch s[k] {
		case '"', '\'', ':', '=', '\n', '\r', '\\':
			return true
		case '?': // a Makefile's ?=
			return k+1 == len(s) || s[k+1] == '='
		case ' ', '\t':
			if k-j < 3 {
				continue
			}
		}
		return false
	}
	return true
}

// wordOrHump: the keyword starts a word, or a camelCase hump (an upper-case letter after a
// lower-case one or a digit).
func wordOrHump(s string, i int) bool {
	if notAlnum(s, i) {
		return true
	}
	c := s[i-1]
	return 'A' <= s[i] && s[i] <= 'Z' && ('a' <= c && c <= 'z' || '0' <= c && c <= '9')
}

// nameAssigned: the name provider-credential's regexp reads from i, up to five words joined by
// _ . or -, is followed within its window by what may start an assignment (a quote, a blank,
// =, :, ?=, a comma), as the regexp requires. Where it is not (-secret or asana_ repeated, a
// name glued on and on), the regexp does not run: its program stepped through each of the
// five words at every keyword of such a flood, 256 KB of it in two seconds.
func nameAssigned(s string, i int) bool {
	stop := min(len(s), i+credentialSpan)
	j := i
	for range 5 {
		k := j
		for ; k < stop && isAlnum(s[k]); k++ {
		}
		if k < stop && s[k] >= utf8.RuneSelf {
			return true // a typographic quote, or a letter (?i) folds to ASCII: the regexp judges
		}
		if readAround != nil {
			readAround(k + 1 - j)
		}
		if k == j || k == stop {
			return false
		}
		switch s[k] {
		case '"', '\'', ' ', '\t', '\n', '\f', '\r', '=', ':', '?', ',':
			return true
		case '_', '.', '-':
			j = k + 1
		default:
			return false
		}
	}
	return false
}

// secretNamesPlace reports a match whose name is "secret" followed by more of a name
// (secret_name, secretRef, secret_version): such a name says where a secret is kept, and its
// value is a name too. "secret" alone, or ending a name (JWT_SECRET), names the secret, as
// secret_key and secretKey do.
func secretNamesPlace(m string) bool {
	if len(m) < 7 || !strings.EqualFold(m[:6], "secret") {
		return false
	}
	rest := m[6:]
	if c := rest[0]; c == '_' || c == '.' || c == '-' {
		rest = rest[1:]
	} else if !isAlnum(c) {
		return false
	}
	return len(rest) < 3 || !strings.EqualFold(rest[:3], "key")
}

// credentialValue: long, random-looking (letters and digits), not a hex hash, UUID, version
// string, dotted name, reference or path. A value with a / is a key only in standard base64
// (openssl rand -base64), see base64Key.
func credentialValue(v string) bool {
	if strings.IndexByte(v, '/') >= 0 && !base64Key(v) {
		return false
	}
	v = strings.TrimRight(v, "=")
	if len(v) < 16 || !notPlaceholder(v) || !randomish(v) {
		return false
	}
	if strings.Trim(v, "0123456789abcdef-") == "" || strings.Trim(v, "0123456789ABCDEF-") == "" {
		return false // a hex digest or a UUID
	}
	return strings.Count(v, ".") < 2 || discordToken(v) // host names, versions, dotted identifiers
}

// base64Key: v is standard base64 of a random key: padded to whole groups of four, upper and
// lower case and digits, no other character but + and /, not starting with / nor holding //
// (a path's shapes).
func base64Key(v string) bool {
	body := strings.TrimRight(v, "=")
	if len(v)%4 != 0 || len(v)-len(body) > 2 || body == "" || body[0] == '/' || strings.Contains(body, "//") || !mixed(body) {
		return false
	}
	for i := 0; i < len(body); i++ {
		if !isAlnum(body[i]) && body[i] != '+' && body[i] != '/' {
			return false
		}
	}
	return true
}

// discordToken: a Discord bot token, three base64url parts joined by dots, the first the
// bot's numeric id (17 to 20 digits) encoded, the second 6 or 7 characters, the third 27 to
// 40. No host name or version starts with base64 of a number.
func discordToken(v string) bool {
	id, rest, _ := strings.Cut(v, ".")
	mid, sig, _ := strings.Cut(rest, ".")
	if len(id) < 23 || len(id) > 28 || len(mid) < 6 || len(mid) > 7 || len(sig) < 27 || len(sig) > 40 ||
		strings.IndexByte(sig, '.') >= 0 {
		return false
	}
	var buf [21]byte
	n, err := base64.RawURLEncoding.Decode(buf[:], []byte(id))
	if err != nil || n < 17 || n > 20 || buf[0] == '0' {
		return false
	}
	for _, c := range buf[:n] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// hexKey: a hex key of 32 digits or more, or a UUID, in one case: what credentialValue
// refuses as a digest or an identifier. Heroku's API keys are UUIDs, many providers' tokens
// hex, so such a value is a credential after a name that says so (see namesKey).
func hexKey(v string) bool {
	v = strings.TrimRight(v, "=")
	if len(v) < 32 || !strings.ContainsAny(v, "0123456789") || strings.Trim(v, "0123456789-") == "" {
		return false
	}
	if strings.IndexByte(v, '-') >= 0 && (len(v) != 36 || v[8] != '-' || v[13] != '-' || v[18] != '-' || v[23] != '-') {
		return false
	}
	return strings.Trim(v, "0123456789abcdef-") == "" || strings.Trim(v, "0123456789ABCDEF-") == ""
}

// namesKey: the name a provider-credential match starts with names a key or a secret, a
// provider's or a generic one (HEROKU_API_KEY, datadogAppKey, api_key, client_secret), so a
// hex value or UUID is one; a commit's, a digest's or an app's id is named otherwise
// (HEROKU_SLUG_COMMIT, heroku_app_id, api_key_id). A provider's token is one too; a generic
// name's (access_token, auth_token) is token-assignment's to judge.
func namesKey(m string) bool {
	n := 0
	for n < len(m) && (isAlnum(m[n]) || m[n] == '_' || m[n] == '.' || m[n] == '-') {
		n++
	}
	name := strings.ToLower(m[:n])
	if strings.HasSuffix(name, "key") || strings.HasSuffix(name, "secret") {
		return true
	}
	for _, g := range []string{"api", "x-api", "access", "auth", "client", "secret", "private", "bot", "app", "consumer", "refresh"} {
		if strings.HasPrefix(name, g) {
			return false
		}
	}
	return strings.HasSuffix(name, "token")
}

// pagingToken: the token-assignment at i is a page's or a request's (next_token,
// NextPageToken, continuation_token): an opaque cursor, often hex, not a credential.
func pagingToken(s string, i int) bool {
	j := i
	for j > 0 && (isAlnum(s[j-1]) || s[j-1] == '_' || s[j-1] == '-') {
		j--
	}
	name := strings.ToLower(s[j:i])
	for _, w := range pagingWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

var pagingWords = []string{"page", "next", "continuation", "pagination", "cursor", "sync", "idempotency", "request"}

// cursorWords are pagingWords less "request": OAuth 1's request_token is a credential, which a
// hex value alone (pagingWords' use) does not make likely.
var cursorWords = []string{"page", "next", "continuation", "pagination", "cursor", "sync", "idempotency"}

// cursorName: the word just before the token-assignment's "token" at i (after a _ or -, or
// a camelCase hump) is one of cursorWords: nextPageToken, NextToken, continuation_token. Its
// value is a cursor an API hands back for the next page, random-looking (base64 of a
// position) but no credential, and a workflow checkpoints it to resume a listing. A word
// that only holds one (PAGERDUTY_TOKEN, NEXTAUTH_TOKEN) names a credential.
func cursorName(s string, i int) bool {
	k := i
	if k > 0 && (s[k-1] == '_' || s[k-1] == '-') {
		k--
	}
	j := k
	for j > 0 && isAlnum(s[j-1]) && k-j < 16 {
		j--
		if 'A' <= s[j] && s[j] <= 'Z' && j > 0 && 'a' <= s[j-1] && s[j-1] <= 'z' {
			break // a camelCase hump starts the word
		}
	}
	return j < k && slices.Contains(cursorWords, strings.ToLower(s[j:k]))
}

// randomish: both letters and digits, and not one word with a number (for example
// "authentication2"): at least three switches between letters and digits.
func randomish(v string) bool {
	var letters, digits, switches int
	prev := byte(0)
	for i := 0; i < len(v); i++ {
		c := v[i]
		kind := byte(0)
		switch {
		case '0' <= c && c <= '9':
			digits++
			kind = 'd'
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			letters++
			kind = 'l'
		}
		if kind != 0 && prev != 0 && kind != prev {
			switches++
		}
		if kind != 0 {
			prev = kind
		}
	}
	return letters > 0 && digits > 0 && switches >= 3
}

// encodedSecret reports a secret in the text v, a run of base64 (standard or URL-safe),
// encodes: one the rules find in it decoded, when that is UTF-8.
func encodedSecret(v string) bool {
	enc := base64.RawStdEncoding
	if strings.ContainsAny(v, "-_") {
		enc = base64.RawURLEncoding
	}
	b, err := enc.DecodeString(strings.TrimRight(v, "="))
	if err != nil || !utf8.Valid(b) {
		return false
	}
	return matchDecoded(view(b))
}

// matchDecoded is match, reached through a variable: the rules' table refers to it, and match
// to the table.
var matchDecoded func(string) bool

func init() { matchDecoded = func(s string) bool { return match(s) != nil } }

// basicCredentials: v is base64 of user:password, the password neither empty nor a
// placeholder.
func basicCredentials(v string) bool {
	text, ok := decodeBasic(v)
	_, pw, colon := strings.Cut(text, ":")
	return ok && colon && pw != "" && notPlaceholder(pw)
}

// sentBasic: v is Basic credentials as a client sends them: padded base64 of printable ASCII
// user:password, neither part empty, the password no placeholder.
func sentBasic(v string) bool {
	if len(v)%4 != 0 {
		return false
	}
	text, ok := decodeBasic(v)
	if !ok {
		return false
	}
	for i := 0; i < len(text); i++ {
		if text[i] < 0x20 || text[i] > 0x7e {
			return false
		}
	}
	user, pw, colon := strings.Cut(text, ":")
	return colon && user != "" && pw != "" && notPlaceholder(pw)
}

// decodeBasic decodes Basic credentials (base64 of user:password); ok is false when v is
// not base64 of UTF-8 text.
func decodeBasic(v string) (text string, ok bool) {
	b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(v, "="))
	if err != nil || !utf8.Valid(b) {
		return "", false
	}
	return string(b), true
}

// classes counts the kinds of character in s: lower case, upper case, digits, others.
func classes(s string) int {
	var lo, up, dg, ot int
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z':
			lo = 1
		case 'A' <= c && c <= 'Z':
			up = 1
		case '0' <= c && c <= '9':
			dg = 1
		default:
			ot = 1
		}
	}
	return lo + up + dg + ot
}
