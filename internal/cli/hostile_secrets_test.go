package cli_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/cli"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
)

// cliProject is a throwaway git project with its own HOME and memory directory, for running
// cairn in process.
type cliProject struct {
	base, root, memory, home string
}

func newCLIProject(t testing.TB) *cliProject {
	t.Helper()
	base := t.TempDir()
	p := &cliProject{base: base, root: filepath.Join(base, "project"), memory: filepath.Join(base, "memory"), home: filepath.Join(base, "home")}
	for _, d := range []string{filepath.Join(p.root, ".git"), p.memory, p.home} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func (p *cliProject) getenv(k string) string {
	switch k {
	case "HOME":
		return p.home
	case "CLAUDE_PROJECT_DIR":
		return p.root
	case "CAIRN_MEMORY_DIR":
		return p.memory
	case "CLAUDE_CODE_SESSION_ID":
		return "sess-hostile"
	}
	return ""
}

// run runs cairn in process; it returns the exit code and everything it printed.
func (p *cliProject) run(stdin string, args ...string) (int, string) {
	var out bytes.Buffer
	code := cli.Main(args, strings.NewReader(stdin), &out, &out, p.getenv)
	return code, out.String()
}

// leaked reports the first file under dir whose content, with the characters Cairn drops
// removed, holds core.
func leaked(t testing.TB, dir, core string) string {
	t.Helper()
	found := ""
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || found != "" {
			return nil
		}
		if strings.Contains(d.Name(), core) {
			found = path + " (its name)"
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err == nil && holds(string(b), core) {
			found = path
		}
		return nil
	})
	return found
}

// holds reports core in s, also once zero-width and bidi characters are taken out, and with
// JSON's escaping of / undone.
func holds(s, core string) bool {
	s = strings.NewReplacer("\u200b", "", "\u202e", "", `\/`, "/", `\n`, "\n").Replace(s)
	probe := core
	if len(probe) > 24 {
		probe = probe[:24]
	}
	return strings.Contains(s, probe)
}

