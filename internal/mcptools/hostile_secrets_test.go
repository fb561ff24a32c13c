package mcptools_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
)

// TestSecretsThroughEveryTool pushes every secret shape of the hostile corpus, plain and
// split by U+200B, into every string argument of every tool that stores or echoes one
// (workflow context and ids, phases, notes, outputs, checkpoints, vars, logs, learnings,
// the initiative and its WORKFLOW-STATUS.yaml, the outcome that reaches MEMORY.md), and
// checks that no file under the project, the memory directory or HOME holds it and no
// result repeats it.
func TestSecretsThroughEveryTool(t *testing.T) {
	p, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"hostile secrets suite"}`)
	mustOK(t, c, "initiative", `{"action":"create","title":"hostile"}`)
	calls := []struct{ tool, args string }{
		{"start_workflow", `{"type":"debug","context":%s,"replace":true}`},
		{"start_workflow", `{"type":"debug","context":"x","scope":%s,"replace":true}`},
		{"start_workflow", `{"type":%s,"context":"x"}`},
		{"start_workflow", `{"type":"debug","context":"x","workflow_id":%s,"replace":true}`},
		{"transition", `{"to":%s}`},
		{"transition", `{"to":"plan","note":%s}`},
		{"transition", `{"to":"plan","outputs":[%s]}`},
		{"transition", `{"to":"plan","checkpoint":{"k":%s}}`},
		{"update_task", `{"id":%s,"status":"running"}`},
		{"update_task", `{"id":"t1","status":"done","note":%s}`},
		{"save_checkpoint", `{"name":%s,"data":{}}`},
		{"save_checkpoint", `{"name":"plan","data":{"k":%s}}`},
		{"load_checkpoint", `{"name":%s}`},
		{"list_checkpoints", `{"pattern":%s}`},
		{"set_vars", `{"vars":{"WF_X":%s}}`},
		{"get_vars", `{"keys":[%s]}`},
		{"append_log", `{"name":%s,"entry":{}}`},
		{"append_log", `{"name":"events","entry":{"m":%s}}`},
		// a repeated key, which strict JSON's refusal names by offset
		{"append_log", `{"name":"events","entry":{%s:1,%[1]s:2}}`},
		{"save_checkpoint", `{"name":"plan","data":{%s:1,%[1]s:2}}`},
		{"transition", `{"to":"plan","checkpoint":{"a":{%s:1,%[1]s:2}}}`},
		{"record_learning", `{"title":%s,"body":"b"}`},
		{"record_learning", `{"title":"t","body":%s}`},
		{"initiative", `{"action":"create","title":%s}`},
		{"initiative", `{"action":"add_milestone","milestone":%s}`},
		{"initiative", `{"action":"set_status","status":"in_progress","note":%s}`},
		{"set_enforcement", `{"violations":[{"code":"V1","severity":"HIGH","details":%s}]}`},
		{"complete_workflow", `{"outcome":%s}`},
	}
	tries, stored, echoed := 0, 0, 0
	probe := new(secretProbe)
	for _, sh := range secrettest.Shapes() {
		mid := len(sh.Core) / 2
		split := strings.Replace(sh.Text, sh.Core, sh.Core[:mid]+"\u200b"+sh.Core[mid:], 1)
		for _, s := range []string{sh.Text, split} {
			enc, _ := json.Marshal(s)
			for _, cl := range calls {
				tries++
				args := strings.ReplaceAll(strings.ReplaceAll(cl.args, "%[1]s", "%s"), "%s", string(enc))
				if txt := text(callRaw(t, c, cl.tool, args)); holdsSecret(txt, sh.Core) {
					echoed++
					t.Errorf("%s via %s: echoed", sh.Name, cl.tool)
				}
				for _, dir := range []string{p.root, p.memory, p.home} {
					if f := probe.holding(dir, sh.Core); f != "" {
						stored++
						t.Errorf("%s via %s: stored in %s", sh.Name, cl.tool, f)
						os.RemoveAll(f)
					}
				}
				if stored+echoed > 20 {
					t.FailNow()
				}
			}
		}
	}
	t.Logf("%d tries: %d stored, %d echoed", tries, stored, echoed)

	// The probe sees what the paths store: ordinary text sent the same way is found.
	mustOK(t, c, "initiative", `{"action":"add_milestone","milestone":"probe milestone 7f3a"}`)
	mustOK(t, c, "record_learning", `{"title":"probe learning 7f3a","body":"b"}`)
	if f := fileHolding(p.root, "probe milestone 7f3a"); !strings.HasSuffix(f, "WORKFLOW-STATUS.yaml") {
		t.Errorf("the probe did not find the milestone in WORKFLOW-STATUS.yaml (found %q)", f)
	}
	if f := fileHolding(p.memory, "probe learning 7f3a"); f == "" {
		t.Error("the probe did not find the learning in the memory directory")
	}
}

// holdsSecret reports core (its first 24 bytes) in s, also once the characters Cairn drops
// and JSON's escapes are taken out.
func holdsSecret(s, core string) bool {
	s = unescapeSecret.Replace(s)
	return strings.Contains(s, core[:min(len(core), 24)])
}

var unescapeSecret = strings.NewReplacer("\u200b", "", `\u200b`, "", `\/`, "/", `\n`, "\n")

// fileHolding returns a file under dir whose name or contents hold core, or "".
func fileHolding(dir, core string) string { return new(secretProbe).holding(dir, core) }

// secretProbe is fileHolding for a test that looks after every call: it reads again only the
// files that may have changed since it found them clean of the same core. A file is as it was
// read while it is the same file (a replacement by rename is another) of the same size and
// modification time, that time a second or more before that reading began: a write since then
// would have moved it, however coarse the file system's clock.
type secretProbe struct {
	core  string
	clean map[string]cleanRead // by path, for core
}

type cleanRead struct {
	info fs.FileInfo
	at   time.Time // when the walk that read it began
}

func (p *secretProbe) holding(dir, core string) string {
	if core != p.core || p.clean == nil {
		p.core, p.clean = core, map[string]cleanRead{}
	}
	at := time.Now()
	found := ""
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || found != "" {
			return nil
		}
		if holdsSecret(d.Name(), core) {
			found = path
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if was, ok := p.clean[path]; ok && os.SameFile(was.info, info) && was.info.Size() == info.Size() &&
			was.info.ModTime().Equal(info.ModTime()) && info.ModTime().Before(was.at.Add(-time.Second)) {
			return nil
		}
		if b, err := os.ReadFile(path); err == nil && holdsSecret(string(b), core) {
			found = path
			return nil
		}
		p.clean[path] = cleanRead{info, at}
		return nil
	})
	return found
}

// TestSecretInAVariableNameIsNotEchoed puts each secret shape that fits a variable name into
// a set_vars name whose value is wrong (a number, a control character, too long): the problem
// with the value names the variable, and a secret there must be refused as one, not quoted.
func TestSecretInAVariableNameIsNotEchoed(t *testing.T) {
	p, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"secret variable names"}`)
	varName := regexp.MustCompile(`^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$`)
	tried := 0
	for _, sh := range secrettest.Shapes() {
		name := "WF_" + sh.Core
		if !varName.MatchString(name) {
			continue
		}
		for _, value := range []string{`3`, `"a\u0001b"`, `"` + strings.Repeat("v", 4097) + `"`} {
			tried++
			res := callRaw(t, c, "set_vars", `{"vars":{"`+name+`":`+value+`}}`)
			if !res.IsError {
				t.Fatalf("%s: set_vars succeeded", sh.Name)
			}
			if txt := text(res); holdsSecret(txt, sh.Core) || !strings.Contains(txt, "secret") {
				t.Errorf("%s with value %.10s: the error quotes the name or does not say it holds a secret: %s", sh.Name, value, clip(txt))
			}
		}
		if f := fileHolding(p.root, sh.Core); f != "" {
			t.Errorf("%s: stored in %s", sh.Name, f)
		}
	}
	if tried == 0 {
		t.Fatal("no secret shape fits a variable name")
	}
}

