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
	if _, err := a.Append(ctx, "wf-long", 0, remote.Slice(data...)); err != nil {
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

// TestLongLineIsAppendedOneRecordAtATime: Append took a line's records at once, so pushing a long
// workflow's line the remote lacks held it whole. Each record is committed as it is handed over:
// the heap held while appending stays near one record however long the line, and the records
// land in order.
func TestLongLineIsAppendedOneRecordAtATime(t *testing.T) {
	ctx := bg(t)
	const n, size = 12, 512 << 10
	url := "file://" + bareRepo(t)
	a := clone(t, url, gitremote.Refs)
	base, peak := alloctest.InUse(), uint64(0)
	head, err := a.Append(ctx, "wf-long", 0, func(yield func([]byte) error) error {
		for i := range n {
			peak = max(peak, alloctest.InUse())
			if err := yield(bytes.Repeat([]byte{byte('a' + i)}, size)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || head != n {
		t.Fatalf("Append = %d, %v; want %d", head, err, n)
	}
	if held := int64(peak) - int64(base); held > 3*size {
		t.Errorf("appending %d records of %d bytes held %d bytes at once; want about one record's", n, size, held)
	}
	err = clone(t, url, gitremote.Refs).Each(ctx, "wf-long", 0, func(r remote.Record) error {
		if len(r.Data) != size || r.Data[0] != byte('a'+r.Rev-1) {
			return fmt.Errorf("record r%d is %d bytes of %q; want %d of %q", r.Rev, len(r.Data), r.Data[0], size, byte('a'+r.Rev-1))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
