package store_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/cairn-dev/cairn/internal/store"
)

// A workflow whose record holds text of a secret's shape kept before a rule found it (both
// machines' copies hold it): a sync that lost a race was refused the remote's line for it,
// every sync, though a change keeping it is written here (checkChange). The line is taken; a
// secret it brings in that this machine's record does not hold is still refused.
func TestAdoptLineKeepsAStoredSecret(t *testing.T) {
	shapes := secrettest.Shapes()
	kept, other := shapes[3], shapes[0]
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	for _, tc := range []struct {
		name, in string
		ok       bool
	}{
		{"the secret kept here", kept.Text, true},
		{"another secret", other.Text, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, dir := newStore(t, store.WithClock(clockFrom(fixedNow)))
			ourLine(t, s, 2)
			snap := filepath.Join(dir, store.WorkflowFile)
			data, err := os.ReadFile(snap)
			if err != nil {
				t.Fatal(err)
			}
			planted := bytes.Replace(data, []byte(`"state":"ours1"`), []byte(`"state":`+q(kept.Text)), 1)
			if bytes.Equal(planted, data) {
				t.Fatalf("no state to plant in: %s", data)
			}
			if err := os.WriteFile(snap, planted, 0o600); err != nil {
				t.Fatal(err)
			}
			line := theirLine(3)
			line[2].Snapshot = record(wfID, 3, tc.in)
			line[2].Event = store.Event{Kind: "transition", Detail: `{"to":` + q(tc.in) + `}`} // a phase's name, as the engine's events give it
			_, _, err = s.AdoptLine("conflict", store.LineOf(line), nil)
			if tc.ok && err != nil {
				t.Fatalf("AdoptLine = %v, want the line taken: the secret is kept here already", err)
			}
			if !tc.ok && err == nil {
				t.Fatal("AdoptLine took a line bringing in a secret this machine's record does not hold")
			}
		})
	}
}
