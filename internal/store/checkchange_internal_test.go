package store

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/alloctest"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
)

// checkChange refuses only text of a secret's shape a change brings in, never what the
// document held already: as a value, as a key, whichever other text is new beside it.
func TestCheckChangeRefusesOnlyNewText(t *testing.T) {
	shapes := secrettest.Shapes()
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	kept, other := q(shapes[3].Text), q(shapes[0].Text)
	for _, c := range []struct {
		name, old, next string
		refused         bool
	}{
		{"kept value", `{"a":` + kept + `}`, `{"a":` + kept + `,"b":"x"}`, false},
		{"kept value moved", `{"a":` + kept + `}`, `{"b":[` + kept + `]}`, false},
		{"kept key", `{"v":{` + kept + `:"1"}}`, `{"v":{` + kept + `:"2","x":"1"}}`, false},
		{"new value beside a kept one", `{"a":` + kept + `}`, `{"a":` + kept + `,"b":` + other + `}`, true},
		{"new value under a kept key", `{"v":{` + kept + `:"1"}}`, `{"v":{` + kept + `:` + other + `}}`, true},
		{"new key beside a kept one", `{"v":{` + kept + `:"1"}}`, `{"v":{` + kept + `:"1",` + other + `:"1"}}`, true},
		{"new password for a kept one", `{"a":` + kept + `}`, `{"a":` + kept + `,"password":"Tr0ub4dor&3xQz"}`, true},
		{"new value under a repeated key", `{"a":` + kept + `}`, `{"a":` + kept + `,"b":` + other + `,"b":"x"}`, true},
		{"new value beside a kept name", `{"a":` + kept + `,"b":"api_key"}`, `{"a":` + kept + `,"b":["api_key", "Ab1Cd2Ef3Gh4Ij5Kl6Mn7"]}`, true},
		{"new flag beside a kept command", `{"a":` + kept + `,"c":"curl https://x.example"}`, `{"a":` + kept + `,"c":["curl https://x.example", " -u bob:Tr0ub4dor3x"]}`, true},
		{"new value beside a kept name, a password kept", `{"a":{"password":"Tr0ub4dor&3xQz"},"b":"api_key"}`, `{"a":{"password":"Tr0ub4dor&3xQz"},"b":["api_key", "Ab1Cd2Ef3Gh4Ij5Kl6Mn7"]}`, true},
		{"kept pair", `{"a":["api_key","Ab1Cd2Ef3Gh4Ij5Kl6Mn7"]}`, `{"b":["api_key","Ab1Cd2Ef3Gh4Ij5Kl6Mn7"],"c":"x"}`, false},
		{"new value in a kept pair", `{"a":["api_key","Ab1Cd2Ef3Gh4Ij5Kl6Mn7"]}`, `{"a":["api_key","Zz9Yy8Xx7Ww6Vv5Uu4Tt3"]}`, true},
		{"new pair beside a kept one", `{"a":["api_key","Ab1Cd2Ef3Gh4Ij5Kl6Mn7"]}`, `{"a":["api_key","Ab1Cd2Ef3Gh4Ij5Kl6Mn7"],"b":["api_key","Zz9Yy8Xx7Ww6Vv5Uu4Tt3"]}`, true},
		{"kept password moved", `{"a":{"password":"Tr0ub4dor&3xQz"}}`, `{"b":[{"password":"Tr0ub4dor&3xQz"}]}`, false},
		{"a clean record", `{"a":"x"}`, `{"a":` + other + `}`, true},
		{"no record", ``, `{"a":` + other + `}`, true},
	} {
		var old []byte
		if c.old != "" {
			old = []byte(c.old)
		}
		err := checkChange(old, []byte(c.next))
		if (err != nil) != c.refused {
			t.Errorf("%s: %v", c.name, err)
		}
		if err != nil && (strings.Contains(err.Error(), shapes[3].Core) || strings.Contains(err.Error(), shapes[0].Core)) {
			t.Errorf("%s: the refusal repeats the secret: %v", c.name, err)
		}
	}
}

