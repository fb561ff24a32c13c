package secrets_test

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
)

// codeCorpus is code, configuration and prose an agent saves in a checkpoint of its work:
// names of passwords and tokens assigned calls, fields, references and comparisons, never a
// secret. Each must pass as text and as a JSON string.
var codeCorpus = []string{
	// Python
	"password = get_password()",
	"password = config_value",
	"password: str",
	"password: Optional[str] = None",
	`password = os.environ["DB_PASSWORD"]`,
	`password = os.environ.get("DB_PASSWORD")`,
	"password = os.getenv('DB_PASSWORD', '')",
	"password = self.password",
	"self.password = password",
	"if password == confirm_password:",
	"if password != password_confirmation:",
	"password = request.form['password']",
	"password = settings.DATABASE_PASSWORD",
	"password = args.password or prompt_password()",
	"password = getpass.getpass()",
	"hashed = bcrypt.hashpw(password.encode('utf-8'), bcrypt.gensalt())",
	"def set_password(self, raw_password):\n    self.password = make_password(raw_password)",
	"user.password = hash_password(new_password)",
	"password=form.cleaned_data['password1']",
	"db_pass = secrets_manager.get_secret_value(SecretId=arn)",
	"token = request.headers.get('Authorization')",
	"token = jwt.encode(payload, key, algorithm='HS256')",
	"access_token = create_access_token(identity=user.id)",
	"api_key = os.environ['OPENAI_API_KEY']",
	// Go
	"password := os.Getenv(\"DB_PASSWORD\")",
	"Password string `json:\"password\"`",
	"Password string `json:\"password,omitempty\" yaml:\"password\"`",
	"password, err := readPassword(ctx)",
	"cfg.Password = viper.GetString(\"db.password\")",
	"if err := bcrypt.CompareHashAndPassword(hash, []byte(password)); err != nil {",
	"token, err := jwt.ParseWithClaims(tokenString, &claims, keyFunc)",
	"req.Header.Set(\"Authorization\", \"Bearer \"+token)",
	"DB_PASS = flag.String(\"db-pass\", \"\", \"database password\")",
	// JS / TS
	"const password = process.env.DB_PASSWORD;",
	"const { password, confirmPassword } = req.body;",
	"password: string;",
	"password?: string | undefined;",
	"password: z.string().min(8).max(128),",
	"password: await bcrypt.hash(password, 10),",
	"if (password !== confirmPassword) throw new Error('mismatch')",
	"this.password = options.password ?? defaultPassword;",
	"const token = localStorage.getItem('token');",
	"headers: { Authorization: `Bearer ${token}` }",
	"<input type=\"password\" name=\"password\" autocomplete=\"current-password\">",
	// YAML, CI, compose, Helm
	"password=${{ secrets.DB_PASSWORD }}",
	"  password: ${{ secrets.DB_PASSWORD }}",
	"PASSWORD: ${DB_PASSWORD}",
	"POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:-postgres}",
	"      POSTGRES_PASSWORD: postgres",
	"    env:\n      GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
	"token: ${{ secrets.NPM_TOKEN }}",
	"password: {{ .Values.db.password | quote }}",
	"password: \"{{ vault_db_password }}\"",
	"password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256",
	"passwordSecretRef:\n  name: db-credentials\n  key: password",
	"- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef:\n      name: db\n      key: password",
	// Terraform
	"password = var.db_password",
	"password = random_password.db.result",
	"  password = data.aws_secretsmanager_secret_version.db.secret_string",
	"variable \"db_password\" {\n  type      = string\n  sensitive = true\n}",
	"master_password = local.master_password",
	// SQL
	"UPDATE users SET password = crypt($1, gen_salt('bf')) WHERE id = $2;",
	"SELECT * FROM users WHERE email = $1 AND password = crypt($2, password);",
	"ALTER ROLE app WITH PASSWORD :'app_password';",
	"password VARCHAR(255) NOT NULL,",
	"password_hash TEXT NOT NULL",
	// Shell
	"read -s -p \"Password: \" password",
	"export PGPASSWORD=\"$(vault kv get -field=password secret/db)\"",
	"DB_PASS=\"${DB_PASS:-}\"",
	"TOKEN=$(gh auth token)",
	"export GITHUB_TOKEN=\"$(cat /run/secrets/gh)\"",
	"mysql -u root -p\"$MYSQL_ROOT_PASSWORD\" < dump.sql",
	// Prose
	"The password is hashed with bcrypt before it is stored.",
	"The password is validated against the policy (min-8-chars).",
	"Set the password in the vault, then restart.",
	"Fixed password reset: password = new_password now hashes first.",
	"The token is a JWT: header.payload.signature, each part base64url.",
	// Identifiers that look random
	"commit 3f786850e387550fdab836ed7e6dc881de23001b",
	"TOKEN_SHA=3f786850e387550fdab836ed7e6dc881de23001b",
	"id 550e8400-e29b-41d4-a716-446655440000",
	"sha256sum: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  app.tar.gz",
	"<img src=\"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAYAAAAf8/9hAAAABHNCSVQICAgIfAhkiAAAAAlwSFlzAAALEwAACxMBAJqcGAAAA\">",
	"a JWT looks like eyJhbGciOi... (header), then the claims and a signature",
	// More code, CI and docs, on every rule's keywords.
	"token: ${{ github.token }}",
	"api_key = settings.OPENAI_API_KEY",
	"client_secret=os.environ['CLIENT_SECRET']",
	"token = var.github_token",
	`access_token = response.json()["access_token"]`,
	`"token": "<redacted>"`,
	"Token string `json:\"token\"`",
	`auth_token := r.Header.Get("X-Auth-Token")`,
	"secret_key = get_random_secret_key()",
	"SECRET_KEY = env('DJANGO_SECRET_KEY')",
	"const apiKey = process.env.STRIPE_SECRET_KEY!;",
	"apiKey: process.env.OPENAI_API_KEY,",
	"accessToken: string | null = null;",
	"const accessToken = await getAccessToken(client_id, client_secret);",
	"refresh_token = token_response['refresh_token']",
	"bearer = f\"Bearer {token}\"",
	"headers = {'Authorization': f'Bearer {api_key}'}",
	"Authorization: Bearer ${{ secrets.API_TOKEN }}",
	"curl -H \"Authorization: Bearer $TOKEN\" https://api.github.com/user",
	"resource \"aws_db_instance\" \"db\" {\n  username = \"admin\"\n  password = var.db_password\n}",
	"resource \"random_password\" \"db\" {\n  length  = 24\n  special = true\n}",
	"  db_password = aws_secretsmanager_secret_version.db.secret_string",
	"master_password = random_password.master.result",
	"- uses: actions/checkout@v4\n  with:\n    token: ${{ secrets.PAT }}",
	"docker login -u $DOCKER_USER -p $DOCKER_PASS registry.example.com",
	"echo \"$DOCKER_PASSWORD\" | docker login -u \"$DOCKER_USERNAME\" --password-stdin",
	"mysql -u root -p${MYSQL_ROOT_PASSWORD} app",
	"PGPASSWORD=$PGPASSWORD psql -h localhost -U postgres",
	"psql \"postgresql://$PGUSER:$PGPASSWORD@$PGHOST:5432/$PGDATABASE\"",
	"CREATE USER app WITH PASSWORD 'app';",
	"CREATE ROLE reader LOGIN PASSWORD NULL;",
	"password_reset_token = secrets.token_urlsafe(32)",
	"token = secrets.token_hex(16)",
	"token = uuid.uuid4().hex",
	"self.token = kwargs.pop('token', None)",
	"session_token = request.cookies.get('session_token')",
	"csrf_token = generate_csrf()",
	"pass_through = True; first_pass = second_pass; bypass = compute(x)",
	"user_pwd = input(); pwd = os.getcwd()",
	"DB_PASS: ${{ secrets.DB_PASS }}",
	"PASSWORD=\"$(openssl rand -base64 24)\"",
	"export TOKEN=$(curl -s $METADATA/token)",
	"basic_auth = HTTPBasicAuth(username, password)",
	"auth = ('user', password)",
	"machine github.com login $GITHUB_USER password $GITHUB_TOKEN",
	"with open(os.path.expanduser('~/.pgpass')) as f:",
	"git log --format=%H abc1234 3f786850e387550fdab836ed7e6dc881de23001b..HEAD",
	"image: ghcr.io/org/app@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	"integrity: sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==",
	"\"resolved\": \"https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz\", \"integrity\": \"sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXPs17LhbZVGedAJv8XZ1tvj5FvSg==\"",
	"The JWT is eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.<payload>.<signature>",
	"Passwords must be at least 12 characters; password: required, minLength: 12",
	"password_min_length = 12\npassword_require_symbols = true",
	"The token endpoint returns {\"access_token\": \"...\", \"token_type\": \"Bearer\", \"expires_in\": 3600}",
	"cairn checkpoint save --name plan_v2 --note 'password = get_password() now reads the keyring'",
	"ssh-keygen -t ed25519 -C deploy@example.com -f ~/.ssh/id_ed25519",
	"-----BEGIN OPENSSH PRIVATE KEY----- block goes in ~/.ssh/id_ed25519",
	"set -euo pipefail\nTOKEN_FILE=/run/secrets/token\nTOKEN=\"$(<\"$TOKEN_FILE\")\"",
	"GIT_COMMIT=3f786850e387550fdab836ed7e6dc881de23001b\nBUILD_ID=550e8400-e29b-41d4-a716-446655440000",
	"default:\n  login: true\n  password: false",
	"password: !!str 12345",
	"password: str = Field(..., min_length=8)",
	"password: string = ''",
	"def login(username: str, password: str) -> Token:",
	"func Login(ctx context.Context, username, password string) (*Token, error)",
	"if (!password || password.length < 8) return res.status(400)",
	"expect(screen.getByLabelText('Password')).toHaveValue('')",
	"await page.fill('#password', process.env.E2E_PASSWORD!)",
	"password = \"\"  # set via env",
	"password = None",
	"password = ''.join(random.choices(string.ascii_letters, k=16))",
	"$password = Read-Host -AsSecureString",
	"$env:TOKEN = (gh auth token)",
	"Password = builder.Configuration[\"Db:Password\"],",
	"options.Password.RequiredLength = 12;",
	"spring.datasource.password=${DB_PASSWORD}",
	"spring.datasource.password=${DB_PASSWORD:changeme}",
	"jdbc.password=@jdbc.password@",
	// Ids and digests of keys and secrets, which the keys' own names hold as hex or a UUID.
	"api_key_id = \"550e8400-e29b-41d4-a716-446655440000\"",
	"const apiKeyId = '550e8400-e29b-41d4-a716-446655440000';",
	"\"clientId\": \"550e8400-e29b-41d4-a716-446655440000\", \"client_secret\": \"${CLIENT_SECRET}\"",
	"client_secret_sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	"api_key_fingerprint = d41d8cd98f00b204e9800998ecf8427e",
	"secret_arn: arn:aws:secretsmanager:us-east-1:123456789012:secret:db-AbCdEf",
	// Calls with a number, which a password in brackets must not be taken for.
	"password = bcrypt.gensalt(12)",
	"pwd = os.urandom(16).hex()",
	"DB_PASS = secrets.token_hex(32)",
	"const password = await generatePassword(24)!;",
	"password = crypto.randomBytes(16)!",
	"user.password = make_password(12)!",
	// camelCase names of passwords and of the variables that hold them.
	"const dbPass = \"dbPassword\";",
	"DB_PASS = config.get(\"dbPassword\")",
	"export DB_PASSWORD=$dbPassword",
	"environment:\n  - DB_PASSWORD=dbPassword",
	"password_field = \"userPassword\"",
	// Paths and commands after a secret's name, which a base64 key's / must not make keys.
	"client_secret: projects/123456789/secrets/oauth-client/versions/latest",
	"JWT_SECRET=secret/data/myapp/config",
	"NEXTAUTH_SECRET=$(openssl rand -base64 32)",
	"token: /var/run/secrets/kubernetes.io/serviceaccount/token",
	// Keys under a password's name that are names: a policy's, a schema's, a form's, hashers'.
	`{"Password": {"RequireDigit": true, "RequiredLength": 12, "RequiredUniqueChars": 1}}`,
	`{"password": {"type": "string", "minLength": 12, "ui:widget": "password", "x-order": 2}}`,
	`{"password": {"argon2id": {"memory": 65536}, "pbkdf2_sha256": {"iterations": 600000}}}`,
	// A key block's header and footer kept as strings, and a framework's key named, not given.
	`["-----BEGIN RSA PRIVATE KEY-----", "...", "-----END RSA PRIVATE KEY-----"]`,
	"SECRET_KEY = os.environ['DJANGO_SECRET_KEY']  # was django-insecure-<generated>",
	"APP_KEY=\nAPP_KEY=base64:\n'key' => env('APP_KEY'),",
	// Base64 of numbers, and capitals a Discord token starts with.
	"user id 1098765432109876543 is MTA5ODc2NTQzMjEwOTg3NjU0Mw in base64; guild.id = 'ODEyMzQ1Njc4OTAxMjM0NTY3'",
	"NTLM and NTP; MTU=1500; NOT NULL; ODBC; OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4317",
	"echo -n 123456789 | base64 # MTIzNDU2Nzg5, then MTIzNDU2Nzg5.MTIz.MTIzNDU2Nzg5",
}

