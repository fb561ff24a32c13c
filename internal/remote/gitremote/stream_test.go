package gitremote_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/cairn-dev/cairn/internal/alloctest"
	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
)

// TestLongLineIsReadOneRecordAtATime: a line was read whole into memory (every record a full
// snapshot), so a long workflow's line took hundreds of MB on a new machine's first sync. Each
// hands its records over as git gives them: the heap held while reading stays near one record
// however long the line, and the records are Since's, in order.
func TestLongLineIsReadOneRecordAtATime(t *testing.T) {
	ctx := bg(t)
	const n, size = 12, 512 << 10
	url := "file://" + bareRepo(t)
	a := clone(t, url, gitremote.Refs)
	data := make([][]byte, n)
	for i := range data {
		data[i] = bytes.Repeat([]byte{byte('a' + i)}, size)
	}
	if _, err := a.Append(ctx, "wf-long", 0, data); err != nil {
		t.Fatal(err)
	}
	data = nil
	b := clone(t, url, gitremote.Refs)
	base, peak := alloctest.InUse(), uint64(0)
	var got []string
	err := b.Each(ctx, "wf-long", 0, func(r remote.Record) error {
		peak = max(peak, alloctest.InUse())
		got = append(got, fmt.Sprintf("r%d %d %c", r.Rev, len(r.Data), r.Data[0]))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if held := int64(peak) - int64(base); held > 3*size {
		t.Errorf("reading %d records of %d bytes held %d bytes at once; want about one record's", n, size, held)
	}
	recs, err := b.Since(ctx, "wf-long", 0)
	if err != nil || len(recs) != n || len(got) != n {
		t.Fatalf("Since = %d records, %v; Each gave %d; want %d", len(recs), err, len(got), n)
	}
	for i, r := range recs {
		if w := fmt.Sprintf("r%d %d %c", r.Rev, len(r.Data), r.Data[0]); got[i] != w {
			t.Fatalf("Each's record %d = %s, Since's %s", i, got[i], w)
		}
	}
}