// A record of many keys of a secret's shape, all kept, is checked in linear time: each key
// put out of the way once took a name past all those before it, a character longer each.
func TestCheckChangeOfManyKeptKeysIsLinear(t *testing.T) {
	core := secrettest.Shapes()[3].Text
	var b strings.Builder
	b.WriteString(`{"v":{`)
	for i := range 5000 {
		if i > 0 {
			b.WriteString(",")
		}
		k, _ := json.Marshal(core + strconv.Itoa(i))
		b.Write(k)
		b.WriteString(":1")
	}
	old := b.String() + `}}`
	next := b.String() + `},"x":"y"}`
	start := time.Now()
	if err := checkChange([]byte(old), []byte(next)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("checkChange of %d bytes took %v", len(next), d)
	}
}

// An event's detail of text (a sync's, quoting the remote's event) is refused only for text of
// a secret's shape the record does not hold already, as a JSON one is.
func TestCheckEventTextDetail(t *testing.T) {
	shapes := secrettest.Shapes()
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	amp := shapes[19].Text + "?a=1&b=2" // kept; json.Marshal writes & as \u0026, as the remote did
	old := []byte(`{"state":` + q(shapes[3].Text) + `,"url":` + q(amp) + `}`)
	for _, c := range []struct {
		name, detail string
		refused      bool
	}{
		{"kept", `from origin: task_update {"phase":` + q(shapes[3].Text) + `}`, false},
		{"kept, escaped", `from origin: task_update {"phase":` + q(amp) + `}`, false},
		{"kept, of a task", `{"phase":` + q(amp) + `}`, false},
		{"new beside a kept one", `from origin: task_update {"phase":` + q(shapes[3].Text) + `,"note":` + q(shapes[0].Text) + `}`, true},
		{"a kept one made longer", `from origin: task_update {"phase":` + q(shapes[3].Text+"Zz9") + `}`, true},
	} {
		ev := Event{Kind: "sync", Detail: c.detail}
		if err := checkEvent(&ev, old); (err != nil) != c.refused {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// A sync's event quoting a remote's event near the most a detail holds is cut to fit with the
// quoted JSON whole: pulled on through a second remote, which quotes it again, a secret the
// record kept is still told from a new one.
func TestCutSyncDetailKeepsItsJSON(t *testing.T) {
	shapes := secrettest.Shapes()
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	old := []byte(`{"state":` + q(shapes[3].Text) + `}`)
	remote := `{"actor":"claude","from":` + q(shapes[3].Text) + `,"note":` + q(strings.Repeat("done é & ", 120)) + `,"to":"b"}`
	ev := Event{Kind: "sync", Detail: "from origin: phase_advance " + remote}
	for hop := range 3 {
		if err := checkEvent(&ev, old); err != nil {
			t.Fatalf("hop %d: %v", hop, err)
		}
		i := strings.IndexByte(ev.Detail, '{')
		if len(ev.Detail) > MaxEventDetail || !json.Valid([]byte(ev.Detail[i:])) || !strings.Contains(ev.Detail, `"to":"b"`) {
			t.Fatalf("hop %d: %d bytes, the quoted JSON cut: %s", hop, len(ev.Detail), ev.Detail)
		}
		ev = Event{Kind: "sync", Detail: "from second: sync " + ev.Detail}
	}
}

// A hostile remote's event detail far past what Cairn quotes (64 KB of short JSON strings) is
// cut at the cost of a plain cut, not of ten re-scans of every string: once per pulled revision.
func TestCutDetailOfAHugeQuoteIsCheap(t *testing.T) {
	var b strings.Builder
	b.WriteString("from origin: sync [")
	for i := 0; b.Len() < 64<<10; i++ {
		fmt.Fprintf(&b, `"s%d",`, i)
	}
	detail := b.String() + `"end"]`
	var got string
	alloc := alloctest.Bytes(func() { got = cutDetail(detail) })
	if len(got) > MaxEventDetail || !strings.HasPrefix(got, "from origin: sync [") {
		t.Fatalf("cut to %d bytes: %.80s", len(got), got)
	}
	if limit := uint64(len(detail)) * 4; alloc > limit {
		t.Errorf("cutting a %d-byte detail allocated %d bytes; want at most %d", len(detail), alloc, limit)
	}
}