func TestCodeIsNoSecret(t *testing.T) {
	for _, s := range codeCorpus {
		if f := secrets.ScanString(s); f != nil {
			t.Errorf("ScanString(%q) = %s, want nil", s, f.Rule)
		}
		enc, _ := json.Marshal(s)
		if f := secrets.ScanJSON([]byte(`{"checkpoint":` + string(enc) + `}`)); f != nil {
			t.Errorf("ScanJSON(%s) = %s, want nil", enc, f.Rule)
		}
	}
}

// Values code would not write stay passwords when unquoted: a digit, PascalCase, a symbol.
func TestUnquotedPasswordsKept(t *testing.T) {
	found(t, "password-assignment",
		"password = Hunter2Hunter2",
		"password: HunterHunter",
		"password=summer_2024_x",
		"password: s3cr3t-Pa55",
		"db_password = Tr0ub4dor&3x",
		"password = 'config_value'",
		"POSTGRES_PASSWORD: ${X:-y} PASSWORD=Hunter2Hunter2",
	)
}

// A password followed by a bracket (a glob pattern's, a list's) is not a call.
func TestPasswordBeforeBracket(t *testing.T) {
	found(t, "password-assignment", "password:\n value: Qk7AEe9Hoq8lS3[", "password=Tr0ub4dor(x)")
}

