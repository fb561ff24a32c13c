package fsx

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// encodeHolder must write exactly what json.Marshal wrote before it (readHolder and older
// Cairns read it with encoding/json).
func TestEncodeHolderIsJSONMarshal(t *testing.T) {
	for _, h := range []Holder{
		{},
		{PID: 4242, Command: "cairn-session-start", Since: time.Date(2026, 11, 22, 17, 30, 0, 123456789, time.UTC)},
		{PID: -1, Command: `a"b\c<d>&e` + "\u2028\u00e9\U0001F600\xff", Since: time.Date(1, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 3600))},
	} {
		want, werr := json.Marshal(h)
		got, gerr := encodeHolder(h)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Errorf("encodeHolder(%+v) = %s, %v; json.Marshal gives %s, %v", h, got, gerr, want, werr)
		}
	}
}

func FuzzEncodeHolder(f *testing.F) {
	f.Add(4242, "cairn-stop", int64(1763832600), int64(5), 0)
	f.Add(-7, "<&>\u2028\x00\xff", int64(-62135596800), int64(0), 3600)
	f.Add(0, "", int64(253402300800), int64(999999999), -59)
	f.Fuzz(func(t *testing.T, pid int, cmd string, sec, nsec int64, offset int) {
		h := Holder{PID: pid, Command: cmd, Since: time.Unix(sec, nsec).In(time.FixedZone("z", offset%86400))}
		want, werr := json.Marshal(h)
		got, gerr := encodeHolder(h)
		if (werr == nil) != (gerr == nil) || werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("encodeHolder(%+v) = %s, %v; json.Marshal gives %s, %v", h, got, gerr, want, werr)
		}
	})
}
