package yamldoc_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/workflow"
	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// A small file that names one list thousands of times through aliases is refused before it
// is expanded: each copy under transitions is decoded by stringList with a fresh yaml.v3
// decoder, out of reach of yaml.v3's own alias limit, so a 256 KiB file could ask for
// billions of strings. (This one asks for 4 million: seconds of work without the limit.)
func TestParseDefinitionRefusesAliasExpansion(t *testing.T) {
	var b strings.Builder
	b.WriteString("---\nname: bomb\nphases: [a, b]\ntransitions:\n  a: &s [b")
	b.WriteString(strings.Repeat(",b", 1999))
	b.WriteString("]\n")
	for i := range 2000 {
		fmt.Fprintf(&b, "  k%d: *s\n", i)
	}
	b.WriteString("---\n")
	_, err := yamldoc.Codec{}.ParseDefinition("bomb.md", []byte(b.String()))
	var de *workflow.DefinitionError
	if !errors.As(err, &de) || de.Line != 6 || !strings.Contains(de.Reason, "aliases") {
		t.Fatalf("err = %v; want a *DefinitionError at line 6 about aliases", err)
	}

	// Aliases that expand to little are still read.
	d, err := yamldoc.Codec{}.ParseDefinition("small.md", []byte("---\nphases: [a, b, c]\ntransitions:\n  a: [b, &last c]\n  b: [*last]\n---\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !d.CanMove("b", "c") || !d.CanMove("a", "c") || !d.CanMove("a", "b") {
		t.Fatalf("aliased transitions not read: %v", d.Transitions)
	}
}