// A word then a number in brackets is a call (hash(2024)) until something follows the bracket
// that code would not write there: summer(2024)! is a password's shape. A call may go on as
// code (.strip(), [0]) or end in TypeScript's ! after a name code gives a function.
func TestCallShapedPassword(t *testing.T) {
	found(t, "password-variable", "pwd: summer(2024)!", `"pwd": "summer(2024)!"`, "DB_PASS=Winter(1999)#",
		"MYSQL_PWD='spring(42)!x'")
	found(t, "password-assignment", "password: summer(2024)!", "password = Autumn(2023)?!", `{"password": summer(2024)!}`)
	clean(t, "pwd = os.getcwd()", "password = getPassword()!", "password = passwords[0]!", "password = hash(2024)",
		"password = get_password(2).strip()", "db_pass = load(2024);", "password: range(2024),", "user_pwd = read(3)(x)",
		"password = derive(2024)[0]", "password = hash(2024).hexdigest()", "DB_PASS=(20240101)!")
}

// A password of letters in camelCase (correctHorseBattery) is one where code's names cannot
// stand: quoted, or in an environment's NAME=value. A value that names a password
// (dbPassword) is a name, and unquoted in code the value is a variable (defaultPassword).
func TestCamelCasePassword(t *testing.T) {
	found(t, "password-variable", `export DB_PASS="correctHorseBattery"`, `{"DB_PASS": "correctHorseBattery"}`,
		"Server=db;Pwd='correctHorseBattery';", "MYSQL_PWD=correctHorseBattery", "export DB_PASS=correctHorseBattery")
	found(t, "password-assignment", "PASSWORD=correctHorseBattery", "export DB_PASSWORD=correctHorseBattery",
		"docker run -e POSTGRES_PASSWORD=correctHorseBattery postgres", `password = "correctHorseBattery"`)
	clean(t, "password: userPassword,", "db_pass = dbPassword", "PASSWORD = defaultPassword",
		"connect(user=u, password=dbPassword)", `DB_PASS = "dbPassword"`, "DB_PASSWORD=dbPassword",
		"export PGPASSWORD=postgresPassword", "PASSWORD=changeMe", `db_pass = "dbSecretName"`, "first_pass = mergeSort",
		"MYSQL_PWD=mysqlRootPwd", "db_pass=getValue")
}

// An environment list names a password variable, then gives its value: {"name": "DB_PASS",
// "value": ...} in JSON, - name: DB_PASS / value: ... in YAML, as it does for a password or
// a token.
func TestPasswordVariableNameValue(t *testing.T) {
	found(t, "password-variable", `{"name": "DB_PASS", "value": "Tr0ub4dor&3x"}`, "- name: MYSQL_PWD\n  value: Tr0ub4dor&3x",
		`{"name":"REDIS_PASS","value":"correctHorseBattery"}`)
	clean(t, `{"name": "DB_PASS", "valueFrom": {"secretKeyRef": {"name": "db", "key": "pass"}}}`,
		`{"name": "DB_PASS", "value": "${DB_PASS}"}`, "- name: DB_PASS\n  value: $(DB_PASS)", "first_pass, value = compute(x)",
		"- name: DB_PASS_FILE\n  value: /run/secrets/db")
}

// A dotted password with digits is not a field.
func TestDottedPasswordKept(t *testing.T) {
	found(t, "password-assignment", "password = s3cr3t.Pa55word")
}