// TestCheckpointNamesJoinIntoNoSecret: two checkpoint names, each clean, may join into a
// secret's shape ("api_key, qk7..."); resume_check and cairn status leave such a join out,
// but list_checkpoints joined them as they are in its text.
func TestCheckpointNamesJoinIntoNoSecret(t *testing.T) {
	_, c := realServer(t)
	mustOK(t, c, "save_checkpoint", `{"name":"api_key","data":{}}`)
	mustOK(t, c, "save_checkpoint", `{"name":"qk7ab9cd3ef5gh7jk9mn1pq3rs5tu7","data":{}}`)
	got := text(mustOK(t, c, "list_checkpoints", `{}`))
	if f := secrets.ScanString(got); f != nil {
		t.Errorf("list_checkpoints says a secret's shape (%s): %q", f.Rule, got)
	}
	if !strings.HasPrefix(got, "2 checkpoints: api_key, ") {
		t.Errorf("list_checkpoints = %q, want the count and the first name", got)
	}
}

// A variable whose value has a secret's shape (set before a rule found it, or written by
// hand) is left out of get_vars' answer for all variables, and named: the model cannot ask for
// the others by name, for it does not know them.
func TestGetVarsLeavesOutAStoredSecret(t *testing.T) {
	p, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"stored secret"}`)
	mustOK(t, c, "set_vars", `{"vars":{"PLAN_NOTE":"placeholder-value","PLAN_PATH":"plans/001.md"}}`)
	snap := filepath.Join(p.root, ".claude", "cairn", "workflow-state.json")
	b, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	const key = "ghp_Qk7aB9cD3eF5gH7jK9mN1pQ3rS5tU7vW9xY1"
	if err := os.WriteFile(snap, []byte(strings.Replace(string(b), `"placeholder-value"`, `"`+key+`"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	res := mustOK(t, c, "get_vars", `{}`)
	got := text(res)
	if strings.Contains(got, key) || !strings.HasPrefix(got, "PLAN_PATH=plans/001.md\nVariable PLAN_NOTE not shown: it holds text of a secret's shape (github-token)") {
		t.Errorf("get_vars = %q", got)
	}
	var sc struct {
		Vars     map[string]string `json:"vars"`
		Warnings []string          `json:"warnings"`
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &sc); err != nil || len(sc.Vars) != 1 || len(sc.Warnings) != 1 || strings.Contains(string(raw), key) {
		t.Errorf("structured = %s", raw)
	}
	// Asked for by name with others, it refuses the answer, which said nothing of the others:
	// they are named as readable without it.
	got = text(mustFail(t, c, "get_vars", `{"keys":["PLAN_NOTE","PLAN_PATH","PLAN_DIR"]}`, "variable PLAN_NOTE", "github-token"))
	if strings.Contains(got, key) || !strings.Contains(got, "; asked for without it, PLAN_PATH can be read") {
		t.Errorf("get_vars by keys = %q; want the others named as readable alone", got)
	}
	got = text(mustFail(t, c, "get_vars", `{"keys":["PLAN_NOTE"]}`, "variable PLAN_NOTE"))
	if strings.Contains(got, "without it") {
		t.Errorf("get_vars of the one key = %q; want no others named", got)
	}
}

