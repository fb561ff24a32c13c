package gitremote_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/alloctest"
	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
)

// TestHugeRecordIsRefused: a record larger than any Cairn writes (remote.MaxRecord), pushed
// by anyone with access, is an error naming the workflow, found from the size git reports
// before the blob is read: reading it whole would let one push exhaust every machine's memory.
func TestHugeRecordIsRefused(t *testing.T) {
	ctx := bg(t)
	bare := bareRepo(t)
	forge(t, bare, "refs/cairn/wf/wf-big", strings.Repeat("x", remote.MaxRecord+1), "cairn wf-big r1\n")
	b := clone(t, "file://"+bare, gitremote.Refs)
	recs, err := b.Since(ctx, "wf-big", 0)
	if err == nil || !strings.Contains(err.Error(), "git fetch origin refs/cairn/wf/wf-big") {
		t.Fatalf("Since on a %d-byte record = %d records, %v; want an error naming the workflow", remote.MaxRecord+1, len(recs), err)
	}
	if _, err := b.Append(ctx, "wf-new", 0, remote.Slice(make([]byte, remote.MaxRecord+1))); err == nil {
		t.Fatal("Append took a record larger than remote.MaxRecord")
	}
}

// TestHugeSubjectIsNotRead: a commit whose subject is huge (any length is valid in git), put
// under the workflows' refs by anyone who can push, is an error found from the first line too
// long to be Cairn's, not read whole into memory: Heads lists every ref's subject at each
// sync, and Since every commit's of the line.
func TestHugeSubjectIsNotRead(t *testing.T) {
	ctx := bg(t)
	const size = 16 << 20
	bare := bareRepo(t)
	forge(t, bare, "refs/cairn/wf/wf-x", `{"n":1}`, "cairn wf-x r1 "+strings.Repeat("x", size)+"\n")
	b := clone(t, "file://"+bare, gitremote.Refs)
	for name, call := range map[string]func() error{
		"Heads": func() error { _, err := b.Heads(ctx); return err },
		"Since": func() error { _, err := b.Since(ctx, "wf-x", 0); return err },
	} {
		var err error
		grew := alloctest.Bytes(func() { err = call() })
		if err == nil || !strings.Contains(err.Error(), "git fetch origin refs/cairn/wf/wf-x") {
			t.Errorf("%s over a %d-byte subject = %v, want an error naming the ref, with the step", name, size, err)
		}
		if grew > size/4 {
			t.Errorf("%s over a %d-byte subject allocated %d bytes (%v)", name, size, grew, err)
		}
	}
}

// TestHugeSubjectLeavesTheOthers: one ref whose commit has a huge subject stopped the whole
// listing, so every sync failed on it and no other workflow was pulled. That ref is left out
// with its reason and step, as any line Cairn did not write is, and the rest are listed.
func TestHugeSubjectLeavesTheOthers(t *testing.T) {
	ctx := bg(t)
	bare := bareRepo(t)
	url := "file://" + bare
	a := clone(t, url, gitremote.Refs)
	for _, id := range []string{"wf-a", "wf-z"} {
		if _, err := a.Append(ctx, id, 0, remote.Slice([]byte(`{"n":1}`))); err != nil {
			t.Fatal(err)
		}
	}
	forge(t, bare, "refs/cairn/wf/wf-m", `{"n":1}`, "cairn wf-m r1 "+strings.Repeat("x", 1<<20)+"\n")
	b := clone(t, url, gitremote.Refs)
	for round := range 2 {
		h, err := b.Heads(ctx)
		ue, ok := errors.AsType[*remote.UnreadableError](err)
		if !ok || !slices.Equal(ue.IDs, []string{"wf-m"}) || !strings.Contains(err.Error(), "git fetch origin refs/cairn/wf/wf-m") {
			t.Fatalf("round %d: Heads error = %v, want wf-m left out, with the step", round, err)
		}
		if l := ue.LeftOut(); len(l) != 1 || l[0].Reason != remote.NotCairns || l[0].Ref != "refs/cairn/wf/wf-m" || l[0].Step == "" {
			t.Fatalf("round %d: lines left out = %+v, want wf-m as not Cairn's", round, l)
		}
		if h["wf-a"] != 1 || h["wf-z"] != 1 || len(h) != 2 {
			t.Fatalf("round %d: Heads = %v, want wf-a and wf-z at 1", round, h)
		}
		if h, err := b.Mirrored(ctx); h["wf-a"] != 1 || h["wf-z"] != 1 || len(h) != 2 || err == nil {
			t.Fatalf("round %d: Mirrored = %v, %v", round, h, err)
		}
	}
	if recs, err := b.Since(ctx, "wf-z", 0); err != nil || len(recs) != 1 {
		t.Fatalf("Since(wf-z) beside wf-m = %d records, %v", len(recs), err)
	}
}