// A hex or UUID value is a credential after a name that says it holds one: TOKEN, a name
// ending in _TOKEN, a key or a secret, a provider's or a generic one (Heroku's API keys are
// UUIDs, Datadog's and GitHub OAuth apps' client secrets hex). After any other name it is an
// id or a digest (a commit, a run, a page of results, a key's id or its hash).
func TestHexValueByName(t *testing.T) {
	sha := "3f786850e387550fdab836ed7e6dc881de23001b"
	uuid := "550e8400-e29b-41d4-a716-446655440000"
	md5 := "d41d8cd98f00b204e9800998ecf8427e"
	found(t, "token-assignment", "TOKEN="+sha, "export CI_TOKEN="+uuid, `{"token": "`+sha+`"}`,
		"token: "+strings.ToUpper(sha), "access_token: "+sha)
	found(t, "provider-credential", "HEROKU_API_KEY="+uuid, "heroku_api_key: "+uuid, "DATADOG_APP_KEY="+sha,
		"api_key: "+uuid, `api_key = "`+md5+`"`, "client_secret: "+sha, `apiKey: "`+md5+`",`, `{"apiKey": "`+uuid+`"}`,
		"X-API-KEY: "+strings.ToUpper(md5), "SECRET_KEY = '"+sha+"'", "slack_signing_secret="+md5)
	clean(t, "COMMIT="+sha, "TOKEN_SHA="+sha, "next_token: "+sha, "page_token="+uuid, "NextPageToken: "+uuid,
		"heroku_app_id: "+uuid, "HEROKU_SLUG_COMMIT="+sha, "HEROKU_RELEASE_VERSION=v42 sha "+sha,
		"api_key_sha1: "+sha, "input_tokens: 1234567890123456789", "token: "+sha[:20],
		"api_key_id: "+uuid, "apiKeyId: "+uuid, "client_id: "+uuid, "api_key_hash = "+sha, "secret_version: "+uuid,
		"secret_name: "+md5, "cache_key: "+md5, "api_keys: 2 of "+md5)
}

// A page's cursor, which an API hands back for the next page of a listing (Google's
// nextPageToken, the AWS CLI's NextToken), is random-looking base64 of a position, not a
// credential: a workflow that checkpoints it to resume the listing is not refused. A name
// whose word only holds a paging word (PAGERDUTY_TOKEN, NEXTAUTH_TOKEN) still names one.
func TestPageCursorsByName(t *testing.T) {
	const cursor = "AYADeJ2Z7kQ9mN1pQ3rS5tU7vW9xY1zA3bC5d7E9f"
	clean(t, `{"nextPageToken": "CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA3"}`, `{"NextToken": "`+cursor+`"}`,
		"next_token="+cursor, `"continuationToken": "eyJvZmZzZXQiOjEwMCwia2V5IjoiYWJjMTIzIn0"`,
		`{"pageToken":"CAoQAA8xY2Q5NjRm"}`, "PAGE_TOKEN: "+cursor, "sync-token="+cursor)
	found(t, "token-assignment", "NEXTAUTH_TOKEN="+cursor, "TOKEN="+cursor, "X-Next-Auth-Token: "+cursor, "request_token="+cursor)
	found(t, "provider-credential", "PAGERDUTY_TOKEN="+cursor, "access_token: "+cursor, `{"refreshToken": "`+cursor+`"}`)
}

// A key made by openssl rand -base64 (NEXTAUTH_SECRET, JWT_SECRET, SESSION_SECRET in a .env)
// holds / and + where a random value of letters and digits does not: after a name for a secret
// or a token it is one, as such a value is. A path after the same names, with / between words,
// is not: a vault's, a secret manager's, a file's.
func TestBase64KeyByName(t *testing.T) {
	const key = "2fl+Ktvkfl+Fuz4Qp/A75G2RTiWVA/ZoKZvp6fiiM10="
	found(t, "provider-credential", "NEXTAUTH_SECRET="+key, "JWT_SECRET="+key, "session_secret: "+key,
		`{"client_secret": "`+key+`"}`, "SECRET_KEY='"+key+"'", "api_key = "+key)
	found(t, "token-assignment", "TOKEN="+key, `{"token": "A75G2RTiWVA/ZoKZvp6fiiM10+2flKtvkfl+Fuz4Qp7X"}`)
	clean(t,
		"client_secret: projects/123456789/secrets/oauth-client/versions/latest",
		"secret: /run/secrets/app_key",
		"JWT_SECRET=secret/data/myapp/config",
		"vault_secret: kv/data/Prod/App2/Db3",
		"api_key = keys/Prod2Api3Key4/current",
		"token: 2fl+Ktvkfl+Fuz4Qp//A75G2RTiWVA/ZoKZvp6fiiM10",
		"TOKEN=/A75G2RTiWVA/ZoKZvp6fiiM10+2flKtvkfl+Fuz4Qp7",
		"api_key: abcdefgh/ijklmnop/qrstuvwx/yz0123456",
	)
}

// A Makefile's TOKEN ?= and an environment list's {"name": "GITHUB_TOKEN", "value": ...}
// assign a token as TOKEN= does.
func TestTokenMakefileAndList(t *testing.T) {
	tok := "Ab3dEf6hIj9kLm2nQr5tUv8w"
	found(t, "token-assignment",
		"TOKEN ?= "+tok,
		"GITHUB_TOKEN?="+tok,
		`{"name":"GITHUB_TOKEN","value":"`+tok+`"}`,
		"{\"name\": \"CI_TOKEN\",\n  \"value\": \""+tok+"\"}",
		"env:\n- name: GITHUB_TOKEN\n  value: "+tok+"\n",
	)
	clean(t,
		"TOKEN ?= $(shell cat .token)",
		`{"name":"GITHUB_TOKEN","value":"${{ secrets.GITHUB_TOKEN }}"}`,
		`{"name":"GITHUB_TOKEN","valueFrom":{"secretKeyRef":{"name":"gh","key":"token"}}}`,
		"- name: GITHUB_TOKEN\n  value: ${GITHUB_TOKEN}\n",
		"the token value: see the vault entry",
	)
}

