package cli

import "testing"

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
