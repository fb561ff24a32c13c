package yamldoc_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/workflow"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// TestParseDefinitionParserErrorLine: yaml.v3 counts the lines of its parser's errors (a
// bracket left open, a key indented out of place) from 0, and those of its scanner's from 1,
// so a definition with `phases: [a, b` on line 3 was refused at line 2, the line above, which
// is fine. Each is refused at the line that holds the fault.
func TestParseDefinitionParserErrorLine(t *testing.T) {
	for _, tc := range []struct {
		name, front string
		line        int
		reason      string
	}{
		{"flow sequence left open", "name: x\nphases: [a, b\n", 3, "did not find expected ',' or ']'"},
		{"flow mapping left open", "name: x\ntransitions: {a: [b]\nphases: [a, b]\n", 3, "did not find expected ',' or '}'"},
		{"key indented out of place", "name: x\nphases: [a, b]\nverbs:\n  a: x\n b: y\n", 6, "did not find expected key"},
		{"item indented out of place", "name: x\nphases:\n  - a\n  - b\n bad\n", 6, "did not find expected key"},
		// yaml.v3 blames the end of the front matter: the line left unfinished is meant.
		{"left open at the end", "name: x\nphases: [\n\n", 3, "did not find expected node content"},
		// A scanner's error was, and is, at its line.
		{"scanner", "name: x\nphases: [a, b]\ndescription: x: y\n", 4, "mapping values are not allowed in this context"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := yamldoc.Codec{}.ParseDefinition("x.md", []byte("---\n"+tc.front+"---\n"))
			var de *workflow.DefinitionError
			if !errors.As(err, &de) || de.Line != tc.line || !strings.Contains(de.Reason, tc.reason) {
				t.Fatalf("got %v, want line %d saying %q", err, tc.line, tc.reason)
			}
		})
	}
}
