package store_test

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/store"
)

// A name with a secret's shape is refused in the secrets package's words (Finding.Refusal),
// which name the rule and never the name.
func TestSecretShapedNameRefusal(t *testing.T) {
	name := "sk_live_" + "q7x2m9k4w1z8r5t3"
	for _, check := range []func(string) error{store.ValidName, store.ValidWorkflowID} {
		err := check(name)
		if err == nil {
			t.Fatal("a stripe key was accepted as a name")
		}
		if !strings.HasPrefix(err.Error(), "invalid name: secret found (stripe-key) in the name: secrets are not stored (") {
			t.Errorf("refusal %q", err)
		}
		if strings.Contains(err.Error(), "q7x2m9k4") {
			t.Errorf("the refusal repeats the name: %q", err)
		}
	}
}
