// Package hooktest is test support for the hook binaries' testscript suites (hooks/sessionstart
// and hooks/stop): the environment every script starts in, fixture commands that lay out state
// through the engine (so fixtures are what the real protocol writes, not hand-made JSON), and
// script commands that check what a hook printed.
//
// Only _test.go files import it; the hook binaries never link it.
package hooktest

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/cli"
	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/hook"
	"github.com/cairn-dev/cairn/internal/remote/mirror"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/store/storetest"
	"github.com/cairn-dev/cairn/internal/textsafe"
	"github.com/cairn-dev/cairn/internal/yamldoc"
	"github.com/rogpeppe/go-internal/testscript"
)

// ClaudePID is the CLAUDE_PID every script's hooks see.
const ClaudePID = "4242"

// Main is TestMain for a suite of scripts under testdata/script: the test binary becomes each
// of cmds and of the extra programs a script can exec (cairn, the real CLI as `make build`
// installs it beside the hooks, and the fixture commands), so the scripts exec the real
// binaries over real stdin and stdout with no build step. It defines -update, which rewrites
// the scripts' expected files.
func Main(m *testing.M, cmds map[string]func()) {
	update = flag.Bool("update", false, "rewrite the expected files in testdata/script/*.txtar")
	all := map[string]func(){
		"cairn":              func() { os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)) },
		"cairn-fixture":      func() { os.Exit(fixture(os.Args[1:])) },
		"with-readonly":      func() { os.Exit(withReadonly(os.Args[1:])) },
		"with-open-stdin":    func() { os.Exit(withOpenStdin(os.Args[1:])) },
		"with-closed-stdout": func() { os.Exit(withClosedStdout(os.Args[1:])) },
	}
	maps.Copy(all, cmds)
	testscript.Main(m, all)
}

var update *bool // -update, defined by Main

// Params are the testscript parameters the hook and CLI suites share, for testdata/script.
func Params() testscript.Params {
	return testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       update != nil && *update,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup:               setup,
		Condition:           condition,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"scrub":    scrub,
			"hookout":  hookout,
			"waitfile": waitfile,
		},
	}
}

// Run runs the scripts with Params; -update rewrites their expected files.
func Run(t *testing.T) { testscript.Run(t, Params()) }

// setup gives every script a git project, an isolated HOME, a known memory dir and pid.
func setup(env *testscript.Env) error {
	project := filepath.Join(env.WorkDir, "project")
	if err := os.MkdirAll(filepath.Join(project, ".git"), 0o755); err != nil {
		return err
	}
	home := filepath.Join(env.WorkDir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	env.Setenv("HOME", home)
	env.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(home, ".claude"))
	env.Setenv("CLAUDE_PROJECT_DIR", project)
	env.Setenv("CAIRN_MEMORY_DIR", filepath.Join(env.WorkDir, "memory"))
	env.Setenv("STATE", filepath.Join(project, ".claude", "cairn"))
	env.Setenv("CLAUDE_PID", ClaudePID)
	env.Setenv("TZ", "UTC")
	// Under -race every exec'd command otherwise sleeps a second at exit to catch races in
	// goroutines still running; races are still reported, only the wait goes.
	if g := os.Getenv("GORACE"); g == "" {
		env.Setenv("GORACE", storetest.RaceOptions)
	}
	// Regular expressions for scrub: what varies from run to run in a hook's output.
	env.Setenv("SCRUB_ID", `[a-z]+-[0-9]{8}T[0-9]{6}Z-[0-9a-f]{4}`)
	env.Setenv("SCRUB_NONCE", `nonce=\\"[0-9a-f]+\\"`)
	env.Setenv("SCRUB_AGE", `last change ([0-9dhms ]+ago|just now)`)
	return nil
}

