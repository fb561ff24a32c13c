package memory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Titles whose slugs are the same (cut at 48 characters, or differing only in letters beyond
// ASCII) are different learnings: the second must not replace the first.
func TestLearningSlugCollision(t *testing.T) {
	for _, pair := range [][2]string{
		{"How to run the integration tests for the payments service locally", "How to run the integration tests for the payments service in CI"},
		{"Na ve bayes", "Naïve bayes"},
		{"Crème brûlée", "Crème brulée"},
	} {
		m, dir := newTestMemory(t)
		var names []string
		for i, title := range pair {
			name, _, err := recordLearning(m, Learning{Title: title, Body: "body " + string(rune('A'+i))})
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, name)
		}
		if names[0] == names[1] {
			t.Errorf("%q and %q share %s", pair[0], pair[1], names[0])
			continue
		}
		for i, name := range names {
			if got := readFile(t, filepath.Join(dir, name)); !strings.Contains(got, "body "+string(rune('A'+i))) {
				t.Errorf("%s lost %q's body:\n%s", name, pair[i], got)
			}
		}
		index := readFile(t, filepath.Join(dir, IndexFile))
		if n := strings.Count(index, "\n"); n != 2 {
			t.Errorf("index has %d lines, want 2:\n%s", n, index)
		}
		// Recording each again updates its own file.
		for i, title := range pair {
			name, _, err := recordLearning(m, Learning{Title: title, Body: "again " + string(rune('A'+i))})
			if err != nil || name != names[i] {
				t.Errorf("again %q: %s, %v; want %s", title, name, err, names[i])
			}
		}
	}
}

// A learning the version before wrote under its cut slug is still found by its title and
// updated in place; a different title with that slug gets a file of its own.
func TestLearningLegacyCutSlug(t *testing.T) {
	m, dir := newTestMemory(t)
	const title = "How to run the integration tests for the payments service locally"
	const legacy = "cairn-learning-how-to-run-the-integration-tests-for-the-payment.md"
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file := "---\nname: \"cairn-learning-how-to-run-the-integration-tests-for-the-payment\"\ndescription: \"How to run the integration tests for the payments service locally: Start the stub with make stub.\"\nmetadata:\n    type: \"project\"\n---\n\nStart the stub with make stub.\n"
	index := "- [“How to run the integration tests f…”](" + legacy + ") — “Start the stub with make…”\n"
	for name, data := range map[string]string{legacy: file, IndexFile: index} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	other, _, err := recordLearning(m, Learning{Title: "How to run the integration tests for the payments service in CI", Body: "CI runs make ci."})
	if err != nil {
		t.Fatal(err)
	}
	if other == legacy || readFile(t, filepath.Join(dir, legacy)) != file {
		t.Errorf("another title went to %s, the legacy file is now\n%s", other, readFile(t, filepath.Join(dir, legacy)))
	}
	name, changed, err := recordLearning(m, Learning{Title: title, Body: "Start the stub with make stub."})
	if err != nil || name != legacy || changed {
		t.Errorf("the same learning again: %s, changed %v, %v; want %s unchanged", name, changed, err, legacy)
	}
	name, changed, err = recordLearning(m, Learning{Title: title, Body: "Use make stub-up now."})
	if err != nil || name != legacy || !changed {
		t.Errorf("an update: %s, changed %v, %v; want %s changed", name, changed, err, legacy)
	}
	if got := readFile(t, filepath.Join(dir, legacy)); !strings.Contains(got, "Use make stub-up now.") {
		t.Errorf("legacy file not updated:\n%s", got)
	}
	if got := readFile(t, filepath.Join(dir, IndexFile)); strings.Count(got, "\n") != 2 {
		t.Errorf("index:\n%s", got)
	}
}

// A learning the version before wrote under its cut slug is the same learning when recorded
// again under its title in other case or punctuation, as a learning of a whole slug is: it is
// updated in place, not kept twice. So is one an editor saved in CRLF: sameLearning read its
// body's first line split at "\n" only ("\r" left on it, and the blank line after the header
// read as the first), so a second file was written and MEMORY.md indexed the learning twice,
// the stale one loaded in every session.
func TestLearningLegacyCutSlugCaseAndPunctuation(t *testing.T) {
	const legacy = "cairn-learning-how-to-run-the-integration-tests-for-the-payment.md"
	file := "---\nname: \"cairn-learning-how-to-run-the-integration-tests-for-the-payment\"\ndescription: \"How to run the integration tests for the payments service locally: Start the stub with make stub.\"\nmetadata:\n    type: \"project\"\n---\n\nStart the stub with make stub.\n"
	index := "- [“How to run the integration tests f…”](" + legacy + ") — “Start the stub with make…”\n"
	for _, c := range []struct{ title, eol string }{
		{"how to run the integration tests for the payments service locally", "\n"},
		{"How to run the integration tests, for the payments service (locally)", "\n"},
		{"How to run the integration tests for the payments service locally", "\r\n"},
	} {
		m, dir := newTestMemory(t)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		for name, data := range map[string]string{legacy: file, IndexFile: index} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.ReplaceAll(data, "\n", c.eol)), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		name, changed, err := recordLearning(m, Learning{Title: c.title, Body: "Use make stub-up now."})
		if err != nil || name != legacy || !changed {
			t.Errorf("%q %q: %s, changed %v, %v; want %s updated", c.title, c.eol, name, changed, err, legacy)
		}
		if got := readFile(t, filepath.Join(dir, IndexFile)); strings.Count(got, "\n") != 1 {
			t.Errorf("%q %q: index has %d lines, want 1:\n%s", c.title, c.eol, strings.Count(got, "\n"), got)
		}
	}
}
