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
		{"PLAN_PATH", true},
		{"RESEARCH_COMPLETE", true},
		{"_private", true},
		{"a", true},
		{"x1", true},
		{"WORKFLOW_ID", true},
		{"STATE_FILE", true},
		{"Path2", true},
		{"MY_PATH", true},
		{"HOMEPAGE", true},
		{strings.Repeat("K", 64), true},
		{strings.Repeat("K", 65), false},
		{"", false},
		{"1ST", false},
		{"has-dash", false},
		{"has space", false},
		{"dot.name", false},
		{"semi;colon", false},
		{"A=B", false},
		{"a$(x)", false},
		{"new\nline", false},
		{"caf\u00e9", false},
		{"NUL\x00", false},
		{"PATH", false},
		{"path", false}, // zsh ties it to PATH
		{"Path", false},
		{"IFS", false},
		{"HOME", false},
		{"PS1", false},
		{"PS4", false},
		{"PROMPT_COMMAND", false},
		{"ENV", false},
		{"CDPATH", false},
		{"SHELLOPTS", false},
		{"UID", false},
		{"_", false},
		{"LD_PRELOAD", false},
		{"LD_LIBRARY_PATH", false},
		{"DYLD_INSERT_LIBRARIES", false},
		{"BASH_ENV", false},
		{"BASH_FUNC_x", false},
		{"LC_ALL", false},
		{"GIT_SSH_COMMAND", false},
		{"GIT_DIR", false},
		{"NODE_OPTIONS", false},
		{"node_options", false},
		{"PYTHONPATH", false},
		{"GITHUB_REPO", true},
		{"CLAUDE_PROJECT_DIR", false},
		{"CAIRN_STATE_DIR", false},
		{"ld_preload", true}, // not special anywhere: prefixes are case-sensitive
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
		})
	}
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
	if err := vars.Check(map[string]string{"A": "1", "B": "two"}); err != nil {
		t.Fatal(err)
	}
	if err := vars.Check(nil); err != nil {
		t.Fatal(err)
	}
	err := vars.Check(map[string]string{"OK": "1", "Z_BAD": "a\x00b"})
	if err == nil || !strings.Contains(err.Error(), "Z_BAD") || !errors.Is(err, vars.ErrInvalid) {
		t.Fatalf("bad value: %v", err)
	}
	if err := vars.Check(map[string]string{"PATH": "/x"}); err == nil {
		t.Fatal("PATH accepted")
	}
	many := map[string]string{}
	for i := 0; i <= vars.MaxVars; i++ {
		many["V"+strings.Repeat("x", i%50)+string(rune('A'+i%26))+strings.Repeat("y", i/50)] = "1"
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
		"NOTE":              "it's\nfine",
		"EMPTY":             "",
		"PATH":              "/evil",  // denied: left out
		"bad;name":          "x",      // invalid: left out
		"NUL":               "a\x00b", // invalid value: left out
	})
	want := "export EMPTY=''\n" +
		"export NOTE='it'\\''s\nfine'\n" +
		"export REPORTS_CREATED='4'\n" +
		"export RESEARCH_COMPLETE='true'\n" +
		"# cairn: left out 3 variable(s) whose name or value is not allowed\n"
	if got != want {
		t.Fatalf("Export =\n%s\nwant\n%s", got, want)
	}
	if vars.Export(nil) != "" {
		t.Fatal("Export(nil) is not empty")
	}
}

// hostile values that a shell must give back byte for byte.
var hostile = map[string]string{
	"CMD_SUBST":     "$(touch pwned-subst)",
	"BACKTICKS":     "`touch pwned-tick`",
	"SINGLE_QUOTE":  "'; touch pwned-quote; '",
	"ESCAPED_QUOTE": `'\''`,
	"DOUBLE_QUOTES": `"$HOME" "${PATH}"`,
	"BACKSLASHES":   `\ \\ \n \' \"`,
	"NEWLINES":      "line1\nline2\n\n",
	"LEADING_NL":    "\n\nx",
	"CRLF":          "a\r\nb\r",
	"TABS":          "\tx\t",
	"DOLLAR_QUOTE":  "$'\\x41'",
	"HISTORY":       "!! !$ !-1",
	"GLOB":          "* ? [a-z] ~",
	"SEMICOLONS":    "a; b && c || d | e > /tmp/pwned-redirect &",
	"COMMENT":       "# not a comment",
	"UNICODE":       "日本語 🚀 ünï \u202e\u200b\U000e0041",
	"EXPORT_LINE":   "x'\nexport PWNED='1",
	"EMPTY":         "",
	"ONLY_QUOTE":    "'",
	"ALL_ASCII":     allASCII(),
	"HUGE":          strings.Repeat("ab'c\n", vars.MaxValueLen/5),
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
		all["RANDOM_"+string(rune('A'+i/26))+string(rune('A'+i%26))] = randomValue(r)
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
// anything but `export NAME='...'` (with '\” for a quote) or a "# cairn:" comment fails.
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
			f.Add(k, v, "B", "x")
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
