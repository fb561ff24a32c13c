// Package secrettest holds the secret shapes and the ordinary text Cairn's hostile suites
// push through every input path: each shape must be refused (never stored, never echoed),
// each ordinary text accepted. The tokens are assembled at run time from fixed pseudo-random
// bodies, so no secret scanner flags this file and every run tries the same strings.
package secrettest

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets"
)

// Shape is one secret as a user might paste it.
type Shape struct {
	Name string // what it is, for test names
	Rule string // the rule expected to find it
	Text string // the secret (with the context that makes it one, such as "password=")
	// Core is the part that must never appear in anything Cairn stores or prints.
	Core string
}

const (
	alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	lower = "abcdefghijklmnopqrstuvwxyz"
	upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	hexlo = "0123456789abcdef"
	b64   = alnum + "+/"
	urlb  = alnum + "_-"
)

// Shapes returns at least 60 secrets of distinct shapes.
func Shapes() []Shape {
	pick := picker(13, 9)
	// mix guarantees upper, lower and digit, as real random keys have.
	mix := func(n int) string { return "Q" + "k" + "7" + pick(alnum, n-3) }
	var out []Shape
	add := func(name, rule, text string) {
		out = append(out, Shape{Name: name, Rule: rule, Text: text, Core: text})
	}
	addCtx := func(name, rule, ctx, core string) {
		out = append(out, Shape{Name: name, Rule: rule, Text: ctx + core, Core: core})
	}
	add("aws-access-key-id", "aws-access-key-id", "AKIA"+pick(upper+"234567", 16))
	add("aws-sts-key-id", "aws-access-key-id", "ASIA"+pick(upper+"234567", 16))
	addCtx("aws-secret", "aws-secret-access-key", "aws_secret_access_key=", "Ab1"+pick(b64, 37))
	add("github-classic", "github-token", "ghp_"+mix(36))
	add("github-oauth", "github-token", "gho_"+mix(36))
	add("github-fine-grained", "github-token", "github_pat_"+"11A"+pick(alnum, 19)+"_"+pick(alnum, 59))
	add("anthropic-mixed", "anthropic-api-key", "sk-ant-api03-"+mix(93)+"AA")
	add("anthropic-letters-only", "anthropic-api-key", "sk-ant-api03-"+pick(lower+upper, 90))
	add("anthropic-lower-digits", "anthropic-api-key", "sk-ant-api03-"+pick(lower+"0123456789", 95))
	add("anthropic-admin", "anthropic-api-key", "sk-ant-admin01-"+mix(93)+"AA")
	add("openai-project", "openai-api-key", "sk-proj-"+mix(120))
	add("openai-legacy", "openai-api-key", "sk-"+mix(20)+"T3BlbkFJ"+mix(20))
	add("slack-bot", "slack-token", "xoxb-"+pick("0123456789", 12)+"-"+pick("0123456789", 13)+"-"+pick(alnum, 24))
	add("slack-webhook", "slack-webhook", "https://hooks.slack.com/services/T"+pick(upper, 8)+"/B"+pick(upper, 8)+"/"+pick(alnum, 24))
	add("private-key-rsa", "private-key", "-----BEGIN RSA "+"PRIVATE KEY-----\n"+pick(b64, 64)+"\n-----END RSA PRIVATE KEY-----")
	add("private-key-openssh", "private-key", "-----BEGIN OPENSSH "+"PRIVATE KEY-----\n"+pick(b64, 70))
	add("private-key-pkcs8", "private-key", "-----BEGIN "+"PRIVATE KEY-----\n"+pick(b64, 64))
	add("private-key-putty", "private-key", "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: "+pick(lower, 12)+"\nPublic-Lines: 2\n"+pick(b64, 64))
	add("private-key-ssh2", "private-key", "---- BEGIN SSH2 ENCRYPTED "+"PRIVATE KEY ----\nComment: x\n"+pick(b64, 64))
	add("jwt", "jwt", "eyJhbGciOiJIUzI1NiJ9."+"eyJ"+pick(urlb, 40)+"."+pick(urlb, 43))
	addCtx("url-postgres", "url-credentials", "postgres://app:", pick(alnum, 14)+"@db.internal:5432/app")
	addCtx("url-https", "url-credentials", "https://deploy:", mix(20)+"@git.example.com/repo.git")
	addCtx("url-password-slash", "url-credentials", "postgres://app:", mix(10)+"/"+pick(alnum, 8)+"@db.internal:5432/app")
	add("stripe-live", "stripe-key", "sk_live_"+mix(24))
	add("stripe-restricted", "stripe-key", "rk_live_"+mix(24))
	add("stripe-test", "stripe-key", "sk_test_"+mix(24))
	add("google-api-key", "google-api-key", "AIza"+pick(urlb, 35))
	add("google-oauth-secret", "google-oauth", "GOCSPX-"+pick(urlb, 28))
	add("npm", "npm-token", "npm_"+mix(36))
	add("huggingface", "huggingface-token", "hf_"+"Qk"+pick(lower+upper, 32))
	add("gitlab-pat", "gitlab-token", "glpat-"+pick(urlb, 20))
	add("gitlab-runner", "gitlab-token", "glrt-"+pick(urlb, 20))
	add("sendgrid", "sendgrid-api-key", "SG."+pick(urlb, 22)+"."+pick(urlb, 43))
	addCtx("azure-storage", "azure-storage-key", "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=", pick(b64, 86)+"==")
	add("azure-ad-client-secret", "azure-ad-client-secret", "aB3"+"8Q~"+pick(alnum, 34))
	add("digitalocean", "digitalocean-token", "dop_v1_"+pick(hexlo, 64))
	add("doppler", "doppler-token", "dp.pt."+pick(alnum, 43))
	add("dynatrace", "dynatrace-token", "dt0c01."+pick(upper+"0123456789", 24)+"."+pick(upper+"0123456789", 64))
	add("grafana-cloud", "grafana-token", "glc_"+pick(alnum, 48))
	add("vault", "vault-token", "hvs."+pick(urlb, 95))
	add("linear", "linear-api-key", "lin_api_"+pick(alnum, 40))
	add("mapbox-secret", "mapbox-secret-token", "sk.eyJ"+pick(urlb, 60)+"."+pick(urlb, 22))
	add("newrelic", "newrelic-key", "NRAK-"+pick(upper+"0123456789", 27))
	add("perplexity", "perplexity-api-key", "pplx-"+pick(alnum, 48))
	add("openrouter", "openrouter-api-key", "sk-or-v1-"+pick(hexlo, 64))
	add("groq", "groq-api-key", "gsk_"+mix(52))
	add("xai", "xai-api-key", "xai-"+mix(80))
	add("planetscale", "planetscale-token", "pscale_tkn_"+pick(alnum, 43))
	add("postman", "postman-api-key", "PMAK-"+pick(hexlo, 24)+"-"+pick(hexlo, 34))
	add("pulumi", "pulumi-token", "pul-"+pick(hexlo, 40))
	add("pypi", "pypi-token", "pypi-AgEIcHlwaS5vcmc"+pick(urlb, 60))
	add("rubygems", "rubygems-key", "rubygems_"+pick(hexlo, 48))
	add("sendinblue", "sendinblue-key", "xkeysib-"+pick(hexlo, 64)+"-"+pick(alnum, 16))
	add("sentry-user", "sentry-token", "sntryu_"+pick(hexlo, 64))
	add("shopify", "shopify-token", "shpat_"+pick(hexlo, 32))
	add("square", "square-token", "sq0atp-"+pick(urlb, 22))
	add("twilio", "twilio-api-key", "SK"+pick(hexlo, 32))
	add("typeform", "typeform-token", "tfp_"+pick(alnum, 59))
	add("age", "age-secret-key", "AGE-SECRET-KEY-1"+pick("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58))
	add("alibaba", "alibaba-access-key-id", "LTAI"+mix(20))
	add("databricks", "databricks-token", "dapi"+pick(hexlo, 32))
	add("flyio", "flyio-token", "fo1_"+pick(urlb, 43))
	add("notion", "notion-token", "ntn_"+pick("0123456789", 11)+pick(alnum, 35))
	add("telegram", "telegram-bot-token", "123456789:AA"+pick(urlb, 33))
	add("discord-webhook", "webhook-url", "https://discord.com/api/webhooks/123456789012345678/"+pick(urlb, 68))
	addCtx("bearer", "authorization-header", "Authorization: Bearer ", mix(40))
	addCtx("datadog", "provider-credential", "DATADOG_API_KEY=", mix(32))
	addCtx("client-secret", "provider-credential", `"client_secret": "`, mix(40))
	addCtx("name-value", "provider-credential", `{"name": "STRIPE_API_KEY", "value": "`, mix(32))
	addCtx("password", "password-assignment", "password=", "Tr0ub4dor&3x")
	addCtx("passphrase", "password-assignment", `passphrase: "`, "Tumble Orbit Falcon Pickle "+pick("0123456789", 4)+`"`)
	add("defined-networking", "defined-networking-token", "dnkey-"+pick(urlb, 26)+"-"+pick(urlb, 52))
	addCtx("curl-user", "curl-user", "curl -s -u deploy:", mix(18)+" https://api.example.com/v1")
	addCtx("mysql-p", "cli-password", "mysql -h db -u root -p", mix(16))
	addCtx("wireguard", "wireguard-key", "[Interface]\nPrivateKey = ", pick(b64, 42)+"Q=")
	addCtx("netrc", "netrc-password", "machine api.example.com login deploy password ", mix(16))
	addCtx("password-nested", "password-assignment", `{"password": {"value": "`, mix(14))
	addCtx("password-nested-yaml", "password-assignment", "password:\n  value: ", mix(14))
	addCtx("auth-token-nested", "credential-field", `{"auth": {"token": "`, mix(32))
	addCtx("azure-sas", "azure-sas-token", "https://acct.blob.core.windows.net/c?sv=2022-11-02&sp=r&sig=", mix(43)+"%3D")
	addCtx("auth-second-member", "credential-field", `{"auth": {"type": "basic", "token": "`, mix(30))
	addCtx("password-in-prose", "password-assignment", "the password is ", "hunter"+pick("0123456789", 2)+"-"+pick(lower, 6)+"-value")
	addCtx("password-variable", "password-variable", "export DB_PASS=", mix(14))
	addCtx("connection-string-pwd", "password-variable", "Server=db;User Id=sa;Pwd=", mix(14))
	addCtx("token-env", "token-assignment", "export GITHUB_TOKEN=", mix(32))
	addCtx("basic-credentials", "basic-credentials", "upstream_auth: Basic ", base64.StdEncoding.EncodeToString([]byte("deploy:"+mix(14))))
	addCtx("npmrc-auth-token", "npmrc-auth", "//registry.npmjs.org/:_authToken=", pick(hexlo, 8)+"-"+pick(hexlo, 4)+"-4"+pick(hexlo, 3)+"-a"+pick(hexlo, 3)+"-"+pick(hexlo, 12))
	addCtx("netrc-no-login", "netrc-password", "machine registry.example.com password ", mix(16))
	addCtx("docker-login-p", "cli-password", "docker login -u bot -p ", mix(20)+" ghcr.io")
	addCtx("aws-session-token", "aws-session-token", "aws_session_token = ", "IQoJb3JpZ2luX2Vj"+pick(b64, 40)+"/+"+pick(b64, 160))
	addCtx("token-hex", "token-assignment", "TOKEN=", pick(hexlo, 40))
	addCtx("heroku-uuid", "provider-credential", "HEROKU_API_KEY=", pick(hexlo, 8)+"-"+pick(hexlo, 4)+"-4"+pick(hexlo, 3)+"-8"+pick(hexlo, 3)+"-"+pick(hexlo, 12))
	addCtx("token-makefile", "token-assignment", "TOKEN ?= ", mix(32))
	addCtx("token-name-value", "token-assignment", `{"name":"GITHUB_TOKEN","value":"`, mix(32))
	addCtx("netrc-default", "netrc-password", "default login deploy password ", mix(16))
	addCtx("discord-bot-token", "provider-credential", "DISCORD_BOT_TOKEN=",
		base64.RawURLEncoding.EncodeToString([]byte("1"+pick("0123456789", 18)))+"."+pick(urlb, 6)+"."+pick(urlb, 38))
	addCtx("pgpass", "pgpass-password", "db.internal:5432:app:deploy:", mix(16))
	addCtx("pgpass-any", "pgpass-password", "*:*:*:replicator:", mix(18))
	addCtx("api-key-hex", "provider-credential", `api_key = "`, pick(hexlo, 32)+`"`)
	addCtx("client-secret-uuid", "provider-credential", "client_secret: ",
		pick(hexlo, 8)+"-"+pick(hexlo, 4)+"-4"+pick(hexlo, 3)+"-9"+pick(hexlo, 3)+"-"+pick(hexlo, 12))
	addCtx("pwd-call-shaped", "password-variable", "pwd: ", "summer("+pick("0123456789", 4)+")!")
	addCtx("password-camel-env", "password-variable", "export DB_PASS=", pick(lower, 6)+"H"+pick(lower, 5)+"B"+pick(lower, 6))
	add("discord-bot-token-bare", "discord-bot-token",
		base64.RawURLEncoding.EncodeToString([]byte("9"+pick("0123456789", 17)))+"."+pick(urlb, 6)+"."+pick(urlb, 27))
	return out
}

// Ordinary returns text that is not secret and must pass every scan: hashes, UUIDs, paths,
// base64 images, code and prose that brushes against the rules' keywords.
func Ordinary() []string {
	pick := picker(7, 7)
	img := "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk" + pick(b64, 200) + "=="
	return []string{
		"Add OAuth login to the web app, then review the plan",
		"commit " + pick(hexlo, 40) + " fixed the uploader",
		"sha256:" + pick(hexlo, 64),
		"md5 " + pick(hexlo, 32) + " of the tarball",
		"workflow 123e4567-e89b-12d3-a456-426614174000 resumed",
		"run id " + pick(hexlo, 8) + "-" + pick(hexlo, 4) + "-4" + pick(hexlo, 3) + "-a" + pick(hexlo, 3) + "-" + pick(hexlo, 12),
		"/home/dev/project/docs/plans/001-add-retries.md",
		`C:\Users\dev\source\repos\app\src\Program.cs`,
		"internal/secrets/secretsTest_helpers_v2.go",
		img,
		"the secret store is Vault; rotate the API key weekly and keep the token in 1Password",
		"password: see the vault entry db/prod, password_reset_url = /account/reset",
		"DATABASE_URL=postgres://app@db.internal:5432/app",
		"postgres://user:${DB_PASSWORD}@db/app and https://example.com/?email=a@b.com",
		"Authorization: Bearer <token>, Bearer authentication, bearer tokens expire",
		"client_secret: ${CLIENT_SECRET}; api_key = os.environ['API_KEY']",
		"okta_domain: dev-12345678.okta.com, datadog_site: datadoghq.eu",
		"npm_config_registry and hf_hub_download and glpat- prefix docs",
		"task-list risk-assessment desk-lamp sk-learn scikit-learn",
		"SKU 1234, API-Version 2, SG.Notes, AIza is Google's prefix",
		"version v1.0-beta.3 of sha256~ docs; see key-value store",
		"time 12:34:56, ratio 16:9, item 123456789:AB is not a token",
		"go test -run TestScanString/aws-id-glued ./internal/secrets",
		"curl -u $USER:$TOKEN https://api.example.com and curl --user admin:changeme localhost",
		"export PLAN_PATH=plans/001.md COMMIT=" + pick(hexlo, 40),
		"export DB_PASS=$(cat /run/secrets/db) DB_PASS_FILE=/run/secrets/db; first_pass = compute(x)",
		"PWD=/home/dev/project OLDPWD=/tmp; echo $(pwd); Server=db;User Id=sa;Pwd=${DB_PASSWORD};",
		"Basic authentication, basic settings; Basic usage of the proxy",
		"docker login ghcr.io -u bob --password-stdin; docker run -p 8080:80 app; the machine password prompt",
		"TOKEN=$(cat ~/.token) max_tokens: 4096 TOKEN=<token>; the token is refreshed every 3600 seconds",
		"-----BEGIN PUBLIC KEY-----\n" + pick(b64, 64) + "\n-----END PUBLIC KEY-----",
		"-----BEGIN CERTIFICATE-----\n" + pick(b64, 64),
		"eyJhbGciOiJIUzI1NiJ9 is a JWT header alone",
		"mailto:alice@example.com, git@github.com:owner/repo.git, ssh://git@host/x",
		"lorem ipsum " + strings.Repeat("dolor sit amet, consectetur adipiscing elit. ", 20),
		"日本語のテキスト、émoji 🚀 and accents: naïve café",
		"password = get_password(); password = self.password; password: str",
		`password = os.environ["DB_PASSWORD"] if password == confirm_password else None`,
		"POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:-postgres}; password=${{ secrets.DB_PASSWORD }}",
		"UPDATE users SET password = crypt($1, gen_salt('bf')) WHERE id = $2",
		"COMMIT_SHA=" + pick(hexlo, 40) + " next_token: " + pick(hexlo, 32) + " heroku_app_id: " + pick(hexlo, 32),
		"$password = Read-Host -AsSecureString; jdbc.password=@jdbc.password@",
	}
}

// picker returns pick(set, n): n bytes drawn from set by a generator seeded with seed1, seed2,
// so every run draws the same strings.
func picker(seed1, seed2 uint64) func(set string, n int) string {
	r := rand.New(rand.NewPCG(seed1, seed2))
	return func(set string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = set[r.IntN(len(set))]
		}
		return string(b)
	}
}

// GluedToken is a GitHub token glued to more text ("ghp_…-x"): no secret whole, but one when a
// cut ends right after its body, as a line shortened to fit may end. It fails t should the
// rules ever find it whole, when a test of such cuts would test nothing.
func GluedToken(t testing.TB) string {
	t.Helper()
	tok := "ghp_" + strings.Repeat("aB3dE6gH9j", 4) + "-x"
	if secrets.ScanString(tok) != nil {
		t.Fatal("the glued token is a secret whole: the test needs one that is not")
	}
	return tok
}

// GluedKey is a Stripe key in lowercase, as a type or phase name may hold one, glued to more
// text ("sk_live_…-x"): no secret whole, but one when it is cut to max runes, "…" the last
// (textsafe.Clip), for the cut ends right after its body. max is 25 to 256.
func GluedKey(t testing.TB, max int) string {
	t.Helper()
	key := "sk_live_" + strings.Repeat("q7k3x", 52)[:max-1-len("sk_live_")] + "-x"
	if secrets.ScanString(key) != nil || secrets.ScanString(key[:max-1]+"…") == nil {
		t.Fatal("the glued key is a secret whole, or not once cut: the test needs one that is only cut")
	}
	return key
}
