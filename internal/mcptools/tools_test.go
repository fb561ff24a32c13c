package mcptools_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// selfExplained are the arguments whose name and schema say what they hold.
var selfExplained = map[string]bool{"workflow_id": true, "scope": true, "note": true, "status": true,
	"dry_run": true, "name": true, "keys": true, "title": true, "body": true,
	"type": true, "milestone": true, "part": true, "phase": true}

var update = flag.Bool("update", false, "rewrite the golden schema snapshots in testdata/")

var toolNames = []string{
	"resume_check", "start_workflow", "transition", "complete_workflow", "update_task",
	"set_enforcement", "expire_ttl", "save_checkpoint", "load_checkpoint", "list_checkpoints",
	"set_vars", "get_vars", "append_log", "record_learning", "initiative",
}

// hints are the annotations each tool must carry: readOnly, destructive, idempotent.
var hints = map[string][3]bool{
	"resume_check":      {false, false, true},
	"start_workflow":    {false, true, false},
	"transition":        {false, false, true},
	"complete_workflow": {false, true, true},
	"update_task":       {false, false, true},
	"set_enforcement":   {false, true, true},
	"expire_ttl":        {false, true, true},
	"save_checkpoint":   {false, true, true},
	"load_checkpoint":   {true, false, true},
	"list_checkpoints":  {true, false, true},
	"set_vars":          {false, false, true},
	"get_vars":          {true, false, true},
	"append_log":        {false, false, false},
	// The same title names the same memory file: recording it again replaces that learning.
	"record_learning": {false, true, true},
	"initiative":      {false, false, false},
}

// arguments is the contract: each tool's argument names, required ones without '?'.
var arguments = map[string][]string{
	"resume_check":      {},
	"start_workflow":    {"type", "context", "workflow_id?", "scope?", "ttl?", "replace?"},
	"transition":        {"to", "from?", "checkpoint?", "outputs?", "note?"},
	"complete_workflow": {"outcome"},
	"update_task":       {"id", "status", "output?", "note?"},
	"set_enforcement":   {"violations"},
	"expire_ttl":        {"dry_run?"},
	"save_checkpoint":   {"name", "data"},
	"load_checkpoint":   {"name?", "phase?", "part?"},
	"list_checkpoints":  {"pattern?"},
	"set_vars":          {"vars"},
	"get_vars":          {"keys?"},
	"append_log":        {"name", "entry"},
	"record_learning":   {"title", "body", "type?"},
	"initiative":        {"action", "title?", "status?", "milestone?", "note?"},
}

func listTools(t *testing.T) []mcp.Tool {
	t.Helper()
	opts, _ := fakeOptions(t)
	_, c := startServer(t, opts)
	res, err := c.ListTools(testCtx(t), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

func TestToolsContract(t *testing.T) {
	tools := listTools(t)
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	if !slices.Equal(sorted(names), sorted(toolNames)) {
		t.Fatalf("tools = %v, want %v", names, toolNames)
	}
	for _, tool := range tools {
		t.Run(tool.Name, func(t *testing.T) {
			if tool.Description == "" || strings.Contains(tool.Description, "\n") || !strings.HasPrefix(tool.Description, "Call ") {
				t.Errorf("description %q: want one line saying when to call it", tool.Description)
			}
			a := tool.Annotations
			if a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil || a.OpenWorldHint == nil {
				t.Fatalf("annotations %+v: all four hints must be set", a)
			}
			want := hints[tool.Name]
			got := [3]bool{*a.ReadOnlyHint, *a.DestructiveHint, *a.IdempotentHint}
			if got != want {
				t.Errorf("readOnly, destructive, idempotent = %v, want %v", got, want)
			}
			if *a.OpenWorldHint {
				t.Error("openWorld hint is true; cairn touches only the project's own state")
			}
			if *a.ReadOnlyHint && *a.DestructiveHint {
				t.Error("a read-only tool cannot be destructive")
			}
			s := tool.InputSchema
			if s.Type != "object" || s.AdditionalProperties != false {
				t.Errorf("input schema type %q, additionalProperties %v: want object, false", s.Type, s.AdditionalProperties)
			}
			var got2 []string
			for _, name := range s.PropertyOrder {
				if slices.Contains(s.Required, name) {
					got2 = append(got2, name)
				} else {
					got2 = append(got2, name+"?")
				}
			}
			if len(s.PropertyOrder) == 0 {
				got2 = []string{}
			}
			if !slices.Equal(got2, arguments[tool.Name]) {
				t.Errorf("arguments %v, want %v", got2, arguments[tool.Name])
			}
			// Every description costs every request (issue 14): an argument whose name and
			// schema say what it holds goes without one.
			for name, p := range s.Properties {
				pm, _ := p.(map[string]any)
				if d, _ := pm["description"].(string); d == "" && !selfExplained[name] {
					t.Errorf("argument %s has no description", name)
				}
			}
			if tool.OutputSchema.Type != "object" || len(tool.OutputSchema.Properties) == 0 {
				t.Errorf("output schema %+v: want an object schema", tool.OutputSchema)
			}
		})
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestSchemaSnapshots keeps each tool's full definition under testdata/tools/, so any change to
// what the agent sees is a reviewed diff. Run with -update to accept a change.
func TestSchemaSnapshots(t *testing.T) {
	for _, tool := range listTools(t) {
		t.Run(tool.Name, func(t *testing.T) {
			raw, err := json.Marshal(tool)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := json.Indent(&buf, raw, "", "  "); err != nil {
				t.Fatal(err)
			}
			buf.WriteByte('\n')
			golden := filepath.Join("testdata", "tools", tool.Name+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestSchemaSnapshots -update to create it)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("%s changed; review and run with -update to accept:\n%s", golden, buf.String())
			}
		})
	}
}
