package gitremote_test

import (
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
	if err == nil || !strings.Contains(err.Error(), "wf-big") {
		t.Fatalf("Since on a %d-byte record = %d records, %v; want an error naming the workflow", remote.MaxRecord+1, len(recs), err)
	}
	if _, err := b.Append(ctx, "wf-new", 0, [][]byte{make([]byte, remote.MaxRecord+1)}); err == nil {
		t.Fatal("Append took a record larger than remote.MaxRecord")
	}
}
