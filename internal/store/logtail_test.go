package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// readTail gives what ReadLog gives, cut to the newest n entries, whatever the lines and
// wherever its blocks fall: the same lines, the same torn tail, and the invalid lines among
// those it returns; with n over the entries there are, all of ReadLog's counts.
func TestReadTailIsParseLinesTail(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	piece := func() string {
		switch rng.IntN(8) {
		case 0:
			return "not json\n"
		case 1:
			return "\n"
		case 2: // past the 32 KiB first block, and some over MaxLogLine
			return `{"long":"` + strings.Repeat("x", 30<<10+rng.IntN(40<<10)) + "\"}\n"
		}
		return fmt.Sprintf("{\"n\":%d}\n", rng.IntN(1000))
	}
	for round := range 200 {
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(piece())
		}
		switch rng.IntN(3) {
		case 0:
			b.WriteString(`{"torn":`)
		case 1:
			b.WriteString(`{"torn":"` + strings.Repeat("y", 40<<10))
		}
		data := []byte(b.String())
		all := ParseLines(data, MaxLogLine)
		for _, n := range []int{0, 1, 2, 5, len(all.Lines), len(all.Lines) + 1} {
			got, err := readTail(bytes.NewReader(data), int64(len(data)), n, MaxLogSize)
			if err != nil {
				t.Fatal(err)
			}
			want := Lines{Lines: all.Lines[len(all.Lines)-min(n, len(all.Lines)):], Torn: all.Torn, Invalid: all.Invalid}
			if n <= len(all.Lines) {
				want.Invalid = invalidAfter(data, want.Lines)
			}
			// The invalid lines are named: from the start when the read got there, else from
			// the end (-1 the last line).
			lines := bytes.Count(data, []byte("\n"))
			if len(data) > 0 && data[len(data)-1] != '\n' {
				lines++
			}
			at := slices.Clone(got.InvalidAt)
			for i, v := range at {
				if v < 0 {
					at[i] = lines + 1 + v
				}
			}
			if len(at) != got.Invalid || len(at) > len(all.InvalidAt) || !slices.Equal(at, all.InvalidAt[len(all.InvalidAt)-len(at):]) ||
				n > len(all.Lines) && !slices.Equal(got.InvalidAt, all.InvalidAt) {
				t.Fatalf("round %d, n %d: invalid lines %v, all %v", round, n, got.InvalidAt, all.InvalidAt)
			}
			if !slices.EqualFunc(got.Lines, want.Lines, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) || got.Torn != want.Torn || got.Invalid != want.Invalid || got.Older != 0 {
				t.Fatalf("round %d, n %d: got %d lines torn %d invalid %d older %d; want %d lines torn %d invalid %d",
					round, n, len(got.Lines), got.Torn, got.Invalid, got.Older, len(want.Lines), want.Torn, want.Invalid)
			}
		}
	}
}

// invalidAfter counts the invalid whole lines of data after the first of tail, the newest
// valid lines.
func invalidAfter(data []byte, tail []json.RawMessage) int {
	if len(tail) == 0 {
		return 0
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	invalid, valid := 0, 0
	for _, l := range slices.Backward(lines) {
		l, whole := bytes.CutSuffix(l, []byte("\n"))
		if !whole {
			continue
		}
		if len(ParseLines(append(l, '\n'), MaxLogLine).Lines) == 1 {
			if valid++; valid == len(tail) {
				return invalid
			}
		} else {
			invalid++
		}
	}
	return invalid
}

// Past limit bytes it stops as ReadLog does: with fewer than n entries in the last limit
// bytes, those are read and the bytes before them counted in Older.
func TestReadTailStopsAtTheLimit(t *testing.T) {
	const limit = 100 << 10
	data := []byte(`{"old":1}` + "\n" + strings.Repeat(" ", limit) + "\n{\"n\":1}\n{\"n\":2}\n")
	got, err := readTail(bytes.NewReader(data), int64(len(data)), 5, limit)
	if err != nil || len(got.Lines) != 2 || string(got.Lines[0]) != `{"n":1}` || got.Older != int64(len(data))-16 || got.Invalid != 0 {
		t.Fatalf("got %q older %d invalid %d, %v", got.Lines, got.Older, got.Invalid, err)
	}
	// No newline at all in the last limit bytes: nothing whole, all of it older.
	data = []byte("{}\n" + strings.Repeat("z", limit+10))
	if got, err = readTail(bytes.NewReader(data), int64(len(data)), 1, limit); err != nil || len(got.Lines) != 0 || got.Older != int64(len(data)) {
		t.Fatalf("one long torn line: %q older %d, %v", got.Lines, got.Older, err)
	}
}
