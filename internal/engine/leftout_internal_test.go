package engine

import "testing"

// TestLeftOutCountsOne: a record that left out one move, output or artifact to fit its cap
// said "its 1 oldest moves" and "1 outputs"; one is said as one.
func TestLeftOutCountsOne(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		moves, outputs, artifacts, checkpoints int
		want                                   string
	}{
		{1, 1, 1, 1, "to fit in the 1 MiB a workflow record may hold, the record of w leaves out its oldest move, which its journal keeps (`cairn history w` lists them all), and 1 output from its phases, which its artifacts list, and its oldest artifact, which its journal keeps, and the checkpoint kept with a phase, which its journal keeps"},
		{3, 2, 4, 2, "to fit in the 1 MiB a workflow record may hold, the record of w leaves out its 3 oldest moves, which its journal keeps (`cairn history w` lists them all), and 2 outputs from its phases, which its artifacts list, and its 4 oldest artifacts, which its journal keeps, and the checkpoints kept with 2 phases, which its journal keeps"},
		{0, 0, 0, 0, ""},
	} {
		if got := leftOut("w", tc.moves, tc.outputs, tc.artifacts, tc.checkpoints); got != tc.want {
			t.Errorf("leftOut(%d, %d, %d, %d) = %q\nwant %q", tc.moves, tc.outputs, tc.artifacts, tc.checkpoints, got, tc.want)
		}
	}
}
