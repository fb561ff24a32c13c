package mcptools

import "testing"

// clipDeep cuts each array or object that opens deeper than depth, brackets in strings not
// counted, and leaves everything else as it was.
func TestClipDeep(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		cut      bool
	}{
		{`{"a":[1,2]}`, `{"a":[1,2]}`, false},
		{`{"a":[[1],[2]]}`, `{"a":[0,0]}`, true},
		{`{"a":[[[1]],"x"],"b":{"c":{}}}`, `{"a":[0,"x"],"b":{"c":0}}`, true},
		{`{"a":"[[[\"{{","b":[{"c":"]]"}]}`, `{"a":"[[[\"{{","b":[0]}`, true},
		{`{"a":[[1,[2`, `{"a":[0`, true},
		{`[[]]`, `[[]]`, false},
		{`not json [[[`, `not json [[0`, true},
	} {
		got, cut := clipDeep([]byte(tc.in), 2)
		if string(got) != tc.want || cut != tc.cut {
			t.Errorf("clipDeep(%s, 2) = %s, %v; want %s, %v", tc.in, got, cut, tc.want, tc.cut)
		}
	}
}

// depthAt counts the brackets open at the end of b, those in strings not counted.
func TestDepthAt(t *testing.T) {
	for in, want := range map[string]int{
		`{}`:                0,
		`{"a":[1,`:          2,
		`{"a":"[[\"{",`:     1,
		`{"a":"[`:           -1,
		`{"a":{"b":[]},"c"`: 1, // the string "c" is closed
	} {
		if got := depthAt([]byte(in)); got != want {
			t.Errorf("depthAt(%s) = %d, want %d", in, got, want)
		}
	}
}
