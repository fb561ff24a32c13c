package readme

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/vars"
)

// TestReadmeVariableRuleIsTheCode: the README's paragraph on workflow variables says what
// vars.ValidKey does: its workflow words are vars.Words, its examples are accepted, the names
// it says programs read are refused, and a name outside the rule is said to be refused, as it
// is. It failed while the README said "Any other name is kept under `WF_`", as if Cairn moved
// it there.
func TestReadmeVariableRuleIsTheCode(t *testing.T) {
	_, para, ok := strings.Cut(readDoc(t, "README.md"), "\nWorkflow variables follow one rule")
	if !ok {
		t.Fatal("the README no longer has its paragraph \"Workflow variables follow one rule\"")
	}
	para, _, _ = strings.Cut(para, "\n\n")
	para = strings.Join(strings.Fields(para), " ")
	names := func(s string) []string {
		var out []string
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(s, -1) {
			out = append(out, m[1])
		}
		return out
	}
	_, words, _ := strings.Cut(para, "its first word is ")
	words, examples, _ := strings.Cut(words, " (")
	examples, rest, _ := strings.Cut(examples, ")")
	programs, other, _ := strings.Cut(rest, "the rule admits none of them")
	if got := names(words); !slices.Equal(got, vars.Words) {
		t.Errorf("the README's first words are %q; vars.Words are %q", got, vars.Words)
	}
	if len(names(examples)) == 0 || len(names(programs)) < 5 {
		t.Fatalf("read the examples %q and the programs' names %q: the paragraph changed", names(examples), names(programs))
	}
	for _, n := range names(examples) {
		if err := vars.ValidKey(n); err != nil {
			t.Errorf("the README's example %s is refused: %v", n, err)
		}
	}
	for _, n := range names(programs) {
		if vars.ValidKey(n) == nil {
			t.Errorf("the README says programs read %s, and the rule admits it", n)
		}
	}
	const outside = "OTHER_NAME"
	if vars.ValidKey(outside) == nil {
		t.Fatalf("%s is accepted: pick a name outside the rule", outside)
	}
	if !strings.Contains(other, "Any other name is refused") {
		t.Errorf("the README does not say that a name outside the rule (such as %s) is refused, as it is: %q", outside, other)
	}
}