// TestSecretsThroughEveryCLIPath pushes every secret shape of the hostile corpus, plain and
// split by U+200B, through every CLI argument and stdin that Cairn stores or echoes, and
// checks that nothing was stored and nothing echoed.
func TestSecretsThroughEveryCLIPath(t *testing.T) {
	t.Parallel()
	p := newCLIProject(t)
	if code, out := p.run("", "start", "apex", "hostile secrets suite"); code != 0 {
		t.Fatalf("start: %d %s", code, out)
	}
	paths := []struct {
		name string
		run  func(s string) (int, string)
	}{
		{"vars set value", func(s string) (int, string) { return p.run("", "vars", "set", "PLAN_NOTE", s) }},
		{"vars set name", func(s string) (int, string) { return p.run("", "vars", "set", s, "x") }},
		{"vars get name", func(s string) (int, string) { return p.run("", "vars", "get", s) }},
		{"checkpoint save data", func(s string) (int, string) {
			return p.run(`{"note":`+quote(s)+`}`, "checkpoint", "save", "plan")
		}},
		{"checkpoint save name", func(s string) (int, string) { return p.run(`{}`, "checkpoint", "save", s) }},
		{"checkpoint load name", func(s string) (int, string) { return p.run("", "checkpoint", "load", s) }},
		{"log append entry", func(s string) (int, string) { return p.run(`{"msg":`+quote(s)+`}`, "log", "append", "events") }},
		{"log append name", func(s string) (int, string) { return p.run(`{}`, "log", "append", s) }},
		// a repeated key, which strict JSON's refusal names by offset
		{"checkpoint save repeated key", func(s string) (int, string) {
			return p.run(`{`+quote(s)+`:1,`+quote(s)+`:2}`, "checkpoint", "save", "plan")
		}},
		{"log append repeated key", func(s string) (int, string) {
			return p.run(`{"a":{`+quote(s)+`:1,`+quote(s)+`:2}}`, "log", "append", "events")
		}},
		{"task", func(s string) (int, string) { return p.run("", "task", s, "running") }},
		{"transition to", func(s string) (int, string) { return p.run("", "transition", s) }},
		{"show id", func(s string) (int, string) { return p.run("", "show", s) }},
		{"history id", func(s string) (int, string) { return p.run("", "history", s) }},
		{"archive reason", func(s string) (int, string) { return p.run("", "archive", "--reason", s) }},
		{"start context", func(s string) (int, string) { return p.run("", "start", "debug", s, "--replace") }},
		{"complete outcome", func(s string) (int, string) { return p.run("", "complete", s) }},
		{"unknown command", func(s string) (int, string) { return p.run("", s) }},
		{"unknown verb", func(s string) (int, string) { return p.run("", "vars", s) }},
		{"vars unset name", func(s string) (int, string) { return p.run("", "vars", "unset", s) }},
		{"checkpoint delete name", func(s string) (int, string) { return p.run("", "checkpoint", "delete", s) }},
		{"log show name", func(s string) (int, string) { return p.run("", "log", "show", s) }},
		{"start type", func(s string) (int, string) { return p.run("", "start", s, "x") }},
		{"transition --from", func(s string) (int, string) { return p.run("", "transition", "--from", s, "plan") }},
		{"unknown flag", func(s string) (int, string) { return p.run("", "status", "--"+s) }},
		{"hook session-start session_id", func(s string) (int, string) {
			return p.run(`{"session_id":`+quote(s)+`,"hook_event_name":"SessionStart","source":"startup"}`, "hook", "session-start")
		}},
		{"hook session-start source", func(s string) (int, string) {
			return p.run(`{"session_id":"s1","hook_event_name":"SessionStart","source":`+quote(s)+`}`, "hook", "session-start")
		}},
		{"hook stop session_id", func(s string) (int, string) {
			return p.run(`{"session_id":`+quote(s)+`,"hook_event_name":"Stop"}`, "hook", "stop")
		}},
		{"help topic", func(s string) (int, string) { return p.run("", "help", s) }},
		{"types type", func(s string) (int, string) { return p.run("", "types", s) }},
		{"completion shell", func(s string) (int, string) { return p.run("", "completion", s) }},
		{"transition FROM and --from", func(s string) (int, string) { return p.run("", "transition", s, "plan", "--from", "analyze") }},
		{"transition --from and FROM", func(s string) (int, string) { return p.run("", "transition", "analyze", "plan", "--from", s) }},
		{"checkpoint list pattern", func(s string) (int, string) { return p.run("", "checkpoint", "list", s) }},
		{"checkpoint list malformed pattern", func(s string) (int, string) { return p.run("", "checkpoint", "list", s+"[") }},
		{"task status", func(s string) (int, string) { return p.run("", "task", "t1", s) }},
		{"start --id", func(s string) (int, string) { return p.run("", "start", "debug", "x", "--replace", "--id", s) }},
		{"start --ttl", func(s string) (int, string) { return p.run("", "start", "debug", "x", "--replace", "--ttl", s) }},
		{"start --scope", func(s string) (int, string) { return p.run("", "start", "debug", "x", "--replace", "--scope", s) }},
		{"transition --note", func(s string) (int, string) { return p.run("", "transition", "fix", "--note", s) }},
		{"task --note", func(s string) (int, string) { return p.run("", "task", "t1", "running", "--note", s) }},
		{"task --output", func(s string) (int, string) { return p.run("", "task", "t1", "running", "--output", s) }},
		{"approve note", func(s string) (int, string) { return p.run("", "approve", s) }},
	}
	shapes := secrettest.Shapes()
	tries, stored, echoed := 0, 0, 0
	for _, sh := range shapes {
		mid := len(sh.Core) / 2
		split := strings.Replace(sh.Text, sh.Core, sh.Core[:mid]+"\u200b"+sh.Core[mid:], 1)
		for _, text := range []string{sh.Text, split} {
			for _, path := range paths {
				tries++
				_, out := path.run(text)
				if holds(out, sh.Core) {
					echoed++
					t.Errorf("%s via %s: echoed: %q", sh.Name, path.name, clipTo(out, 200))
				}
				if f := leaked(t, p.base, sh.Core); f != "" {
					stored++
					t.Errorf("%s via %s: stored in %s", sh.Name, path.name, f)
					os.RemoveAll(f)
				}
				if t.Failed() && stored+echoed > 20 {
					t.FailNow()
				}
			}
		}
	}
	t.Logf("%d shapes x %d paths x 2 spellings = %d tries: %d stored, %d echoed", len(shapes), len(paths), tries, stored, echoed)
}

