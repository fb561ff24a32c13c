package remotesync_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
	"github.com/cairn-dev/cairn/internal/remote/remotesync"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/cairn-dev/cairn/internal/store"
)

// A workflow whose context holds text of a secret's shape both machines' records kept from
// before a rule found it: the remote's next revision, keeping it, was refused by every sync
// here as a secret brought in, in a pull as after a lost race. It is taken, as a change here
// keeping it is.
func TestRemoteLineKeepingAStoredSecretIsTaken(t *testing.T) {
	t.Parallel()
	secret := secrettest.Shapes()[0]
	kept := "deploy with " + secret.Text
	for _, raced := range []bool{false, true} {
		t.Run(map[bool]string{false: "pull", true: "lost race"}[raced], func(t *testing.T) {
			ctx := context.Background()
			r := memremote.New()
			newSharing(t, r, "wf-kept", "big")
			b := newMachine(t, 0)
			b.sync(r, "")
			plantKept(t, r, b, kept)
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
	t.Parallel()
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

// noRoom is a durable.FS on which every write fails for want of space; reads go through.
type noRoom struct{ durable.FS }

func (f noRoom) OpenFile(name string, flag int, perm fs.FileMode) (durable.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_APPEND) != 0 {
		return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.ENOSPC}
	}
	return f.FS.OpenFile(name, flag, perm)
}

func (f noRoom) Rename(oldname, newname string) error {
	return &fs.PathError{Op: "rename", Path: newname, Err: syscall.ENOSPC}
}

// A remote revision keeping text of a secret's shape the record here holds already, pulled onto
// a full disk: the write failed for want of space, and the sync blamed the secret, saying no sync
// could take the line, with the step to clear it on the remote. The full disk is said.
func TestKeptSecretIsNotBlamedForAnotherFailure(t *testing.T) {
	t.Parallel()
	secret := secrettest.Shapes()[0]
	kept := "deploy with " + secret.Text
	ctx := context.Background()
	r := memremote.New()
	newSharing(t, r, "wf-kept", "big")
	b := newMachine(t, 0)
	b.sync(r, "")
	plantKept(t, r, b, kept)
	full, err := store.Open(b.st.Dir(), store.WithWrapFS(func(f durable.FS) durable.FS { return noRoom{f} }))
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	out, err := remotesync.Sync(ctx, full, r, "origin", "", nil)
	if err == nil || errors.Is(err, remote.ErrUnreadable) || strings.Contains(err.Error(), "no sync can take") || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("B's sync onto a full disk = %+v, %v; want the full disk said, not the kept secret blamed", out, err)
	}
}

// plantKept puts kept, text of a secret's shape, into the context of b's record, as an older
// Cairn kept it, and appends to r a revision 2 of workflow wf-kept keeping it too.
func plantKept(t *testing.T, r *memremote.Backend, b *machine, kept string) {
	t.Helper()
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
	ctx := context.Background()
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
	if data, err = json.Marshal(e); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Append(ctx, "wf-kept", 1, remote.Slice(data)); err != nil {
		t.Fatal(err)
	}
}