// A .netrc's default entry, used for any machine not listed, holds a login and password too.
func TestNetrcDefault(t *testing.T) {
	found(t, "netrc-password",
		"default login deploy password Hunter2Hunter2",
		"# any other host\ndefault\n  login bot\n  password s3cr3t-Pa55\n",
	)
	clean(t,
		"default login anonymous password user@example.com",
		"the default login page password field",
		"default login admin password changeme",
		"by default login prompts for the password twice",
		"switch (x) { default: login(password) }",
	)
}

// A Discord bot token is three base64url parts joined by dots, the first the bot's numeric id
// encoded: after a name for a token, its dots do not make it a host name or a version.
func TestDiscordBotToken(t *testing.T) {
	tok := "MTA5ODc2NTQzMjEwOTg3NjU0Mw.Gx7K2p.Qk7rT9vLm2Xw8Yb4Nc6Zd1Hf3Jg5Ks0Ap9EeRr"
	found(t, "provider-credential", "DISCORD_BOT_TOKEN="+tok, `{"discord_token": "`+tok+`"}`, "bot_token: "+tok)
	found(t, "token-assignment", "TOKEN="+tok, "client.login(token='x') # token: "+tok)
	clean(t,
		"DISCORD_GATEWAY=gateway.discord.gg",
		"token: v1.2.3-rc4.build5678901234",
		"token: abcd1234efgh5678.ijkl9012mnop.qrst3456uvwx7890yzab1234cdef", // first part not an id
		"discord_release: MTA5ODc2NTQzMjEwOTg3NjU0Mw.v2.x",
	)
}

// A Discord bot token alone, with no name before it, is found by its shape: the bot's id in
// base64url (17 to 20 digits, not starting with 0), a dot, 6 or 7 characters, a dot, 27 to 40.
// Base64 of an id alone, of other text, or with parts of other lengths is not one.
func TestBareDiscordBotToken(t *testing.T) {
	tok := "MTA5ODc2NTQzMjEwOTg3NjU0Mw.Gx7K2p.Qk7rT9vLm2Xw8Yb4Nc6Zd1Hf3Jg5Ks0Ap9EeRr"
	old := base64.RawURLEncoding.EncodeToString([]byte("812345678901234567")) + ".YH5r2Q.Ovy4MCQywSkoMRRclStW4xAYK7I"
	found(t, "discord-bot-token", tok, `client.run("`+tok+`")`, "the bot's token is "+tok+".", old,
		"await client.login('"+old+"');", "NzkyNzE1NDU0MTk2MDg4ODQy.X-hvzA.Ovy4MCQywSkoMRRclStW4xAYK7I")
	clean(t,
		"MTA5ODc2NTQzMjEwOTg3NjU0Mw",
		"MTA5ODc2NTQzMjEwOTg3NjU0Mw.Gx7K2p",
		"user MTA5ODc2NTQzMjEwOTg3NjU0Mw.Gx7K2p.short",
		"xMTA5ODc2NTQzMjEwOTg3NjU0Mw.Gx7K2p.Qk7rT9vLm2Xw8Yb4Nc6Zd1Hf3Jg5Ks0Ap9EeRr",
		base64.RawURLEncoding.EncodeToString([]byte("101abcdefghijklmno"))+".Gx7K2p.Qk7rT9vLm2Xw8Yb4Nc6Zd1Hf3Jg5Ks0Ap9EeRr",
		base64.RawURLEncoding.EncodeToString([]byte("012345678901234567"))+".Gx7K2p.Qk7rT9vLm2Xw8Yb4Nc6Zd1Hf3Jg5Ks0Ap9EeRr",
		base64.RawURLEncoding.EncodeToString([]byte("1234567890"))+".Gx7K2p.Qk7rT9vLm2Xw8Yb4Nc6Zd1Hf3Jg5Ks0Ap9EeRr",
		"NTLM, MTU 1500, NOT NULL, ODBC; TODO: index the context today (Monday)",
	)
}

// PowerShell's, PHP's and Perl's $variable takes a quoted string: unquoted, the value is a
// command or a constant. Maven fills @name@ from its properties.
func TestSigilAndMavenPlaceholders(t *testing.T) {
	clean(t,
		"$password = Read-Host -AsSecureString",
		"$dbPassword = Get-Secret -Name db",
		"$password = DEFAULT_PASSWORD;",
		"jdbc.password=@jdbc.password@",
		"password: @db_password@",
	)
	found(t, "password-assignment",
		`$password = "Hunter2Hunter2"`,
		"$password = 'Tr0ub4dor&3x';",
		"password=@Hunter2x",
		"password=@Hunter2@x",
	)
}

// A .pgpass line: host:port:database:user:password.
func TestPgpass(t *testing.T) {
	found(t, "pgpass-password",
		"db.example.com:5432:app:appuser:Hunter2Hunter2",
		"*:*:*:postgres:s3cr3t-Pa55",
		"echo 'localhost:6432:pgbouncer:admin:Tr0ub4dor&3x' >> ~/.pgpass",
		"# ~/.pgpass\nreplica-1:5433:*:app:Qk7AEe9Hoq8lS3\n",
	)
	clean(t,
		"localhost:5432:postgres is up; db:5432:app failed",
		"Error: dial tcp 10.0.0.5:5432: connect: connection refused",
		"hostname:port:database:username:password",
		"localhost:5432:app:user:password and db:5432:app:app:${PGPASSWORD}",
		"*:*:*:*:* and x:*:*:*:12345678",
		"arn:aws:iam::123456789012:role/deploy; s3:*:*:bucket:object-key",
		"postgres://app@db:5432:app:user:Hunter2x",
	)
}

