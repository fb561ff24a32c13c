package mcptools_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/mcptools"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/mark3labs/mcp-go/mcp"
)

// fitsOneResult fails the test when res, tool's result, is more than Claude Code puts before
// the model at once, as structured content or as text.
func fitsOneResult(t *testing.T, tool string, res *mcp.CallToolResult) {
	t.Helper()
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > mcptools.MaxLoadBytes || len(text(res)) > mcptools.MaxLoadBytes {
		t.Errorf("%s: structured content %d bytes, text %d, over the %d one result carries", tool, len(raw), len(text(res)), mcptools.MaxLoadBytes)
	}
}

// TestManyCheckpointsFitOneResult: a project may hold thousands of checkpoints (saved before
// the 500 bound, or copied in). list_checkpoints and resume_check returned every name, 140 KB
// for 2,000, past what Claude Code puts before the model at once (it saves such a result to a
// file): resume_check's answer was lost. Each now lists the first names by name, within one
// result, and says how many there are and how to see the others.
func TestManyCheckpointsFitOneResult(t *testing.T) {
	p, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"many checkpoints"}`)
	dir := filepath.Join(p.state, "checkpoints")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	const n = 2000
	first := strings.Repeat("c", 58) + "-00000"
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%05d.json", strings.Repeat("c", 58), i)), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, call := range []struct{ tool, list, want string }{
		{"list_checkpoints", "names", "Pass a pattern"},
		{"resume_check", "checkpoints", "Call list_checkpoints"},
	} {
		res := mustOK(t, c, call.tool, `{}`)
		fitsOneResult(t, call.tool, res)
		s := structured(t, res)
		names, _ := s[call.list].([]any)
		if len(names) == 0 || names[0] != first {
			t.Errorf("%s: %s does not begin with %s: %.200v", call.tool, call.list, first, names)
		}
		warnings := fmt.Sprint(s["warnings"])
		if !strings.Contains(warnings, fmt.Sprint(n)) || !strings.Contains(warnings, call.want) {
			t.Errorf("%s: warnings %q do not give the count %d and %q", call.tool, warnings, n, call.want)
		}
	}
}

// TestLoadCheckpointUnreadableNamesItsFile: a checkpoint over the 1 MiB a load reads (saved by
// hand or by an older version), or one cut short, was refused with the read's own words and
// no step ("read checkpoints/big.json: too large: ..."). The refusal now names the file, which
// the model's Bash tool can read, and the file is left as it is.
func TestLoadCheckpointUnreadableNamesItsFile(t *testing.T) {
	p, c := realServer(t)
	dir := filepath.Join(p.state, "checkpoints")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"big":  `{"a":"` + strings.Repeat("x", 2<<20) + `"}`,
		"torn": `{"step": 2, "pla`,
	} {
		file := filepath.Join(dir, name+".json")
		if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		res := mustFail(t, c, "load_checkpoint", `{"name":"`+name+`"}`, "the file "+file, "Bash tool")
		if got := text(res); strings.Contains(got, "read checkpoints/") {
			t.Errorf("%s: the model is told %q", name, got)
		}
		if b, err := os.ReadFile(file); err != nil || string(b) != data {
			t.Errorf("%s: the file changed: %v", name, err)
		}
	}
}

