package store

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// roundTrip diffs a against b, checks that applying the delta to a gives b byte for byte, and
// returns the delta.
func roundTrip(t testing.TB, a, b string) string {
	t.Helper()
	na, err := parseJSON([]byte(a))
	if err != nil {
		t.Fatalf("parse %s: %v", a, err)
	}
	nb, err := parseJSON([]byte(b))
	if err != nil {
		t.Fatalf("parse %s: %v", b, err)
	}
	d := diffJSON(na, nb)
	if d == nil {
		if a != b {
			t.Fatalf("no delta from %s to %s", a, b)
		}
		return ""
	}
	dn, err := parseJSON(d)
	if err != nil {
		t.Fatalf("delta %s does not parse: %v", d, err)
	}
	got, err := applyDelta(na, dn)
	if err != nil {
		t.Fatalf("delta %s does not apply: %v", d, err)
	}
	if g := got.appendTo(nil); !bytes.Equal(g, []byte(b)) {
		t.Fatalf("%s + %s = %s, want %s", a, d, g, b)
	}
	// As a replay applies it: the state lazy, the delta's values kept as bytes.
	var p jparser
	lazy, err := lazyJSON([]byte(a))
	if err != nil {
		t.Fatal(err)
	}
	ld, err := p.parseDelta(d)
	if err != nil {
		t.Fatalf("delta %s does not parse as a delta: %v", d, err)
	}
	if got, err = p.apply(lazy, ld); err != nil {
		t.Fatalf("delta %s does not apply lazily: %v", d, err)
	}
	if g := got.appendTo(nil); !bytes.Equal(g, []byte(b)) {
		t.Fatalf("%s + %s = %s lazily, want %s", a, d, g, b)
	}
	return string(d)
}

var pad = strings.Repeat("x", 200)