// quote is s as a JSON string, '<', '>' and '&' as they are (as printJSON writes them).
func quote(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

func clipTo(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// TestOrdinaryTextIsStored: none of the corpus's ordinary texts (hashes, UUIDs, paths,
// base64 images, prose near the rules' keywords) is refused on the paths that store text.
func TestOrdinaryTextIsStored(t *testing.T) {
	t.Parallel()
	p := newCLIProject(t)
	mustRun(t, p, "", "start", "apex", "ordinary text suite")
	for i, s := range secrettest.Ordinary() {
		for _, args := range [][]string{
			{"vars", "set", "PLAN_NOTE", "--", s},
			{"log", "append", "events", `{"m":` + quote(s) + `}`},
			{"checkpoint", "save", "plan", `{"m":` + quote(s) + `}`},
		} {
			if code, out := p.run("", args...); code != 0 {
				t.Errorf("ordinary text %d refused by cairn %s: %s", i, args[0], out)
			}
		}
		if len(s) <= 300 && !strings.ContainsAny(s, "\n") {
			if code, out := p.run("", "transition", "plan", "--note", s); code != 0 {
				t.Errorf("ordinary text %d refused as a note: %s", i, out)
			}
			p.run("", "transition", "analyze")
		}
	}
}

func mustRun(t *testing.T, p *cliProject, stdin string, args ...string) {
	t.Helper()
	if code, out := p.run(stdin, args...); code != 0 {
		t.Fatalf("cairn %v: exit %d: %s", args, code, out)
	}
}

// The completion line joins the context and the outcome (Completed DEBUG for “context”:
// “outcome”) and goes to MEMORY.md, in every session's context: a secret's name as the
// context and its value as the outcome, each clean, must not be stored there joined.
func TestCompletionLineJoinsNoSecret(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ context, outcome string }{
		{"DB password", "Tr0ub4dor&3x"},
		{"DATADOG_API_KEY", "Qk7aB9cD3eF5gH7jK9mN1pQ3rS5tU7"},
	} {
		p := newCLIProject(t)
		if code, out := p.run("", "start", "debug", c.context); code != 0 {
			t.Fatalf("start: %d %s", code, out)
		}
		code, out := p.run("", "complete", c.outcome)
		if f := leaked(t, p.memory, c.outcome); f != "" {
			t.Errorf("%s: %q stored in %s (complete: %d %s)", c.context, c.outcome, f, code, out)
		}
	}
}

// Fields stored and scanned one by one are printed side by side (a task's output and its
// note, a transition's phases and its note): no view may print them joined when the join has
// a secret's shape, as "output api_key: <value>" does.
func TestJoinedFieldsPrintNoSecret(t *testing.T) {
	t.Parallel()
	const key = "Qk7aB9cD3eF5gH7jK9mN1pQ3rS5tU7"
	p := newCLIProject(t)
	mustRun(t, p, "", "start", "debug", "x")
	mustRun(t, p, "", "task", "t1", "running", "--output", "api_key", "--note", key)
	mustRun(t, p, "", "task", "t2", "running", "--output", "db_password", "--note", "Tr0ub4dor&3x")
	mustRun(t, p, "", "task", "t3", "running", "--output", "plan.md", "--note", "drafted")
	mustRun(t, p, "{}", "checkpoint", "save", "api_key")
	mustRun(t, p, "{}", "checkpoint", "save", "qk7ab9cd3ef5gh7jk9mn1pq3rs5tu7")
	for _, args := range [][]string{{"status"}, {"show"}, {"history"}} {
		code, out := p.run("", args...)
		if code != 0 {
			t.Fatalf("cairn %v: %d %s", args, code, out)
		}
		if f := secrets.ScanString(out); f != nil {
			t.Errorf("cairn %v prints a secret (%s):\n%s", args, f.Rule, out)
		}
		if args[0] == "show" {
			for _, want := range []string{"t1 running", "t2 running", "t3 running output plan.md: drafted"} {
				if !strings.Contains(out, want) {
					t.Errorf("cairn show does not say %q:\n%s", want, out)
				}
			}
		}
	}
}

// cairn status lists the failed tasks' ids joined with commas after the task counts: two ids,
// each a clean name, may join into a secret ("api_key, qk7ab..."), which must not be printed.
func TestStatusFailedTaskIDsJoinNoSecret(t *testing.T) {
	t.Parallel()
	p := newCLIProject(t)
	mustRun(t, p, "", "start", "debug", "x")
	for _, id := range []string{"api_key", "qk7ab9cd3ef5gh7jk9mn1pq3rs5tu7", "t3"} {
		mustRun(t, p, "", "task", id, "running")
		mustRun(t, p, "", "task", id, "failed")
	}
	code, out := p.run("", "status")
	if code != 0 {
		t.Fatalf("cairn status: %d %s", code, out)
	}
	if f := secrets.ScanString(out); f != nil {
		t.Errorf("cairn status prints a secret (%s):\n%s", f.Rule, out)
	}
	if !strings.Contains(out, "(failed: api_key, ") || !strings.Contains(out, ", t3)") {
		t.Errorf("cairn status does not name the failed tasks it can:\n%s", out)
	}
}

// A log line holding text of a secret's shape (appended before a rule found it, or written by
// hand) is not printed by cairn log show, whole or its tail, text or --json: it is counted in
// a warning, and the other entries are printed as they are.
func TestLogShowPrintsNoStoredSecret(t *testing.T) {
	t.Parallel()
	p := newCLIProject(t)
	mustRun(t, p, "", "start", "debug", "x")
	mustRun(t, p, `{"m":"first"}`, "log", "append", "events")
	file := filepath.Join(p.root, ".claude", "cairn", "logs", "events.jsonl")
	clean, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrettest.Shapes() {
		doc := string(clean) + `{"m":` + quote(s.Text) + "}\n" + `{"m":"last"}` + "\n"
		if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"log", "show", "events"}, {"log", "show", "events", "--tail", "2"}, {"log", "show", "events", "--json"}} {
			code, out := p.run("", args...)
			if code != 0 || holds(out, s.Core) || !strings.Contains(out, "last") || !strings.Contains(out, "1 entry not shown") {
				t.Fatalf("%s: cairn %v: %d\n%s", s.Name, args, code, clipTo(out, 600))
			}
		}
	}
}

