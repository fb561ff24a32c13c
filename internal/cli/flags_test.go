package cli

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every flag a usage line names is one the parser defines (flags panics on one it does not
// know), and every command takes --json.
func TestUsageFlagsAreDefined(t *testing.T) {
	t.Parallel()
	for _, name := range order {
		t.Run(name, func(t *testing.T) {
			fs := (&app{name: name}).flags()
			for _, f := range append([]string{"--json"}, usageFlag().FindAllString(commands[name].usage, -1)...) {
				if fs.Lookup(f[2:]) == nil {
					t.Errorf("usage %q names %s; the flag set lacks it", commands[name].usage, f)
				}
			}
		})
	}
}

// Every usage line but completion's names --json, as the overview says every command but
// completion takes it: cairn help CMD shows what CMD accepts.
func TestUsageNamesJSON(t *testing.T) {
	t.Parallel()
	for _, name := range order {
		if name != "completion" && !strings.Contains(commands[name].usage, "[--json]") {
			t.Errorf("cairn %s takes --json, which its usage %q does not name", name, commands[name].usage)
		}
	}
}

// A flag given without its value is answered with the value's name the usage line gives it
// (archive [--reason TEXT]: "--reason needs a value: --reason TEXT"), not another.
func TestMissingValueNamesTheUsagesValue(t *testing.T) {
	t.Parallel()
	for _, name := range order {
		usage := commands[name].usage
		for _, m := range regexp.MustCompile(`--([a-z][a-z-]*) ([A-Z][A-Z|]*)`).FindAllStringSubmatch(usage, -1) {
			_, err := parseArgs((&app{name: name}).flags(), []string{"--" + m[1]})
			want := "--" + m[1] + " needs a value: --" + m[1] + " " + m[2]
			if err == nil || err.Error() != want {
				t.Errorf("cairn %s --%s: %v; want %q (usage %q)", name, m[1], err, want, usage)
			}
		}
	}
}

// A flag that takes one value, given twice with two, is refused: the first would be lost
// without a word (task already refuses a second --output). The same value twice, a
// repeatable flag (transition's --output) and a flag that takes none (--json) are not.
func TestFlagGivenTwice(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cmd     string
		args    []string
		refused bool
	}{
		{"archive", []string{"--reason", "superseded", "--reason=abandoned"}, true},
		{"task", []string{"t1", "done", "--note", "first", "--note", "second"}, true},
		{"start", []string{"--ttl", "1h", "apex", "work", "-ttl", "2h"}, true},
		{"log show", []string{"events", "--tail", "1", "--tail", "2"}, true},
		{"archive", []string{"--reason", "superseded", "--reason", "superseded"}, false},
		{"transition", []string{"plan", "--output", "a.md", "--output", "b.md"}, false},
		{"status", []string{"--json", "--json"}, false},
	} {
		_, err := parseArgs((&app{name: c.cmd}).flags(), c.args)
		flag := c.args[slices.IndexFunc(c.args, func(s string) bool { return strings.HasPrefix(s, "-") })]
		flag, _, _ = strings.Cut("--"+strings.TrimLeft(flag, "-"), "=")
		switch want := flag + " given twice: it takes one value"; {
		case c.refused && (err == nil || err.Error() != want):
			t.Errorf("cairn %s %q: %v; want %q", c.cmd, c.args, err, want)
		case !c.refused && err != nil:
			t.Errorf("cairn %s %q: %v; want it taken", c.cmd, c.args, err)
		}
	}
}