// CloudFormation names a parameter, then gives its value: ParameterKey=DbPassword,
// ParameterValue=... on aws cloudformation's command line, {"ParameterKey": ...,
// "ParameterValue": ...} in a parameters file, as an environment list does with name and value.
func TestCloudFormationParameters(t *testing.T) {
	found(t, "password-assignment",
		"aws cloudformation create-stack --parameters ParameterKey=DbPassword,ParameterValue=Hunter2Hunter2",
		`[{"ParameterKey": "MasterUserPassword", "ParameterValue": "Tr0ub4dor&3x"}]`,
	)
	found(t, "password-variable", "ParameterKey=DB_PASS,ParameterValue=Tr0ub4dor&3x")
	found(t, "token-assignment", `{"ParameterKey":"GithubToken","ParameterValue":"Ab3dEf6hIj9kLm2nQr5tUv8w"}`)
	found(t, "provider-credential", "ParameterKey=DatadogApiKey,ParameterValue=Ab3dEf6hIj9kLm2nQr5tUv8w")
	clean(t,
		"ParameterKey=DbPassword,ParameterValue={{resolve:secretsmanager:db:SecretString:password}}",
		"ParameterKey=DbPassword,UsePreviousValue=true",
		`{"ParameterKey": "DbPasswordSecretArn", "ParameterValue": "arn:aws:secretsmanager:us-east-1:123456789012:secret:db-AbCdEf"}`,
		"ParameterKey=DbPassword,ParameterValue=$DB_PASSWORD",
		`{"ParameterKey": "GithubToken", "ParameterValue": "${GITHUB_TOKEN}"}`,
		"ParameterKey=PasswordLength,ParameterValue=24",
	)
}

// "pass" alone names a password in a login's object (nodemailer's and request's auth: {user,
// pass}, a .env's PASS=): a value with a letter and a digit, or three kinds of character, is
// one. Test results count passes under the same name, and a date, a number or a digest is
// no password.
func TestBarePass(t *testing.T) {
	found(t, "password-variable",
		`{"user": "admin", "pass": "Hunter2Hunter2"}`,
		"auth: { user: 'bot@example.com', pass: 'Tr0ub4dor&3x' }",
		"pass: hunter2xyz",
		"PASS=s3cr3t-Pa55",
		`{"pass":"correctHorseBattery"}`,
	)
	clean(t,
		`{"pass": 12, "fail": 0, "skip": 3}`,
		`{"pass": true, "duration_ms": 12345678}`,
		`{"Action":"pass","Package":"example.com/app","Elapsed":0.012}`,
		`{"pass": 1700000000, "fail": 1700000123}`,
		`{"pass": "2024-05-01T10:00:00Z"}`,
		"first pass: 3f786850e3, second pass: e3b0c44298",
		"auth: { user: process.env.SMTP_USER, pass: process.env.SMTP_PASS }",
		"auth: { user, pass: smtpPass }",
		"pass: ${SMTP_PASS}",
		`"pass": "<your-password>"`,
		"pass = compute_pass(x)",
		"tests: pass 12, fail 0; pass: all-green",
		"if ok { pass } else { fail }\npass\n",
		`{"pass": "PASS_WITH_WARNINGS"}`,
		`{"pass": "12 of 12"}`,
	)
}

// A session cookie logs a browser in: Cookie: and Set-Cookie: headers, and curl's --cookie,
// carry one under a name that says session or auth. Short or placeholder values, and other
// cookies (analytics, CSRF, preferences), are not credentials.
func TestSessionCookie(t *testing.T) {
	found(t, "session-cookie",
		"Cookie: sessionid=q8wm3rt6yp1ks4lv7nb0xc9d2e5f",
		"-H 'Cookie: _ga=GA1.2.1234567890.1700000000; PHPSESSID=q8wm3rt6yp1ks4lv7nb0xc9d; theme=dark'",
		"Set-Cookie: connect.sid=s%3AQk7AEe9Hoq8lS3x9Zab.Qk7AEe9Hoq8lS3x9ZabQk7AEe9; Path=/; HttpOnly",
		`{"headers": {"Cookie": "JSESSIONID=3F786850E387550FDAB836ED7E6DC881"}}`,
		`curl --cookie "laravel_session=Ab3dEf6hIj9kLm2nQr5tUv8w" https://app.example.com`,
		"set-cookie: _myapp_session=Qk7AEe9Hoq8lS3x9Zab%2Fk7AEe9--3f786850e387550fdab8; path=/",
		"Cookie: sid=3f786850-e387-550f-dab8-36ed7e6dc881",
	)
	clean(t,
		"Cookie: PHPSESSID=298zf09hf012fh2; csrftoken=u32t4o3tb3gg43; _gat=1",
		"Set-Cookie: sessionId=38afes7a8; HttpOnly",
		"Cookie: csrftoken=Ab3dEf6hIj9kLm2nQr5tUv8wXy1z2A3b; _ga=GA1.2.1234567890.1700000000",
		"Cookie: session=$SESSION_COOKIE",
		"Cookie: session=<session-cookie>",
		"Set-Cookie: theme=Ab3dEf6hIj9kLm2nQr5tUv8w; Path=/",
		"the cookie \"session\" is set on login; cookie: session=... expires in 2h",
		"document.cookie = 'sessionid=' + sessionId;",
	)
}