func TestDelta(t *testing.T) {
	hist := func(from, to int) string {
		var parts []string
		for i := from; i <= to; i++ {
			parts = append(parts, `{"from":"p`+string(rune('a'+i%26))+`","to":"q","note":"a longer note so an append is cheaper than a copy"}`)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	for _, tc := range []struct {
		name, a, b, want string
	}{
		{"member set", `{"a":1,"b":2}`, `{"a":1,"b":3}`, `{"o":{"b":{"v":3}}}`},
		{"member added at the end", `{"a":1}`, `{"a":1,"c":{"x":[1]}}`, `{"o":{"c":{"v":{"x":[1]}}}}`},
		{"member deleted", `{"a":1,"b":2,"c":3}`, `{"a":1,"c":3}`, `{"o":{},"d":["b"]}`},
		{"member added in the middle keeps the order", `{"a":1,"c":3}`, `{"a":1,"b":2,"c":3}`, `{"o":{"b":{"v":2}},"k":["pad","a","b","c"]}`},
		{"nested and large", `{"p":{"x":{"done":false,"n":"` + pad + `"}}}`, `{"p":{"x":{"done":true,"n":"` + pad + `"}}}`, `{"o":{"p":{"o":{"x":{"o":{"done":{"v":true}}}}}}}`},
		{"nested", `{"p":{"x":{"done":false,"n":1}}}`, `{"p":{"x":{"done":true,"n":1}}}`, `{"o":{"p":{"v":{"x":{"done":true,"n":1}}}}}`},
		{"sliding history", `{"h":` + hist(0, 9) + `}`, `{"h":` + hist(1, 10) + `}`, ""},
		{"append only", `{"h":` + hist(0, 3) + `}`, `{"h":` + hist(0, 5) + `}`, ""},
		{"array item changed", `{"t":[{"id":"a","s":"pending","note":"long enough to patch: ` + pad + `"},{"id":"b","s":"pending","note":"long enough to patch: ` + pad + `"}]}`,
			`{"t":[{"id":"a","s":"pending","note":"long enough to patch: ` + pad + `"},{"id":"b","s":"done","note":"long enough to patch: ` + pad + `"}]}`, `{"o":{"t":{"i":{"1":{"o":{"s":{"v":"done"}}}}}}}`},
		{"array rewritten", `{"a":[1,2,3]}`, `{"a":[4]}`, `{"o":{"a":{"v":[4]}}}`},
		{"type change", `{"a":{"x":1}}`, `{"a":"s"}`, `{"o":{"a":{"v":"s"}}}`},
		{"escapes and unicode kept", `{"s":"a\"b","é":"\u00e9"}`, `{"s":"a\"b\\n","é":"\u00e9","n":-1.5e3}`, `{"o":{"s":{"v":"a\"b\\n"},"n":{"v":-1.5e3}}}`},
		{"empty containers", `{"a":[],"b":{}}`, `{"a":[1],"b":{"c":null}}`, `{"o":{"a":{"v":[1]},"b":{"v":{"c":null}}}}`},
		{"root replaced", `[1]`, `{"a":1}`, `{"v":{"a":1}}`},
		{"members named like a delta's parts", `{"v":{"x":1,"n":"` + pad + `"},"a":[{"k":1,"n":"` + pad + `"}],"o":{"i":{"d":1,"n":"` + pad + `"}}}`,
			`{"v":{"x":2,"n":"` + pad + `"},"a":[{"k":2,"n":"` + pad + `"}],"o":{"i":{"d":2,"n":"` + pad + `"}}}`,
			`{"o":{"v":{"o":{"x":{"v":2}}},"a":{"i":{"0":{"o":{"k":{"v":2}}}}},"o":{"o":{"i":{"o":{"d":{"v":2}}}}}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if strings.HasPrefix(tc.a, "{") && strings.HasPrefix(tc.b, "{") {
				// Large enough that a patch beats a copy of the whole.
				tc.a, tc.b = `{"pad":"`+pad+`",`+tc.a[1:], `{"pad":"`+pad+`",`+tc.b[1:]
				if tc.a[len(tc.a)-2] == ',' {
					tc.a = tc.a[:len(tc.a)-2] + "}"
				}
				if tc.b[len(tc.b)-2] == ',' {
					tc.b = tc.b[:len(tc.b)-2] + "}"
				}
			}
			d := roundTrip(t, tc.a, tc.b)
			if tc.want != "" && d != tc.want {
				t.Errorf("delta %s, want %s", d, tc.want)
			}
			if strings.HasPrefix(tc.name, "sliding") && !strings.HasPrefix(d, `{"o":{"h":{"a":[1,[`) {
				t.Errorf("a sliding history should drop one and append one: %s", d)
			}
			if len(tc.b) > 200 && len(d) > len(tc.b)/2 {
				t.Errorf("delta %d bytes for a %d-byte document", len(d), len(tc.b))
			}
		})
	}
}

func TestApplyDeltaRefusesWhatDoesNotFit(t *testing.T) {
	for _, tc := range []struct{ state, delta string }{
		{`{"a":1}`, `{"a":[0,[]]}`},
		{`[1,2]`, `{"a":[3,[]]}`},
		{`[1,2]`, `{"i":{"5":{"v":1}}}`},
		{`[1,2]`, `{"o":{"a":{"v":1}}}`},
		{`{"a":1}`, `{"o":{},"k":["b"]}`},
		{`{"a":1}`, `{"x":1}`},
		{`{"a":1}`, `{}`},
	} {
		s, _ := parseJSON([]byte(tc.state))
		d, err := parseJSON([]byte(tc.delta))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := applyDelta(s, d); err == nil {
			t.Errorf("%s + %s = %s, want an error", tc.state, tc.delta, got.appendTo(nil))
		}
	}
}

func FuzzDelta(f *testing.F) {
	f.Add(`{"a":1,"b":[1,2,3]}`, `{"b":[2,3,4],"a":2}`)
	f.Add(`{"h":[{"x":1},{"x":2}],"o":{"k":"v"}}`, `{"h":[{"x":2},{"x":3}],"o":{}}`)
	f.Add(`[]`, `[[],{}]`)
	f.Fuzz(func(t *testing.T, a, b string) {
		var ca, cb bytes.Buffer
		if compactJSON(&ca, a) != nil || compactJSON(&cb, b) != nil {
			return
		}
		roundTrip(t, ca.String(), cb.String())
	})
}

func compactJSON(buf *bytes.Buffer, s string) error { return json.Compact(buf, []byte(s)) }

// FuzzParseJournal: any bytes, a journal or not, are read without a panic, and what replays
// re-encodes to lines that read back the same.
func FuzzParseJournal(f *testing.F) {
	full := encodeRecord(Record{Seq: 1, Revision: 1, Event: Event{Kind: "start", Detail: `{"a":"\u003c"}`}, Snapshot: []byte(`{"a":[1,2]}`), State: stateSum([]byte(`{"a":[1,2]}`))})
	delta := encodeRecord(Record{Seq: 2, Revision: 2, Event: Event{Kind: "t"}, Delta: []byte(`{"o":{"a":{"a":[1,[3]]}}}`), Base: 1, Chain: 20, State: stateSum([]byte(`{"a":[2,3]}`))})
	f.Add(append(append(append(full, '\n'), delta...), '\n'))
	f.Add([]byte("{\"seq\":1}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		j := ParseJournal(data)
		last, _ := replay(j.Records, nil, nil)
		for _, r := range j.Records {
			back, err := DecodeRecord(encodeRecord(r))
			if err != nil || back.Seq != r.Seq || back.Revision != r.Revision || !bytes.Equal(back.Delta, r.Delta) || back.Event != r.Event {
				t.Fatalf("%+v re-encodes to %+v (%v)", r, back, err)
			}
		}
		if last != nil && json.Valid(last.Snapshot) == false {
			t.Fatalf("replayed to invalid JSON %q", last.Snapshot)
		}
	})
}

// TestJournalStateOwnsItsBytes: journalState reads into a recycled buffer; the state it
// returns (a full line's bytes as is) must not change when the buffer is used again.
func TestJournalStateOwnsItsBytes(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	doc := func(id, pad string) []byte {
		return []byte(`{"version":"2.0","workflow_id":"` + id + `","revision":1,"pad":"` + pad + `"}`)
	}
	for _, id := range []string{"wf-a", "wf-b"} {
		if _, err := s.UpdateWorkflow(func([]byte) ([]byte, Event, error) {
			return doc(id, strings.Repeat(id, 500)), Event{Kind: "start"}, nil
		}); err != nil {
			t.Fatal(err)
		}
		if id == "wf-a" {
			if _, err := s.Archive("done"); err != nil {
				t.Fatal(err)
			}
		}
	}
	names, _ := s.fs.ReadDirNames(archiveDir)
	var a string
	for _, n := range names {
		if strings.HasPrefix(n, "wf-a") {
			a = archiveDir + "/" + n + "/journal.jsonl"
		}
	}
	first, err := s.journalState(a)
	if err != nil || first == nil {
		t.Fatal(a, err)
	}
	for range 3 {
		if _, err := s.journalState(journalFile("wf-b")); err != nil {
			t.Fatal(err)
		}
	}
	if want := doc("wf-a", strings.Repeat("wf-a", 500)); !bytes.Equal(first.Snapshot, want) {
		t.Fatalf("the state changed under its reader: %.60s", first.Snapshot)
	}
}
