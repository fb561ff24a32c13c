package mcptools_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/mcptools"
	"github.com/mark3labs/mcp-go/mcp"
)

// shapes are strings of many shapes; each argument is tried with those its schema allows.
var shapes = []string{
	"a", "A1", "1a", "a.b", "a_b", "a-b", "a:b", "a.b.c", "_a", "-a", ".a", "a..b", "a/b", "a b",
	"a*", "a?", "[ab]", "ab*-x", "x" + strings.Repeat("y", 62), "x" + strings.Repeat("y", 99),
	"24h", "90m", "7d", "007h", "1h", "99999d", "90s", "1h30m", "1.5h", "24H", "0h", "90", "h",
	"PLAN_PATH", "_X", "X1", "apex", "plan", "implement", "t1", "impl-progress", "v1.2",
}

// shapeRefusal matches an error that refuses a value for its form (as opposed to naming
// something that does not exist or a move that is not allowed).
var shapeRefusal = regexp.MustCompile(`(?i)not valid|invalid|must be|must start|malformed|not allowed in|characters|whole number|unit`)

// TestSchemaAllowedShapesAreAccepted: every string argument with a pattern accepts every value
// its schema allows, so that a model that follows the schema is never refused for the form of
// a value (issue 14: ttl "90s" and "1h30m" passed the schema and were refused).
func TestSchemaAllowedShapesAreAccepted(t *testing.T) {
	p, c := realServer(t)
	_ = p
	tools, err := c.ListTools(testCtx(t), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	pattern := map[string]*regexp.Regexp{} // "tool.field" or "tool.field[]" for items
	maxLen := map[string]int{}
	for _, tool := range tools.Tools {
		raw, _ := json.Marshal(tool.InputSchema)
		var s struct {
			Properties map[string]struct {
				Pattern   string `json:"pattern"`
				MaxLength int    `json:"maxLength"`
				Items     struct {
					Pattern    string `json:"pattern"`
					MaxLength  int    `json:"maxLength"`
					Properties map[string]struct {
						Pattern   string `json:"pattern"`
						MaxLength int    `json:"maxLength"`
					} `json:"properties"`
				} `json:"items"`
				PropertyNames struct {
					Pattern string `json:"pattern"`
				} `json:"propertyNames"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		for name, prop := range s.Properties {
			for suffix, pat := range map[string]string{"": prop.Pattern, "[]": prop.Items.Pattern, "{}": prop.PropertyNames.Pattern} {
				if pat != "" {
					pattern[tool.Name+"."+name+suffix] = regexp.MustCompile(pat)
				}
			}
			maxLen[tool.Name+"."+name] = prop.MaxLength
			maxLen[tool.Name+"."+name+"[]"] = prop.Items.MaxLength
			if code, ok := prop.Items.Properties["code"]; ok && code.Pattern != "" {
				pattern[tool.Name+"."+name+"[].code"] = regexp.MustCompile(code.Pattern)
				maxLen[tool.Name+"."+name+"[].code"] = code.MaxLength
			}
		}
	}
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"shapes"}`)
	q := func(v string) string { b, _ := json.Marshal(v); return string(b) }
	// Each argument, with the call that carries it (the value goes in for %s).
	cases := map[string]string{
		"start_workflow.ttl":                `{"type":"apex","context":"shapes","replace":true,"ttl":%s}`,
		"start_workflow.workflow_id":        `{"type":"apex","context":"shapes","replace":true,"workflow_id":%s}`,
		"start_workflow.type":               `{"type":%s,"context":"shapes","replace":true}`,
		"update_task.id":                    `{"id":%s,"status":"running"}`,
		"transition.to":                     `{"to":%s}`,
		"transition.from":                   `{"to":"analyze","from":%s}`,
		"save_checkpoint.name":              `{"name":%s,"data":{}}`,
		"load_checkpoint.name":              `{"name":%s}`,
		"load_checkpoint.part":              `{"name":"c","part":%s}`,
		"list_checkpoints.pattern":          `{"pattern":%s}`,
		"append_log.name":                   `{"name":%s,"entry":{}}`,
		"get_vars.keys[]":                   `{"keys":[%s]}`,
		"set_vars.vars{}":                   `{"vars":{%s:"v"}}`,
		"initiative.status":                 `{"action":"set_status","status":%s}`,
		"set_enforcement.violations[].code": `{"violations":[{"code":%s,"severity":"low","details":"d"}]}`,
	}
	for key := range pattern {
		if _, ok := cases[key]; !ok {
			t.Errorf("argument %s has a pattern but no case here: add one", key)
		}
	}
	tried := 0
	for key, args := range cases {
		re := pattern[key]
		if re == nil {
			t.Errorf("argument %s has no pattern in its schema", key)
			continue
		}
		for _, v := range shapes {
			if !re.MatchString(v) || maxLen[key] > 0 && len(v) > maxLen[key] {
				continue
			}
			tried++
			res := callRaw(t, c, strings.SplitN(key, ".", 2)[0], fmt.Sprintf(args, q(v)))
			// A ttl over 3650 days is refused for its size, not its form.
			if res.IsError && shapeRefusal.MatchString(text(res)) && !strings.Contains(text(res), "too large (at most 3650d)") {
				t.Errorf("%s = %q is allowed by the schema but refused: %s", key, v, text(res))
			}
		}
	}
	for v, want := range map[string]bool{"24h": true, "90m": true, "7d": true, "3650d": true, "90s": false, "1h30m": false, "1.5h": false, "24H": false, "0h": false} {
		if got := pattern["start_workflow.ttl"].MatchString(v); got != want {
			t.Errorf("ttl schema allows %q: %v, want %v", v, got, want)
		}
	}
	if tried < 50 {
		t.Errorf("only %d values tried", tried)
	}
}

// toolPrefix is how Claude Code names the plugin's MCP tools.
const toolPrefix = "mcp__plugin_cairn_cairn__"

// frontMatterDescription returns the description line of a Markdown file's front matter.
func frontMatterDescription(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n")[1:] {
		if l == "---" {
			break
		}
		if d, ok := strings.CutPrefix(l, "description: "); ok {
			return d
		}
	}
	t.Fatalf("%s has no description", path)
	return ""
}

// TestContextCost measures what Cairn costs every request, before any tool is called (issue
// 14): with tool search on, the deferred tool names, the MCP instructions and the skill and
// command entries, at most 1,600 characters; with it off, the full tool definitions (name,
// description and input schema, as Claude Code sends them in tools[]), at most 6,000.
func TestContextCost(t *testing.T) {
	_, c := realServer(t)
	tools, err := c.ListTools(testCtx(t), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	names, defs := 0, 0
	for _, tool := range tools.Tools {
		names += len(toolPrefix+tool.Name) + 1
		schema, _ := json.Marshal(tool.InputSchema)
		defs += len(toolPrefix+tool.Name) + len(tool.Description) + len(schema)
	}
	// the client (2.1.330) lists each as "- PLUGIN:NAME: description": "- cairn:cairn: ...",
	// "- cairn:status: ..."
	entries := len("- cairn:cairn: " + frontMatterDescription(t, "../../skills/cairn/SKILL.md"))
	cmds, _ := filepath.Glob("../../commands/*.md")
	for _, f := range cmds {
		entries += len("- cairn:"+strings.TrimSuffix(filepath.Base(f), ".md")+": ") + len(frontMatterDescription(t, f))
	}
	always := names + len(mcptools.Instructions) + entries
	t.Logf("always-on: %d (names %d, instructions %d, skill and commands %d); full tool definitions %d",
		always, names, len(mcptools.Instructions), entries, defs)
	if always > 1600 {
		t.Errorf("always-on context is %d characters, want at most 1,600", always)
	}
	if defs > 6000 {
		t.Errorf("full tool definitions are %d characters, want at most 6,000", defs)
	}
}

// TestSchemaRefusesWhatTheServerRefuses: a value the server refuses for its form is outside
// the schema too, so a model that follows the schema is not refused: load_checkpoint's part is
// a JSON Pointer (or empty), and a variable's name is at most 64 characters.
func TestSchemaRefusesWhatTheServerRefuses(t *testing.T) {
	_, c := realServer(t)
	tools, err := c.ListTools(testCtx(t), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	schema := map[string]map[string]any{}
	for _, tool := range tools.Tools {
		raw, _ := json.Marshal(tool.InputSchema)
		var s struct {
			Properties map[string]map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		for name, p := range s.Properties {
			schema[tool.Name+"."+name] = p
		}
	}
	part, _ := schema["load_checkpoint.part"]["pattern"].(string)
	if part == "" {
		t.Fatal("load_checkpoint's part has no pattern: any string is allowed, and only a JSON Pointer is accepted")
	}
	re := regexp.MustCompile(part)
	mustOK(t, c, "save_checkpoint", `{"name":"parts","data":{"files":["a"]}}`)
	for v, allowed := range map[string]bool{"": true, "/files/0": true, "/": true, "files/0": false, "files": false} {
		if re.MatchString(v) != allowed {
			t.Errorf("part pattern %s allows %q: %v, want %v", part, v, !allowed, allowed)
		}
		res := callRaw(t, c, "load_checkpoint", fmt.Sprintf(`{"name":"parts","part":%q}`, v))
		if refused := res.IsError && strings.Contains(text(res), "JSON Pointer"); refused == allowed {
			t.Errorf("part %q: the server refuses it %v, the schema allows it %v: %s", v, refused, allowed, text(res))
		}
	}
	names, _ := schema["set_vars.vars"]["propertyNames"].(map[string]any)
	if names["maxLength"] != float64(64) {
		t.Errorf("set_vars' variable names: propertyNames %v, want maxLength 64", names)
	}
	long := "WF_" + strings.Repeat("A", 62)
	if res := callRaw(t, c, "set_vars", `{"vars":{"`+long+`":"v"}}`); !res.IsError {
		t.Errorf("a %d-character name was accepted", len(long))
	}
	// A task's note as long as the schema allows, in characters UTF-8 writes in 3 bytes, is
	// taken: the engine counted bytes (1,000) and refused it.
	most, _ := schema["update_task.note"]["maxLength"].(float64)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"notes"}`)
	mustOK(t, c, "update_task", fmt.Sprintf(`{"id":"t1","status":"pending","note":%q}`, strings.Repeat("€", int(most))))
	mustFail(t, c, "update_task", fmt.Sprintf(`{"id":"t1","status":"running","note":%q}`, strings.Repeat("x", int(most)+1)),
		fmt.Sprintf("%d characters, more than the limit of %d", int(most)+1, int(most)))
	// So are a task's output and a move's output path, paths the schema bounds in characters
	// and the engine counted in bytes.
	most, _ = schema["update_task.output"]["maxLength"].(float64)
	mustOK(t, c, "update_task", fmt.Sprintf(`{"id":"t2","status":"pending","output":%q}`, strings.Repeat("日", int(most))))
	items, _ := schema["transition.outputs"]["items"].(map[string]any)
	most, _ = items["maxLength"].(float64)
	mustOK(t, c, "transition", fmt.Sprintf(`{"to":"plan","outputs":[%q]}`, strings.Repeat("日", int(most))))
	// A task id is bounded in bytes (claim lines shared with other machines keep that bound):
	// the schema said maxLength 128, characters, and an id of 128 that UTF-8 writes in more
	// bytes was refused. The description says the bound instead, and the server keeps it.
	id := schema["update_task.id"]
	if most, ok := id["maxLength"].(float64); ok {
		mustOK(t, c, "update_task", fmt.Sprintf(`{"id":%q,"status":"pending"}`, strings.Repeat("日", int(most))))
	}
	if desc, _ := id["description"].(string); !strings.Contains(desc, "128 bytes") {
		t.Errorf("update_task's id is described as %q, which does not say the server's limit of 128 bytes", desc)
	}
	mustOK(t, c, "update_task", fmt.Sprintf(`{"id":%q,"status":"pending"}`, strings.Repeat("日", 42)))
	mustFail(t, c, "update_task", fmt.Sprintf(`{"id":%q,"status":"pending"}`, strings.Repeat("日", 43)), "129 bytes, the most is 128 bytes")
	// A learning's body the schema allows (4,000 characters, lines) is refused for a line
	// too long or too many lines: the body's description says both limits.
	body, _ := schema["record_learning.body"]["description"].(string)
	for _, tc := range []struct{ body, says string }{
		{strings.Repeat("x", 501), "500 characters"},
		{strings.Repeat(`x\n`, 41), "40 lines"},
	} {
		mustFail(t, c, "record_learning", `{"title":"limits","body":"`+tc.body+`"}`, "the most is")
		if !strings.Contains(body, tc.says) {
			t.Errorf("record_learning's body is described as %q, which does not say the server's limit of %s", body, tc.says)
		}
	}
}
