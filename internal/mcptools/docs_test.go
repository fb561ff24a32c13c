package mcptools

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/checktest"
)

// specNamed is the tool spec of that name, or nil.
func specNamed(name string) *toolSpec {
	for _, sp := range specs {
		if sp.name == name {
			return sp
		}
	}
	return nil
}

// readmeToolArgs reads the README's table of the agent's tools: tool -> its arguments as
// written, "name" or "name?" (optional).
func readmeToolArgs(t *testing.T, readme string) map[string][]string {
	t.Helper()
	_, table, ok := strings.Cut(readme, "**The agent's tools.**")
	if !ok {
		t.Fatal("README has no \"**The agent's tools.**\"")
	}
	table, _, _ = strings.Cut(table, "\n\n**")
	out := map[string][]string{}
	for _, row := range strings.Split(table, "\n") {
		if !strings.HasPrefix(row, "| `") {
			continue
		}
		cells := strings.Split(row, " | ")
		if len(cells) < 3 {
			t.Fatalf("README tool row %q has no arguments column", row)
		}
		tools := strings.Split(strings.TrimPrefix(cells[0], "| "), " / ")
		args := strings.Split(cells[1], " / ")
		if len(tools) != len(args) {
			t.Fatalf("README tool row %q: %d tools, %d argument lists", row, len(tools), len(args))
		}
		for i, tool := range tools {
			list := []string{}
			if a := strings.Trim(args[i], "`"); a != "{}" {
				// violations: [{code, severity, details}] is one argument, violations.
				a, _, _ = strings.Cut(a, ":")
				for f := range strings.SplitSeq(a, ",") {
					list = append(list, strings.TrimSpace(f))
				}
			}
			out[strings.Trim(tool, "`")] = list
		}
	}
	return out
}

// docArgs is how the README writes a spec's arguments: each field, "?" after an optional one.
func docArgs(sp *toolSpec) []string {
	out := []string{}
	for _, f := range sp.fields {
		if f.required {
			out = append(out, f.name)
		} else {
			out = append(out, f.name+"?")
		}
	}
	return out
}

// The README's table of the agent's tools has a row for every tool the server serves and no
// other, each with the tool's arguments in order, an optional one marked with ?. Checked to
// fail when a row names an argument the tool does not have, misses one, marks a required one
// optional, or names a tool the server does not serve.
func TestReadmeToolTable(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	checkToolTable(t, readmeToolArgs(t, string(data)))
}

func checkToolTable(t testing.TB, rows map[string][]string) {
	for tool, args := range rows {
		sp := specNamed(tool)
		if sp == nil {
			t.Errorf("the README's tool table names %s, which the server does not serve", tool)
			continue
		}
		if want := docArgs(sp); !slices.Equal(args, want) {
			t.Errorf("the README gives %s the arguments %q; the tool takes %q", tool, args, want)
		}
	}
	for _, sp := range specs {
		if _, ok := rows[sp.name]; !ok {
			t.Errorf("the README's tool table has no row for %s", sp.name)
		}
	}
}

func TestReadmeToolTableCatchesDrift(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to string }{
		{"`to, from?, checkpoint?", "`to, form?, checkpoint?"},
		{"`outcome`", "`outcome, note?`"},
		{"`id, status, output?", "`id, status?, output?"},
		{"| `expire_ttl` |", "| `expire` |"},
	} {
		doc := strings.Replace(string(data), c.from, c.to, 1)
		if doc == string(data) {
			t.Fatalf("the README no longer holds %q", c.from)
		}
		rec := checktest.New(t)
		checkToolTable(rec, readmeToolArgs(t, doc))
		if !rec.Failed() {
			t.Errorf("a table with %q in place of %q passed", c.to, c.from)
		}
	}
}

// toolCall is how the skill names a tool with its arguments: `tool {arg, arg}`.
var toolCall = regexp.MustCompile("`([a-z_]+) \\{([^}`]*)\\}`")

// The skill and the slash commands name only tools the server serves; where the skill writes
// `tool {args}`, each argument is one the tool takes and every required one is there.
func TestSkillAndCommandsNameRealTools(t *testing.T) {
	paths := []string{"../../skills/cairn/SKILL.md"}
	cmds, err := filepath.Glob("../../commands/*.md")
	if err != nil || len(cmds) == 0 {
		t.Fatalf("no slash commands found: %v", err)
	}
	paths = append(paths, cmds...)
	calls := 0
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`mcp__plugin_cairn_cairn__([a-z_]+)`).FindAllStringSubmatch(string(data), -1) {
			if specNamed(m[1]) == nil {
				t.Errorf("%s names %s, which the server does not serve", p, m[0])
			}
		}
		for _, m := range toolCall.FindAllStringSubmatch(string(data), -1) {
			calls++
			sp := specNamed(m[1])
			if sp == nil {
				t.Errorf("%s names the tool %s, which the server does not serve", p, m[1])
				continue
			}
			var named []string
			for a := range strings.SplitSeq(m[2], ",") {
				a, _, _ = strings.Cut(strings.TrimSpace(a), ":")
				named = append(named, a)
				if !slices.ContainsFunc(sp.fields, func(f field) bool { return f.name == a }) {
					t.Errorf("%s: %s has no argument %q", p, m[0], a)
				}
			}
			for _, f := range sp.fields {
				if f.required && !slices.Contains(named, f.name) {
					t.Errorf("%s: %s leaves out the required argument %s", p, m[0], f.name)
				}
			}
		}
	}
	if calls < 5 {
		t.Errorf("found %d `tool {args}` in the skill: the pattern or the skill changed", calls)
	}
}