// load_checkpoint repeats its part argument, cut to 200 characters, where it says nothing is
// at it and in the outline of a part too large to return: a cut right after a token glued to
// more text (a member named "… ghp_…-x") made a secret's shape the argument did not hold. The
// cut ends before that word.
func TestLoadCheckpointPartCutMakesNoSecret(t *testing.T) {
	_, c := realServer(t)
	tok := secrettest.GluedToken(t)
	// "/" and the key's start fill the 199 characters the cut keeps, up to the token's body.
	key := strings.Repeat("k", 199-1-1-len(strings.TrimSuffix(tok, "-x"))) + " " + tok
	big, _ := json.Marshal(map[string]any{key: []string{strings.Repeat("x", 50_000)}})
	mustOK(t, c, "save_checkpoint", `{"name":"big","data":`+string(big)+`}`)
	ptr, _ := json.Marshal("/" + key)
	for _, tc := range []struct {
		args  string
		error bool
	}{
		{`{"name":"big","part":` + string(ptr[:len(ptr)-1]) + `/9"}`, true}, // nothing there
		{`{"name":"big","part":` + string(ptr) + `}`, false},                // an outline
	} {
		res := callRaw(t, c, "load_checkpoint", tc.args)
		if res.IsError != tc.error {
			t.Fatalf("load_checkpoint: error %v, want %v: %s", res.IsError, tc.error, text(res))
		}
		said := text(res)
		if s, ok := res.StructuredContent.(map[string]any); ok {
			said += fmt.Sprint(s["message"])
		}
		if f := secrets.ScanString(said); f != nil {
			t.Errorf("load_checkpoint says a secret's shape (%s): %.300q", f.Rule, said)
		}
		if !strings.Contains(said, "kkkkkkkkkk") {
			t.Errorf("load_checkpoint does not name the part: %.300q", said)
		}
	}
}
