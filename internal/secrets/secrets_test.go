package secrets_test

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/cairn-dev/cairn/internal/strictjson"
)

// Test secrets are assembled at run time so that no scanner flags this file.
var (
	awsID       = "AKIA" + "IOSFODNN7EXAMPLE"
	awsSTS      = "ASIA" + "Y34FZKBOKMUTVV7A"
	awsSecret   = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
	ghClassic   = "ghp_" + "R2d2C3poLuke0Leia1Han2Solo3Chewie4xY"
	ghFine      = "github_pat_" + "11ABCDEFG0abcdefghijkl_" + strings.Repeat("aB3", 20)
	antKey      = "sk-ant-api03-" + strings.Repeat("Zx9_qW-e", 12) + "AA"
	oaProj      = "sk-proj-" + strings.Repeat("Ab1-cD2_eF3", 8)
	oaLegacy    = "sk-" + "Ab3dEf6hIj9kLm2n" + "T3BlbkFJ" + "Qr5tUv8wXy1zAb4c"
	slackBot    = "xoxb-" + "123456789012-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx"
	slackUser   = "xoxp-" + "1234-5678-91011-" + "00112233445566778899aabbccddeeff"
	slackApp    = "xapp-" + "1-A0123BCDEF-1234567890123-" + "abcdef0123456789abcdef"
	slackHook   = "https://hooks.slack.com/services/" + "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"
	jwtToken    = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ." + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	pemRSA      = "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq\n-----END RSA PRIVATE KEY-----"
	pemPKCS8    = "-----BEGIN " + "PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC"
	pemSSH      = "-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA"
	pemPGP      = "-----BEGIN PGP " + "PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\nlQOYBF8xK2sBCADK"
	pemEC       = "-----BEGIN EC " + "PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk"
	pgURL       = "postgres://" + "user:s3cret@" + "host/db"
	mongoURL    = "mongodb+srv://" + "admin:s3cr3t@" + "cluster0.example.net/app"
	redisURL    = "redis://" + ":hunter2@" + "localhost:6379/0"
	httpURL     = "https://" + "bob:correct-horse@" + "example.com/x"
	gitSHA      = "3f9a0c1d2e4b5a6978877665544332211ffeeddc"
	hexSecretly = "aws_secret_access_key = " + gitSHA
	// An STS session token: long base64, with / and + (and runs of /).
	awsSession = "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQDx" + "+Kd8/Zq3Rw7Tn2+Lp5Vb9Xm/Hs4Jc6Gf1Ye8Ua0Wi3Oo7Pe=="
)

