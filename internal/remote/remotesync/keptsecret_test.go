package remotesync_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
	"github.com/cairn-dev/cairn/internal/remote/remotesync"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
)

// A workflow whose context holds text of a secret's shape both machines' records kept from
// before a rule found it: the remote's next revision, keeping it, was refused by every sync
// here as a secret brought in, in a pull as after a lost race. It is taken, as a change here
// keeping it is.
func TestRemoteLineKeepingAStoredSecretIsTaken(t *testing.T) {
	secret := secrettest.Shapes()[0]
	kept := "deploy with " + secret.Text
	for _, raced := range []bool{false, true} {
		t.Run(map[bool]string{false: "pull", true: "lost race"}[raced], func(t *testing.T) {
			ctx := context.Background()
			r := memremote.New()
			newSharing(t, r, "wf-kept", "big")
			b := newMachine(t, 0)
			b.sync(r, "")
			// B's record holds it, as an older Cairn kept it.
			snap := filepath.Join(b.dir, ".claude", "cairn", "workflow-state.json")
			data, err := os.ReadFile(snap)
			if err != nil {
				t.Fatal(err)
			}
			q, _ := json.Marshal(kept)
			planted := bytes.Replace(data, []byte(`"context":"big"`), []byte(`"context":`+string(q)), 1)
			if bytes.Equal(planted, data) {
				t.Fatalf("no context to plant in: %s", data)
			}
			if err := os.WriteFile(snap, planted, 0o600); err != nil {
				t.Fatal(err)
			}
			recs, err := r.Since(ctx, "wf-kept", 0)
			if err != nil {
				t.Fatal(err)
			}
			var e map[string]any
			if err := json.Unmarshal(recs[0].Data, &e); err != nil {
				t.Fatal(err)
			}
			s := e["snapshot"].(map[string]any)
			s["revision"], s["context"], e["revision"] = 2, kept, 2
			data, err = json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Append(ctx, "wf-kept", 1, [][]byte{data}); err != nil {
				t.Fatal(err)
			}
			if raced {
				b.move("plan")
			}
			out, err := remotesync.Sync(ctx, b.st, r, "origin", "", nil)
			if err != nil {
				t.Fatalf("B's sync = %+v, %v; want the remote's line taken: it keeps only what B's record holds", out, err)
			}
			if _, rev := b.phase(); rev != 2 {
				t.Fatalf("B is at r%d, want the remote's r2", rev)
			}
		})
	}
}

// A workflow whose phase has a secret's shape both machines' records kept: a task changed in it
// on one machine, whose event names the phase, was refused by every sync of the other.
func TestRemoteChangeNamingAStoredSecretPhaseIsTaken(t *testing.T) {
	secret := secrettest.Shapes()[3]
	r := memremote.New()
	a := newSharing(t, r, "wf-ph", "c")
	b := newMachine(t, time.Minute)
	b.sync(r, "")
	q, _ := json.Marshal(secret.Text)
	for _, m := range []*machine{a, b} {
		snap := filepath.Join(m.dir, ".claude", "cairn", "workflow-state.json")
		data, err := os.ReadFile(snap)
		if err != nil {
			t.Fatal(err)
		}
		planted := bytes.Replace(data, []byte(`"state":"analyze"`), []byte(`"state":`+string(q)), 1)
		if bytes.Equal(planted, data) {
			t.Fatalf("no phase to plant in: %s", data)
		}
		if err := os.WriteFile(snap, planted, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.en.UpdateTask(engine.TaskRequest{ID: "t1", Status: "running", Note: "x"}); err != nil {
		t.Fatal(err)
	}
	a.sync(r, "")
	out, err := remotesync.Sync(context.Background(), b.st, r, "origin", "", nil)
	if err != nil {
		t.Fatalf("B's sync = %+v, %v; want A's change taken: it keeps only what B's record holds", out, err)
	}
}