// condition knows [readonly]: a read-only state directory can be made here (as a normal user
// by chmod; as root, for whom chmod means nothing, only by a read-only bind mount in a new
// mount namespace), and [root]: the tests run as root (with-readonly then mounts).
func condition(cond string) (bool, error) {
	switch cond {
	case "root":
		return os.Geteuid() == 0, nil
	case "readonly":
		if os.Geteuid() != 0 {
			return true, nil
		}
		dir, err := os.MkdirTemp("", "cairn-ro-probe")
		if err != nil {
			return false, err
		}
		defer os.Remove(dir)
		probe := exec.Command("unshare", "-m", "sh", "-c", roMount+` && ! touch "$1/x" 2>/dev/null`, "sh", dir)
		return probe.Run() == nil, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// fixture lays out state through the engine, with time moved back by an optional age:
//
//	cairn-fixture start TYPE CONTEXT [AGE]
//	cairn-fixture replace TYPE CONTEXT  (start, archiving the active workflow)
//	cairn-fixture transition TO [AGE]
//	cairn-fixture violations CODE:SEVERITY:DETAILS...
//	cairn-fixture synced REMOTE REV AGE (sharing on; the active workflow synced AGE ago at REV)
//	cairn-fixture complete OUTCOME
//	cairn-fixture memory LINES         (a MEMORY.md of LINES lines in $CAIRN_MEMORY_DIR)
//	cairn-fixture bigevent FILE BYTES  (a hook event padded to BYTES bytes)
//	cairn-fixture hold LOCK SECONDS    (hold $STATE/LOCK, touching $STATE/../held once it is held)
//
// $FIXTURE_SESSION and $FIXTURE_PID make the change as that Claude Code session.
func fixture(args []string) int {
	if len(args) == 0 {
		return fail("no subcommand")
	}
	age := func(i int) time.Duration {
		if len(args) <= i {
			return 0
		}
		d, _ := time.ParseDuration(args[i]) // 0 when it is not one
		return d
	}
	if args[0] == "memory" {
		n, err := strconv.Atoi(args[len(args)-1])
		if err != nil {
			return fail("memory LINES: %v", err)
		}
		if err := WriteMemory(os.Getenv("CAIRN_MEMORY_DIR"), n); err != nil {
			return fail("%v", err)
		}
		return 0
	}
	if args[0] == "hold" && len(args) == 3 {
		return hold(args[1], args[2])
	}
	if args[0] == "bigevent" && len(args) == 3 {
		n, err := strconv.Atoi(args[2])
		if err != nil {
			return fail("bigevent FILE BYTES: %v", err)
		}
		head := `{"session_id":"s-big","hook_event_name":"SessionStart","source":"startup","pad":"`
		pad := max(n-len(head)-2, 0)
		data := head + strings.Repeat("x", pad) + `"}`
		if err := os.WriteFile(args[1], []byte(data), 0o644); err != nil {
			return fail("%v", err)
		}
		return 0
	}
	var back time.Duration
	switch args[0] {
	case "start":
		back = age(3)
	case "transition":
		back = age(2)
	}
	pid, _ := strconv.Atoi(os.Getenv("FIXTURE_PID"))
	e, err := engine.Open(engine.Config{
		Getenv: os.Getenv,
		Now:    func() time.Time { return time.Now().Add(-back) },
		Actor:  "test",
		// As a given Claude Code session, for ownership tests.
		SessionID: os.Getenv("FIXTURE_SESSION"),
		PID:       pid,
		YAML:      yamldoc.Codec{},
	})
	if err != nil {
		return fail("opening the engine: %v", err)
	}
	defer e.Close()
	if args[0] == "synced" && len(args) >= 4 {
		return synced(e, args[1], args[2], age(3), args[4:])
	}
	var res *engine.Result
	switch {
	case (args[0] == "start" || args[0] == "replace") && len(args) >= 3:
		res, err = e.Start(engine.StartRequest{Type: args[1], Context: args[2], Replace: args[0] == "replace"})
	case args[0] == "transition" && len(args) >= 2:
		res, err = e.Transition(engine.TransitionRequest{To: args[1]})
	case args[0] == "complete" && len(args) >= 2:
		// As a person in a terminal of their own: the agent's completion before an approval
		// gate is refused, and a fixture lays out what either could leave.
		res, err = e.CompleteByPerson(args[1])
	case args[0] == "violations":
		var vs []engine.Violation
		for _, a := range args[1:] {
			parts := strings.SplitN(a, ":", 3)
			if len(parts) != 3 {
				return fail("violation %q is not CODE:SEVERITY:DETAILS", a)
			}
			vs = append(vs, engine.Violation{Code: parts[0], Severity: parts[1], Details: parts[2]})
		}
		res, err = e.SetEnforcement(vs)
	default:
		return fail("unknown or incomplete subcommand %q", args)
	}
	if err != nil {
		return fail("%s: %v", args[0], err)
	}
	fmt.Println(res.Message)
	return 0
}

// fail reports a fixture that could not be laid out; cairn-fixture exits 1.
func fail(format string, a ...any) int {
	fmt.Fprintf(os.Stderr, "cairn-fixture: "+format+"\n", a...)
	return 1
}

// synced records what a sync against remote would have left: the active workflow mirrored
// at revision rev, ago ago, and the tasks in unconfirmed set running offline since.
func synced(e *engine.Engine, remote, rev string, ago time.Duration, unconfirmed []string) int {
	n, err := strconv.ParseInt(rev, 10, 64)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cairn-fixture: synced REMOTE REV AGE: %v\n", err)
		return 2
	}
	st, err := store.Open(e.StateDir())
	if err != nil {
		return fail("%v", err)
	}
	defer st.Close()
	w, err := st.ReadWorkflow()
	if err != nil {
		return fail("%v", err)
	}
	s := mirror.Settings{Enabled: true, Remote: remote, Layout: "refs/cairn/wf/",
		LastSync: time.Now().Add(-ago), Workflow: w.ID, Mirrored: n}
	if err := mirror.Save(st, s); err != nil {
		return fail("%v", err)
	}
	u := mirror.Unconfirmed{Workflow: w.ID, Pending: map[string]time.Time{}}
	for _, task := range unconfirmed {
		u.Pending[task] = time.Now()
	}
	doc, _ := json.Marshal(u)
	if err := st.Write(mirror.ClaimsDoc, doc); err != nil {
		return fail("%v", err)
	}
	return 0
}

// hold takes one of the store's locks in the state directory, as a busy MCP server would,
// says so in a file next to the state directory, and keeps it for the given seconds. Scripts
// kill it when they are done with the lock and give it minutes: a hold that ran out by
// itself on a loaded machine would free the lock while the script still counts on it.
func hold(lock, seconds string) int {
	secs, err := strconv.Atoi(seconds)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cairn-fixture: hold LOCK SECONDS: %v\n", err)
		return 2
	}
	state := os.Getenv("STATE")
	d, err := durable.OpenDir(state)
	if err != nil {
		return fail("%v", err)
	}
	defer d.Close()
	unlock, err := d.Lock(lock, time.Second)
	if err != nil {
		return fail("%v", err)
	}
	defer unlock()
	if err := os.WriteFile(filepath.Join(filepath.Dir(state), "held"), nil, 0o644); err != nil {
		return fail("%v", err)
	}
	time.Sleep(time.Duration(secs) * time.Second)
	return 0
}