func TestScanString(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // rule, "" for clean
	}{
		// Positives, alone and embedded.
		{"aws-id", awsID, "aws-access-key-id"},
		{"aws-id-sts", awsSTS, "aws-access-key-id"},
		{"aws-id-in-env-line", "export AWS_ACCESS_KEY_ID=" + awsID + ";", "aws-access-key-id"},
		{"aws-secret-env", "aws_secret_access_key = " + awsSecret, "aws-secret-access-key"},
		{"aws-secret-yaml", "SecretAccessKey: '" + awsSecret + "'", "aws-secret-access-key"},
		// The AWS CLI sets it by name, then a blank or the next word of a command's list.
		{"aws-secret-configure", "aws configure set aws_secret_access_key " + awsSecret, "aws-secret-access-key"},
		{"aws-secret-configure-argv", `["aws", "configure", "set", "aws_secret_access_key", "` + awsSecret + `"]`, "aws-secret-access-key"},
		{"aws-secret-configure-tab", "aws_secret_access_key\t" + awsSecret + "\n", "aws-secret-access-key"},
		{"aws-secret-prose-sha", "the secret access key " + gitSHA, ""},
		{"secret-key-blank", "the secret key " + awsSecret, ""},
		{"aws-secret-json-text", `{"AWS_SECRET_ACCESS_KEY": "` + awsSecret + `"}`, "aws-secret-access-key"},
		{"aws-secret-camel", "awsSecretAccessKey=" + awsSecret, "aws-secret-access-key"},
		{"github-classic", ghClassic, "github-token"},
		{"github-oauth", "token gho_" + ghClassic[4:], "github-token"},
		{"github-user-to-server", "ghu_" + ghClassic[4:], "github-token"},
		{"github-server-to-server", "ghs_" + ghClassic[4:], "github-token"},
		{"github-refresh", "ghr_" + ghClassic[4:], "github-token"},
		{"github-fine-grained", "GH_TOKEN=" + ghFine, "github-token"},
		{"anthropic", "ANTHROPIC_API_KEY=" + antKey, "anthropic-api-key"},
		{"anthropic-admin", "sk-ant-admin01-" + strings.Repeat("Zx9_qW-e", 12), "anthropic-api-key"},
		{"openai-project", oaProj, "openai-api-key"},
		{"openai-legacy", "key: " + oaLegacy, "openai-api-key"},
		{"openai-service-account", "sk-svcacct-" + strings.Repeat("Ab1-cD2_eF3", 8), "openai-api-key"},
		{"slack-bot", slackBot, "slack-token"},
		{"slack-user", "(" + slackUser + ")", "slack-token"},
		{"slack-app", slackApp, "slack-token"},
		{"slack-webhook", "POST " + slackHook, "slack-webhook"},
		{"pem-rsa", pemRSA, "private-key"},
		{"pem-pkcs8", pemPKCS8, "private-key"},
		{"pem-openssh", pemSSH, "private-key"},
		{"pem-pgp", pemPGP, "private-key"},
		{"pem-ec", "key:\n" + pemEC, "private-key"},
		{"jwt", "Authorization: Bearer " + jwtToken, "jwt"},
		{"url-postgres", "DATABASE_URL=" + pgURL, "url-credentials"},
		{"url-mongodb-srv", mongoURL, "url-credentials"},
		{"url-redis-empty-user", redisURL, "url-credentials"},
		{"url-https", "clone " + httpURL, "url-credentials"},
		{"url-percent-encoded-password", "amqp://guest:p%40ss@rabbit:5672", "url-credentials"},
		{"basic-auth-header", "curl -H 'Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("user:password123")) + "' https://x", "authorization-header"},
		{"basic-auth-short", "Proxy-Authorization: basic " + base64.StdEncoding.EncodeToString([]byte("bob:q7")), "authorization-header"},
		{"basic-auth-no-colon", "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("see the team vault")), ""},
		{"basic-auth-placeholder", "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("user:$PASSWORD")), ""},
		// Basic credentials outside an Authorization header: another header, a config value.
		{"basic-bare", "proxy_auth = Basic " + base64.StdEncoding.EncodeToString([]byte("admin:Hunter2Hunter2")), "basic-credentials"},
		{"basic-other-header", "curl -H 'X-Upstream-Auth: basic " + base64.StdEncoding.EncodeToString([]byte("deploy:s3cr3t-Pa55")) + "' https://x", "basic-credentials"},
		{"basic-bare-placeholders", "Basic " + base64.StdEncoding.EncodeToString([]byte("user:password")) + ", Basic " +
			base64.StdEncoding.EncodeToString([]byte("user:<password>")) + ", Basic " + base64.StdEncoding.EncodeToString([]byte("admin:changeme")) +
			", Basic " + base64.StdEncoding.EncodeToString([]byte("bob:$BOB_PASSWORD")), ""},
		{"basic-bare-not-credentials", "Basic " + base64.StdEncoding.EncodeToString([]byte("see the team vault")) + " and Basic " +
			base64.StdEncoding.EncodeToString([]byte{0x01, 0xff, ':', 0x80, 0x7f, 0x00, 'a', 'b', 'c'}), ""},
		{"basic-prose", "Basic authentication, basic settings: BASIC programming; Basic usage of Authorization headers", ""},
		{"base64-credentials-alone", "cache key " + base64.StdEncoding.EncodeToString([]byte("admin:Hunter2Hunter2")), ""},
		// .npmrc credentials: a legacy token is a UUID, _auth is base64 of user:password.
		{"npmrc-auth-token-uuid", "//registry.npmjs.org/:_authToken=3f9a0c1d-2e4b-5a69-7887-766554433221", "npmrc-auth"},
		{"npmrc-auth-basic", "registry=https://npm.example.com/\n//npm.example.com/:_auth=" + base64.StdEncoding.EncodeToString([]byte("admin:Hunter2Hunter2")), "npmrc-auth"},
		{"npmrc-auth-token-reference", "//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n//npm.pkg.github.com/:_authToken=<token>", ""},
		{"npmrc-auth-placeholder", "//npm.example.com/:_auth=" + base64.StdEncoding.EncodeToString([]byte("user:password")), ""},
		{"npmrc-auth-code", "this._authToken = token; client._auth = createAuth(options)", ""},
		{"secret-env-line", "JWT_SECRET=Zq8Wm3Rt6Yp1Ks4Lv7Nb0Xc", "provider-credential"},
		{"secret-camel-yaml", "sessionSecret: 'Zq8Wm3Rt6Yp1Ks4Lv7Nb0Xc'", "provider-credential"},
		{"secret-name-not-value", "secret_name: prod-db-2024-v2-main", ""},
		{"password-k8s-env", "env:\n- name: DB_PASSWORD\n  value: Hunter2Hunter2\n", "password-assignment"},
		{"password-k8s-env-ref", "env:\n- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef: {name: db, key: password}\n", ""},
		{"password-k8s-env-placeholder", "- name: DB_PASSWORD\n  value: ${DB_PASSWORD}\n", ""},
		{"mysql-p-glued", "mysql -h db -u root -pHunter2Hunter2 app < dump.sql", "cli-password"},
		{"mysqldump-p-glued", "ran: mysqldump -uroot -ps3cr3t-Pa55 --all-databases", "cli-password"},
		{"sshpass-p", "sshpass -p 'Hunter2Hunter2' ssh deploy@host", "cli-password"},
		{"mysql-p-first", "mysql -pHunter2Hunter2 -h db app", "cli-password"},
		{"mariadb-dump-p", "mariadb-dump -uroot -pHunter2Hunter2 app", "cli-password"},
		{"curl-u-first", "curl -u deploy:Hunter2Hunter2 https://api.example.com", "curl-user"},
		{"curl-user-equals", "curl -s --user=deploy:Hunter2Hunter2 https://api.example.com", "curl-user"},
		{"mkdir-p-then-mysql", "mkdir -p backups/Hunter2Hunter2 && mysql -u root -p app", ""},
		{"mysql-p-next-line", "mysql -u root\n-pHunter2Hunter2", ""},
		{"mysql-p-continued-line", "mysql -u root \\\n  -pHunter2Hunter2 app", "cli-password"},
		{"curl-u-other-command", "curlew -u deploy:Hunter2Hunter2", ""},
		// A command written as a list of words (a container's command, a call's argv).
		{"curl-u-argv", `["curl", "-u", "deploy:Hunter2Hunter2", "https://api.example.com"]`, "curl-user"},
		{"curl-u-argv-lines", "command:\n  - [\n      \"curl\",\n      \"-u\",\n      \"deploy:Hunter2Hunter2\"\n    ]", "curl-user"},
		{"curl-user-argv-python", `subprocess.run(['curl','--user','deploy:Hunter2Hunter2', url])`, "curl-user"},
		{"curl-u-argv-placeholder", `["curl", "-u", "user:password", "https://api.example.com"]`, ""},
		{"curl-u-argv-other-command", `["curlew", "-u", "deploy:Hunter2Hunter2"]`, ""},
		{"login-argv", `["docker", "login", "-u", "deploy", "-p", "Hunter2Hunter2", "ghcr.io"]`, "cli-password"},
		{"mysql-argv", `["mysql", "-u", "root", "-pHunter2Hunter2", "app"]`, "cli-password"},
		{"run-argv-port", `["docker", "login", "ghcr.io"], ["docker", "run", "-p", "8080:80", "app"]`, ""},
		{"curl-u-far", "curl " + strings.Repeat("x", 201) + " -u deploy:Hunter2Hunter2", ""},
		{"sshpass-p-far", "sshpass " + strings.Repeat("x", 101) + " -p Hunter2Hunter2", ""},
		{"mysql-p-prompts", "mysql -u root -p app", ""},
		{"mysql-p-env", "mysql -u root -p$MYSQL_PWD app; mysql --port=3306 -P 3307", ""},
		{"sshpass-env", "sshpass -e ssh host; sshpass -f ~/.pw ssh host", ""},
		{"netrc-line", "machine api.github.com login deploy password Hunter2Hunter2", "netrc-password"},
		{"netrc-lines", "machine git.example.com\n  login bot\n  password s3cr3t-Pa55\n", "netrc-password"},
		{"netrc-prose", "the machine login password prompt appears twice", ""},
		{"netrc-no-login", "machine api.example.com password Hunter2Hunter2", "netrc-password"},
		{"netrc-no-login-prose", "the build machine password is stale; the machine password prompt", ""},
		{"netrc-list-items", "- machine api.example.com\n- login bob\n- password Hunter2Hunter2", "netrc-password"},
		{"netrc-star-items", "* machine api.example.com\n  * login bob\n  * password s3cr3t-Pa55", "netrc-password"},
		{"netrc-list-prose", "- machine learning\n- login page\n- password reset", ""},
		{"docker-login-p", "docker login -u bob -p Hunter2Hunter2 ghcr.io", "cli-password"},
		{"docker-login-stdin", "echo $CR_PAT | docker login ghcr.io -u bob --password-stdin; docker run -p 8080:80 app", ""},
		{"docker-login-p-reference", "docker login -u bob -p $REGISTRY_PASSWORD ghcr.io", ""},
		{"password-libpq-env", "PGPASSWORD=Hunter2Hunter2 psql -h db", "password-assignment"},
		{"password-camel-yaml", "  rootPassword: 's3cr3t-Pa55'", "password-assignment"},
		// A variable named for a password by a short word: DB_PASS, SMTP_PASS, MYSQL_PWD.
		{"password-var-export", "export DB_PASS=hunter2longvalue", "password-variable"},
		{"password-var-env-prefix", "MYSQL_PWD=Hunter2Hunter2 mysql -u root app", "password-variable"},
		{"password-var-yaml", "  redis_pass: 's3cr3t-Pa55'", "password-variable"},
		{"password-var-json-text", `{"SMTP_PASS": "hunter2longvalue"}`, "password-variable"},
		{"password-var-command-sub", "export DB_PASS=$(cat /run/secrets/db)", ""},
		{"password-var-reference", "DB_PASS=${DB_PASS} DB_PW=$DB_PW", ""},
		{"password-var-angle-placeholder", "DB_PASS=<db-password>", ""},
		{"password-var-masked", "DB_PASS=xxxxxxxxxx and SMTP_PASS=**********", ""},
		{"password-var-changeme", "DB_PASS=changeme", ""},
		{"password-var-code-call", "first_pass = compute_first(items)", ""},
		{"password-var-code-name", "db_pass = config_value; db_pass = settings.db_password", ""},
		{"password-var-file", "DB_PASS_FILE=/run/secrets/db_pass", ""},
		{"password-var-prose", "the first_pass: ran twice; TEST_PASS=passed", ""},
		// ADO.NET and ODBC connection strings name the password Pwd (or Password).
		{"connection-string-pwd", "Server=x;User Id=sa;Pwd=S3cr3tValue;", "password-variable"},
		{"connection-string-odbc-pwd", "Driver={ODBC Driver 18 for SQL Server};Server=db;UID=app;PWD=Hunter2Hunter2;", "password-variable"},
		{"connection-string-password", "Server=x;User Id=sa;Password=S3cr3tValue;", "password-assignment"},
		{"connection-string-pwd-reference", "Server=x;User Id=sa;Pwd=${DB_PASSWORD};Pwd=<password>;", ""},
		{"pwd-shell", "PWD=/home/dev/project OLDPWD=/tmp; echo $(pwd); pwd: /srv/app", ""},
		{"pwd-glued-word", "cwdpwd=Hunter2Hunter2", ""},
		// TOKEN= alone, or ending a name no provider rule knows.
		{"token-env-line", "TOKEN=Ab3dEf6hIj9kLm2nQr5tUv8w", "token-assignment"},
		{"token-env-export", "export GITHUB_TOKEN=Ab3dEf6hIj9kLm2nQr5tUv8w", "token-assignment"},
		{"token-json-text", `{"token": "Ab3dEf6hIj9kLm2nQr5tUv8w"}`, "token-assignment"},
		{"token-header", "X-Auth-Token: Ab3dEf6hIj9kLm2nQr5tUv8w", "token-assignment"},
		{"token-camel", "gitlabToken = 'Ab3dEf6hIj9kLm2nQr5tUv8w'", "token-assignment"},
		{"api-token-env-line", "API_TOKEN=Ab3dEf6hIj9kLm2nQr5tUv8w", "provider-credential"},
		{"token-command-sub", "TOKEN=$(cat ~/.config/token) GH_TOKEN=`gh auth token`", ""},
		{"token-reference", "TOKEN=${TOKEN}; API_TOKEN=$API_TOKEN", ""},
		{"token-placeholders", "TOKEN=<token> TOKEN=xxxxxxxxxxxxxxxxxxxxxxxx TOKEN=changeme", ""},
		// A name for a token says a hex value is one (a commit's or a digest's is named so).
		{"token-hex", "TOKEN=" + gitSHA, "token-assignment"},
		{"token-hex-digest", "COMMIT_SHA=" + gitSHA + " TOKEN_SHA=" + gitSHA, ""},
		{"token-prose", "max_tokens: 4096; the token is refreshed every 3600 seconds; tokens: counted", ""},
		// An STS session token holds / and +, which provider-credential's values do not.
		{"aws-session-token-ini", "aws_session_token = " + awsSession, "aws-session-token"},
		{"aws-session-token-env", "export AWS_SESSION_TOKEN=" + awsSession[:80], "aws-session-token"},
		{"aws-session-token-json-text", `{"SessionToken": "` + awsSession + `"}`, "aws-session-token"},
		{"aws-session-token-reference", "aws_session_token = ${AWS_SESSION_TOKEN}; AWS_SESSION_TOKEN=$(aws sts get-session-token)", ""},
		{"aws-session-token-placeholder", "aws_session_token=<session-token> SessionToken: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", ""},
		{"session-token-path", "session_token: /var/run/secrets/eks.amazonaws.com/serviceaccount/token", ""},
		{"session-token-prose", "the SessionToken expires after 3600 seconds; session_token_ttl = 3600", ""},
		{"token-type", `{"token_type": "bearer", "tokenizer": "cl100k_base_v2_2024_final"}`, ""},

		{"url-password-with-slash", "postgres://" + "u:pa/ss@" + "host", "url-credentials"},
		{"url-password-base64-slash", "redis://" + ":Xk9/q2Lm+Zp@" + "cache:6379/0", "url-credentials"},
		// A password may hold "://" too: the window reaches past one.
		{"url-password-with-scheme-sep", "postgres://" + "admin:pa://ss9word@" + "db.example.com/x", "url-credentials"},
		{"url-password-with-scheme-sep-empty-user", "redis://" + ":Xk9://mQ2v@" + "cache:6379", "url-credentials"},
		{"url-redirect-with-at", "https://example.com:443/go/https://cdn.example.com/@scope/pkg", ""},

		{"putty-key-file", "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: deploy\nPublic-Lines: 2", "private-key"},
		{"putty-key-file-one-line", "PuTTY-User-Key-File-3: ssh-ed25519 Encryption: none Comment: deploy", "private-key"},
		{"putty-key-file-escaped", `"PuTTY-User-Key-File-2: ssh-rsa\r\nEncryption: aes256-cbc\r\n"`, "private-key"},
		{"ssh2-private-key", "---- BEGIN SSH2 ENCRYPTED " + "PRIVATE KEY ----\nComment: x\nP2/56wAAA", "private-key"},
		// A key block is its header and the start of its body, however the lines are joined;
		// the header alone is prose about keys (see the near misses).
		{"pem-encrypted", "-----BEGIN RSA " + "PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,5D7F0A1B2C3D4E5F\n\nMIIEowIBAAKCAQEA7bq", "private-key"},
		{"pem-one-line", "key: -----BEGIN OPENSSH " + "PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAAA -----END OPENSSH PRIVATE KEY-----", "private-key"},
		{"pem-glued-body", "KEY=-----BEGIN RSA " + "PRIVATE KEY-----MIIEpAIBAAKCAQEA7bqZ", "private-key"},
		{"pem-escaped-newlines", `"-----BEGIN ` + `PRIVATE KEY-----\r\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC"`, "private-key"},
		{"pem-double-escaped", `"-----BEGIN ` + `PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC"`, "private-key"},
		// Django's startproject writes a random SECRET_KEY marked as a development one; it
		// signs sessions and tokens all the same, wherever it is deployed.
		{"django-insecure-key", "SECRET_KEY = 'django-insecure-" + "a8#k2!p$0xq@9m&z7w^r3(t+y5u-v1b_n6c=e4d*f9g2h'", "django-secret-key"},
		{"django-insecure-key-json", `{"SECRET_KEY": "django-insecure-` + `q2w)e4r5t^y7u8i9o0p-a_s=d+f!g@h#j$k%l&z*x(c3v"}`, "django-secret-key"},
		{"django-insecure-prose", "keys made by startproject start with django-insecure- and should be replaced", ""},
		{"django-insecure-placeholder", "SECRET_KEY = 'django-insecure-<your-key-here>'", ""},
		{"django-insecure-letters", "SECRET_KEY = 'django-insecure-replace-this-with-a-long-random-string'", ""},
		// A key block in base64, as a kubeconfig's client-key-data or a Kubernetes secret's
		// tls.key holds it: judged decoded. A certificate or a public key so encoded is not one.
		{"base64-pem-kubeconfig", "    client-key-data: " + base64.StdEncoding.EncodeToString([]byte(pemRSA)), "base64-private-key"},
		{"base64-pem-json", `{"tls.key": "` + base64.StdEncoding.EncodeToString([]byte(pemPKCS8+"\n"+pemPKCS8)) + `"}`, "base64-private-key"},
		{"base64-pem-certificate", "certificate-authority-data: " + base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa\n-----END CERTIFICATE-----")), ""},
		{"base64-pem-public", "key: " + base64.StdEncoding.EncodeToString([]byte("-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----")), ""},
		{"base64-pem-header-only", base64.StdEncoding.EncodeToString([]byte("-----BEGIN RSA " + "PRIVATE KEY----- block goes here")), ""},
		// A prefixed token alone in base64 (echo -n $TOKEN | base64, a Kubernetes secret's
		// data:) is judged decoded; base64 of a prefix and no token is not one.
		{"base64-github", "GH=" + base64.StdEncoding.EncodeToString([]byte(ghClassic)), "base64-token"},
		{"base64-github-fine", base64.StdEncoding.EncodeToString([]byte(ghFine)) + " was the value", "base64-token"},
		{"base64-anthropic", "data:\n  key: " + base64.StdEncoding.EncodeToString([]byte(antKey)), "base64-token"},
		{"base64-aws-id", base64.RawURLEncoding.EncodeToString([]byte(awsID + "\n")), "base64-token"},
		{"base64-slack", base64.StdEncoding.EncodeToString([]byte(slackBot)), "base64-token"},
		{"base64-github-prefix-only", base64.StdEncoding.EncodeToString([]byte("ghp_ tokens are GitHub's classic personal access tokens")), ""},
		// Percent-encoded, as a URL's query or an encoder that escapes every symbol writes a
		// token, it is read decoded; a % that escapes nothing is text.
		{"percent-github", "ghp%5F" + ghClassic[4:], "github-token"},
		{"percent-github-query", "https://example.com/cb?t=ghp%5f" + ghClassic[4:] + "&x=1", "github-token"},
		{"percent-anthropic", strings.ReplaceAll(antKey, "-", "%2D"), "anthropic-api-key"},
		{"percent-password", "next=%2Flogin%3Fpassword%3DTr0ub4dor%263x", "password-assignment"},
		{"percent-prose", "100% sure it is 50%off, see /a%20b%2Fc?q=%E2%9C%93", ""},
		// One kind of escape may hide another: a percent escape written as a JSON escape, a
		// character reference as a percent escape.
		{"percent-in-json-escape", `ghp\u00255F` + ghClassic[4:], "github-token"},
		{"percent-in-json-escape-twice", `ghp\\u00255F` + ghClassic[4:], "github-token"},
		{"entity-in-percent", "ghp%26%2395%3B" + ghClassic[4:], "github-token"},
		{"json-escape-in-entity", "&#92;u0067hp_" + ghClassic[4:], "github-token"},
		// HTML character references of printable ASCII, as a page or an encoder writes a
		// token, are read decoded; others, and & alone, are text.
		{"entity-decimal", "&#103;hp_" + ghClassic[4:], "github-token"},
		{"entity-hex", "&#x67;hp_" + ghClassic[4:], "github-token"},
		{"entity-no-semicolon", "&#103hp_" + ghClassic[4:], "github-token"},
		{"entity-named", "ghp&lowbar;" + ghClassic[4:], "github-token"},
		{"entity-password", "password&#61;Tr0ub4dor&amp;3x", "password-assignment"},
		{"entity-anthropic", strings.ReplaceAll(antKey, "-", "&#45;"), "anthropic-api-key"},
		// A character Cairn drops when it stores text, inside an escape, hides nothing: the
		// escape is whole once stored.
		{"entity-split-by-zero-width", "&#1\u200b03;hp_" + ghClassic[4:], "github-token"},
		{"percent-split-by-zero-width", "ghp%5\u200bF" + ghClassic[4:], "github-token"},
		{"json-escape-split-by-zero-width", `gh\u00` + "\u200b" + `70_` + ghClassic[4:], "github-token"},
		{"entity-prose", "Tom &amp; Jerry &lt;b&gt; caf&#233; &#128512; &#1; &nbsp; &unknown; & so on &#", ""},
		// A Google OAuth refresh token starts 1//0 and does not expire: a / kept it from the
		// credential rules, even after refresh_token.
		{"google-refresh-token", `{"refresh_token": "1//0gLkX3mQ9vTzR8pW2aNcY5uJ7bHdF4eK6sQ1wE0rT9yU3iO8pA2sD5fG7hJ4kL6zX9cV1bN3mQ0wE8rT5yU2iO7pA4sD1f"}`, "google-oauth"},
		{"google-refresh-token-env", "GOOGLE_REFRESH_TOKEN=1//04Xk9mQ2vLp7zR4wT8aB3cD5eF6gH7jK8mN9pQ1rS2tU3vW4xY5zA6bC7dE8fG9hI0jK1lM2nO3pQ4rS5tU6v", "google-oauth"},
		{"google-refresh-prefix-prose", "1//0 is no number; see http://1//0x and 1//04 in the docs", ""},
		// Laravel's APP_KEY (php artisan key:generate): base64: and 32 random bytes encoded.
		{"laravel-app-key", "APP_KEY=base64:" + "2fl+Ktvkfl+Fuz4Qp/A75G2RTiWVA/ZoKZvp6fiiM10=", "laravel-app-key"},
		{"laravel-app-key-json", `{"APP_KEY": "base64:` + `Kx9mQ2vLp7zR4wT8aB3cD5eF6gH7jK8mN9pQ1rS2tU3="}`, "laravel-app-key"},
		{"laravel-app-key-empty", "APP_KEY=\nAPP_KEY=base64:\nAPP_KEY=${APP_KEY}", ""},
		// A block kept as a list of its lines (JSON, YAML flow) or strings joined in code.
		{"pem-json-lines", `["-----BEGIN RSA ` + `PRIVATE KEY-----", "MIIEpAIBAAKCAQEA7bqZ9x", "-----END RSA PRIVATE KEY-----"]`, "private-key"},
		{"pem-json-lines-pretty", "{\"key\": [\n    \"-----BEGIN OPENSSH " + "PRIVATE KEY-----\",\n    \"b3BlbnNzaC1rZXktdjEAAAAA\"\n]}", "private-key"},
		{"pem-code-concat", "key := \"-----BEGIN EC " + "PRIVATE KEY-----\\n\" +\n\t\"MHcCAQEEIBkg4LVWM9nuwNSk\"", "private-key"},
		{"pem-python-adjacent", "KEY = ('-----BEGIN " + "PRIVATE KEY-----\\n'\n       'MIIEvQIBADANBgkqhkiG9w0B')", "private-key"},
		{"pem-json-lines-no-body", `["-----BEGIN RSA ` + `PRIVATE KEY-----", "...", "-----END RSA PRIVATE KEY-----"]`, ""},
		{"pem-json-lines-header-footer", `["-----BEGIN RSA ` + `PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----"]`, ""},
		{"pem-json-lines-prose", `["-----BEGIN OPENSSH ` + `PRIVATE KEY-----", "block goes here"]`, ""},

		{"wireguard-private-key", "[Interface]\nPrivateKey = yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=\nAddress = 10.0.0.1/24", "wireguard-key"},
		{"wireguard-preshared-key", "PresharedKey=" + "/UwcSPg38hW/D9Y3tcS1FOV0K1wuURMbS0sesJEP5ak=", "wireguard-key"},
		{"wireguard-json", `{"private_key": "yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk="}`, "wireguard-key"},

		{"name-value-api-key", `{"name":"API_KEY","value":"Ab3dEf6hIj9kLm2nQr5tUv8w"}`, "provider-credential"},
		{"key-value-secret", `{"Key": "STRIPE_SECRET_KEY", "Value": "Ab3dEf6hIj9kLm2nQr5tUv8w"}`, "provider-credential"},

		{"passphrase-quoted", `password = "correct horse battery staple"`, "password-assignment"},
		{"passphrase-json", `{"passphrase": "Tumble Orbit Falcon Pickle 42"}`, "password-assignment"},
		{"passphrase-glued", "GPG_PASSPHRASE=Hunter2Hunter2", "password-assignment"},

		// base64 of a JSON object holding a secret ({" encodes as eyJ): judged decoded.
		{"base64-json-password", base64.StdEncoding.EncodeToString([]byte(`{"password":"Hunter2Hunter2"}`)), "base64-json"},
		{"base64-json-in-prose", "state=" + base64.RawURLEncoding.EncodeToString([]byte(`{"user":"bob","api_key":"Zq8Wm3Rt6Yp1Ks4Lv7Nb0Xc"}`)) + "&x=1", "base64-json"},
		{"base64-json-token", "cfg: " + base64.StdEncoding.EncodeToString([]byte(`{"token":"`+ghClassic+`"}`)), "base64-json"},

		// A Docker config's auth: base64 of user:password, judged decoded as Basic is.
		{"docker-config-auth", `{"auths":{"ghcr.io":{"auth":"` + base64.StdEncoding.EncodeToString([]byte("bob:Hunter2Hunter2")) + `"}}}`, "docker-auth"},
		{"docker-config-auth-spaced", `"auth": "` + base64.StdEncoding.EncodeToString([]byte("_json_key:q7Zx9")) + `"`, "docker-auth"},

		// Near misses and ordinary text.
		{"docker-auth-placeholder", `{"auth":"` + base64.StdEncoding.EncodeToString([]byte("bob:$REGISTRY_PASSWORD")) + `"}`, ""},
		{"docker-auth-not-credentials", `{"auth":"` + base64.StdEncoding.EncodeToString([]byte("see the vault")) + `","author":"bob"}`, ""},
		{"auth-word", `{"auth":"oauth2","type":"basic"}`, ""},
		{"base64-json-clean", "cursor " + base64.StdEncoding.EncodeToString([]byte(`{"page":2,"after":"item-41","order":"desc"}`)), ""},
		{"base64-json-placeholder", base64.StdEncoding.EncodeToString([]byte(`{"password":"${DB_PASSWORD}"}`)), ""},
		{"base64-json-in-word", "x" + base64.StdEncoding.EncodeToString([]byte(`{"password":"Hunter2Hunter2"}`)), ""},
		{"empty", "", ""},
		{"prose", "Implement the OAuth flow; the secret sauce is testing the task-list.", ""},
		{"git-sha", "commit " + gitSHA, ""},
		{"git-sha-in-secret-context", hexSecretly, ""},
		{"uuid", "workflow 123e4567-e89b-12d3-a456-426614174000", ""},
		{"aws-id-too-short", "AKIA" + "IOSFODNN7EXAMPL", ""},
		{"aws-id-lowercase", "AKIA" + "iosfodnn7example", ""},
		{"aws-id-glued", "XAKIA" + "IOSFODNN7EXAMPLE", ""},
		{"aws-id-too-long", awsID + "Q", ""},
		{"aws-secret-no-context", "value " + awsSecret, ""},
		{"aws-secret-word-only", "rotate the AWS secret access key weekly", ""},
		{"github-short", "ghp_abc123", ""},
		{"github-35", "ghp_" + ghClassic[4:39], ""},
		{"github-in-word", "xghp_" + ghClassic[4:], ""},
		{"openrouter-word", "the sk-or-v1- prefix marks OpenRouter keys", ""},
		{"groq-in-word", "xgsk_" + strings.Repeat("Ab3", 18), ""},
		{"xai-in-words", "grok-xai-" + strings.Repeat("Ab3", 27), ""},
		{"sk-in-words", "task-list risk-assessment ask-anything desk-lamp", ""},
		{"sk-learn", "pip install sk-learn scikit-learn", ""},
		{"sk-short", "sk-1234567890abcdefABCDEF", ""},
		{"sk-ant-in-word", "desk-ant-api03-" + strings.Repeat("Zx9_qW-e", 12), ""},
		{"sk-proj-branch-name", "sk-proj-frontend-refactor-plan-for-the-new-oauth-flow", ""},
		{"sk-long-lowercase-word", "sk-" + strings.Repeat("abcdefgh", 5), ""},
		{"xoxo", "xoxo-hugs and kisses", ""},
		{"xoxb-short", "xoxb-abc", ""},
		{"slack-hook-bare", "see https://hooks.slack.com/ for details", ""},
		{"slack-docs-url", "https://api.slack.com/messaging/webhooks", ""},
		{"pem-public", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBg", ""},
		{"pem-certificate", "-----BEGIN CERTIFICATE-----", ""},
		{"pem-header-in-prose", "paste the -----BEGIN RSA " + "PRIVATE KEY----- block here", ""},
		{"pem-header-alone", "-----BEGIN " + "PRIVATE KEY-----", ""},
		{"pem-header-and-footer", "the file runs from -----BEGIN EC " + "PRIVATE KEY----- to -----END EC PRIVATE KEY-----", ""},
		{"pem-header-then-word", "-----BEGIN OPENSSH " + "PRIVATE KEY----- Authentication keys go here", ""},
		{"pem-body-elided", "-----BEGIN RSA " + "PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----", ""},
		{"ssh2-header-in-prose", "a file starting ---- BEGIN SSH2 ENCRYPTED " + "PRIVATE KEY ---- is PuTTY's export", ""},
		{"private-key-words", "the private key lives in the vault", ""},
		{"jwt-header-only", "eyJhbGciOiJIUzI1NiJ9", ""},
		{"jwt-stub", "eyJ.eyJ.x", ""},
		{"jwt-short-signature", "eyJhbGciOi.eyJzdWIiOi.abc", ""},
		{"url-plain", "https://example.com/path?q=1", ""},
		{"url-user-only", "https://user@example.com/repo.git", ""},
		{"url-ssh-git", "ssh://git@github.com/owner/repo.git", ""},
		{"scp-git", "git@github.com:owner/repo.git", ""},
		{"email", "mail alice@example.com or bob.smith@example.org", ""},
		{"url-port-then-at-in-path", "http://localhost:8080/users/@alice", ""},
		{"url-email-in-query", "https://example.com/?email=a@b.com", ""},
		{"url-password-env-ref", "postgres://user:${DB_PASSWORD}@db/app", ""},
		// Prose that shows a syntax names the password's place by its name: not a password.
		{"url-placeholder-word", "a URL in the form scheme://user:password@host is refused", ""},
		{"url-placeholder-upper", "postgres://USER:PASSWORD@HOST/db", ""},
		{"url-placeholder-snake", "postgres://app:DB_PASSWORD@db/app", ""},
		{"url-word-and-digit", "postgres://user:password1@db/app", "url-credentials"},
		// Short names of the place too, as comments and docs write them.
		{"url-placeholder-pw", "// connect with redis://:pw@localhost:6379", ""},
		{"url-placeholder-pass", "amqp://user:pass@rabbit:5672 and mysql://root:pwd@db/app", ""},
		{"url-placeholder-upper-pass", "postgres://USER:PASS@HOST/db or redis://:DB_PW@cache", ""},
		{"netrc-placeholder-pass", "machine HOST login USER password pass", ""},
		{"url-pass-with-digit", "redis://:pass1@cache:6379", "url-credentials"},
		{"url-pass-capitalised", "amqp://user:Pass@rabbit", "url-credentials"},
		{"url-pw-in-password", "redis://:pw4prod@cache", "url-credentials"},
		{"url-word-capitalised", "postgres://user:Password@db/app", "url-credentials"},
		{"cli-password-placeholder-prose", "run sshpass -p PASSWORD. then ssh", ""},
		{"cli-password-placeholder-parenthesised", "(sshpass -p PASSWORD).", ""},
		{"cli-password-after-prose", "run sshpass -p Hunter2x. then ssh", "cli-password"},
		{"netrc-placeholder-prose", "a line machine HOST login USER password PASSWORD, on one line", ""},
		{"netrc-after-prose", "machine api.example.com login bob password Hunter2x, then", "netrc-password"},
		{"netrc-upper-word", "machine api.example.com login bob password HUNTER", "netrc-password"},
		{"url-password-dollar", "mysql://root:$MYSQL_PWD@db", ""},
		{"url-password-template", "postgres://app:{{ .Password }}@db", ""},
		{"url-password-windows-env", "postgres://app:%DB_PASS%@db", ""},
		{"url-password-masked", "postgres://user:****@host/db", ""},
		{"url-password-xxx", "postgres://user:xxxx@host/db", ""},
		{"mailto", "mailto:user@example.com", ""},
		{"password-prose-quoted", `password: "see the vault entry for prod"`, ""},
		{"password-hint-quoted", `{"password": "Must be at least 8 characters"}`, ""},
		{"password-label", `{"password": "Enter your password"}`, ""},
		{"password-angle-placeholder", "password=<password> and password: <your-password>", ""},
		{"passphrase-prose", "the passphrase protects the key; choose a long passphrase", ""},
		{"name-value-ordinary", `{"name":"API_KEY","value":"see the team vault"}`, ""},
		{"name-value-reference", `{"name":"API_KEY","valueFrom":{"secretKeyRef":{"name":"api","key":"key"}}}`, ""},
		{"wireguard-public-key", "PublicKey = yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=", ""},
		{"wireguard-key-reference", "PrivateKey = /etc/wireguard/private.key", ""},
		{"putty-words", "convert the PuTTY-User-Key-File- format with puttygen", ""},
		{"ssh2-public-key", "---- BEGIN SSH2 PUBLIC KEY ----\nComment: x\nAAAAB3NzaC1yc2E", ""},
		{"url-port-then-path-at", "https://registry.example.com:443/@scope/pkg and ftp://ftp.example.com:21/pub@2x/a.png", ""},
		{"url-empty-port-path-at", "https://example.com:/a@b", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := secrets.ScanString(tt.in)
			got := ""
			if f != nil {
				got = f.Rule
			}
			if got != tt.want {
				t.Fatalf("ScanString(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if f != nil && f.Path != "" {
				t.Errorf("ScanString finding has a path %q", f.Path)
			}
		})
	}
}

func TestScanJSON(t *testing.T) {
	tests := []struct {
		name  string
		doc   string
		rule  string
		path  string
		inKey bool
	}{
		{"clean-record", `{"version":"2.0","workflow_id":"apex-1","state":"plan","vars":{"PLAN_PATH":"/x/plan.md"}}`, "", "", false},
		{"clean-with-secret-word", `{"context":"rotate the secret store","n":[1,2.5e3,true,false,null]}`, "", "", false},
		{"clean-escapes", `{"a":"line\nbreak \u00e9 \/ \"q\""}`, "", "", false},
		{"top-level-string", `"` + ghClassic + `"`, "github-token", "$", false},
		{"vars-value", `{"vars":{"TOKEN":"` + ghClassic + `"}}`, "github-token", "$.vars.TOKEN", false},
		{"array-index", `{"a":{"b":["x","y","` + pgURL + `"]}}`, "url-credentials", "$.a.b[2]", false},
		{"command-as-list", `{"command":["curl","-u","deploy:Hunter2Hunter2","https://api.example.com"]}`, "curl-user", "$", false},
		{"nested-arrays", `[[1],[2,["` + jwtToken + `"]]]`, "jwt", "$[1][1][0]", false},
		{"odd-key", `{"odd key":"` + antKey + `"}`, "anthropic-api-key", `$["odd key"]`, false},
		{"key-with-quote-and-newline", `{"a\"b\n":"` + awsID + `"}`, "aws-access-key-id", `$["a\"b\n"]`, false},
		{"key-with-bidi", `{"x\u202ey":"` + awsID + `"}`, "aws-access-key-id", `$["x\u202ey"]`, false},
		{"digit-first-key", `{"1st":"` + oaProj + `"}`, "openai-api-key", `$["1st"]`, false},
		{"secret-in-key", `{"vars":{"` + ghClassic + `":"x"}}`, "github-token", "$.vars", true},
		{"unicode-escape-hides-prefix", `{"k":"\u0041KIA` + awsID[4:] + `"}`, "aws-access-key-id", "$.k", false},
		{"docker-auth", `{"auths":{"ghcr.io":{"auth":"Ym9iOkh1bnRlcjJIdW50ZXIy"}}}`, "docker-auth", `$.auths["ghcr.io"].auth`, false},
		{"docker-auth-escaped-key", `{"auths":{"r":{"\u0061uth":"Ym9iOkh1bnRlcjJIdW50ZXIy"}}}`, "docker-auth", "$.auths.r.auth", false},
		{"escaped-slashes-in-url", `{"url":"postgres:\/\/user:s3cret@host\/db"}`, "url-credentials", "$.url", false},
		{"password-in-env-list", `{"environment":[{"name":"DB_PASSWORD","value":"Hunter2Hunter2"}]}`, "password-assignment", "$", false},
		{"password-in-env-list-pretty", "{\"env\": [{\n    \"Name\": \"ADMIN_PASSWD\",\n    \"Value\": \"s3cr3t-Pa55\"\n}]}", "password-assignment", "$", false},
		{"aws-secret-by-key", `{"aws":{"secret_access_key":"` + strings.ReplaceAll(awsSecret, "/", `\/`) + `"}}`, "aws-secret-access-key", "$.aws.secret_access_key", false},
		{"aws-secret-by-spaced-key", `{"AWS Secret Access Key":"` + strings.ReplaceAll(awsSecret, "/", `\/`) + `"}`, "aws-secret-access-key", `$["AWS Secret Access Key"]`, false},
		{"password-variable-by-key", `{"env":{"DB_PASS":"hunter2longvalue"}}`, "password-variable", "$.env.DB_PASS", false},
		{"password-variable-escaped-key", `{"env":{"DB_\u0050ASS":"hunter2longvalue"}}`, "password-variable", "$.env.DB_PASS", false},
		{"token-by-key", `{"ci":{"TOKEN":"Ab3dEf6hIj9kLm2nQr5tUv8w"}}`, "token-assignment", "$.ci.TOKEN", false},
		{"aws-session-token-by-key", `{"Credentials":{"SessionToken":"` + strings.ReplaceAll(awsSession, "/", `\/`) + `"}}`, "aws-session-token", "$.Credentials.SessionToken", false},
		{"aws-sha-by-key", `{"aws_secret_access_key":"` + gitSHA + `"}`, "", "", false},
		{"first-in-document-order", `{"a":"` + pgURL + `","b":"` + ghClassic + `"}`, "url-credentials", "$.a", false},
		{"secret-after-numbers", `{"n":-1.5e-3,"m":[0,1],"s":"` + slackBot + `"}`, "slack-token", "$.s", false},
		{"pem-with-escaped-newlines", `{"key":"` + strings.ReplaceAll(pemRSA, "\n", `\n`) + `"}`, "private-key", "$.key", false},
		{"pem-as-list-of-lines", "{\"key\": [\n  \"-----BEGIN OPENSSH " + "PRIVATE KEY-----\",\n  \"b3BlbnNzaC1rZXktdjEAAAAA\"\n]}", "private-key", "$", false},
		{"invalid-json-scanned-as-text", `{"a": ` + ghClassic + `}`, "github-token", "$", false},
		{"truncated-json-scanned-as-text", `{"a":"` + slackHook, "slack-webhook", "$", false},
		{"invalid-json-clean", `{"a": nope}`, "", "", false},
		{"trailing-garbage", `{"a":"x"} {"b":"` + jwtToken + `"}`, "jwt", "$", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := secrets.ScanJSON([]byte(tt.doc))
			if tt.rule == "" {
				if f != nil {
					t.Fatalf("ScanJSON(%s) = %+v, want nil", tt.doc, *f)
				}
				return
			}
			if f == nil {
				t.Fatalf("ScanJSON(%s) = nil, want %s at %s", tt.doc, tt.rule, tt.path)
			}
			if f.Rule != tt.rule || f.Path != tt.path || f.InKey != tt.inKey {
				t.Fatalf("ScanJSON(%s) = %+v, want {%s %s %v}", tt.doc, *f, tt.rule, tt.path, tt.inKey)
			}
		})
	}
}

func TestScanJSONLongAndDeepPaths(t *testing.T) {
	// A long key is cut in the path.
	long := strings.Repeat("k", 500)
	f := secrets.ScanJSON([]byte(`{"` + long + ` x":"` + ghClassic + `"}`))
	if f == nil || len(f.Path) > 120 || !strings.Contains(f.Path, "…") {
		t.Fatalf("long key: %+v", f)
	}
	// A deep path keeps its start and end within the bound.
	doc := strings.Repeat(`{"level":`, 100) + `"` + ghClassic + `"` + strings.Repeat("}", 100)
	f = secrets.ScanJSON([]byte(doc))
	if f == nil || len(f.Path) > 220 || !strings.HasPrefix(f.Path, "$.level…") || !strings.HasSuffix(f.Path, ".level") {
		t.Fatalf("deep path: %+v", f)
	}
	// Deeper than the walker goes: still found, as text.
	doc = strings.Repeat("[", 2000) + `"` + ghClassic + `"` + strings.Repeat("]", 2000)
	f = secrets.ScanJSON([]byte(doc))
	if f == nil || f.Rule != "github-token" || f.Path != "$" {
		t.Fatalf("very deep: %+v", f)
	}
}

// Every known secret, in every position, gives an error that names rule and path and holds
// no piece of the secret.
func TestErrorNeverHoldsTheSecret(t *testing.T) {
	all := []string{awsID, awsSTS, "aws_secret_access_key=" + awsSecret, ghClassic, ghFine, antKey, oaProj,
		oaLegacy, slackBot, slackUser, slackApp, slackHook, jwtToken, pemRSA, pemSSH, pgURL, mongoURL,
		redisURL, httpURL}
	for _, s := range all {
		enc, _ := json.Marshal(s)
		for _, f := range []*secrets.Finding{
			secrets.ScanString(s),
			secrets.ScanJSON(enc),
			secrets.ScanJSON([]byte(`{"vars":{"X":` + string(enc) + `}}`)),
			secrets.ScanJSON([]byte(`{"vars":{` + string(enc) + `:"v"}}`)),
		} {
			if f == nil {
				t.Fatalf("no finding for %q", s)
			}
			var err error = f
			var target *secrets.Finding
			if !errors.As(err, &target) {
				t.Fatal("Finding is not an error")
			}
			msg := err.Error()
			if !strings.Contains(msg, f.Rule) || !strings.Contains(msg, f.Path) ||
				!strings.Contains(msg, "not stored") || !strings.Contains(msg, "reference") {
				t.Errorf("message lacks rule, path or advice: %q", msg)
			}
			// No 8-byte window of the secret may appear (the rule name and scheme excepted).
			core := strings.TrimPrefix(strings.TrimPrefix(s, "aws_secret_access_key="), "-----BEGIN ")
			for i := 0; i+8 <= len(core); i++ {
				if w := core[i : i+8]; strings.Contains(msg, w) && !strings.Contains(f.Rule, w) {
					t.Errorf("message %q holds %q from the secret", msg, w)
					break
				}
			}
		}
	}
}

func TestRulesListed(t *testing.T) {
	want := []string{"aws-access-key-id", "aws-secret-access-key", "github-token", "anthropic-api-key",
		"openai-api-key", "slack-token", "slack-webhook", "private-key", "jwt", "url-credentials"}
	got := secrets.Rules()
	if len(got) < 60 || strings.Join(got[:len(want)], ",") != strings.Join(want, ",") {
		t.Fatalf("Rules() = %v", got)
	}
	seen := map[string]bool{}
	for _, r := range got {
		if seen[r] {
			t.Errorf("rule %s listed twice", r)
		}
		seen[r] = true
	}
}

// Generated tokens of each kind, dropped into random prose, are always found.
func TestGeneratedTokens(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	pick := func(set string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = set[r.IntN(len(set))]
		}
		return string(b)
	}
	mixed := func(n int) string { // guarantee upper, lower and digit
		return "A" + "z" + "7" + pick(alnum, n-3)
	}
	gens := map[string]func() string{
		"aws-access-key-id":     func() string { return "AKIA" + pick("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16) },
		"aws-secret-access-key": func() string { return "aws_secret_access_key: " + "Ab1" + pick(alnum+"/+", 37) },
		"github-token":          func() string { return "ghp_" + pick(alnum, 36) },
		"anthropic-api-key":     func() string { return "sk-ant-api03-" + mixed(93) + "AA" },
		"openai-api-key":        func() string { return "sk-proj-" + mixed(120) },
		"slack-token": func() string {
			return "xoxb-" + pick("0123456789", 12) + "-" + pick("0123456789", 13) + "-" + pick(alnum, 24)
		},
		"slack-webhook": func() string {
			return "https://hooks.slack.com/services/T" + pick(alnum, 8) + "/B" + pick(alnum, 8) + "/" + pick(alnum, 24)
		},
		"jwt": func() string { return "eyJ" + pick(alnum, 30) + ".eyJ" + pick(alnum, 60) + "." + pick(alnum+"-_", 43) },
		"url-credentials": func() string {
			return "postgresql://" + pick(alnum, 6) + ":" + pick(alnum, 12) + "@db.internal:5432/app"
		},
	}
	n := 200
	if testing.Short() {
		n = 20
	}
	for rule, gen := range gens {
		for i := 0; i < n; i++ {
			tok := gen()
			s := "before, " + tok + " after."
			f := secrets.ScanString(s)
			if f == nil || f.Rule != rule {
				t.Fatalf("%s: ScanString(%q) = %v", rule, s, f)
			}
		}
	}
}

func FuzzScan(f *testing.F) {
	for _, s := range []string{"", "plain", awsID, ghClassic, pgURL, jwtToken, pemRSA, "sk-", "://:@",
		`{"a":"b"}`, `{"` + ghClassic + `":1}`, "\u0041KIA", "xoxb-1-2-abcdefgh"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		direct := secrets.ScanString(s)
		// JSON is UTF-8: the encoder turns invalid bytes into U+FFFD, so compare with that.
		enc, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var decoded string
		if err := json.Unmarshal(enc, &decoded); err != nil {
			t.Fatal(err)
		}
		want := secrets.ScanString(decoded)
		if got := secrets.ScanJSON(enc); !sameRule(got, want) || (got != nil && got.Path != "$") {
			t.Fatalf("ScanJSON(%s) = %v, ScanString = %v", enc, got, want)
		}
		if got := secrets.ScanJSON([]byte(`{"k":[` + string(enc) + `]}`)); !sameRule(got, want) || (got != nil && got.Path != "$.k[0]") {
			t.Fatalf("nested: %v, want %v", got, want)
		}
		if got := secrets.ScanJSON([]byte(`{` + string(enc) + `:0}`)); !sameRule(got, want) || (got != nil && !got.InKey) {
			t.Fatalf("key: %v, want %v", got, want)
		}
		// The raw bytes as a document: never panics, and text scanning is the fallback.
		_ = secrets.ScanJSON([]byte(s))
		if direct == nil {
			return
		}
		rule, span := secrets.MatchSpan(s)
		if rule != direct.Rule || span == "" {
			t.Fatalf("MatchSpan(%q) = %q %q, ScanString found %s", s, rule, span, direct.Rule)
		}
		// The span may end with the boundary character after the secret; leave it out.
		core := span[:len(span)-1]
		if len(core) >= 4 {
			for _, f := range []*secrets.Finding{direct, secrets.ScanJSON([]byte(`{"k":{` + string(enc) + `:[` + string(enc) + `]}}`))} {
				if f != nil && strings.Contains(f.Error(), core) {
					t.Fatalf("message %q holds the secret %q", f.Error(), core)
				}
			}
		}
	})
}

func sameRule(a, b *secrets.Finding) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Rule == b.Rule
}

// The decoder agrees with encoding/json on every escape, including surrogate pairs and lone
// surrogates.
func TestUnescapeMatchesEncodingJSON(t *testing.T) {
	bodies := []string{
		`plain`, `\"q\" \\ \/ \b\f\n\r\t`, `\u00e9\u65e5`, `\ud83d\ude80 rocket`, `\ud800 lone high`,
		`\udc00 lone low`, `\ud800\u0041`, `\ud83d\ud83d\ude80`, `\u0041KIA`, `end\u20ac`, `\u002F\u002f`,
	}
	for _, body := range bodies {
		var want string
		if err := json.Unmarshal([]byte(`"`+body+`"`), &want); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if got := secrets.Unescape(body); got != want {
			t.Errorf("Unescape(%s) = %q, want %q", body, got, want)
		}
	}
}

func TestScanJSONMalformed(t *testing.T) {
	for _, doc := range []string{``, ` `, `{"a" "b"}`, `{"a":1,}`, `[1 2]`, `{1:2}`, `"unterminated`, `{"a":"x` + "\x01" + `"}`,
		`{"a":tru}`, `[`, `{`, `{"a":`, `[1,]`, `{"a":1 "b":2}`, `nul`, `-`, `{"a":[}`} {
		if f := secrets.ScanJSON([]byte(doc)); f != nil {
			t.Errorf("clean malformed %q: %v", doc, f)
		}
		for _, s := range []string{ghClassic, pgURL} {
			bad := strings.Replace(doc, `"a"`, `"`+s+`"`, 1)
			if !strings.Contains(bad, s) {
				bad = doc + " " + s
			}
			if f := secrets.ScanJSON([]byte(bad)); f == nil {
				t.Errorf("secret in malformed %q not found", bad)
			}
		}
	}
}

// Every shape of the shared hostile corpus is found by its rule, alone, in prose, split by
// invisible characters, and inside JSON; no ordinary text is found.
func TestCorpus(t *testing.T) {
	shapes := secrettest.Shapes()
	if len(shapes) < 40 {
		t.Fatalf("only %d shapes", len(shapes))
	}
	rules := map[string]bool{}
	for _, sh := range shapes {
		rules[sh.Rule] = true
		enc, _ := json.Marshal(sh.Text)
		mid := len(sh.Core) / 2
		split := strings.Replace(sh.Text, sh.Core, sh.Core[:mid]+"\u200b"+sh.Core[mid:], 1)
		for _, in := range []struct {
			how  string
			find *secrets.Finding
		}{
			{"alone", secrets.ScanString(sh.Text)},
			{"in prose", secrets.ScanString("note: " + sh.Text + " (from the deploy)")},
			{"split by U+200B", secrets.ScanString(split)},
			{"split by U+202E", secrets.ScanString(strings.Replace(split, "\u200b", "\u202e", 1))},
			{"in JSON", secrets.ScanJSON([]byte(`{"vars":{"X":` + string(enc) + `}}`))},
		} {
			if in.find == nil || in.find.Rule != sh.Rule {
				t.Errorf("%s %s: got %v, want %s", sh.Name, in.how, in.find, sh.Rule)
				continue
			}
			if strings.Contains(in.find.Error(), sh.Core[:min(len(sh.Core), 12)]) {
				t.Errorf("%s: the error holds the secret", sh.Name)
			}
		}
	}
	if len(rules) < 40 {
		t.Errorf("the corpus covers %d rules, want at least 40", len(rules))
	}
	for _, s := range secrettest.Ordinary() {
		if f := secrets.ScanString(s); f != nil {
			t.Errorf("false positive %s on %q", f.Rule, s)
		}
		enc, _ := json.Marshal(s)
		if f := secrets.ScanJSON([]byte(`{"context":` + string(enc) + `}`)); f != nil {
			t.Errorf("false positive %s in JSON on %q", f.Rule, s)
		}
	}
}

// Base64 of binary data full of small integers (a protobuf, a float array, an image) has runs
// of A, the encoding of zero bits: "EAAA" is 16 then zeros. No prefix of a provider's token
// may make such a run a secret.
func TestBase64OfBinaryIsOrdinary(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 2000 {
		var b []byte
		for range 80 {
			v := uint32(r.IntN(1 << r.IntN(24)))
			if n%2 == 0 {
				b = binary.LittleEndian.AppendUint32(b, v)
			} else {
				b = binary.BigEndian.AppendUint32(b, v)
			}
		}
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			s := enc.EncodeToString(b)
			if f := secrets.ScanString(s); f != nil {
				_, span := secrets.MatchSpan(s)
				t.Fatalf("false positive %s on base64 of integers: %.40s...", f.Rule, span)
			}
		}
	}
}

// A document refused for a repeated key is refused for the secret it holds instead, and
// InRefusal finds none in an ordinary repeated key or for another refusal.
func TestInRefusal(t *testing.T) {
	for _, c := range []struct {
		doc  string
		want bool
	}{
		{`{"a":{"` + ghClassic + `":1,"` + ghClassic + `":2}}`, true},
		{`{"` + ghClassic[:20] + `\u200b` + ghClassic[20:] + `":1,"` + ghClassic[:20] + "\u200b" + ghClassic[20:] + `":2}`, true},
		{`{"plan":1,"plan":2}`, false},
		{`{"plan":"` + ghClassic + `",}`, false}, // a syntax error quotes nothing
	} {
		err := strictjson.Check([]byte(c.doc))
		if err == nil {
			t.Fatalf("Check accepted %s", c.doc)
		}
		if f := secrets.InRefusal([]byte(c.doc), err); (f != nil) != c.want {
			t.Errorf("InRefusal(%.40s) = %v, want a finding: %v", c.doc, f, c.want)
		}
	}
}

// Text full of a rule's keyword where no match can end (a command name repeated, a flag
// repeated) costs each keyword a short look, not a regexp run over the rule's whole window:
// "curl " repeated over 300 KB took a second, some ten thousand times plain text, when the
// command was the keyword and its regexp read up to the flag. Counted, not timed: the bytes
// the regexps read, a few a byte, and the bytes the checks before a keyword read around it
// (the command before a flag, a .pgpass host, a SAS query), at most a few hundred a byte:
// each reads a bounded stretch, where reading back to the line's start would cost a flood on
// one line the square of its length.
func TestKeywordFloodsReadLittle(t *testing.T) {
	const n = 32 << 10
	for _, unit := range []string{"curl ", "curl -u ", "mysql ", "mysql -p ", "sshpass ", "sshpass -p ", " -u", " -p",
		"curl -u a", "machine a login b ", "eyJ/", "eyJ ", "eyJhbGciOiJIUzI1NiJ9 ", "x eyJ" + strings.Repeat("A", 3000),
		"default ", "default login ", "default login a password ", ":5432:", ":5433:", ":6432:", ":*:", "h:5432:",
		"h:*:*:*:", ":_auth=", ":_authToken=a", `"h:*:`, "'h:*:", " h:*:", "\nh:*:x", "h:5432:d:u:", "a.b-c" + strings.Repeat("x", 300) + ":6432:", "token ", "TOKEN ?= ",
		`"name":"X_TOKEN","value":`, `{"name":"GITHUB_TOKEN","value":"x"}`, "?sv=1&sig=", "&sig=",
		`"curl", "-u", `, `"-u","`, `"login", "-p", `, `'mysql','-p`, `",` + strings.Repeat(" ", 16) + `"-u`,
		"cookie: ", "Cookie: sid=x; ", "--password ", "a --password x", `"--password", "`, "cookie: " + strings.Repeat("sid=x; ", 400)} {
		s := strings.Repeat(unit, n/len(unit))
		if reads := secrets.RegexpReads(s); reads > 6*len(s) {
			t.Errorf("%q repeated over %d bytes: the regexps read %d bytes, %d a byte", unit, len(s), reads, reads/len(s))
		}
		if around := secrets.ReadAround(s); around > 400*len(s) {
			t.Errorf("%q repeated over %d bytes: the checks around keywords read %d bytes, %d a byte", unit, len(s), around, around/len(s))
		}
	}
}

// A flood of a named rule's keyword, assigned, where no value can end (token=token=...,
// DISCORD_BOT_TOKEN=DISCORD_BOT_TOKEN=..., pwd=pwd=...), hands the regexps a few bytes past
// each keyword, not a value's 128: with the value's whole length in the expression, each
// keyword cost a long run of the engine, 300 KB of token= about 220 ms, of pwd= 600 ms. A URL's "://" (or its
// encoding) repeated reads no further than the next one, not on to an @ that never comes.
// Counted, not timed: the bytes Go's engines read from the windows they are given, and
// the bytes the checks before them read in Go (see lookedAhead).
func TestAssignmentFloodsReadLittle(t *testing.T) {
	const n = 32 << 10
	for _, unit := range assignmentFloods {
		s := strings.Repeat(unit, n/len(unit))
		if reads := secrets.RegexpReads(s); reads > 6*len(s) {
			t.Errorf("%q repeated over %d bytes: the regexps read %d bytes, %d a byte", unit, len(s), reads, reads/len(s))
		}
		lookedAhead(t, unit, s)
	}
}

var assignmentFloods = []string{"token=", "TOKEN=", "token: ", "a.token=", "session_token=", "DISCORD_BOT_TOKEN=",
	"api_key=", "discord=", "secret=", "client_secret: ", "secret_key = ", `"api_key": "`, "apiKey=",
	"auth: {token: ", "credentials=", `"auth": "`, "x://a:", "%3A%2F%2F", "https%3A%2F%2Fu%3A",
	strings.Repeat("%3A%2F%2F", 40) + "%40 ", "DB_PASS=", "pwd=", "a_pw=", "pass=", "SECRET_KEY='", "aKey=\"", "_key=", `"pass": "`, "password=a/", "passphrase:a/b"}

// A flood costs each keyword a short program's steps, not only a few bytes: Go's engine may
// step through every instruction of a program at each byte it reads, and credential-field's
// expression, its eight members written out, was 4,300 instructions, 5,000 to 21,000 for each
// byte of a flood of holders (auth:, credentials=, access: a) where the other rules' floods
// cost at most about 2,000. Counted: the bytes read, each times its program's instructions.
func TestFloodsWorkLittle(t *testing.T) {
	const n = 32 << 10
	for _, unit := range append(assignmentFloods, "auth: ", "auth: {", `auth: {a: "b", `, "auth:\n  a: b\n",
		`"auth": {"a": 1, `, "access: a\n", `credentials: {"type": "x",`, "auth = x\n", "-----BEGIN PRIVATE KEY-----\n", " -----BEGIN", "---- BEGIN ",
		"default login a password ", "Authorization: Basic ", "password: ", "machine a login b ",
		`"curl", "-u", "a`, `"login", "-p", "`) {
		s := strings.Repeat(unit, n/len(unit))
		if work := secrets.RegexpWork(s); work > 2500*len(s) {
			t.Errorf("%q repeated over %d bytes: the regexps stepped up to %d a byte", unit, len(s), work/len(s))
		}
	}
}

// lookedAhead fails t when the checks around the keywords of s (unit repeated) read more
// than 16 bytes for each of its bytes: they run at every keyword of a flood, in Go, and each
// once read its whole stretch afresh (up to 320 bytes: secret1= repeated read 98 a byte,
// 0.3 s a MB where plain text takes a fiftieth); a step of the regexps above costs less
// than the byte it counts.
func lookedAhead(t *testing.T, unit, s string) {
	t.Helper()
	if around := secrets.ReadAround(s); around > 16*len(s) {
		t.Errorf("%q repeated over %d bytes: the checks around keywords read %d bytes, %d a byte", unit, len(s), around, around/len(s))
	}
}

// A flood of a credential's name assigned where no value it may take can be one (no digit
// within reach, which every credential value holds; "secret" with neither "aws" before it nor
// "access key" after it) runs neither provider-credential's regexp nor aws-secret-access-key's
// nor token-assignment's: a-secret= repeated stepped about 920 a byte through the first two,
// x-token= 480 through the third, at every keyword, for values their checks then refused.
func TestValuelessFloodsWorkLittle(t *testing.T) {
	const n = 32 << 10
	for _, unit := range []string{"a-secret=", "secret=", "SECRET=", "a_secret=", "client_secret: ", "a-api_key=",
		"api_key=", `"api_key": "`, "discord=", "apiKey=", "x-token=", "token=", "TOKEN: "} {
		s := strings.Repeat(unit, n/len(unit))
		if work := secrets.RegexpWork(s); work > 50*len(s) {
			t.Errorf("%q repeated over %d bytes: the regexps stepped up to %d a byte", unit, len(s), work/len(s))
		}
		lookedAhead(t, unit, s)
	}
}

// A flood of a credential's name assigned with a digit within reach of every keyword, where
// no value can end (a-secret=1, x-token=1, aws_secret=1 repeated: one run of a value's bytes
// that never stops, or runs too short to hold one), runs neither provider-credential's
// regexp nor token-assignment's, nor does session_token= repeated run aws-session-token's,
// whose value is a run of 40 or more: a-secret=1 repeated stepped about 660 a byte, and a
// 1 MB tool argument of it took five seconds to check where plain text takes a tenth.
func TestRunlessFloodsWorkLittle(t *testing.T) {
	const n = 32 << 10
	for _, unit := range []string{"a-secret=1", "secret1=", "aws_secret=1", "a_secret=1 ", "client_secret: 1",
		`"api_key": "1`, "x-token=1", "TOKEN: 1", "a-secret=a1b2", "1 secret=", "session_token=", "session_token=1"} {
		s := strings.Repeat(unit, n/len(unit))
		if work := secrets.RegexpWork(s); work > 50*len(s) {
			t.Errorf("%q repeated over %d bytes: the regexps stepped up to %d a byte", unit, len(s), work/len(s))
		}
		lookedAhead(t, unit, s)
	}
}

// A flood of a provider's or a credential's name glued by - or _, with no assignment anywhere
// (-secret, _SECRET, asana_, _datadog repeated), runs no regexp: each keyword's name is read
// in Go first. provider-credential's program stepped through five words of the name at each
// keyword, about 1,500 steps a byte, and 256 KB took two seconds where plain text takes ten
// milliseconds (BenchmarkScanFlood times it).
func TestNameFloodsWorkLittle(t *testing.T) {
	const n = 32 << 10
	for _, unit := range []string{"-secret", "_secret", "_SECRET", "-SECRET", "x_secret_", "asana_", "_asana", "-asana",
		"_datadog", "datadog_", "-api_key", "client_secret-", "secret_key-", "AsanaAsana_"} {
		s := strings.Repeat(unit, n/len(unit))
		if work := secrets.RegexpWork(s); work > 50*len(s) {
			t.Errorf("%q repeated over %d bytes: the regexps stepped up to %d a byte", unit, len(s), work/len(s))
		}
		if around := secrets.ReadAround(s); around > 50*len(s) {
			t.Errorf("%q repeated over %d bytes: the checks around keywords read %d bytes, %d a byte", unit, len(s), around, around/len(s))
		}
	}
}

// A rule's window holds the longest match its regexp can make (in ASCII text), so cutting it
// there changes no answer; a rule whose regexp has no bound relies on its keyword's rarity
// or on a name's length (provider-credential's).
func TestWindowsHoldTheLongestMatch(t *testing.T) {
	names, span, longest := secrets.Spans()
	for i, name := range names {
		if longest[i] > span[i] {
			t.Errorf("%s: a match may reach %d bytes past its keyword, its window %d", name, longest[i], span[i])
		}
	}
}

// A rule's regexp is handed no more text than its longest match and a byte: Go's backtracker
// clears a bitmap the size of its input at every run, and "1Q~" repeated, each with 1024
// bytes for a 40-byte match, cost a hundred times plain text.
func TestWindowsFitTheMatch(t *testing.T) {
	longest := secrets.Longest()
	texts := []string{strings.Repeat("1Q~", 300), strings.Repeat(" AKIA", 300), strings.Repeat("MTAw", 300)}
	for _, sh := range secrettest.Shapes() {
		texts = append(texts, sh.Text+strings.Repeat(" and so on", 120))
	}
	for _, s := range texts {
		for rule, w := range secrets.Windows(s) {
			if n := longest[rule]; n >= 0 && w > n+1 {
				t.Errorf("%s: a window of %d bytes for a match of at most %d, in %.40q", rule, w, n, s)
			}
		}
	}
}

// A list under a credential's name holds credentials: each item is read with the name, as a
// member's value is, and the path names the item.
func TestListUnderCredentialName(t *testing.T) {
	const key = "Qk7aB9cD3eF5gH7jK9mN1pQ3rS5tU7"
	for _, c := range []struct{ doc, rule, path string }{
		{`{"password": ["Tr0ub4dor&3x"]}`, "password-assignment", "$.password[0]"},
		{`{"db": {"DB_PASS": ["x", "Tr0ub4dor&3x"]}}`, "password-variable", "$.db.DB_PASS[1]"},
		{`{"api_key": ["` + key + `"]}`, "provider-credential", "$.api_key[0]"},
		{`{"tokens": ["` + key + `", "` + key + `x"]}`, "token-assignment", "$.tokens[0]"},
		{`{"p\u0061ssword": ["Tr0ub4dor&3x"]}`, "password-assignment", "$.password[0]"},
	} {
		if f := secrets.ScanJSON([]byte(c.doc)); f == nil || f.Rule != c.rule || f.Path != c.path {
			t.Errorf("ScanJSON(%s) = %v, want %s at %s", c.doc, f, c.rule, c.path)
		}
	}
	for _, doc := range []string{
		`{"passwords": ["Tr0ub4dor&3x"]}`,
		`{"password_rules": ["min-8-chars", "Must be at least 8 characters"]}`,
		`{"api_keys": ["prod", "staging"]}`,
		`{"token": [1234, 5678]}`,
		`{"password": [true, null]}`,
		`{"password": [["Tr0ub4dor&3x"]]}`,
		`{"api_key": ["see the vault entry"], "password": ["${DB_PASSWORD}"]}`,
	} {
		if f := secrets.ScanJSON([]byte(doc)); f != nil {
			t.Errorf("ScanJSON(%s) = %v, want nil", doc, f)
		}
	}
}

// A secret one level down, under a member that names it ({"password": {"value": ...}}) or
// under a holder of credentials ({"auth": {"token": ...}}), is found with its path, in JSON
// (whatever the escapes) and in text (YAML); ordinary data of the same shapes passes.
func TestNestedSecrets(t *testing.T) {
	const key = "Qk7aB9cD3eF5gH7jK9mN1pQ3rS5tU7"
	for _, c := range []struct{ doc, rule, path string }{
		{`{"password":{"value":"Tr0ub4dor&3x"}}`, "password-assignment", "$.password.value"},
		{`{"db":{"Password": {"Value": "Tr0ub4dor&3x", "rotated": true}}}`, "password-assignment", "$.db.Password.Value"},
		{`{"pass\u0077ord":{"value":"Tr0ub4dor&3x"}}`, "password-assignment", "$.password.value"},
		{`{"password":{"current":"Tr0ub4dor&3x"}}`, "password-assignment", "$.password.current"},
		{`{"credentials":{"password":"Tr0ub4dor&3x"}}`, "password-assignment", "$.credentials.password"},
		{`{"api_key":{"value":"` + key + `"}}`, "provider-credential", "$.api_key.value"},
		{`{"client_secret":{"value":"` + key + `"}}`, "provider-credential", "$.client_secret.value"},
		{`{"auth":{"key":"` + key + `"}}`, "credential-field", "$.auth.key"},
		// A token is found by its name alone, whatever holds it.
		{`{"auth":{"token":"` + key + `"}}`, "token-assignment", "$.auth.token"},
		{`{"service":{"auth": {"key":"` + key + `", "type":"basic"}}}`, "credential-field", "$.service.auth.key"},
		{`{"credentials":{"key":"` + key + `"}}`, "credential-field", "$.credentials.key"},
		{`{"oauth":{"secret":"` + key + `"}}`, "provider-credential", "$.oauth.secret"},
		{`{"note":"password:\n  value: Tr0ub4dor&3x"}`, "password-assignment", "$.note"},
		{`{"note":"auth:\n  key: ` + key + `"}`, "credential-field", "$.note"},
		// The credential need not be the holder's first member, nor its text unescaped.
		{`{"auth": {"type": "basic", "key": "` + key + `"}}`, "credential-field", "$.auth.key"},
		{`{"credentials":{"user":"bob","region":"eu-west-1","key":"` + key + `"}}`, "credential-field", "$.credentials.key"},
		{`{"auth":{"key":"\u0051` + key[1:] + `"}}`, "credential-field", "$.auth.key"},
		{`{"\u0061uth":{"key":"` + key + `"}}`, "credential-field", "$.auth.key"},
		{`{"a\u0075th":{"type":"basic","key":"` + key + `"}}`, "credential-field", "$.auth.key"},
	} {
		f := secrets.ScanJSON([]byte(c.doc))
		if f == nil || f.Rule != c.rule || f.Path != c.path {
			t.Errorf("ScanJSON(%s) = %v, want %s at %s", c.doc, f, c.rule, c.path)
		}
	}
	for _, s := range []string{"password:\n  value: Tr0ub4dor&3x", "auth:\n  token: " + key, "credentials:\n  key: " + key,
		`password = {value = "Tr0ub4dor&3x"}`, "auth:\n  type: basic\n  token: " + key,
		`{"auth": {"type": "basic", "user": 'bob', "token": "` + key + `"}}`,
		`{"auth":{"token":"` + strings.Repeat("ab12", 10) + `"}}`} { // a token's name says hex is one
		if secrets.ScanString(s) == nil {
			t.Errorf("ScanString(%q) = nil", s)
		}
	}
	for _, doc := range []string{
		`{"password":{"value":"","required":true,"min_length":12}}`,
		`{"password":{"value":"${DB_PASSWORD}"}}`,
		`{"password":{"value":"********"}}`,
		`{"password":{"label":"Password:","placeholder":"Enter your password"}}`,
		`{"password":{"text":"Password:"}}`,
		`{"password":{"value":"changeme"}}`,
		`{"password":{"reset_url":"/account/reset","policy":"min 12 chars"}}`,
		`{"auth":{"type":"oauth2","token_url":"https://auth.example.com/oauth/token"}}`,
		`{"auth":{"token":"<token>","method":"bearer"}}`,
		`{"auth":{"token_sha":"` + strings.Repeat("ab12", 10) + `"}}`,
		`{"auth":{"token_ttl":3600,"token":"see the vault entry"}}`,
		`{"author":{"key":"` + key + `"}}`,
		`{"auth":{"key":"123e4567-e89b-12d3-a456-426614174000"}}`,
		`{"credentials":{"key":"db/prod/credentials"}}`,
		`{"api":{"key":"users_by_email_index"}}`,
		`{"note":"OAuth:\n  token endpoint: https://example.com/token"}`,
		`{"context":"Add OAuth login, store the auth token in the keychain"}`,
		`{"auth":{"type":"basic","note":"the token is in the vault"}}`,
		`{"auth":{"type":"basic"},"key":"` + key + `x"}`, // "key" alone names nothing
	} {
		if f := secrets.ScanJSON([]byte(doc)); f != nil {
			t.Errorf("ScanJSON(%s) = %v, want nil", doc, f)
		}
	}
}

// A holder's words are common in prose: only where one may be a name (a key, an assignment)
// does it make the JSON scan read a document member by member.
func TestHolderWordsInProseWalkNothing(t *testing.T) {
	for _, doc := range []string{
		`{"context":"Add OAuth login to the web app"}`,
		`{"note":"the author has access to the refresh queue and the credentials page"}`,
		`{"note":"authentication, accessibility, refreshed"}`,
	} {
		if secrets.WalksMembers(doc) {
			t.Errorf("%s: its members are read one by one", doc)
		}
	}
	for _, doc := range []string{`{"auth":{}}`, `{"a":"access = x"}`, `{"credentials" : 1}`, `{"oauth2":{}}`, "auth:\n  x: 1"} {
		if !secrets.WalksMembers(doc) {
			t.Errorf("%s: its members are not read", doc)
		}
	}
}

// Cairn's L2 lines quote text with typographic quotes (Completed DEBUG for “context”:
// “outcome”): a name and a value quoted so are an assignment as they are with ASCII quotes.
func TestTypographicQuotesAssign(t *testing.T) {
	const key = "Qk7aB9cD3eF5gH7jK9mN1pQ3rS5tU7"
	for _, c := range []struct{ s, rule string }{
		{"Completed DEBUG for “DB password”: “Tr0ub4dor&3x”", "password-assignment"},
		{"Completed DEBUG for ‘passphrase’: ‘Tumble Orbit Falcon Pickle 4821’", "password-assignment"},
		{"Completed APEX for “DATADOG_API_KEY”: “" + key + "”", "provider-credential"},
	} {
		if f := secrets.ScanString(c.s); f == nil || f.Rule != c.rule {
			t.Errorf("ScanString(%q) = %v, want %s", c.s, f, c.rule)
		}
	}
	clean(t,
		"Completed DEBUG for “reset the DB password”: “done, see the vault entry”",
		"Completed APEX for “rotate the password”: “rotated”",
		"the “password” field: “required”",
	)
}

// A password said in prose ("the password is ...") is a password as an assignment is, when
// the value looks like one: letters and digits and another kind of character. Prose that says
// what a password is like, is for or is done with passes.
func TestPasswordInProse(t *testing.T) {
	found(t, "password-assignment",
		"the password is hunter2-long-value",
		"the password is hunter2-long-value.",
		"The DB password was Tr0ub4dor&3x, rotate it",
		"password is: Tr0ub4dor&3x",
		"the password for admin@db1 is Tr0ub4dor&3x",
		"the passphrase is now s3cret_Pass-8",
		"my passwd is x9!kL2#pQ",
		`the password is "hunter2-long-value"`,
		"the password is “Tr0ub4dor&3x”",
		"password set to Tr0ub4dor&3x",
		"PASSWORD IS HUNTER2-LONG-VALUE",
	)
	clean(t,
		"the password field is validated",
		"the password is validated on submit",
		"the password is stored in the vault",
		"the password is at least 12 characters long",
		"the password is hashed with sha256",
		"the password is sha256-hashed before it is stored",
		"the password is argon2id-hashed",
		"the password is UTF-8-encoded first",
		"the password is min-8-chars",
		"the password is $DB_PASSWORD",
		"the password is ********",
		"the password is 12345678",
		"the password is in 1Password",
		"password is required (see RFC-7617)",
		"the password isolation2-test passes",
		"password is C:\\Users\\dev\\pw.txt",
		"the password reset flow v2-beta is done",
		"the password was reset",
		"a password is-not-empty check",
	)
}

// An Azure shared access signature (a SAS URL or a connection string's
// SharedAccessSignature) grants access by its sig= parameter, found where sv= (the service
// version every SAS carries) comes before it; a sig= without it, or a reference, passes.
func TestAzureSAS(t *testing.T) {
	const sig = "Qk7aB9cD3eF5gH7jK9mN1pQ3rS5tU7vW9xY1zA3bC5d%3D"
	for _, s := range []string{
		"https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&srt=co&sp=r&se=2026-12-01T00:00:00Z&spr=https&sig=" + sig,
		"BlobEndpoint=https://acct.blob.core.windows.net/;SharedAccessSignature=sv=2020-08-04&ss=b&srt=sco&sp=rwdlacx&sig=" + sig,
		`{"sas":"?sv=2021-06-08&sr=c&sig=` + sig + `&se=2026-12-01"}`,
	} {
		if f := secrets.ScanString(s); f == nil || f.Rule != "azure-sas-token" {
			t.Errorf("ScanString(%q) = %v, want azure-sas-token", s, f)
		}
		if f := secrets.ScanJSON([]byte(strconv.Quote(s))); f == nil || f.Rule != "azure-sas-token" {
			t.Errorf("ScanJSON(%q) = %v, want azure-sas-token", s, f)
		}
	}
	clean(t,
		"https://example.com/verify?sig="+sig,
		"https://acct.blob.core.windows.net/c?sv=2022-11-02&sig=${SAS_SIG}",
		"https://acct.blob.core.windows.net/c?sv=2022-11-02&sig=short",
		"the sv= and sig= parameters of a SAS URL",
	)
}

// A URL with credentials may be percent-encoded whole, as a query parameter (a redirect or
// a callback URL): scheme%3A%2F%2Fuser%3Apassword%40host is user:password@host.
func TestURLCredentialsEncoded(t *testing.T) {
	found(t, "url-credentials",
		"https://example.com/login?next=https%3A%2F%2Fdeploy%3ATr0ub4dor%263x%40db.example.com%2Fapp",
		"redis%3a%2f%2f%3ahunter2pass%40cache.internal%3a6379",
		"postgresql%3A%2F%2Fapp%3AQk7aB9cD3eF5%40%5B::1%5D",
	)
	clean(t,
		"https%3A%2F%2Fexample.com%2Fpath%3Fa%3Db",
		"https%3A%2F%2Fuser%40example.com",
		"https%3A%2F%2Fhost%3A8080%2Fdocs%40v2",
		"https%3A%2F%2Fdeploy%3A%24DB_PASS%40db.example.com",
		"mailto%3Abob%40example.com",
	)
}

// A key on the path to a finding can itself be a secret that only its parent's key makes one
// (a password held as a key under "password", of letters and digits: one with a symbol is
// refused itself, see TestPasswordHeldAsKey) or a random credential-shaped key: the path
// names it by a redacted segment, never by its text.
func TestPathWithholdsSecretShapedKeys(t *testing.T) {
	pw := "Xk9mQ2vLp7zW"
	random := "q7Zr4Lw9Tx2Bn8Vd5Kp3"
	tests := []struct{ doc, path, withheld string }{
		{`{"password": {"` + pw + `": {"t": "` + ghClassic + `"}}}`, `$.password[…].t`, pw},
		{`{"db": {"password": {"` + pw + `": ["` + ghClassic + `"]}}}`, `$.db.password[…][0]`, pw},
		{`{"vars": {"` + random + `": {"t": "` + ghClassic + `"}}}`, `$.vars[…].t`, random},
		{`{"vars": {"HOME": {"t": "` + ghClassic + `"}}}`, `$.vars.HOME.t`, ""},
		{`{"password": {"hint": {"t": "` + ghClassic + `"}}}`, `$.password.hint.t`, ""},
	}
	for _, tt := range tests {
		f := secrets.ScanJSON([]byte(tt.doc))
		if f == nil || f.Path != tt.path {
			t.Errorf("ScanJSON(%s) = %+v, want path %s", tt.doc, f, tt.path)
			continue
		}
		if tt.withheld != "" && strings.Contains(f.Error(), tt.withheld) {
			t.Errorf("refusal for %s repeats %q: %s", tt.doc, tt.withheld, f.Error())
		}
	}
}

// found checks that ScanString finds each of texts by rule.
func found(t *testing.T, rule string, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if f := secrets.ScanString(s); f == nil || f.Rule != rule {
			t.Errorf("ScanString(%q) = %v, want %s", s, f, rule)
		}
	}
}