// TestGetVarsFitsOneResult: set_vars takes values of 4 KiB, and the workflow keeps 256
// variables; get_vars of all returned every value, 120 KB for 30, past what Claude Code puts
// before the model at once. It returns the values that fit, by name, and names the others,
// which get_vars with keys reads.
func TestGetVarsFitsOneResult(t *testing.T) {
	_, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"debug","context":"big vars"}`)
	vs := map[string]string{}
	for i := range 30 {
		vs[fmt.Sprintf("WF_V%02d", i)] = strings.Repeat("v", 4000)
	}
	b, _ := json.Marshal(map[string]any{"vars": vs})
	mustOK(t, c, "set_vars", string(b))
	res := mustOK(t, c, "get_vars", `{}`)
	fitsOneResult(t, "get_vars", res)
	got, _ := structured(t, res)["vars"].(map[string]any)
	if got["WF_V00"] != vs["WF_V00"] || len(got) == 30 {
		t.Errorf("get_vars returned %d values, WF_V00 %t", len(got), got["WF_V00"] == vs["WF_V00"])
	}
	if !strings.Contains(text(res), "WF_V29") || !strings.Contains(text(res), "call get_vars with some of these keys") {
		t.Errorf("get_vars does not name the values left out and the step:\n%.300s…%s", text(res), text(res)[max(0, len(text(res))-300):])
	}
	if w := fmt.Sprint(structured(t, res)["warnings"]); !strings.Contains(w, "WF_V29") {
		t.Errorf("structured warnings %q do not name the values left out", w)
	}
	if got := structured(t, mustOK(t, c, "get_vars", `{"keys":["WF_V29"]}`))["vars"].(map[string]any); got["WF_V29"] != vs["WF_V29"] {
		t.Errorf("get_vars by key: %v", got)
	}
}

// TestLoadCheckpointUnreadableWithASecretNamesNoFile: a checkpoint the load cannot read (over
// the 1 MiB it reads, or not JSON) was never scanned, and the refusal pointed the model at its
// file, which its Read or Bash tool then read with the secret in it. A file holding text of a
// secret's shape, anywhere in it, is now refused naming the rule, neither the file nor the text,
// and is left as it is; a clean one is still named.
func TestLoadCheckpointUnreadableWithASecretNamesNoFile(t *testing.T) {
	p, c := realServer(t)
	dir := filepath.Join(p.state, "checkpoints")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	sh := secrettest.Shapes()[3]
	filler := strings.Repeat("x", 2<<20)
	for name, data := range map[string]string{
		"big-front": `{"k":"` + sh.Text + `","a":"` + filler + `"}`,
		"big-end":   `{"a":"` + filler + `","k":"` + sh.Text + `"}`,
		// across the edge of any 1 MiB piece a scan may read
		"big-edge": `{"a":"` + strings.Repeat("x", 1<<20-len(`{"a":" `)-len(sh.Text)/2) + " " + sh.Text + `"}`,
		"torn":     `{"step": 2, "k": "` + sh.Text + `", "pla`,
	} {
		file := filepath.Join(dir, name+".json")
		if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		res := mustFail(t, c, "load_checkpoint", `{"name":"`+name+`"}`, sh.Rule, "save the checkpoint again without that text")
		if got := text(res); strings.Contains(got, file) || strings.Contains(got, sh.Core) || strings.Contains(got, "Bash tool") {
			t.Errorf("%s: the model is pointed at the file or told the secret: %q", name, got)
		}
		if b, err := os.ReadFile(file); err != nil || string(b) != data {
			t.Errorf("%s: the file changed: %v", name, err)
		}
	}
}

// TestLoadCheckpointTooLargeToCheckNamesNoFile: a checkpoint's file over the 16 MiB a scan for
// a secret reads (placed by hand) was scanned whole, a 1 GB one for over a minute, before the
// refusal named it. It is now refused unread, neither named nor changed.
func TestLoadCheckpointTooLargeToCheckNamesNoFile(t *testing.T) {
	p, c := realServer(t)
	dir := filepath.Join(p.state, "checkpoints")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "huge.json")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(file, store.ScanLimit+1); err != nil { // sparse: no disk, no time
		t.Fatal(err)
	}
	res := mustFail(t, c, "load_checkpoint", `{"name":"huge"}`, "16 MiB checked for text of a secret's shape", "not named", "another name")
	if got := text(res); strings.Contains(got, "huge.json") || strings.Contains(got, "Bash tool") {
		t.Errorf("the model is pointed at a file not checked: %q", got)
	}
	if fi, err := os.Stat(file); err != nil || fi.Size() != store.ScanLimit+1 {
		t.Errorf("the file changed: %v", err)
	}
}