// WriteMemory writes a MEMORY.md of n index lines into dir, as a busy project has.
func WriteMemory(dir string, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "- [Note %d](note-%d.md) — something the model learned about part %d of the project\n", i, i, i)
	}
	return os.WriteFile(filepath.Join(dir, "MEMORY.md"), []byte(b.String()), 0o644)
}

// roMount makes $1 a read-only bind mount of itself, in the caller's (new) mount namespace.
const roMount = `mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" "$1"`

// withReadonly runs a command with DIR read-only: with-readonly DIR CMD [ARGS...].
func withReadonly(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: with-readonly DIR CMD [ARGS...]")
		return 2
	}
	dir, argv := args[0], args[1:]
	var cmd *exec.Cmd
	if os.Geteuid() == 0 {
		cmd = exec.Command("unshare", append([]string{"-m", "sh", "-c", roMount + ` && shift && exec "$@"`, "sh", dir}, argv...)...)
	} else {
		restore, err := chmodTree(dir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "with-readonly: %v\n", err)
			return 2
		}
		defer restore()
		cmd = exec.Command(argv[0], argv[1:]...)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return exitCode("with-readonly", cmd.Run())
}

// withOpenStdin runs a command whose stdin is a pipe that is never written to nor closed, as a
// terminal or a stuck writer would leave it: with-open-stdin CMD [ARGS...].
func withOpenStdin(args []string) int {
	return withPipe("with-open-stdin", args, func(cmd *exec.Cmd, r, _ *os.File) { cmd.Stdin = r })
}

// withClosedStdout runs a command whose stdout is a pipe that no one reads, its reading end
// closed before the command starts, as a reader that gave up leaves it: a write there is a
// broken pipe. with-closed-stdout CMD [ARGS...].
func withClosedStdout(args []string) int {
	return withPipe("with-closed-stdout", args, func(cmd *exec.Cmd, r, w *os.File) {
		r.Close()
		cmd.Stdout = w
	})
}

// withPipe runs the wrapper name's command with os's stdio, and one end of a new pipe in place
// of one of them (set): the other end stays open, unless set closes it, until the command ends.
func withPipe(name string, args []string, set func(cmd *exec.Cmd, r, w *os.File)) int {
	if len(args) < 1 {
		fmt.Fprintf(os.Stderr, "usage: %s CMD [ARGS...]\n", name)
		return 2
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return 2
	}
	defer pr.Close()
	defer pw.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	set(cmd, pr, pw)
	return exitCode(name, cmd.Run())
}

