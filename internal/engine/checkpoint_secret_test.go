package engine_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
)

// A checkpoint written before a scan refused its text (an older Cairn's rules, a hand edit)
// is not given back, to the model (load_checkpoint) or a person (cairn checkpoint load): the
// refusal names the rule and where, never the secret, and the file is left as it is.
func TestStoredSecretIsNotLoadedFromACheckpoint(t *testing.T) {
	_, en := startApex(t)
	must(en.SaveCheckpoint("plan", json.RawMessage(`{"note":"placeholder"}`)))(t)
	for _, s := range secrettest.Shapes() {
		q, _ := json.Marshal(s.Text)
		doc := []byte(`{"note":` + string(q) + `}`)
		p := filepath.Join(en.StateDir(), "checkpoints", "plan.json")
		if err := os.WriteFile(p, doc, 0o600); err != nil {
			t.Fatal(err)
		}
		for name, load := range map[string]func(string) (json.RawMessage, error){"load": en.LoadCheckpoint, "load or empty": en.LoadCheckpointOrEmpty} {
			data, err := load("plan")
			if err == nil || strings.Contains(string(data), s.Core) || strings.Contains(err.Error(), s.Core) || !strings.Contains(err.Error(), "$.note") {
				t.Fatalf("%s: %s: %s, %v", s.Name, name, data, err)
			}
		}
		if b, _ := os.ReadFile(p); string(b) != string(doc) {
			t.Fatalf("%s: the checkpoint was changed", s.Name)
		}
	}
}
