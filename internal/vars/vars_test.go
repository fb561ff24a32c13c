package vars_test

import (
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/vars"
)

func TestValidKey(t *testing.T) {
	tests := []struct {
		key string
		ok  bool
	}{
		// The seeds' names and Cairn's own namespace.
		{"PLAN_PATH", true},
		{"RESEARCH_COMPLETE", true},
		{"REPORTS_CREATED", true},
		{"REPORT_PATHS", true},
		{"TOPIC_PATH", true},
		{"WORKFLOW_ID", true},
		{"WORKFLOW_SCOPE", true},
		{"CURRENT_WAVE", true},
		{"SUPERVISOR_RESULT", true},
		{"WF_BRANCH", true},
		{"WF_TEST_STATUS", true},
		{"WF_2", true},
		{"WF_" + strings.Repeat("K", 61), true},
		{"WF_" + strings.Repeat("K", 62), false},
		// Shapes outside the rule.
		{"", false},
		{"WF", false},
		{"WF_", false},
		{"WF__X", false},
		{"PLAN", false},
		{"plan_path", false},
		{"Plan_Path", false},
		{"1ST", false},
		{"_private", false},
		{"has-dash", false},
		{"has space", false},
		{"dot.name", false},
		{"semi;colon", false},
		{"A=B", false},
		{"a$(x)", false},
		{"new\nline", false},
		{"caf\u00e9", false},
		{"NUL\x00", false},
		{"STATE_FILE", false},
		{"GITHUB_REPO", false},
		{"MY_PATH", false},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			err := vars.ValidKey(tt.key)
			if (err == nil) != tt.ok {
				t.Fatalf("ValidKey(%q) = %v, want ok=%v", tt.key, err, tt.ok)
			}
			if err != nil && !errors.Is(err, vars.ErrInvalid) {
				t.Errorf("error does not wrap ErrInvalid: %v", err)
			}
			if err != nil && strings.ContainsAny(err.Error(), "\n\x00") {
				t.Errorf("error text carries raw control characters: %q", err)
			}
			if err != nil && len(tt.key) > 3 && repeats(err, tt.key) {
				t.Errorf("error repeats the refused name: %q", err)
			}
		})
	}
}

// repeats reports err holding k other than in the rule's own wording (which names PLAN_PATH).
func repeats(err error, k string) bool {
	return strings.Contains(err.Error(), k) && !strings.Contains(vars.ValidKey("").Error(), k)
}