// clean checks that ScanString finds nothing in any of texts.
func clean(t *testing.T, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if f := secrets.ScanString(s); f != nil {
			t.Errorf("ScanString(%q) = %v, want nil", s, f)
		}
	}
}

// Refusal is the one wording of a refusal: where the finding has a path it says the path,
// whatever place the caller names; Error is Refusal("") and the advice.
func TestRefusalWording(t *testing.T) {
	text := secrets.ScanString("use " + ghClassic)
	doc := secrets.ScanJSON([]byte(`{"note":"` + ghClassic + `"}`))
	key := secrets.ScanJSON([]byte(`{"vars":{"` + ghClassic + `":"v"}}`))
	for _, c := range []struct {
		f           *secrets.Finding
		place, want string
	}{
		{text, "the name", "secret found (github-token) in the name: secrets are not stored"},
		{text, "", "secret found (github-token): secrets are not stored"},
		{doc, "the name", "secret found (github-token) at $.note: secrets are not stored"},
		{key, "", "secret found (github-token) in an object key at $.vars: secrets are not stored"},
	} {
		if got := c.f.Refusal(c.place); got != c.want {
			t.Errorf("Refusal(%q) = %q, want %q", c.place, got, c.want)
		}
		if err := c.f.Error(); !strings.HasPrefix(err, c.f.Refusal("")+"; keep it in an environment variable") {
			t.Errorf("Error() = %q", err)
		}
	}
}