// A record field holding text of a secret's shape by itself (stored before a rule found it, or
// written by hand) is not printed by cairn show or cairn list (text or --json), which say it
// is there.
func TestShowAndListPrintNoStoredSecret(t *testing.T) {
	t.Parallel()
	p := newCLIProject(t)
	mustRun(t, p, "", "start", "debug", "placeholder-context")
	mustRun(t, p, "", "complete", "placeholder-outcome")
	mustRun(t, p, "", "start", "debug", "placeholder-context")
	for _, s := range secrettest.Shapes() {
		files, _ := filepath.Glob(filepath.Join(p.root, ".claude", "cairn", "archive", "*", "*.json"))
		files = append(files, filepath.Join(p.root, ".claude", "cairn", "workflow-state.json"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			doc := strings.NewReplacer(`"placeholder-context"`, quote(s.Text), `"placeholder-outcome"`, quote(s.Text)).Replace(string(b))
			if err := os.WriteFile(f, []byte(doc), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		for _, args := range [][]string{{"show"}, {"list"}, {"list", "--all"}, {"list", "--json"}} {
			code, out := p.run("", args...)
			if code != 0 || holds(out, s.Core) || !strings.Contains(out, "(not shown: it has a secret's shape)") {
				t.Fatalf("%s: cairn %v: %d\n%s", s.Name, args, code, clipTo(out, 800))
			}
		}
		// put the placeholders back for the next shape
		for _, f := range files {
			b, _ := os.ReadFile(f)
			os.WriteFile(f, []byte(strings.ReplaceAll(string(b), quote(s.Text), `"placeholder-context"`)), 0o600)
		}
	}
}

// The record of a workflow that holds text of a secret's shape (stored before a rule found
// it, or written by hand) is not printed as JSON: cairn show --json refuses, naming the rule
// and where, and cairn status --json leaves the record out, saying why.
func TestJSONViewsPrintNoStoredSecret(t *testing.T) {
	t.Parallel()
	p := newCLIProject(t)
	mustRun(t, p, "", "start", "debug", "x")
	mustRun(t, p, "", "vars", "set", "PLAN_NOTE", "placeholder-value")
	file := filepath.Join(p.root, ".claude", "cairn", "workflow-state.json")
	clean, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrettest.Shapes() {
		if err := os.WriteFile(file, []byte(strings.Replace(string(clean), `"placeholder-value"`, quote(s.Text), 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out := p.run("", "show", "--json")
		if code == 0 || holds(out, s.Core) || !strings.Contains(out, "$.vars.PLAN_NOTE") {
			t.Fatalf("%s: cairn show --json: %d\n%s", s.Name, code, clipTo(out, 800))
		}
		code, out = p.run("", "status", "--json")
		if code != 0 || holds(out, s.Core) || !strings.Contains(out, "$.vars.PLAN_NOTE") || !strings.Contains(out, `"context": "x"`) {
			t.Fatalf("%s: cairn status --json: %d\n%s", s.Name, code, clipTo(out, 800))
		}
	}
}

// withVarPlanted starts a workflow in p with the variables PLAN_NOTE and PLAN_PATH, and then
// writes its record with PLAN_NOTE named name and valued value, as a hand edit or a Cairn from
// before a rule found them leaves it.
func withVarPlanted(t *testing.T, p *cliProject, name, value string) {
	t.Helper()
	mustRun(t, p, "", "start", "debug", "x")
	mustRun(t, p, "", "vars", "set", "PLAN_NOTE", "placeholder-value")
	mustRun(t, p, "", "vars", "set", "PLAN_PATH", "plans/001.md")
	file := filepath.Join(p.root, ".claude", "cairn", "workflow-state.json")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.NewReplacer(`"PLAN_NOTE"`, quote(name), `"placeholder-value"`, quote(value)).Replace(string(b))
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
}

// cairn vars export of a workflow with a variable of a secret's shape (set before a rule found
// it, or written by hand) exports the others, and says on stderr which one it left out.
func TestVarsExportLeavesOutAStoredSecret(t *testing.T) {
	t.Parallel()
	p := newCLIProject(t)
	const key = "ghp_Qk7aB9cD3eF5gH7jK9mN1pQ3rS5tU7vW9xY1"
	withVarPlanted(t, p, "PLAN_NOTE", key)
	var stdout, stderr bytes.Buffer
	code := cli.Main([]string{"vars", "export"}, strings.NewReader(""), &stdout, &stderr, p.getenv)
	if code != 0 || stdout.String() != "export PLAN_PATH='plans/001.md'\n" ||
		strings.Contains(stderr.String(), key) || !strings.Contains(stderr.String(), "variable PLAN_NOTE not shown: it holds text of a secret's shape (github-token)") {
		t.Errorf("cairn vars export: %d\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
	}
}

// A variable whose name and value, each clean, make a secret's shape on cairn show's NAME=VALUE
// line (set by hand, or before a rule found the pair) has its value withheld there, and its
// name still said, so that the person knows which one to set again. One whose name alone has
// that shape is withheld whole, and said to have that shape itself, not with what is beside it.
func TestShowNamesAVariableWithheld(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, value, line string }{
		{"WF_AWS_SECRET_ACCESS_KEY", "Ab1Qk7aB9cD3eF5gH7jK9mN1pQ3rS5tU7vW9xY1z", "WF_AWS_SECRET_ACCESS_KEY " + secrets.NotShown},
		{"WF_AKIA6QT5SE3KDFPQJMRK", "plans/002.md", secrets.Hidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newCLIProject(t)
			withVarPlanted(t, p, tc.name, tc.value)
			code, out := p.run("", "show")
			if code != 0 || strings.Contains(out, tc.value) || strings.Contains(out, "AKIA") ||
				!strings.Contains(out, "  - PLAN_PATH='plans/001.md'\n  - "+tc.line+"\n") {
				t.Errorf("cairn show: %d\n%s", code, out)
			}
		})
	}
}

// cairn list cuts a workflow's context to 60 characters, and the cut could make a secret of a
// token glued to more text ("ghp_…-x" cut after its body) that the context does not hold:
// wherever the cut falls, nothing printed has a secret's shape, and the words before it stay.
func TestListContextCutPrintsNoSecret(t *testing.T) {
	t.Parallel()
	tok := secrettest.GluedToken(t)
	p := newCLIProject(t)
	for pad := 5; pad <= 20; pad++ {
		mustRun(t, p, "", "start", "debug", strings.Repeat("w", pad)+" "+tok+" and more words after it", "--replace")
	}
	code, out := p.run("", "list")
	if code != 0 {
		t.Fatalf("cairn list: %d %s", code, out)
	}
	if f := secrets.ScanString(out); f != nil {
		t.Errorf("cairn list prints a secret (%s):\n%s", f.Rule, out)
	}
	if !strings.Contains(out, " "+strings.Repeat("w", 15)+"…\n") {
		t.Errorf("cairn list does not keep the words before the token:\n%s", out)
	}
}

// TestCheckpointLoadTooLargeToCheck: a checkpoint's file placed by hand far over the 1 MiB a
// load reads was scanned whole for a secret before the refusal named it (a 1 GB one took 86 s).
// Over the 16 MiB a scan reads, it is refused unread and not named; a torn one with a secret is
// refused naming the rule, not the file; a clean torn one is named, with less to read it.
func TestCheckpointLoadTooLargeToCheck(t *testing.T) {
	t.Parallel()
	p := newCLIProject(t)
	dir := filepath.Join(p.root, ".claude", "cairn", "checkpoints")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	sh := secrettest.Shapes()[3]
	huge := filepath.Join(dir, "huge.json")
	if err := os.WriteFile(huge, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, 16<<20+1); err != nil { // sparse: no disk, no time
		t.Fatal(err)
	}
	for _, f := range []struct{ name, data string }{{"torn", `{"k": "` + sh.Text + `", "pla`}, {"clean", `{"step": 2, "pla`}} {
		if err := os.WriteFile(filepath.Join(dir, f.name+".json"), []byte(f.data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name      string
		want, not []string
	}{
		{"huge", []string{"16 MiB checked for text of a secret's shape", "not named", "another name"}, []string{"huge.json", "less "}},
		{"torn", []string{sh.Rule, "save the checkpoint again without that text"}, []string{"torn.json", sh.Core}},
		{"clean", []string{"the file " + filepath.Join(dir, "clean.json"), "less "}, nil},
	} {
		code, out := p.run("", "checkpoint", "load", tc.name)
		if code != 1 {
			t.Errorf("%s: exit %d, want 1: %s", tc.name, code, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: %q does not say %q", tc.name, out, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(out, n) {
				t.Errorf("%s: %q says %q", tc.name, out, n)
			}
		}
	}
	if fi, err := os.Stat(huge); err != nil || fi.Size() != 16<<20+1 {
		t.Errorf("the file changed: %v", err)
	}
}

// A secret split over two log lines (a key file appended a line at a time, before an append
// refused it, or written by hand) is clean entry by entry: cairn log show, which prints the
// entries a line each, printed it whole. An entry that makes a secret's shape with the one
// printed before it is not printed, and counted in a warning.
func TestLogShowPrintsNoSecretSplitOverTwoEntries(t *testing.T) {
	t.Parallel()
	p := newCLIProject(t)
	mustRun(t, p, `{"m":"first"}`, "log", "append", "keys")
	file := filepath.Join(p.root, ".claude", "cairn", "logs", "keys.jsonl")
	body := strings.Repeat("MIIEowIBAAKCAQEAx9", 4)[:64]
	doc := `{"m":"first"}` + "\n" + `"-----BEGIN RSA ` + `PRIVATE KEY-----"` + "\n" + `"` + body + `"` + "\n" + `{"m":"last"}` + "\n"
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"log", "show", "keys"}, {"log", "show", "keys", "--tail", "3"}, {"log", "show", "keys", "--json"}} {
		code, out := p.run("", args...)
		if f := secrets.ScanString(out); code != 0 || f != nil || strings.Contains(out, body) || !strings.Contains(out, "last") || !strings.Contains(out, "1 entry not shown") {
			t.Errorf("cairn %v: exit %d, secret %v:\n%s", args, code, f, clipTo(out, 600))
		}
	}
}

// A checkpoint saved before the active workflow started may be another workflow's result:
// load_checkpoint says so beside the data, and cairn checkpoint load now says it on stderr,
// where a script reading stdout (the JSON as saved) is not disturbed. One saved since is
// loaded with nothing said.
func TestCheckpointLoadSaysSavedBeforeTheWorkflow(t *testing.T) {
	t.Parallel()
	p := newCLIProject(t)
	mustRun(t, p, "", "checkpoint", "save", "old-plan", `{"step":1}`)
	hourAgo := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(p.root, ".claude", "cairn", "checkpoints", "old-plan.json"), hourAgo, hourAgo); err != nil {
		t.Fatal(err)
	}
	mustRun(t, p, "", "start", "apex", "second")
	mustRun(t, p, "", "checkpoint", "save", "new-plan", `{"step":2}`)
	for _, tc := range []struct{ name, stdout, stderr string }{
		{"old-plan", `{"step":1}` + "\n", "before this workflow started"},
		{"new-plan", `{"step":2}` + "\n", ""},
	} {
		var stdout, stderr bytes.Buffer
		if code := cli.Main([]string{"checkpoint", "load", tc.name}, strings.NewReader(""), &stdout, &stderr, p.getenv); code != cli.ExitOK {
			t.Fatalf("cairn checkpoint load %s: exit %d: %s", tc.name, code, stderr.String())
		}
		if stdout.String() != tc.stdout {
			t.Errorf("cairn checkpoint load %s: stdout %q, want %q", tc.name, stdout.String(), tc.stdout)
		}
		if said := stderr.String(); tc.stderr == "" && said != "" || !strings.Contains(said, tc.stderr) || strings.Count(said, "\n") > 1 {
			t.Errorf("cairn checkpoint load %s: stderr %q, want one line saying %q", tc.name, said, tc.stderr)
		}
	}
}

// A secret in an argument is refused naming the argument as the person typed it (ID,
// --note), as the agent's tools name theirs: the store's refusal named where the value was
// bound for in the record ($.tasks[0].id, $.history[0].note), which no one typed. Nothing
// is stored, nothing echoed.
func TestSecretRefusalNamesTheArgument(t *testing.T) {
	t.Parallel()
	p := newCLIProject(t)
	mustRun(t, p, "", "start", "apex", "name the argument")
	const tok = "ghp_R2d2C3poLuke0Leia1Han2Solo3Chewie4xY"
	for _, c := range []struct {
		args  []string
		named string
	}{
		{[]string{"task", tok, "pending"}, "ID"},
		{[]string{"task", "t1", "pending", "--note", "see " + tok}, "--note"},
		{[]string{"task", "t1", "done", "--output", tok}, "--output"},
		{[]string{"transition", "plan", "--note", tok}, "--note"},
		{[]string{"transition", "plan", "--output", "plan.md", "--output", tok}, "--output"},
		{[]string{"complete", tok}, "OUTCOME"},
		{[]string{"start", "debug", tok, "--replace"}, "CONTEXT"},
		{[]string{"vars", "set", "PLAN_NOTE", tok}, "VALUE"},
		{[]string{"archive", "--reason", tok}, "--reason"},
		{[]string{"vars", "unset", "PLAN_NOTE", tok}, "KEY"},
	} {
		code, out := p.run("", c.args...)
		want := "secret found (github-token) in " + c.named + ": secrets are not stored"
		if code != cli.ExitRefused || !strings.Contains(out, want) || strings.Contains(out, "$.") || holds(out, tok) {
			t.Errorf("cairn %s: exit %d, want %d and %q:\n%s", c.args[0], code, cli.ExitRefused, want, out)
		}
		if f := leaked(t, p.base, tok); f != "" {
			t.Fatalf("cairn %s: stored in %s", c.args[0], f)
		}
	}
	// A JSON value is the store's to refuse, naming the path inside it.
	if _, out := p.run("", "transition", "plan", "--checkpoint", `{"ci": {"token": "`+tok+`"}}`); !strings.Contains(out, "secret found (github-token) at $.ci.token") {
		t.Errorf("transition --checkpoint:\n%s", out)
	}
}

// A change to a workflow whose record holds text of a secret's shape (stored before a rule found
// it, or written by hand) is made, and its --json answer leaves the record out, saying why, as
// cairn status --json does: it printed the record whole, the secret in it.
func TestJSONAnswerOfAChangePrintsNoStoredSecret(t *testing.T) {
	t.Parallel()
	p := newCLIProject(t)
	const key = "ghp_Qk7aB9cD3eF5gH7jK9mN1pQ3rS5tU7vW9xY1"
	withVarPlanted(t, p, "PLAN_NOTE", key)
	for _, args := range [][]string{{"vars", "set", "PLAN_PATH", "plans/002.md", "--json"}, {"transition", "fix", "--json"}} {
		code, out := p.run("", args...)
		if code != 0 || strings.Contains(out, key) || !strings.Contains(out, "$.vars.PLAN_NOTE") {
			t.Errorf("cairn %v: %d\n%s", args, code, clipTo(out, 800))
		}
	}
}

// cairn help, which stores nothing, answered a secret typed as the command's name with "secrets
// are not stored; ... store a reference to it instead; nothing was changed": words for a
// command that stores. It says there is no such command, the secret not repeated.
func TestHelpOfASecretIsNoSuchCommand(t *testing.T) {
	t.Parallel()
	p := newCLIProject(t)
	const tok = "ghp_R2d2C3poLuke0Leia1Han2Solo3Chewie4xY"
	for _, args := range [][]string{{"help", tok}, {"help", "checkpoint", tok}} {
		code, out := p.run("", args...)
		if code != cli.ExitUsage || !strings.Contains(out, "no such command") || strings.Contains(out, "stored") || holds(out, tok) {
			t.Errorf("cairn %s: exit %d:\n%s", strings.Join(args, " "), code, out)
		}
	}
}

// cairn sync ID and cairn remote enable REMOTE only look their argument up: one of a secret's
// shape read "secrets are not stored; ... store a reference to it instead", advice for a
// value being stored. It is refused as what it is, no workflow's ID or no remote's name, the
// secret not repeated.
func TestLookupOfASecretIsNoSuchOne(t *testing.T) {
	t.Parallel()
	p := newCLIProject(t)
	const tok = "ghp_R2d2C3poLuke0Leia1Han2Solo3Chewie4xY"
	for args, want := range map[[3]string]string{
		{"sync", tok}:             "no workflow has such an ID",
		{"remote", "enable", tok}: "Cairn syncs with no remote so named",
	} {
		code, out := p.run("", slices.DeleteFunc(args[:], func(s string) bool { return s == "" })...)
		if code != cli.ExitRefused || !strings.Contains(out, want) || strings.Contains(out, "stored") || holds(out, tok) {
			t.Errorf("cairn %s: exit %d, want %d and %q:\n%s", strings.Join(args[:], " "), code, cli.ExitRefused, want, out)
		}
	}
}
