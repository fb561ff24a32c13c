package plugintest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/hook"
	"github.com/cairn-dev/cairn/internal/release"
)

type pluginManifest struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Description string `json:"description"`
	Author      struct {
		Name string `json:"name"`
	} `json:"author"`
	License string `json:"license"`
}

var semver = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

func TestPluginJSON(t *testing.T) {
	var m pluginManifest
	readJSON(t, ".claude-plugin/plugin.json", &m)
	if m.Name != "cairn" {
		t.Errorf("name = %q, want cairn: the agent's tool names are mcp__plugin_cairn_cairn__*", m.Name)
	}
	if !semver.MatchString(m.Version) {
		t.Errorf("version = %q, want a semantic version (hooks/launch keys its build on it)", m.Version)
	}
	if strings.TrimSpace(m.Description) == "" {
		t.Error("description is empty")
	}
	if strings.TrimSpace(m.Author.Name) == "" {
		t.Error("author.name is empty")
	}
	if strings.TrimSpace(m.License) == "" {
		t.Error("license is empty")
	}
}

// plugin.json names the licence; the LICENSE file beside it must be that licence's text.
func TestLicenseMatchesPluginJSON(t *testing.T) {
	var m pluginManifest
	readJSON(t, ".claude-plugin/plugin.json", &m)
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "LICENSE"))
	if err != nil {
		t.Fatalf("plugin.json says %q but there is no LICENSE file: %v", m.License, err)
	}
	first := map[string]string{"MIT": "MIT License"}[m.License]
	if first == "" {
		t.Fatalf("license %q: this test knows only MIT; add the first line of the new licence's text", m.License)
	}
	if line, _, _ := strings.Cut(string(data), "\n"); line != first {
		t.Errorf("LICENSE starts %q, want %q for plugin.json's %q", line, first, m.License)
	}
}