// runsCode are environment names that make a later program run code, load a library, read
// a startup file, change its flags or send its traffic elsewhere, from the ecosystems Cairn's
// users work in. Every one of them must be refused, in every case spelling.
var runsCode = []string{
	// Shells and the C library.
	"PATH", "IFS", "ENV", "BASH_ENV", "BASH_FUNC_x%%", "CDPATH", "PS1", "PS4", "PROMPT_COMMAND",
	"SHELLOPTS", "BASHOPTS", "HISTFILE", "ZDOTDIR", "HOME", "SHELL", "TMPDIR", "FPATH",
	"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH",
	"GCONV_PATH", "LOCPATH", "NLSPATH", "HOSTALIASES", "RESOLV_HOST_CONF", "MALLOC_CHECK_", "LC_ALL", "LANG",
	// Pagers, editors, terminals, askpass.
	"PAGER", "MANPAGER", "GIT_PAGER", "LESSOPEN", "LESSCLOSE", "LESS", "EDITOR", "VISUAL",
	"GIT_EDITOR", "BROWSER", "TERMINAL", "SSH_ASKPASS", "SUDO_ASKPASS", "GIT_ASKPASS",
	"DISPLAY", "TERM", "TERMINFO",
	// Git and SSH.
	"GIT_SSH", "GIT_SSH_COMMAND", "GIT_DIR", "GIT_WORK_TREE", "GIT_CONFIG_GLOBAL",
	"GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "GIT_PROXY_COMMAND",
	"SSH_AUTH_SOCK", "GNUPGHOME",
	// Go.
	"GOFLAGS", "GOPROXY", "GONOSUMDB", "GONOSUMCHECK", "GOPRIVATE", "GOINSECURE", "GOTOOLCHAIN",
	"GOPATH", "GOROOT", "GOBIN", "CGO_CFLAGS", "CGO_LDFLAGS", "GOENV", "GODEBUG", "GOEXPERIMENT",
	// C, C++ and make.
	"CC", "CXX", "CPP", "LD", "AR", "CFLAGS", "CXXFLAGS", "LDFLAGS", "CPPFLAGS", "MAKEFLAGS",
	"MAKE", "MFLAGS", "PKG_CONFIG_PATH", "CMAKE_TOOLCHAIN_FILE", "CCACHE_PREFIX",
	// Rust.
	"RUSTC", "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "RUSTFLAGS", "RUSTDOCFLAGS",
	"CARGO_HOME", "CARGO_BUILD_RUSTC_WRAPPER", "CARGO_TARGET_DIR", "RUSTUP_TOOLCHAIN",
	// Node and its package managers.
	"NODE_OPTIONS", "NODE_PATH", "NODE_EXTRA_CA_CERTS", "NODE_TLS_REJECT_UNAUTHORIZED",
	"npm_config_script_shell", "npm_config_registry", "NPM_CONFIG_REGISTRY", "npm_config_userconfig",
	"YARN_RC_FILENAME", "YARN_NPM_REGISTRY_SERVER", "PNPM_HOME", "BUN_INSTALL", "DENO_DIR",
	// Python.
	"PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONINSPECT", "PYTHONWARNINGS",
	"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST", "PIP_CONFIG_FILE",
	"UV_INDEX_URL", "UV_PYTHON", "POETRY_HOME", "VIRTUAL_ENV", "CONDA_PREFIX",
	// Ruby, Perl, Java, PHP, .NET.
	"RUBYOPT", "RUBYLIB", "GEM_HOME", "GEM_PATH", "BUNDLE_GEMFILE", "PERL5OPT", "PERL5LIB",
	"PERL5DB", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "JAVA_HOME",
	"MAVEN_OPTS", "GRADLE_OPTS", "GRADLE_USER_HOME", "PHPRC", "PHP_INI_SCAN_DIR",
	"COMPOSER_HOME", "DOTNET_ROOT", "DOTNET_STARTUP_HOOKS", "CORECLR_PROFILER",
	// Network redirection.
	"HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "ALL_PROXY", "all_proxy",
	"NO_PROXY", "no_proxy", "FTP_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE",
	"REQUESTS_CA_BUNDLE", "CURL_HOME", "WGETRC",
	// Cloud, container and infrastructure tools.
	"DOCKER_HOST", "DOCKER_CONFIG", "KUBECONFIG", "AWS_PROFILE", "AWS_CONFIG_FILE",
	"AWS_ENDPOINT_URL", "GOOGLE_APPLICATION_CREDENTIALS", "TF_CLI_ARGS", "TF_CLI_CONFIG_FILE",
	"ANSIBLE_CONFIG", "HELM_PLUGINS",
	// Claude Code and Cairn themselves.
	"CLAUDE_PROJECT_DIR", "CLAUDE_CONFIG_DIR", "ANTHROPIC_BASE_URL", "CAIRN_STATE_DIR",
	"CAIRN_MEMORY_DIR", "CLAUDE_CODE_SESSION_ID",
}

// TestCodeRunningNamesRefused: not one of the names above (nor its other case spellings)
// can be set or exported, and the error never repeats it.
func TestCodeRunningNamesRefused(t *testing.T) {
	if len(runsCode) < 100 {
		t.Fatalf("only %d names", len(runsCode))
	}
	refused := 0
	for _, name := range runsCode {
		for _, k := range []string{name, strings.ToUpper(name), strings.ToLower(name)} {
			err := vars.ValidKey(k)
			if err == nil {
				t.Errorf("%s accepted", k)
				continue
			}
			if len(k) > 3 && repeats(err, k) {
				t.Errorf("%s: the error repeats the name: %v", k, err)
			}
			if out := vars.Export(map[string]string{k: "x"}); strings.Contains(out, "export") {
				t.Errorf("%s exported: %q", k, out)
			}
		}
		refused++
	}
	t.Logf("%d code-running or traffic-redirecting names refused", refused)
}

