package claim_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/claim"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
)

// TestReleasedAsDone: a claim released as done leaves its task finished on the line: no
// machine claims it again, also one restored from what an earlier run saved, while a plain
// release frees its task as before. An older Cairn reads the release as any release, and a
// claim it makes afterwards counts on every machine, as it did.
func TestReleasedAsDone(t *testing.T) {
	ctx := context.Background()
	b := memremote.New()
	a := claim.New(b, "claims", "A", time.Hour, time.Now)
	fences := map[string]int64{}
	for _, task := range []string{"t1", "t2"} {
		f, err := a.TryClaim(ctx, task)
		if err != nil {
			t.Fatal(err)
		}
		fences[task] = f
	}
	if err := a.ReleaseAll(ctx, fences, map[string]bool{"t1": true}); err != nil {
		t.Fatal(err)
	}
	m := claim.New(b, "claims", "B", time.Hour, time.Now)
	var de *claim.DoneError
	if _, err := m.TryClaim(ctx, "t1"); !errors.As(err, &de) || de.By.Owner != "A" || de.By.Rev != fences["t1"] {
		t.Fatalf("claiming t1, released as done by A: %v; want a DoneError naming A's claim", err)
	}
	saved := m.State()
	if _, err := m.TryClaim(ctx, "t2"); err != nil {
		t.Fatalf("claiming t2, released: %v", err)
	}
	r := claim.New(b, "claims", "B", time.Hour, time.Now)
	r.Restore(saved)
	if _, err := r.TryClaim(ctx, "t1"); !errors.As(err, &de) {
		t.Fatalf("restored from a State that read t1 done, claiming it: %v; want a DoneError", err)
	}

	// What an older Cairn reads of the record: a release of A's claim, as any release.
	recs, err := remote.Records(ctx, b, "claims", 0)
	if err != nil {
		t.Fatal(err)
	}
	var old struct {
		Op, Task, Owner string
		Prev            int64
	}
	if err := json.Unmarshal(recs[2].Data, &old); err != nil || old.Op != "release" || old.Task != "t1" || old.Owner != "A" || old.Prev != fences["t1"] {
		t.Fatalf("the done's release %s read by an older Cairn: %+v %v", recs[2].Data, old, err)
	}
	// Which then claims t1, as nothing told it not to: every machine counts that claim.
	if _, err := b.Append(ctx, "claims", int64(len(recs)), remote.Slice([]byte(`{"op":"claim","task":"t1","owner":"Old","prev":0}`))); err != nil {
		t.Fatal(err)
	}
	if _, err := r.TryClaim(ctx, "t1"); !errors.Is(err, claim.ErrHeld) {
		t.Fatalf("t1 claimed by an older Cairn after the done: %v; want it held", err)
	}
	if _, ok := r.Finished("t1"); ok {
		t.Fatal("t1 is still finished after an older Cairn's claim counted")
	}
}