// exitCode is what the wrapper name exits with after running its command: the command's own
// code, or 2 when it could not run it.
func exitCode(name string, err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		if ee.ExitCode() < 0 { // killed by a signal, which no exit code says
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			return 2
		}
		return ee.ExitCode()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return 2
	}
	return 0
}

// chmodTree removes write permission from everything under dir and returns how to put it back.
func chmodTree(dir string) (func(), error) {
	type saved struct {
		path string
		mode os.FileMode
	}
	var all []saved
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		all = append(all, saved{p, fi.Mode().Perm()})
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := len(all) - 1; i >= 0; i-- {
		os.Chmod(all[i].path, all[i].mode&^0o222)
	}
	return func() {
		for _, s := range all {
			os.Chmod(s.path, s.mode)
		}
	}, nil
}

// scrub FILE OUT REGEXP REPLACEMENT: OUT (in $WORK) is FILE (or stdout, stderr) with every
// match of REGEXP replaced, for cmp against output holding times, ages and nonces.
func scrub(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 4 || len(args)%2 != 0 {
		ts.Fatalf("usage: scrub FILE OUT REGEXP REPLACEMENT [REGEXP REPLACEMENT...]")
	}
	s := ts.ReadFile(args[0])
	for i := 2; i < len(args); i += 2 {
		re, err := regexp.Compile(args[i])
		ts.Check(err)
		s = re.ReplaceAllString(s, args[i+1])
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(s), 0o644))
}

// hookout FILE EVENT: FILE (usually stdout) is what a hook of EVENT (SessionStart, Stop) may
// print: nothing, or one line holding one JSON object with only the fields Claude Code reads
// from that hook, within Cairn's caps. With !, it must be empty.
func hookout(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: hookout FILE SessionStart|Stop")
	}
	s := ts.ReadFile(args[0])
	if neg {
		if s != "" {
			ts.Fatalf("%s is not empty: %q", args[0], s)
		}
		return
	}
	if err := CheckOutput(s, args[1]); err != nil {
		ts.Fatalf("%s: %v", args[0], err)
	}
}

// CheckOutput checks a hook's whole stdout against what Claude Code accepts from event's hooks.
func CheckOutput(s, event string) error {
	if s == "" {
		return nil
	}
	if strings.Count(s, "\n") != 1 || !strings.HasSuffix(s, "\n") {
		return fmt.Errorf("output is not one line: %q", s)
	}
	var out map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&out); err != nil || out == nil {
		return fmt.Errorf("output is not a JSON object: %q", s)
	}
	if raw, ok := out["systemMessage"]; ok {
		var m string
		if json.Unmarshal(raw, &m) != nil || m == "" || textsafe.Units(m) > hook.MaxMessage || strings.ContainsAny(m, "\r\n") {
			return fmt.Errorf("systemMessage %s is not one short line", raw)
		}
	}
	for k, raw := range out {
		switch {
		case k == "systemMessage":
		case event == "SessionStart" && k == "hookSpecificOutput":
			var h struct {
				HookEventName     string `json:"hookEventName"`
				AdditionalContext string `json:"additionalContext"`
			}
			if err := json.Unmarshal(raw, &h); err != nil {
				return fmt.Errorf("hookSpecificOutput: %v", err)
			}
			if h.HookEventName != "SessionStart" {
				return fmt.Errorf("hookEventName %q: Claude Code drops the context without SessionStart", h.HookEventName)
			}
			if h.AdditionalContext == "" || textsafe.Units(h.AdditionalContext) > hook.MaxContext {
				return fmt.Errorf("additionalContext is %d characters, want 1..%d", textsafe.Units(h.AdditionalContext), hook.MaxContext)
			}
		case event == "Stop" && k == "decision":
			if string(raw) != `"block"` {
				return fmt.Errorf("decision %s, want \"block\"", raw)
			}
			var reason string
			if json.Unmarshal(out["reason"], &reason) != nil || reason == "" || textsafe.Units(reason) > hook.MaxReason {
				return fmt.Errorf("a block needs a reason of 1..%d characters, got %s", hook.MaxReason, out["reason"])
			}
		case event == "Stop" && k == "reason":
			if _, ok := out["decision"]; !ok {
				return fmt.Errorf("reason without decision")
			}
		default:
			return fmt.Errorf("field %q is not one a %s hook prints", k, event)
		}
	}
	return nil
}

// waitfile FILE: wait (up to 10 s) until FILE exists, for a background command to get ready.
func waitfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile FILE")
	}
	p := ts.MkAbs(args[0])
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(p); err == nil {
			return
		}
	}
	ts.Fatalf("%s did not appear within 10s", args[0])
}