// A password held as an object key under a password's name ({"pwd": {"summer(2024)!": 1}})
// is the name's value: refused as such, in the key. A key is read so only when no name has
// its shape, a digit and a symbol a name does not hold: ASP.NET Identity's password policy, a
// JSON schema's and a form's UI schema's keywords, and hashers' names pass.
func TestPasswordHeldAsKey(t *testing.T) {
	for _, c := range []struct{ doc, rule, path string }{
		{`{"pwd": {"summer(2024)!": 1}}`, "password-variable", "$.pwd"},
		{`{"password": {"Tr0ub4dor&3x": true}}`, "password-assignment", "$.password"},
		{`{"db": {"DB_PASS": {"Xk9#mQ2vLp7z": {"rotated": "2026-01-01"}}}}`, "password-variable", "$.db.DB_PASS"},
		{`{"p\u0061ssword": {"Tr0ub4dor&3x": 1}}`, "password-assignment", "$.password"},
		{`{"password": {"Tr0ub4dor\u00263x": 1}}`, "password-assignment", "$.password"},
	} {
		f := secrets.ScanJSON([]byte(c.doc))
		if f == nil || f.Rule != c.rule || f.Path != c.path || !f.InKey {
			t.Errorf("ScanJSON(%s) = %+v, want %s in a key at %s", c.doc, f, c.rule, c.path)
			continue
		}
		if strings.Contains(f.Error(), "2024") || strings.Contains(f.Error(), "Tr0ub") || strings.Contains(f.Error(), "Xk9") {
			t.Errorf("refusal for %s repeats the key: %s", c.doc, f.Error())
		}
	}
	for _, doc := range []string{
		`{"Password": {"RequireDigit": true, "RequiredLength": 12, "RequireNonAlphanumeric": false, "RequiredUniqueChars": 1}}`,
		`{"properties": {"password": {"type": "string", "minLength": 12, "maxLength": 128, "writeOnly": true}}}`,
		`{"password": {"ui:widget": "password", "ui:autocomplete": "new-password", "ui:help": "12 characters"}}`,
		`{"password": {"argon2id": {"memory": 65536}, "pbkdf2_sha256": {"iterations": 600000}, "bcrypt-sha256": {}}}`,
		`{"password": {"$ref": "#/definitions/secret", "x-order": 2, "@type": "Password"}}`,
		`{"password": {"sha512.v2": 1, "min_length(8)": true}}`,
		`{"pwd": {"/home/dev/project": 1}}`,
	} {
		if f := secrets.ScanJSON([]byte(doc)); f != nil {
			t.Errorf("ScanJSON(%s) = %v, want nil", doc, f)
		}
	}
}

