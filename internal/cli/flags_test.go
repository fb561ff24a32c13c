package cli

import (
	"regexp"
	"testing"
)

// Every flag a usage line names is one the parser defines (flags panics on one it does not
// know), and every command takes --json.
func TestUsageFlagsAreDefined(t *testing.T) {
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

// A flag given without its value is answered with the value's name the usage line gives it
// (archive [--reason TEXT]: "--reason needs a value: --reason TEXT"), not another.
func TestMissingValueNamesTheUsagesValue(t *testing.T) {
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