func TestValidValue(t *testing.T) {
	tests := []struct {
		name string
		v    string
		ok   bool
	}{
		{"empty", "", true},
		{"path", "/x/plan.md", true},
		{"multiline", "a\nb\n", true},
		{"quotes", `it's "quoted"`, true},
		{"unicode", "日本 🚀 \u202e", true},
		{"at-cap", strings.Repeat("v", vars.MaxValueLen), true},
		{"over-cap", strings.Repeat("v", vars.MaxValueLen+1), false},
		{"nul", "a\x00b", false},
		{"invalid-utf8", "a\xffb", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := vars.ValidValue(tt.v)
			if (err == nil) != tt.ok {
				t.Fatalf("ValidValue = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, vars.ErrInvalid) {
				t.Errorf("error does not wrap ErrInvalid: %v", err)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	if err := vars.Check(map[string]string{"WF_A": "1", "WF_B": "two"}); err != nil {
		t.Fatal(err)
	}
	if err := vars.Check(nil); err != nil {
		t.Fatal(err)
	}
	err := vars.Check(map[string]string{"WF_OK": "1", "WF_Z_BAD": "a\x00b"})
	if err == nil || !strings.Contains(err.Error(), "WF_Z_BAD") || !errors.Is(err, vars.ErrInvalid) {
		t.Fatalf("bad value: %v", err)
	}
	if err := vars.Check(map[string]string{"PATH": "/x"}); err == nil {
		t.Fatal("PATH accepted")
	}
	many := map[string]string{}
	for i := 0; i <= vars.MaxVars; i++ {
		many["WF_V"+strings.Repeat("X", i%50)+string(rune('A'+i%26))+strings.Repeat("Y", i/50)] = "1"
	}
	if len(many) <= vars.MaxVars {
		t.Fatalf("test built only %d vars", len(many))
	}
	if err := vars.Check(many); err == nil {
		t.Fatal("too many vars accepted")
	}
}

func TestExportFormat(t *testing.T) {
	got := vars.Export(map[string]string{
		"REPORTS_CREATED":   "4",
		"RESEARCH_COMPLETE": "true",
		"WF_NOTE":           "it's\nfine",
		"WF_EMPTY":          "",
		"PATH":              "/evil",  // denied: left out
		"bad;name":          "x",      // invalid: left out
		"WF_NUL":            "a\x00b", // invalid value: left out
	})
	want := "export REPORTS_CREATED='4'\n" +
		"export RESEARCH_COMPLETE='true'\n" +
		"export WF_EMPTY=''\n" +
		"export WF_NOTE='it'\\''s\nfine'\n" +
		"# cairn: left out 3 variables whose name or value is not allowed\n"
	if got != want {
		t.Fatalf("Export =\n%s\nwant\n%s", got, want)
	}
	if got, want := vars.Export(map[string]string{"PATH": "/evil"}), "# cairn: left out 1 variable whose name or value is not allowed\n"; got != want {
		t.Fatalf("Export with one left out = %q, want %q", got, want)
	}
	if vars.Export(nil) != "" {
		t.Fatal("Export(nil) is not empty")
	}
}

// hostile values that a shell must give back byte for byte.
var hostile = map[string]string{
	"WF_CMD_SUBST":     "$(touch pwned-subst)",
	"WF_BACKTICKS":     "`touch pwned-tick`",
	"WF_SINGLE_QUOTE":  "'; touch pwned-quote; '",
	"WF_ESCAPED_QUOTE": `'\''`,
	"WF_DOUBLE_QUOTES": `"$HOME" "${PATH}"`,
	"WF_BACKSLASHES":   `\ \\ \n \' \"`,
	"WF_NEWLINES":      "line1\nline2\n\n",
	"WF_LEADING_NL":    "\n\nx",
	"WF_CRLF":          "a\r\nb\r",
	"WF_TABS":          "\tx\t",
	"WF_DOLLAR_QUOTE":  "$'\\x41'",
	"WF_HISTORY":       "!! !$ !-1",
	"WF_GLOB":          "* ? [a-z] ~",
	"WF_SEMICOLONS":    "a; b && c || d | e > /tmp/pwned-redirect &",
	"WF_COMMENT":       "# not a comment",
	"WF_UNICODE":       "日本語 🚀 ünï \u202e\u200b\U000e0041",
	"WF_EXPORT_LINE":   "x'\nexport PWNED='1",
	"WF_EMPTY":         "",
	"WF_ONLY_QUOTE":    "'",
	"WF_ALL_ASCII":     allASCII(),
	"WF_HUGE":          strings.Repeat("ab'c\n", vars.MaxValueLen/5),
}

func allASCII() string {
	var b strings.Builder
	for c := 1; c < 128; c++ {
		b.WriteByte(byte(c))
	}
	return b.String()
}

// TestExportEvalInShells evals the rendering in every POSIX shell on the machine and reads
// each value back through printf, comparing byte for byte; nothing hostile may run.
func TestExportEvalInShells(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no POSIX shell on windows")
	}
	all := map[string]string{}
	for k, v := range hostile {
		all[k] = v
	}
	r := rand.New(rand.NewPCG(7, 9))
	n := 100
	if testing.Short() {
		n = 20
	}
	for i := 0; i < n; i++ {
		all["WF_RANDOM_"+string(rune('A'+i/26))+string(rune('A'+i%26))] = randomValue(r)
	}
	shells := 0
	for _, sh := range []string{"sh", "dash", "bash", "zsh", "ksh", "busybox"} {
		path, err := exec.LookPath(sh)
		if err != nil {
			continue
		}
		shells++
		t.Run(sh, func(t *testing.T) { evalRoundTrip(t, path, all) })
	}
	if shells == 0 {
		t.Fatal("no POSIX shell found; this test needs sh")
	}
}

func evalRoundTrip(t *testing.T, shell string, want map[string]string) {
	dir := t.TempDir()
	file := filepath.Join(dir, "vars.sh")
	if err := os.WriteFile(file, []byte(vars.Export(want)), 0o600); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	// Print each value NUL-terminated, by indirect name so the script holds no value.
	script := `eval "$(cat "$1")" || exit 9; shift; for k in "$@"; do eval "printf '%s\0' \"\$$k\""; done`
	args := []string{}
	if filepath.Base(shell) == "busybox" {
		args = append(args, "sh")
	}
	args = append(args, "-c", script, "sh", file)
	args = append(args, keys...)
	cmd := exec.Command(shell, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LC_ALL=C"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", shell, err)
	}
	got := strings.Split(string(out), "\x00")
	if len(got) != len(keys)+1 || got[len(keys)] != "" {
		t.Fatalf("%s printed %d values, want %d", shell, len(got)-1, len(keys))
	}
	for i, k := range keys {
		if got[i] != want[k] {
			t.Errorf("%s: %s = %q, want %q", shell, k, trunc(got[i]), trunc(want[k]))
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "vars.sh" {
			t.Errorf("%s: a value ran a command: %s exists", shell, e.Name())
		}
	}
	if _, err := os.Stat("/tmp/pwned-redirect"); err == nil {
		t.Errorf("%s: a value ran a redirect", shell)
	}
}

func randomValue(r *rand.Rand) string {
	const pool = "'\"`$\\!;&|<>(){}[]*?~# \t\nab\r日🚀\u202e"
	runes := []rune(pool)
	var b strings.Builder
	for n := r.IntN(40); n > 0; n-- {
		b.WriteRune(runes[r.IntN(len(runes))])
	}
	return b.String()
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// parseExport reads Export's output the way a POSIX shell does for these lines, strictly:
// anything but `export NAME='...'` (with '\” for a quote, '\\' for a backslash)
// or a "# cairn:" comment fails.
func parseExport(t *testing.T, out string) map[string]string {
	got := map[string]string{}
	for rest := out; rest != ""; {
		if strings.HasPrefix(rest, "# cairn: ") {
			nl := strings.IndexByte(rest, '\n')
			if nl < 0 || nl != len(rest)-1 {
				t.Fatalf("comment is not the last line: %q", rest)
			}
			break
		}
		if !strings.HasPrefix(rest, "export ") {
			t.Fatalf("unexpected text: %q", trunc(rest))
		}
		rest = rest[len("export "):]
		eq := strings.IndexByte(rest, '=')
		if eq < 0 || vars.ValidKey(rest[:eq]) != nil {
			t.Fatalf("bad name in %q", trunc(rest))
		}
		name := rest[:eq]
		rest = rest[eq+1:]
		var v strings.Builder
		for {
			if !strings.HasPrefix(rest, "'") {
				t.Fatalf("%s: value does not open with a quote: %q", name, trunc(rest))
			}
			end := strings.IndexByte(rest[1:], '\'')
			if end < 0 {
				t.Fatalf("%s: unterminated quote", name)
			}
			v.WriteString(rest[1 : 1+end])
			rest = rest[end+2:]
			if strings.HasPrefix(rest, `\''`) {
				v.WriteByte('\'')
				rest = rest[2:]
				continue
			}
			if strings.HasPrefix(rest, `\\'`) {
				v.WriteByte('\\')
				rest = rest[2:]
				continue
			}
			break
		}
		if !strings.HasPrefix(rest, "\n") {
			t.Fatalf("%s: text after the value: %q", name, trunc(rest))
		}
		rest = rest[1:]
		got[name] = v.String()
	}
	return got
}

func TestExportParsesBack(t *testing.T) {
	got := parseExport(t, vars.Export(hostile))
	if len(got) != len(hostile) {
		t.Fatalf("got %d vars, want %d", len(got), len(hostile))
	}
	for k, v := range hostile {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, trunc(got[k]), trunc(v))
		}
	}
}

func FuzzExport(f *testing.F) {
	for k, v := range hostile {
		if len(v) < 1000 {
			f.Add(k, v, "WF_B", "x")
		}
	}
	f.Add("PATH", "x", "a b", "y")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		in := map[string]string{k1: v1, k2: v2}
		out := vars.Export(in)
		got := parseExport(t, out)
		left := 0
		for k, v := range in {
			ok := vars.ValidKey(k) == nil && vars.ValidValue(v) == nil
			if !ok {
				left++
				if _, present := got[k]; present {
					t.Fatalf("invalid %q exported", k)
				}
				continue
			}
			if got[k] != v {
				t.Fatalf("%q = %q, want %q", k, got[k], v)
			}
		}
		if (left > 0) != strings.Contains(out, "# cairn: left out") {
			t.Fatalf("left out %d but output %q", left, out)
		}
		if !utf8.ValidString(out) || strings.IndexByte(out, 0) >= 0 {
			t.Fatal("output is not clean UTF-8 without NUL")
		}
	})
}

