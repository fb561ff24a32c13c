package plugintest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/adrg/frontmatter"
	"gopkg.in/yaml.v3"
)

// yamlMatter is the only front matter format Claude Code reads; yaml.v3 also refuses the
// broken YAML that `claude plugin validate` lets through.
var yamlMatter = frontmatter.NewFormat("---", "---", yaml.Unmarshal)

type skillMatter struct {
	Name         string `yaml:"name"`
	Description  string `yaml:"description"`
	AllowedTools any    `yaml:"allowed-tools"`
	ArgumentHint string `yaml:"argument-hint"`
}

func TestSkills(t *testing.T) {
	root := repoRoot(t)
	paths, err := filepath.Glob(filepath.Join(root, "skills", "*", "SKILL.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("no skills/*/SKILL.md: the plugin ships the cairn skill")
	}
	for _, p := range paths {
		folder := filepath.Base(filepath.Dir(p))
		t.Run(folder, func(t *testing.T) {
			var m skillMatter
			body := parseMatter(t, p, &m)
			if m.Name != folder {
				t.Errorf("front matter name %q does not match its folder %q", m.Name, folder)
			}
			if !regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`).MatchString(m.Name) {
				t.Errorf("name %q is not kebab-case", m.Name)
			}
			if !strings.HasPrefix(m.Description, "Use when") {
				t.Errorf("description %q does not say when to use the skill (\"Use when ...\")", m.Description)
			}
			if len(bytes.TrimSpace(body)) == 0 {
				t.Error("the skill has no body")
			}
		})
	}
}

// Every slash command has a description and a body, and the README's "Slash commands" line
// lists each as /cairn:NAME with its argument hint, and no other.
func TestCommands(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(repoRoot(t), "commands", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, line, ok := strings.Cut(string(readme), "**Slash commands:**")
	if !ok {
		t.Fatal("README has no \"**Slash commands:**\"")
	}
	line, _, _ = strings.Cut(line, "\n\n")
	listed := regexp.MustCompile("`(/cairn:[^`]*)`").FindAllStringSubmatch(line, -1)
	if len(listed) != len(paths) {
		t.Errorf("the README lists %d slash commands (%q); commands/ has %d", len(listed), listed, len(paths))
	}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".md")
		t.Run(name, func(t *testing.T) {
			var m skillMatter
			body := parseMatter(t, p, &m)
			if strings.TrimSpace(m.Description) == "" {
				t.Error("no description: /help would show nothing for it")
			}
			if len(bytes.TrimSpace(body)) == 0 {
				t.Error("the command has no body")
			}
			// .claude/cairn/ is only where the state lives by default: CAIRN_STATE_DIR moves it
			if bytes.Contains(body, []byte(".claude/cairn/")) && !bytes.Contains(body, []byte("CAIRN_STATE_DIR")) {
				t.Error("names a place under .claude/cairn/ as if it were always there: CAIRN_STATE_DIR moves it")
			}
			// A tool the command tells the model to call is one it allows: otherwise the call
			// asks the user, or under claude -p is refused.
			allowed := fmt.Sprint(m.AllowedTools)
			for _, tool := range toolMention.FindAllSubmatch(body, -1) {
				if !slices.ContainsFunc(toolMention.FindAllStringSubmatch(allowed, -1), func(a []string) bool { return a[1] == string(tool[1]) }) {
					t.Errorf("the command calls mcp__plugin_cairn_cairn__%s, which its allowed-tools (%s) lacks", tool[1], allowed)
				}
			}
			// One that acts on the active workflow says what to do when none is: else, with
			// none, the model asks the user for an outcome of nothing, or calls a tool that is
			// bound to be refused.
			if activeTool.Match(body) && !strings.Contains(strings.Join(strings.Fields(string(body)), " "), "If nothing is active") {
				t.Error("acts on the active workflow but does not say what to do when nothing is active")
			}
			want := strings.TrimSpace("/cairn:" + name + " " + m.ArgumentHint)
			if !slices.ContainsFunc(listed, func(l []string) bool { return l[1] == want }) {
				t.Errorf("the README's slash commands do not list `%s`", want)
			}
		})
	}
}

// parseMatter reads path's YAML front matter into v and returns the body.
func parseMatter(t *testing.T, path string, v any) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	body, err := frontmatter.MustParse(f, v, yamlMatter)
	if err != nil {
		t.Fatalf("%s: front matter: %v", path, err)
	}
	return body
}

// activeTool names a tool that acts on the active workflow, refused when none is.
var activeTool = regexp.MustCompile(`mcp__plugin_cairn_cairn__(complete_workflow|transition|update_task|set_enforcement|set_vars|expire_ttl)\b`)

var toolMention = regexp.MustCompile(`mcp__plugin_cairn_cairn__([A-Za-z0-9_-]*)(.?)`)

// Every tool the skill and the commands name (in text or in allowed-tools) is one the MCP
// server serves (issue 5's list); a typo would send the agent to a tool that does not exist.
func TestToolMentions(t *testing.T) {
	root := repoRoot(t)
	seen := 0
	for _, dir := range []string{"skills", "commands"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			for _, m := range toolMention.FindAllSubmatch(data, -1) {
				tool, next := string(m[1]), string(m[2])
				seen++
				switch {
				case tool == "" && (next == "<" || next == "*"):
					// a placeholder (mcp__plugin_cairn_cairn__<tool>) or a wildcard
				case tool == "":
					t.Errorf("%s: %q names no tool", rel, m[0])
				case !slices.Contains(mcpTools, tool):
					t.Errorf("%s: mcp__plugin_cairn_cairn__%s is not one of the server's tools %v", rel, tool, mcpTools)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if seen == 0 {
		t.Fatal("no mcp__plugin_cairn_cairn__ mention in skills/ or commands/: the pattern or the files changed")
	}
}

// The rules above catch what they should: a skill whose name is not its folder, broken YAML
// and an unknown tool.
func TestInvariantCheckersCatchMistakes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write("broken.md", "---\nname: [unclosed\n---\nbody\n")
	f, _ := os.Open(bad)
	defer f.Close()
	var m skillMatter
	if _, err := frontmatter.MustParse(f, &m, yamlMatter); err == nil {
		t.Error("broken YAML front matter parsed")
	}
	none := write("none.md", "no front matter\n")
	g, _ := os.Open(none)
	defer g.Close()
	if _, err := frontmatter.MustParse(g, &m, yamlMatter); err == nil {
		t.Error("a file without front matter parsed")
	}
	ms := toolMention.FindAllStringSubmatch("use mcp__plugin_cairn_cairn__resume_chek and mcp__plugin_cairn_cairn__<tool>", -1)
	if len(ms) != 2 || ms[0][1] != "resume_chek" || slices.Contains(mcpTools, ms[0][1]) || ms[1][1] != "" || ms[1][2] != "<" {
		t.Errorf("tool mentions parsed as %q", ms)
	}
}