// A key or secret with symbols (Django's SECRET_KEY, a key typed into a .env) is one after a
// name that says it holds one, quoted or in an environment's NAME=value, as a value of
// letters and digits is after provider-credential's names. A name for something else (a
// cache's, a public key, a site key), a template, a path or code is not.
func TestSymbolSecret(t *testing.T) {
	const dj = "k#9x!2m@p$q^z&8w*r(t)y_u+i=o-l%v3b5n7a1s2d3f4g5h6"
	found(t, "symbol-secret",
		"SECRET_KEY = '"+dj+"'",
		"SECRET_KEY="+dj,
		"ENCRYPTION_KEY='Qk7A!Ee9Hoq8lS3#x9Zb'",
		"JWT_SECRET=\"Qk7A!Ee9Hoq8lS3#x9Zb\"",
		"signingKey: \"Qk7A!Ee9Hoq8lS3#x9Zb\"",
		`{"client_secret": "Qk7A!Ee9Hoq8lS3#x9Zb"}`,
		"api-key: 'Qk7A!Ee9Hoq8lS3#x9Zb'",
		"export APP_KEY=Qk7A!Ee9Hoq8lS3#x9Zb",
	)
	clean(t,
		"CACHE_KEY = 'user:{id}:profile#v2-2024!x'",
		"SITE_KEY='Qk7A!Ee9Hoq8lS3#x9Zb'",
		"publicKey: \"Qk7A!Ee9Hoq8lS3#x9Zb\"",
		"SECRET_KEY = 'django-insecure-change-me'",
		"SECRET_KEY = get_random_secret_key()",
		"secret_key: \"{{ vault('secret/app#key2') }}\"",
		"api_key: \"${API_KEY:-dev-key-123!}\"",
		"client_secret: 'projects/12345/secrets/oauth#v2@latest'",
		"secret_key = config('SECRET_KEY', default='x')",
		"SECRET_KEY=k#9x!2m@ short",
		"apiKey: 'Must be 32+ chars!'",
		"secret: 'correct horse battery staple 9!'",
		"signing_key = keys[0] + salt2!x3y4z5w6",
		"SECRET_KEY = os.environ['SECRET_KEY'] # k2!x3y4z5w6v7u8t9",
		"secretKey: 'a1!b2@c3#'",
	)
}

// A password given to a command's flag, as the next word: --password VALUE, --db-password
// VALUE (with = it is password-assignment's). A reference, a placeholder, a prompt's word or
// another flag after it is not one.
func TestPasswordFlag(t *testing.T) {
	found(t, "password-flag",
		"mysqladmin --user root --password Tr0ub4dor&3x status",
		"./migrate --db-password Hunter2Hunter2 up",
		"app --password 'correct9Horse' --verbose",
		`["deploy", "--admin-password", "s3cr3t-Pa55"]`,
	)
	clean(t,
		"app --password PASSWORD",
		"app --password $DB_PASSWORD",
		"app --password <password>",
		"echo $PW | docker login --username bob --password-stdin",
		"app --password \"$(cat /run/secrets/pw)\"",
		"app --password ${{ secrets.PW }}",
		"app --password --verbose",
		"use --password prompting instead",
		"app --password-file /run/secrets/pw",
		"the -password flag: see --help",
	)
}

// A value given in one flag after a name for a secret in another: aws ssm put-parameter
// --name /prod/db/password --value ..., and its JSON. A name that is not a secret's, or
// whose last part only mentions one (a policy, a length, a rotation's date), is not one.
func TestParameterValue(t *testing.T) {
	found(t, "parameter-value",
		"aws ssm put-parameter --name /prod/db/password --value 'S3cr3t!xyz' --type SecureString",
		"aws ssm put-parameter --name /prod/app/secret --value S3cr3tXyz99 --type SecureString",
		"aws ssm put-parameter --overwrite --name=/app/api_token --value=Qk7AEe9Hoq8lS3x",
		"aws ssm put-parameter \\\n  --name /prod/db/DB_PASSWORD \\\n  --value 'Tr0ub4dor&3x'",
		`["aws", "ssm", "put-parameter", "--name", "/app/jwt-secret", "--value", "Hunter2Hunter2"]`,
		"aws ssm put-parameter --type SecureString --value 'S3cr3t!xyz' --name /prod/db/password",
	)
	found(t, "password-assignment", `{"Name": "/app/db_password", "Value": "S3cr3t!xyz", "Type": "SecureString"}`)
	clean(t,
		"aws ssm put-parameter --name /prod/app/version --value v1.2.3-rc4 --type String",
		"aws ssm put-parameter --name /prod/db/password --value \"$DB_PASSWORD\" --type SecureString",
		"aws ssm put-parameter --name /prod/db/password --value file://pw.txt --type SecureString",
		"aws ssm put-parameter --name /prod/password-policy/min-length --value 12characters",
		"aws ssm put-parameter --name /prod/token_ttl --value 3600seconds",
		"aws ssm put-parameter --name /prod/db/password --value '{{resolve:ssm:x}}'",
		"aws ssm put-parameter --name /prod/db/password\naws ssm get-parameter --value Hunter2Hunter2",
		"helm install app --set name=secret --value Hunter2Hunter2",
		"kubectl label pods web --name secret-reader --value tier2frontend",
		"aws ssm put-parameter --value Hunter2Hunter2 --name /prod/app/version",
		"aws ssm put-parameter --value Hunter2Hunter2 --name /prod/app/version\naws ssm get-parameter --name /prod/db/password",
	)
}

// A name for a secret then its value, as a parameter store's JSON or an environment list
// gives them ({"Name": "/app/jwt_secret", "Value": ...}), assigns it as "jwt_secret": ... does.
func TestSecretNameThenValue(t *testing.T) {
	for _, s := range []string{
		`{"Name": "/app/jwt_secret", "Value": "S3cr3t!xyz-Qk7A9e", "Type": "SecureString"}`,
		`{"name": "DJANGO_SECRET_KEY", "value": "k#9x!2m@q7w$e3r5t"}`,
		"- name: SIGNING_KEY\n  value: 'Qk7A!Ee9Hoq8lS3#x9Zb'",
	} {
		found(t, "symbol-secret", s)
		if f := secrets.ScanJSON([]byte(`{"doc":` + strconv.Quote(s) + `}`)); f == nil {
			t.Errorf("ScanJSON(%q) = nil", s)
		}
	}
	if f := secrets.ScanJSON([]byte(`{"Name": "/app/jwt_secret", "Value": "S3cr3t!xyz-Qk7A9e"}`)); f == nil {
		t.Errorf("ScanJSON of the parameter = nil")
	}
	clean(t,
		`{"name": "JWT_SECRET", "value": "short!x1"}`,
		`{"Name": "/app/jwt_secret", "Value": "arn:aws:ssm:us-east-1:123:parameter/x", "Type": "String"}`,
		`{"name": "SECRET_KEY", "valueFrom": "arn:aws:secretsmanager:us-east-1:1234:secret:x-AbC1!"}`,
		`{"name": "secret", "value": "see the vault entry 2!"}`,
		`{"name": "api_key", "value": "${API_KEY:-dev-key-123!}"}`,
	)
}

