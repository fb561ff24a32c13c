package hook

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/compattest"
)

// TestCompatEvents is the contract for what the hooks read from Claude Code: each
// testdata/compat/*.event.json reads to the event and notes an earlier Cairn read.
func TestCompatEvents(t *testing.T) {
	compattest.Each(t, "*.event.json", func(t *testing.T, f string, data []byte) {
		ev, notes := Parse(data)
		got := compattest.Dump(struct {
			Event Event
			Notes []string
		}{ev, notes})
		compattest.Golden(t, strings.TrimSuffix(f, ".json")+".values", []byte(got))
	})
}

// TestCompatOutputs is the contract for what the hooks print: the bytes an earlier Cairn
// printed for the same text (HTML left unescaped, empty parts left out, a newline at the end).
func TestCompatOutputs(t *testing.T) {
	text := "Resume <wf-1> & \"plan\"\u2028 — ok\n\tnext: call x"
	cases := []struct {
		name string
		out  []byte
	}{
		{"sessionstart-both", SessionStartOutput(text, text)},
		{"sessionstart-context", SessionStartOutput(text, "")},
		{"sessionstart-message", SessionStartOutput("", text)},
		{"sessionstart-none", SessionStartOutput("", "")},
		{"stop-block", StopOutput(true, text, text)},
		{"stop-block-noreason", StopOutput(true, "", "")},
		{"stop-message", StopOutput(false, text, text)},
		{"message", MessageOutput(text)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			compattest.Golden(t, filepath.Join("testdata/compat", c.name+".out"), c.out)
		})
	}
}
