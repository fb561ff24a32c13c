package gitremote_test

import (
	"runtime"
	"strings"
	"testing"

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
	if _, err := b.Append(ctx, "wf-new", 0, [][]byte{make([]byte, remote.MaxRecord+1)}); err == nil {
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
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := call()
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "git fetch origin refs/cairn/wf/wf-x") {
			t.Errorf("%s over a %d-byte subject = %v, want an error naming the ref, with the step", name, size, err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > size/4 {
			t.Errorf("%s over a %d-byte subject allocated %d bytes (%v)", name, size, grew, err)
		}
	}
}