// TestResumeCheckFitsOneResult: set_enforcement takes 200 violations of 2,000 characters, and
// resume_check's structured content, which Claude Code shows the model instead of its text,
// listed every blocking one: 400 KB, past what Claude Code puts before the model at once, so
// the whole answer was lost. Its lists now keep the first items that fit, and say how many
// each left out.
func TestResumeCheckFitsOneResult(t *testing.T) {
	_, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"many findings"}`)
	var vs []map[string]string
	for i := range 200 {
		vs = append(vs, map[string]string{"code": fmt.Sprintf("V-%03d", i), "severity": "HIGH", "details": strings.Repeat("d", 2000)})
	}
	b, _ := json.Marshal(map[string]any{"violations": vs})
	mustOK(t, c, "set_enforcement", string(b))
	res := mustOK(t, c, "resume_check", `{}`)
	fitsOneResult(t, "resume_check", res)
	s := structured(t, res)
	blocking, _ := s["blocking"].([]any)
	if first, _ := blocking[0].(map[string]any); len(blocking) == 0 || len(blocking) == 200 || first["code"] != "V-000" {
		t.Errorf("blocking holds %d violations, want the first ones, from V-000", len(blocking))
	}
	if w := fmt.Sprint(s["warnings"]); !strings.Contains(w, fmt.Sprintf("blocking holds the first %d of 200", len(blocking))) {
		t.Errorf("warnings %q do not say how many blocking violations are left out", w)
	}
}

// TestInitiativeFitsOneResult: an initiative keeps 100 milestones of a 200-character id and a
// 500-character title, and every initiative call returned its whole document, as text and as
// structured content: 80 KB for 60, past what Claude Code puts before the model at once (it
// saves such a result to a file). A document too large is left out, and the result names the
// file that keeps it.
func TestInitiativeFitsOneResult(t *testing.T) {
	p, c := realServer(t)
	mustOK(t, c, "initiative", `{"action":"create","title":"big"}`)
	e := p.other(t, "s2")
	for i := range 60 {
		if _, err := e.Initiative(engine.InitiativeRequest{Action: "add_milestone", Milestone: fmt.Sprintf("m%03d-%s", i, strings.Repeat("m", 190)), Note: strings.Repeat("é", 500)}); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(p.state, engine.InitiativeFile)
	if _, err := os.Stat(file); err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{`{"action":"get"}`, `{"action":"add_milestone","milestone":"last","note":"one more"}`} {
		res := mustOK(t, c, "initiative", args)
		fitsOneResult(t, "initiative", res)
		s := structured(t, res)
		if w := fmt.Sprint(s["warnings"]); !strings.Contains(w, "the whole initiative is the file "+file) || !strings.Contains(text(res), file) {
			t.Errorf("initiative %s: warnings %q do not name the file %s", args, w, file)
		}
	}
}

// TestGetVarsCallsNoKeyLeftOutNotSet: get_vars asked by key for more values than fit in one
// result named those left out ("call get_vars with some of these keys") and then again under
// "Not set:", which is false: a set_vars of them would replace the values kept. Only keys no
// variable has are "Not set".
func TestGetVarsCallsNoKeyLeftOutNotSet(t *testing.T) {
	_, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"debug","context":"big vars"}`)
	vs, keys := map[string]string{}, []string{"WF_NONE"}
	for i := range 12 {
		k := fmt.Sprintf("WF_V%02d", i)
		vs[k], keys = strings.Repeat("v", 4000), append(keys, k)
	}
	b, _ := json.Marshal(map[string]any{"vars": vs})
	mustOK(t, c, "set_vars", string(b))
	args, _ := json.Marshal(map[string]any{"keys": keys})
	got := text(mustOK(t, c, "get_vars", string(args)))
	if !strings.Contains(got, "WF_V11; call get_vars with some of these keys") || !strings.HasSuffix(got, "\nNot set: WF_NONE.") {
		t.Errorf("get_vars = …%s", got[max(0, len(got)-400):])
	}
}
