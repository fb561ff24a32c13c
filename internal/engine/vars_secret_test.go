package engine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
)

// A variable set before a scan refused its value (an older Cairn's rules, a hand edit) is not
// given back, to the model (get_vars) or a person (cairn vars get, cairn vars export), asked
// for by name or with the rest: the refusal names the variable and the rule, never the value.
func TestStoredSecretIsNotGivenBackAsAVariable(t *testing.T) {
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "vars"}))(t)
	must(en.SetVars(map[string]string{"PLAN_NOTE": "placeholder-value", "PLAN_PATH": "plans/001.md"}))(t)
	snap := filepath.Join(en.StateDir(), "workflow-state.json")
	clean, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrettest.Shapes() {
		q, _ := json.Marshal(s.Text)
		if err := os.WriteFile(snap, []byte(strings.Replace(string(clean), `"placeholder-value"`, string(q), 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		en := e.open("s1")
		for _, keys := range [][]string{nil, {"PLAN_NOTE"}} {
			kv, err := en.GetVars(keys)
			if err == nil || strings.Contains(kv["PLAN_NOTE"], s.Core) || strings.Contains(err.Error(), s.Core) || !strings.Contains(err.Error(), "PLAN_NOTE") {
				t.Fatalf("%s: keys %v: %q, %v", s.Name, keys, kv, err)
			}
		}
		if kv := must(en.GetVars([]string{"PLAN_PATH"}))(t); kv["PLAN_PATH"] != "plans/001.md" {
			t.Fatalf("%s: a clean variable asked for by name is not given: %q", s.Name, kv)
		}
	}
}
