package cli_test

import (
	"strings"
	"testing"
)

// An argument that is not UTF-8 (Latin-1 "café" from a terminal set to another encoding) is
// refused, as the agent's tools, a variable's value, a checkpoint and a log entry refuse it,
// naming which argument; nothing changes. Free text (a context, a note, a reason, an outcome)
// would otherwise lose the bytes ("caf"), and a path would be stored as another ("caf\uFFFD.md").
func TestArgumentNotUTF8IsRefused(t *testing.T) {
	t.Parallel()
	const latin1 = "caf\xe9"
	p := newCLIProject(t)
	mustRun(t, p, "", "start", "apex", "work")
	for _, c := range []struct {
		args []string
		name string // what the message names
	}{
		{[]string{"start", "apex", latin1, "--replace"}, "CONTEXT"},
		{[]string{"start", "apex", "other work", "--scope", latin1, "--replace"}, "--scope"},
		{[]string{"transition", "plan", "--note", latin1}, "--note"},
		{[]string{"transition", "plan", "--output", "plans/1.md", "--output", latin1 + ".md"}, "--output"},
		{[]string{"transition", latin1, "plan"}, "FROM"},
		{[]string{"transition", latin1}, "TO"},
		{[]string{"task", "t1", "running", "--note", latin1}, "--note"},
		{[]string{"archive", "--reason", latin1}, "--reason"},
		{[]string{"approve", latin1}, "NOTE"},
		{[]string{"complete", latin1}, "OUTCOME"},
		{[]string{"vars", "set", "WF_NAME", latin1}, "VALUE"},
	} {
		_, before := p.run("", "show", "--json")
		code, out := p.run("", c.args...)
		if code != 1 || !strings.Contains(out, c.name+" is not UTF-8 text") && !strings.Contains(out, c.name+": the value is not UTF-8 text") {
			t.Errorf("cairn %q: exit %d: %q; want exit 1 naming %s as not UTF-8", c.args, code, out, c.name)
		}
		if strings.Contains(out, "caf") {
			t.Errorf("cairn %q repeated the argument: %q", c.args, out)
		}
		if _, after := p.run("", "show", "--json"); after != before {
			t.Errorf("cairn %q changed the workflow:\n%s\nwas\n%s", c.args, after, before)
		}
	}
}
