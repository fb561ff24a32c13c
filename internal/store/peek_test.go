package store

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// peekRecord reads seq and revision from a line's prefix only when the whole line checks out;
// anything else is left to DecodeRecord.
func TestPeekRecord(t *testing.T) {
	line := func(seq, rev int64) []byte {
		return bytes.TrimSuffix(encodeRecord(Record{Seq: seq, Revision: rev, At: time.Unix(0, 0).UTC(),
			Event: Event{Kind: "start"}, Snapshot: json.RawMessage(`{"version":"2.0"}`)}), []byte("\n"))
	}
	good := line(7, 12)
	if seq, rev, ok := peekRecord(good); !ok || seq != 7 || rev != 12 {
		t.Fatalf("peekRecord(%s) = %d, %d, %v; want 7, 12, true", good, seq, rev, ok)
	}
	if r, err := DecodeRecord(good); err != nil || r.Seq != 7 || r.Revision != 12 {
		t.Fatalf("DecodeRecord disagrees with the peek: %+v, %v", r, err)
	}
	flipped := bytes.Replace(good, []byte(`"revision":12`), []byte(`"revision":13`), 1)
	for name, l := range map[string][]byte{
		"checksum broken by an edit": flipped,
		"cut short":                  good[:len(good)-10],
		"empty":                      nil,
		"not a record":               []byte(`{"a":1}`),
		"leading zero":               bytes.Replace(line(7, 12), []byte(`"seq":7`), []byte(`"seq":07`), 1),
	} {
		if seq, rev, ok := peekRecord(l); ok {
			t.Errorf("%s: peekRecord(%q) = %d, %d, true; want not ok", name, l, seq, rev)
		}
	}
}