// Tokens of providers whose keys carry their own prefix, found alone: Docker Hub, Tailscale,
// LangSmith, Replicate, NVIDIA, Supabase, HubSpot and ElevenLabs. The prefix alone, or with
// a body too short or of the wrong alphabet, is prose about them.
func TestMoreProviderTokens(t *testing.T) {
	hex := func(n int) string { return strings.Repeat("3f78685e0a", 7)[:n] }
	body := func(n int) string { return strings.Repeat("Qk7AEe9Hoq8lS3x9ZaBw", 7)[:n] }
	for _, c := range []struct{ rule, tok string }{
		{"dockerhub-token", "dckr_pat_" + body(27)},
		{"dockerhub-token", "dckr_oat_" + body(32)},
		{"tailscale-key", "tskey-auth-k" + body(15) + "CNTRL-" + body(33)},
		{"tailscale-key", "tskey-api-k" + body(15) + "CNTRL-" + body(33)},
		{"langsmith-key", "lsv2_pt_" + hex(32) + "_" + hex(10)},
		{"langsmith-key", "lsv2_sk_" + hex(32) + "_" + hex(10)},
		{"replicate-token", "r8_" + body(37)},
		{"nvidia-api-key", "nvapi-" + body(64)},
		{"supabase-token", "sbp_" + hex(40)},
		{"hubspot-token", "pat-na1-3f78685e-0a3f-7868-5e0a-3f78685e0a3f"},
		{"elevenlabs-key", "sk_" + hex(48)},
	} {
		found(t, c.rule, c.tok, "export KEY="+c.tok+"\n", `{"k": "`+c.tok+`"}`)
	}
	clean(t,
		"Docker Hub tokens start dckr_pat_, Tailscale's tskey-auth- and LangSmith's lsv2_pt_",
		"dckr_pat_abc123",
		"r8_"+body(20),
		"xr8_"+body(37),
		"nvapi-"+body(30),
		"sbp_"+body(40),
		"pat-na1-not-a-uuid",
		"sk_"+body(48),
		"sk_"+hex(32),
		"tskey-auth-k"+body(15)+"CNTRL",
	)
}