// Oracle's user/password@service after sqlplus, its tools (expdp, impdp, sqlldr) or SQL*Plus's
// CONNECT at the start of a line. A placeholder, a variable, a substitution (&pw), the
// operating system's login (/ as sysdba) or a user alone (prompted for the password) is no
// secret, nor is a path, a package's scope or an address with an @ elsewhere.
func TestOracleConnect(t *testing.T) {
	found(t, "oracle-connect",
		"sqlplus scott/Hunter2x@db",
		"sqlplus user/S3cr3tPw@//host:1521/svc",
		"sqlplus -s -L \"app_user/Tr0ub4dor&3x@//db.example.com:1521/ORCLPDB1\"",
		"SQL> connect scott/Hunter2x@orcl",
		"  CONNECT app/Winter2024@tns;",
		"conn system/manager1@xe",
		"expdp hr/Hr2Passw0rd@pdb directory=dp dumpfile=hr.dmp",
		"sqlplus scott/tiger",
		`["sqlplus", "-s", "scott/Hunter2x@db"]`,
		"url=jdbc:oracle:thin:scott/Hunter2x@//db:1521/ORCL",
		"conn = cx_Oracle.connect('scott/Hunter2x@orcl')",
		`con = oracledb.connect("app/Winter2024@db.example.com/ORCLPDB1")`,
	)
	clean(t,
		"sqlplus user/password@tns",
		"connect user/password@tns",
		"sqlplus user/pass@//host:1521/svc",
		"sqlplus / as sysdba",
		"sqlplus /nolog",
		"sqlplus scott@orcl",
		"sqlplus $DB_USER/$DB_PASS@$TNS",
		"sqlplus ${DB_USER}/${DB_PASS}@${TNS}",
		"connect sys/&pw@db as sysdba",
		"sqlplus -s app/<password>@db",
		"Connect input/output devices@home before booting",
		"to connect: see docs/Setup2x@main",
		"git log origin/Feature2x@{1}",
		"npm i @scope/Pkg2Name@1.2.3",
		"uses: Azure/K8sDeploy2@v4",
		"images/Logo2Dark@2x.png",
		"mail john/Doe2x@example.com",
		"connection pool/Max20@x",
		"conn = cx_Oracle.connect(user, pw, 'db/orcl')",
		"conn = oracledb.connect(f\"{user}/{pw}@{dsn}\")",
		"socket.connect('unix/Path2x@sock')",
		"db.connect('tests/fixtures/Db2x@1.sqlite')",
		"url=jdbc:oracle:thin:@//db:1521/ORCL",
		"url=jdbc:oracle:thin:${DB_USER}/${DB_PASS}@db:1521:ORCL",
	)
}

// A secret manager's --secret-string holds the secret itself, unless it is a reference, a
// file's (file://) or JSON, which the rules for its members judge.
func TestSecretStringFlag(t *testing.T) {
	found(t, "parameter-value",
		"aws secretsmanager create-secret --name prod/db --secret-string 'S3cr3t!xyz'",
		"aws secretsmanager put-secret-value --secret-id prod/db --secret-string=Hunter2Hunter2",
	)
	clean(t,
		"aws secretsmanager create-secret --name prod/db --secret-string file://creds.json",
		"aws secretsmanager create-secret --name prod/db --secret-string \"$DB_SECRET\"",
		"aws secretsmanager create-secret --name prod/db --secret-string '{\"user\":\"app\"}'",
		"see --secret-string-file for a file",
	)
}

// A token glued to a word by - or _ (ctx-ghp_..., prod_sk_live_...), or after a percent escape
// (a query's %2Fghp_..., %3D, %22), is found: "cairn start apex ctx-ghp_..." was stored. A
// keyword inside a longer identifier, or deep in a run of token characters, is not one.
func TestTokenGluedToAWord(t *testing.T) {
	for _, sh := range secrettest.Shapes() {
		if sh.Text != sh.Core || secrets.ScanString(" "+sh.Text) == nil {
			continue // a secret that needs its context, or none after a blank
		}
		for _, before := range []string{"ctx-", "ctx_", "prod-db_", "%2F", "%3D", "%22"} {
			if before[0] == '%' && (sh.Rule == "azure-ad-client-secret" || sh.Rule == "telegram-bot-token") {
				continue // their checks read more than the byte before: a word's start
			}
			if secrets.ScanString(before+sh.Text) == nil {
				t.Errorf("%s after %q: no secret found", sh.Name, before)
			}
		}
	}
	tok := "ghp_" + strings.Repeat("aB3dE6gH9j", 4)
	for _, s := range []string{
		"my-sk-learn-pipeline, x86_64-linux-gnu, pre-commit-hooks, fix-ghp_-prefix-scan",
		"feature_ghp_rotation and task-list, risk-assessment",
		strings.Repeat("very-long-kebab-", 4) + tok, // 64 bytes of word: inside another token
		"x" + tok, "%2" + tok, "A%2" + tok,
	} {
		if f := secrets.ScanString(s); f != nil {
			t.Errorf("ScanString(%q) = %v, want nothing", s, f)
		}
	}
}

// A flood of a keyword glued by - or _ reads a bounded stretch: only a keyword within a short
// word of a boundary runs its rule's regexp, so each byte is read a few times, however long
// the flood (jwt's window is 64 KB: each try reads that much).
func TestGluedFloodsReadLittle(t *testing.T) {
	const n = 256 << 10
	for _, unit := range []string{"-eyJ", "_github_pat_", "_github_pat_A1b2", "-sk-ant-", "_glpat-", "-ghp_", "a-AKIA"} {
		s := strings.Repeat(unit, n/len(unit))
		if reads := secrets.RegexpReads(s); reads > 6*len(s) {
			t.Errorf("%q repeated over %d bytes: the regexps read %d bytes, %d a byte", unit, len(s), reads, reads/len(s))
		}
		if around := secrets.ReadAround(s); around > 400*len(s) {
			t.Errorf("%q repeated over %d bytes: the checks around keywords read %d bytes, %d a byte", unit, len(s), around, around/len(s))
		}
	}
}
