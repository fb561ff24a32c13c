package cli

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/checktest"
)

// docCommand resolves a command line as the docs write it ("checkpoint save|load NAME",
// "archive [--reason TEXT]") to the commands it names and the flags it uses.
func docCommand(line string) (names, flags []string) {
	words := strings.Fields(line)
	if len(words) == 0 {
		return nil, nil
	}
	if nouns[words[0]] && len(words) > 1 {
		for v := range strings.SplitSeq(words[1], "|") {
			names = append(names, words[0]+" "+v)
		}
	} else {
		names = []string{words[0]}
	}
	for _, w := range words[1:] {
		if w = strings.Trim(w, "[]"); strings.HasPrefix(w, "--") && w != "--" {
			w, _, _ = strings.Cut(w, "=")
			flags = append(flags, w)
		}
	}
	return names, flags
}

var cairnLine = regexp.MustCompile("`cairn ([a-z][^`]*)`")

// checkDocCommands reports each command the text names that the CLI does not have, and each
// flag none of the commands named takes (every command takes --json; in `log append|show
// [--tail N]` the flag is show's).
func checkDocCommands(t testing.TB, where string, lines []string) {
	for _, l := range lines {
		names, flags := docCommand(l)
		var usages []string
		for _, n := range names {
			if c, ok := commands[n]; ok {
				usages = append(usages, c.usage)
			} else {
				t.Errorf("%s names `cairn %s`: the CLI has no command %q", where, l, n)
			}
		}
		for _, f := range flags {
			if f != "--json" && !slices.ContainsFunc(usages, func(u string) bool { return strings.Contains(u, f) }) {
				t.Errorf("%s names `cairn %s`: it takes no %s (usage: cairn %s)", where, l, f, strings.Join(usages, "; cairn "))
			}
		}
	}
}

// readmeCommandList is what the README's "## Commands" list names: every backticked item of
// its bullets.
func readmeCommandList(t testing.TB, readme string) []string {
	_, sec, ok := strings.Cut(readme, "\n## Commands\n")
	if !ok {
		t.Fatalf("README has no \"## Commands\"")
	}
	sec, _, _ = strings.Cut(sec, "\n\n```")
	_, sec, _ = strings.Cut(sec, "\n- ")
	var out []string
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(sec, -1) {
		out = append(out, m[1])
	}
	return out
}

// The README's command list names every command the CLI has (help has its own sentence), and
// every command line the README and INTERNALS.md write in backticks (`cairn archive --reason
// "superseded"`) is one the CLI has, with flags it takes. Checked to fail on a command left
// out, one that does not exist, a verb that does not exist and a flag the command lacks.
func TestDocsNameTheCommands(t *testing.T) {
	t.Parallel()
	readme := readRepoFile(t, "README.md")
	list := readmeCommandList(t, readme)
	checkDocCommands(t, "README's command list", list)
	checkListComplete(t, list)
	for _, doc := range []string{"README.md", "docs/INTERNALS.md"} {
		var lines []string
		for _, m := range cairnLine.FindAllStringSubmatch(readRepoFile(t, doc), -1) {
			lines = append(lines, m[1])
		}
		if len(lines) < 5 {
			t.Fatalf("%s: found %d `cairn ...` lines: the pattern or the doc changed", doc, len(lines))
		}
		checkDocCommands(t, doc, lines)
	}
}

func checkListComplete(t testing.TB, list []string) {
	var named []string
	for _, l := range list {
		n, _ := docCommand(l)
		named = append(named, n...)
	}
	for _, n := range order {
		if n != "help" && !slices.Contains(named, n) {
			t.Errorf("the README's command list does not name %s", n)
		}
	}
}

func TestDocsNameTheCommandsCatchesDrift(t *testing.T) {
	t.Parallel()
	readme := readRepoFile(t, "README.md")
	for _, c := range []struct{ from, to string }{
		{"`sync`", "`synch`"},
		{"`list`, ", ""},
		{"`checkpoint save|load|list|delete`", "`checkpoint save|load|list|remove`"},
		{"`expire [--dry-run]`", "`expire [--dryrun]`"},
	} {
		doc := strings.Replace(readme, c.from, c.to, 1)
		if doc == readme {
			t.Fatalf("the README no longer holds %q", c.from)
		}
		rec := checktest.New(t)
		list := readmeCommandList(t, doc)
		checkDocCommands(rec, "README", list)
		checkListComplete(rec, list)
		if !rec.Failed() {
			t.Errorf("a command list with %q in place of %q passed", c.to, c.from)
		}
	}
}

func readRepoFile(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile("../../" + rel)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// parenthesisAfter is the backticked items of the parenthesis that follows lead in text (its
// whitespace made single spaces).
func parenthesisAfter(t testing.TB, text, lead string) []string {
	text = strings.Join(strings.Fields(text), " ")
	_, rest, ok := strings.Cut(text, lead+" (")
	if !ok {
		t.Fatalf("docs/INTERNALS.md no longer says %q", lead)
	}
	rest, _, _ = strings.Cut(rest, ")")
	var out []string
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(rest, -1) {
		n, _ := docCommand(m[1])
		out = append(out, n...)
	}
	return out
}

// INTERNALS.md sorts the commands by what they may create: those that only read, those that
// only remove or watch (onState) and those that write. Each list is exactly the commands of
// that kind in the table (help, version and uninstall, which open no state directory, in
// none). It failed before types, log show, completion and sync were in their lists (it said
// `remote ... sync`, a command the CLI does not have).
func TestInternalsSortsCommandsByWhatTheyCreate(t *testing.T) {
	t.Parallel()
	doc := readRepoFile(t, "docs/INTERNALS.md")
	lists := map[string][]string{
		"read":  parenthesisAfter(t, doc, "Commands that only read"),
		"state": parenthesisAfter(t, doc, "neither do the commands that only remove or watch"),
		"write": parenthesisAfter(t, doc, "and the commands that write"),
	}
	want := map[string][]string{}
	for _, n := range order {
		c := commands[n]
		switch {
		case n == "help" || n == "version" || n == "uninstall":
		case c.readOnly:
			want["read"] = append(want["read"], n)
		case c.onState:
			want["state"] = append(want["state"], n)
		default:
			want["write"] = append(want["write"], n)
		}
	}
	for kind, got := range lists {
		slices.Sort(got)
		slices.Sort(want[kind])
		if !slices.Equal(got, want[kind]) {
			t.Errorf("docs/INTERNALS.md lists the commands that %s as %q; the table says %q", kind, got, want[kind])
		}
	}
}

// The bash completion script needs the bash-completion package (completion.txtar): without
// it every TAB says "_get_comp_words_by_ref: command not found". The README says so where it
// gives the command, as cairn help completion does.
func TestReadmeSaysBashCompletionNeedsItsPackage(t *testing.T) {
	t.Parallel()
	readme := strings.Join(strings.Fields(readRepoFile(t, "README.md")), " ")
	if !strings.Contains(readme, "`source <(cairn completion bash)` (with the bash-completion package") {
		t.Error("the README gives `source <(cairn completion bash)` without saying bash needs the bash-completion package")
	}
}