// hooks/launch reads the version with shell builtins: the text after "version", a colon and a
// quote on the first line naming "version", up to the next quote. It must find the value a JSON
// parser does, or binaries would be keyed on the wrong version.
func TestPluginVersionAsLaunchReadsIt(t *testing.T) {
	var m pluginManifest
	readJSON(t, ".claude-plugin/plugin.json", &m)
	data, err := os.ReadFile(filepath.Join(repoRoot(t), ".claude-plugin/plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, line := range strings.Split(string(data), "\n") {
		if _, rest, ok := strings.Cut(line, `"version"`); ok {
			if _, rest, ok = strings.Cut(rest, ":"); ok {
				_, rest, _ = strings.Cut(rest, `"`)
				got, _, _ = strings.Cut(rest, `"`)
			}
			break
		}
	}
	if got != m.Version {
		t.Fatalf("a line-based read of plugin.json finds version %q, JSON says %q: keep \"version\" on its own line", got, m.Version)
	}
}

func TestMarketplaceJSON(t *testing.T) {
	var mk struct {
		Name  string `json:"name"`
		Owner struct {
			Name string `json:"name"`
		} `json:"owner"`
		Plugins []struct {
			Name        string `json:"name"`
			Source      any    `json:"source"`
			Description string `json:"description"`
			Version     string `json:"version"`
		} `json:"plugins"`
	}
	readJSON(t, ".claude-plugin/marketplace.json", &mk)
	if mk.Name == "" || strings.ToLower(mk.Name) != mk.Name || strings.ContainsAny(mk.Name, " _/") {
		t.Errorf("marketplace name = %q, want kebab-case (users type cairn@<name>)", mk.Name)
	}
	if mk.Owner.Name == "" {
		t.Error("owner.name is empty")
	}
	var m pluginManifest
	readJSON(t, ".claude-plugin/plugin.json", &m)
	found := false
	for _, p := range mk.Plugins {
		if p.Name != "cairn" {
			continue
		}
		found = true
		src, ok := p.Source.(string)
		if !ok {
			t.Errorf("plugin cairn's source is %T; this repository lists itself by relative path", p.Source)
			continue
		}
		dir := filepath.Join(repoRoot(t), filepath.FromSlash(src))
		if _, err := os.Stat(filepath.Join(dir, ".claude-plugin", "plugin.json")); err != nil {
			t.Errorf("plugin cairn's source %q does not hold .claude-plugin/plugin.json: %v", src, err)
		}
		if p.Version != "" && p.Version != m.Version {
			t.Errorf("marketplace lists version %q, plugin.json says %q", p.Version, m.Version)
		}
		if p.Description == "" {
			t.Error("plugin cairn has no description in the marketplace")
		}
	}
	if !found {
		t.Errorf("marketplace.json lists no plugin named cairn: `claude plugin install cairn@%s` would fail", mk.Name)
	}
}

func TestMCPJSON(t *testing.T) {
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	readJSON(t, ".mcp.json", &cfg)
	srv, ok := cfg.MCPServers["cairn"]
	if !ok {
		t.Fatalf("no server named cairn in .mcp.json (got %d servers)", len(cfg.MCPServers))
	}
	if len(cfg.MCPServers) != 1 {
		t.Errorf(".mcp.json has %d servers, want only cairn", len(cfg.MCPServers))
	}
	words := append([]string{srv.Command}, srv.Args...)
	checkLaunch(t, ".mcp.json server cairn", words, "cairn-mcp")
}

// sourceLaunch is the hooks.json form that runs hooks/launch in the shell Claude Code starts
// for the hook (no second shell): set -- NAME && command . "$CLAUDE_PLUGIN_ROOT/hooks/launch"
// || exit 0 (command: a launcher that is gone is no error that exits the shell with 2; the root
// from the environment, not written into the command, see TestHooksJSONCommandsOddRoot).
var sourceLaunch = regexp.MustCompile(`^set -- ([a-z-]+) && command \. "\$CLAUDE_PLUGIN_ROOT/hooks/launch" \|\| exit 0$`)

// checkLaunch checks a command line (already split into words) that should start the binary
// want: either hooks/launch want, or bin/want.
func checkLaunch(t *testing.T, what string, words []string, want string) {
	t.Helper()
	if len(words) == 0 {
		t.Errorf("%s: empty command", what)
		return
	}
	const prefix = "${CLAUDE_PLUGIN_ROOT}/"
	if !strings.HasPrefix(words[0], prefix) {
		t.Errorf("%s: command %q does not start with %s: it would depend on the working directory", what, words[0], prefix)
		return
	}
	rel := strings.TrimPrefix(words[0], prefix)
	mustExecutable(t, rel, what)
	var bin string
	switch rel {
	case "hooks/launch":
		if len(words) < 2 {
			t.Errorf("%s: hooks/launch with no binary name", what)
			return
		}
		bin = words[1]
	default:
		bin = strings.TrimPrefix(rel, "bin/")
	}
	if bin != want {
		t.Errorf("%s starts %q, want %q", what, bin, want)
	}
	src, ok := binarySources[bin]
	if !ok {
		t.Errorf("%s: %q is not a Cairn binary", what, bin)
		return
	}
	if _, err := os.Stat(filepath.Join(repoRoot(t), src, "main.go")); err != nil {
		t.Errorf("%s: %s is built from %s, which has no main.go: %v", what, bin, src, err)
	}
}

type hooksFile struct {
	Hooks map[string][]struct {
		Matcher *string `json:"matcher"`
		Hooks   []struct {
			Type    string   `json:"type"`
			Command string   `json:"command"`
			Args    []string `json:"args"`
			Timeout *float64 `json:"timeout"`
		} `json:"hooks"`
	} `json:"hooks"`
}

func TestHooksJSON(t *testing.T) {
	var hf hooksFile
	readJSON(t, "hooks/hooks.json", &hf)
	wantBinary := map[string]string{"SessionStart": "cairn-session-start", "Stop": "cairn-stop",
		"TaskCreated": "cairn-event", "TaskCompleted": "cairn-event", "PreCompact": "cairn-event", "StopFailure": "cairn-event"}
	for event := range wantBinary {
		if len(hf.Hooks[event]) == 0 {
			t.Errorf("hooks.json has no %s hook", event)
		}
	}
	for event, groups := range hf.Hooks {
		want, ok := wantBinary[event]
		if !ok {
			t.Errorf("hooks.json has a %s hook; this test knows only %v", event, slices.Sorted(mapKeys(wantBinary)))
			continue
		}
		for i, g := range groups {
			if (event == "SessionStart" || event == "StopFailure") && g.Matcher != nil && *g.Matcher != "" && *g.Matcher != "*" {
				t.Errorf("%s group %d has matcher %q: a matcher can miss a source or an error kind; use none", event, i, *g.Matcher)
			}
			if len(g.Hooks) == 0 {
				t.Errorf("%s group %d has no hooks", event, i)
			}
			for j, h := range g.Hooks {
				what := fmt.Sprintf("%s hook %d.%d", event, i, j)
				if h.Type != "command" {
					t.Errorf("%s: type %q, want command", what, h.Type)
				}
				switch {
				case h.Timeout == nil:
					t.Errorf("%s: no timeout; Claude Code's default is 600 s", what)
				case *h.Timeout <= hook.Deadline.Seconds() || *h.Timeout > 30:
					t.Errorf("%s: timeout %v s; want short (at most 30 s) and above the hook's own %s deadline", what, *h.Timeout, hook.Deadline)
				}
				words := h.Args
				if m := sourceLaunch.FindStringSubmatch(h.Command); m != nil && len(h.Args) == 0 {
					words = []string{"${CLAUDE_PLUGIN_ROOT}/hooks/launch", m[1]}
				} else if len(words) == 0 {
					var err error
					words, err = shellWords(h.Command)
					if err != nil {
						t.Errorf("%s: command %q: %v", what, h.Command, err)
						continue
					}
				} else {
					words = append([]string{h.Command}, words...)
				}
				checkLaunch(t, what, words, want)
			}
		}
	}
}

// The hooks' own deadline must leave room under Claude Code's timeout.
func TestHookDeadlineUnderTimeout(t *testing.T) {
	if hook.Deadline+hook.Deadline/10 >= 10*time.Second {
		t.Fatalf("hook.Deadline %s plus grace reaches hooks.json's 10 s timeout", hook.Deadline)
	}
}

func mapKeys[M ~map[K]V, K comparable, V any](m M) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// shellWords splits a /bin/sh command line of plain words and double-quoted words, the only
// forms hooks.json uses. Anything else (single quotes, escapes, operators, $VAR without braces)
// is refused: a command that needs them is too clever for a hook.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
			inWord = true
		case quoted:
			cur.WriteRune(r)
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case strings.ContainsRune(`'\;&|<>()`+"`", r):
			return nil, errUnsupported(r)
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		return nil, errUnsupported('"')
	}
	if inWord {
		words = append(words, cur.String())
	}
	for _, w := range words {
		if strings.Contains(strings.ReplaceAll(w, "${", ""), "$") {
			return nil, errUnsupported('$')
		}
	}
	return words, nil
}

type errUnsupported rune

func (e errUnsupported) Error() string {
	return "unsupported shell syntax at " + string(rune(e))
}

// hooks/install builds, and a release holds, exactly the binaries this test knows, each from
// its package.
func TestBuildLists(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "hooks", "install"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*for cairn_b in (cairn[^;]*:[^;]*); do`).FindSubmatch(data)
	if m == nil {
		t.Fatal("hooks/install has no `for cairn_b in NAME:./DIR ...; do` build list")
	}
	got := map[string]string{}
	for _, f := range strings.Fields(string(m[1])) {
		name, dir, ok := strings.Cut(f, ":./")
		if !ok {
			t.Fatalf("build list entry %q is not NAME:./DIR", f)
		}
		got[name] = dir
	}
	if fmt.Sprint(got) != fmt.Sprint(binarySources) {
		t.Errorf("hooks/install builds %v, want %v", got, binarySources)
	}
	rel := map[string]string{}
	for _, b := range release.Binaries {
		rel[b.Name] = strings.TrimPrefix(b.Pkg, "./")
	}
	if fmt.Sprint(rel) != fmt.Sprint(binarySources) {
		t.Errorf("a release holds %v, want %v", rel, binarySources)
	}
}