// TestNoKeywordInUUID holds UUID's promise: no keyword, in any case its rule allows, with any
// bytes that may follow it, is made of hex digits and dashes alone, so none occurs in a UUID
// (which has no escape and no character the scan drops) and no rule can start a match there.
func TestNoKeywordInUUID(t *testing.T) {
	uuidByte := func(c byte) bool { return c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }
	kws, fold := secrets.GateKeywords()
	for i, kw := range kws {
		forms := []string{kw}
		if fold[i] {
			forms = append(forms, strings.ToLower(kw), strings.ToUpper(kw))
		}
		for _, f := range forms {
			if strings.IndexFunc(f, func(r rune) bool { return r >= 0x80 || !uuidByte(byte(r)) }) < 0 {
				t.Errorf("keyword %q can occur in a UUID: secrets.UUID must not skip the scan", f)
			}
		}
	}
	if s := "6f1c2a9e-3b7d-4c8e-9a0f-2d5b7e1c4a93"; !secrets.UUID(s) {
		t.Errorf("UUID(%q) = false", s)
	}
	for _, s := range []string{"", "6F1C2A9E-3B7D-4C8E-9A0F-2D5B7E1C4A93", "6f1c2a9e3b7d4c8e9a0f2d5b7e1c4a93", "6f1c2a9e-3b7d-4c8e-9a0f-2d5b7e1c4a9g", "sk-ant-api03-3b7d-4c8e-9a0f-2d5b7e1c"} {
		if secrets.UUID(s) {
			t.Errorf("UUID(%q) = true", s)
		}
	}
}