// Fish reads `\\` and `\'` as escapes inside single quotes, where POSIX shells read nothing:
// a value ending in a backslash would there close no quote, and the next line's value would
// run as commands. `cairn vars export | source` in fish must run nothing and give every
// value back.
func TestExportSourcedByFish(t *testing.T) {
	fish, err := exec.LookPath("fish")
	if err != nil {
		t.Skip("fish is not installed")
	}
	want := map[string]string{}
	for k, v := range hostile {
		want[k] = v
	}
	want["WF_TRAILING_BACKSLASH"] = `x\`
	want["WF_XRUN"] = "; touch pwned-fish; #"
	want["WF_BACKSLASH_QUOTE"] = `\'`
	dir := t.TempDir()
	file := filepath.Join(dir, "vars.fish")
	if err := os.WriteFile(file, []byte(vars.Export(want)), 0o600); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	cmd := exec.Command(fish, append([]string{"--no-config", "-c", `source $argv[1]; or exit 9; for k in $argv[2..-1]; printf '%s\0' "$$k"; end`, file}, keys...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LC_ALL=C"} // fish writes its config there
	out, err := cmd.Output()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "vars.fish" {
			t.Errorf("a value ran a command: %s exists", e.Name())
		}
	}
	if err != nil {
		t.Fatalf("fish: %v", err)
	}
	got := strings.Split(string(out), "\x00")
	if len(got) != len(keys)+1 {
		t.Fatalf("fish printed %d values, want %d", len(got)-1, len(keys))
	}
	for i, k := range keys {
		if got[i] != want[k] {
			t.Errorf("%s = %q, want %q", k, trunc(got[i]), trunc(want[k]))
		}
	}
}

// A name with a secret's shape is refused in the secrets package's words (internal/secrets,
// Finding.Refusal), which name the rule and never the name.
func TestSecretShapedKeyRefusal(t *testing.T) {
	key := "WF_" + "AKIA" + "IOSFODNN7EXAMPLE"
	err := vars.ValidKey(key)
	if !errors.Is(err, vars.ErrInvalid) {
		t.Fatalf("ValidKey = %v, want ErrInvalid", err)
	}
	const want = "invalid workflow variable: secret found (aws-access-key-id) in the name: secrets are not stored"
	if err.Error() != want {
		t.Errorf("ValidKey = %q, want %q", err, want)
	}
	if strings.Contains(err.Error(), "IOSFODNN7") {
		t.Errorf("the refusal repeats the name: %q", err)
	}
}
