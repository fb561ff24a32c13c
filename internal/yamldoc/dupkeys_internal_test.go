package yamldoc

import (
	"fmt"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// countCompares returns how many keys mappingTrouble compares or looks up in the document
// src, and what it reports.
func countCompares(t *testing.T, src string) (int, string) {
	t.Helper()
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(src), &root); err != nil {
		t.Fatal(err)
	}
	n := 0
	keyCompared = func() { n++ }
	defer func() { keyCompared = nil }()
	at, reason := mappingTrouble(&root, 0)
	if at != nil {
		reason = fmt.Sprintf("line %d: %s", at.Line, reason)
	}
	return n, reason
}

// The duplicate-key check costs in proportion to the keys: comparing every pair took 50 ms
// of CPU for one mapping of 1,000 keys, and 0.4 s for the mappings that fit in the 2 MiB a
// definition may take.
func TestDuplicateKeyCheckIsLinear(t *testing.T) {
	var b strings.Builder
	for i := range maxMappingKeys {
		fmt.Fprintf(&b, "k%d: v\n", i)
	}
	if n, reason := countCompares(t, b.String()); n > 2*maxMappingKeys || reason != "" {
		t.Errorf("%d distinct keys: %d comparisons (%q), want at most %d", maxMappingKeys, n, reason, 2*maxMappingKeys)
	}
}

// The first duplicate reported is the one yaml.v3 reports first: the earliest key given again
// later, and the first place it is given again, whatever the size of the mapping.
func TestDuplicateKeyReportedAsYAMLDoes(t *testing.T) {
	for _, size := range []int{0, 3, 30, 50} { // pairwise, and with a map
		var b strings.Builder
		for i := range size {
			fmt.Fprintf(&b, "k%d: v\n", i)
		}
		pad := strings.Count(b.String(), "\n")
		src := b.String() + "a: 1\nb: 2\nb: 3\ne: &x q\n*x : 7\na: 6\nq: 8\na: 9\n"
		_, reason := countCompares(t, src)
		want := fmt.Sprintf(`line %d: mapping key "a" already defined at line %d`, pad+6, pad+1)
		if reason != want {
			t.Errorf("%d keys before: %q, want %q", size, reason, want)
		}
		var v map[string]any
		err := yaml.Unmarshal([]byte(src), &v)
		if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(want, "line ")) {
			t.Errorf("yaml.v3 reports %v first, want %q", err, want)
		}
	}
}
