package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote/claimsync"
	"github.com/cairn-dev/cairn/internal/remote/remotesync"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/store/migrate"
	"github.com/cairn-dev/cairn/internal/strictjson"
	"github.com/cairn-dev/cairn/internal/vars"
	"github.com/cairn-dev/cairn/internal/workflow"
)

func TestExitCode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, ExitOK},
		{"usage", &usageError{msg: "missing arguments"}, ExitUsage},
		{"doctor check failed", &codeError{code: ExitRefused, msg: "1 check failed"}, ExitRefused},
		{"transition refused", &workflow.TransitionError{Type: "apex", From: "plan"}, ExitRefused},
		{"conflict", fmt.Errorf("moving: %w", &workflow.ConflictError{WorkflowID: "w"}), ExitRefused},
		{"no active workflow", fmt.Errorf("%w (hint)", engine.ErrNoActiveWorkflow), ExitRefused},
		{"checkpoint not found", &store.NotFoundError{What: "checkpoint", Name: "x"}, ExitRefused},
		{"bad name", &store.NameError{Name: "../x", Reason: "it contains .."}, ExitRefused},
		{"bad json", fmt.Errorf("saving: %w", &strictjson.Error{Reason: "duplicate key"}), ExitRefused},
		{"untyped engine refusal", errors.New("unknown workflow type \"x\""), ExitRefused},
		{"state dir unopenable", &stateError{errors.New("mkdir: denied")}, ExitInternal},
		{"read-only write", &store.WriteError{Dir: "/s", Name: "f", Err: fs.ErrPermission}, ExitInternal},
		{"lock held", fmt.Errorf("x: %w", &durable.LockTimeoutError{Path: ".lock-workflow"}), ExitInternal},
		{"newer format", &migrate.NewerError{}, ExitInternal},
		{"symlinked state dir", fmt.Errorf("opening: %w", durable.ErrSymlinkDir), ExitInternal},
		{"permission", fmt.Errorf("reading: %w", fs.ErrPermission), ExitInternal},
		{"output lost", fmt.Errorf("printing: %w", &outputError{err: errors.New("no space left on device")}), ExitInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := exitCode(tt.err); got != tt.want {
				t.Errorf("exitCode(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}

func TestParseArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		wantPos  []string
		wantJSON bool
		wantFrom string
		wantErr  bool
	}{
		{"positionals only", []string{"plan"}, []string{"plan"}, false, "", false},
		{"flag after", []string{"plan", "--json"}, []string{"plan"}, true, "", false},
		{"flag before", []string{"--from", "analyze", "plan"}, []string{"plan"}, false, "analyze", false},
		{"mixed", []string{"a", "--from=x", "b", "-json"}, []string{"a", "b"}, true, "x", false},
		{"double dash ends flags", []string{"K", "--", "-1", "--json"}, []string{"K", "-1", "--json"}, false, "", false},
		{"lone dash is a positional", []string{"name", "-"}, []string{"name", "-"}, false, "", false},
		{"unknown flag", []string{"a", "--frob"}, nil, false, "", true},
		{"negative number is a value", []string{"K", "-1"}, []string{"K", "-1"}, false, "", false},
		{"negative number as a flag's value", []string{"--from", "-2.5", "b"}, []string{"b"}, false, "-2.5", false},
		{"bool flag with a value", []string{"--json=false", "a"}, []string{"a"}, false, "", false},
		{"bool flag with a bad value", []string{"--json=maybe"}, nil, false, "", true},
		{"string flag without its value", []string{"a", "--from"}, nil, false, "", true},
		{"triple dash", []string{"---json"}, nil, false, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			j := fs.Bool("json", false, "")
			from := fs.String("from", "", "")
			pos, err := parseArgs(fs, tt.args)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if !slices.Equal(pos, tt.wantPos) || *j != tt.wantJSON || *from != tt.wantFrom {
				t.Errorf("got %q json=%v from=%q, want %q json=%v from=%q", pos, *j, *from, tt.wantPos, tt.wantJSON, tt.wantFrom)
			}
		})
	}
}

func TestSuggest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s          string
		candidates []string
		want       []string
	}{
		{"stauts", []string{"status", "start", "show", "list"}, []string{"status"}},
		{"plna", []string{"analyze", "plan", "implement"}, []string{"plan"}},
		{"impl", []string{"analyze", "plan", "implement"}, []string{"implement"}},
		{"frobnicate", []string{"status", "start"}, nil},
		{"status", []string{"status"}, nil}, // the word itself is no suggestion
		// A word typed in capitals is the command of that name, not a longer one it starts.
		{"STATUS", order, []string{"status"}},
		{"Plan-v1", []string{"plan-v1", "plan-v2"}, []string{"plan-v1"}},
		{"jsno", []string{"json", "id"}, []string{"json"}},
		{"x", []string{"id", "json"}, nil},
		// A command's first letters are that command, before a word a letter or two away:
		// cairn stat was taken for start, hist for list, arch for watch.
		{"stat", order, []string{"status", "statusline"}},
		{"hist", order, []string{"history"}},
		{"arch", order, []string{"archive"}},
		{"comp", order, []string{"complete", "completion"}},
		{"sta", order, []string{"status", "statusline", "start"}},
	}
	for _, tt := range tests {
		if got := suggest(tt.s, tt.candidates); !slices.Equal(got, tt.want) {
			t.Errorf("suggest(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
}

func TestLocatePlugin(t *testing.T) {
	t.Parallel()
	root := filepath.FromSlash("/opt/plugins/cairn")
	isDir := func(p string) bool {
		return p == filepath.Join(root, ".claude-plugin") || p == filepath.Join("rel", ".claude-plugin")
	}
	exe := func(p string) func() (string, error) { return func() (string, error) { return p, nil } }
	noExe := func() (string, error) { return "", errors.New("no executable") }
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	tests := []struct {
		name             string
		exe              func() (string, error)
		getenv           func(string) string
		wantRoot, wantIn string
	}{
		{"in the plugin's bin", exe(filepath.Join(root, "bin", "cairn")), env(), root, "bin/"},
		{"bin wins over the env", exe(filepath.Join(root, "bin", "cairn")), env("CLAUDE_PLUGIN_ROOT", "/elsewhere"), root, "bin/"},
		{"a bin without .claude-plugin above", exe("/usr/local/bin/cairn"), env("CLAUDE_PLUGIN_ROOT", root), root, "CLAUDE_PLUGIN_ROOT"},
		{"not in a bin", exe("/home/u/go/cairn"), env("CLAUDE_PLUGIN_ROOT", root), root, "CLAUDE_PLUGIN_ROOT"},
		{"env without .claude-plugin", exe("/home/u/go/cairn"), env("CLAUDE_PLUGIN_ROOT", "/tmp"), "", "holds no .claude-plugin/"},
		{"a relative env", exe("/home/u/go/cairn"), env("CLAUDE_PLUGIN_ROOT", "rel"), "", "not an absolute path"},
		{"nothing", noExe, env(), "", "not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotRoot, bin, how := locatePlugin(tt.exe, tt.getenv, isDir)
			if gotRoot != tt.wantRoot || !strings.Contains(how, tt.wantIn) {
				t.Fatalf("got %q (%s), want %q (%s)", gotRoot, how, tt.wantRoot, tt.wantIn)
			}
			if gotRoot != "" && bin != filepath.Join(gotRoot, "bin") {
				t.Errorf("bin dir %q, want %q", bin, filepath.Join(gotRoot, "bin"))
			}
		})
	}
}

// A cairn in the launcher's download or build (DATA/bin-VERSION: a marketplace install has no
// bin/) checks the set it runs from, not a bin/ that is not there.
func TestLocatePluginFromTheLaunchersSet(t *testing.T) {
	t.Parallel()
	root := filepath.FromSlash("/opt/plugins/cairn")
	set := filepath.FromSlash("/home/u/.claude/plugins/data/cairn-cairn/bin-0.1.0")
	isDir := func(p string) bool { return p == filepath.Join(root, ".claude-plugin") }
	exe := func() (string, error) { return filepath.Join(set, "cairn"), nil }
	getenv := func(k string) string {
		if k == "CLAUDE_PLUGIN_ROOT" {
			return root
		}
		return ""
	}
	if gotRoot, bin, how := locatePlugin(exe, getenv, isDir); gotRoot != root || bin != set {
		t.Errorf("locatePlugin = %q, %q (%s), want %q, %q", gotRoot, bin, how, root, set)
	}
}

func TestClean(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"plain", "add retries to the uploader", "add retries to the uploader"},
		{"unicode kept", "héllo ✓ 日本", "héllo ✓ 日本"},
		{"escape sequence", "evil\x1b[2Jctx", "evil?[2Jctx"},
		{"carriage return", "ok\rFAKE", "ok?FAKE"},
		{"newline and tab", "a\nb\tc", "a b c"},
		{"unicode line breaks", "a\u2028b\u2029c", "a b c"},
		{"bidi override", "abc\u202edcb", "abc?dcb"},
		{"zero width", "a\u200bb", "a?b"},
		{"tag character", "a\U000e0041b", "a?b"},
		{"c1 control", "a\u009bb", "a?b"},
		{"invalid utf-8", "a\xffb", "a?b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := clean(tt.in); got != tt.want {
				t.Errorf("clean(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// Every command in the overview's order is registered and every registered one is listed, so
// help and dispatch cannot drift apart.
func TestCommandTable(t *testing.T) {
	t.Parallel()
	if len(order) != len(commands) {
		t.Fatalf("order lists %d commands, the table has %d", len(order), len(commands))
	}
	for _, n := range order {
		c, ok := commands[n]
		if !ok || c.run == nil || c.summary == "" {
			t.Errorf("command %q is listed but not complete in the table", n)
			continue
		}
		if !strings.HasPrefix(c.usage, n) {
			t.Errorf("command %q: usage %q does not start with its name", n, c.usage)
		}
	}
}

// The help's vars examples can be run as written: every name after cairn vars set|get|unset
// in a command's help is one the engine accepts, and vars set's help states the engine's rule
// (WF_ or a workflow word first), not a looser one that sends a person to a refusal.
func TestHelpVarNames(t *testing.T) {
	t.Parallel()
	example := regexp.MustCompile(`cairn vars (?:set|get|unset) ([A-Za-z0-9_]+)`)
	for _, n := range order {
		c := commands[n]
		for _, m := range example.FindAllStringSubmatch(c.summary+"\n"+c.doc, -1) {
			if err := vars.ValidKey(m[1]); m[1] != "KEY" && err != nil {
				t.Errorf("cairn help %s: its example %q is refused: %v", n, m[0], err)
			}
		}
	}
	if doc := commands["vars set"].doc; !strings.Contains(doc, "WF_") {
		t.Errorf("cairn help vars set does not say a KEY starts with WF_ or a workflow word:\n%s", doc)
	}
}

// sync's conflict line names the session that won the race, set off by a space, and keeps
// the remote's words (its event kind, phase, session) free of control characters such as a terminal
// escape, keeping the rest.
func TestConflictLine(t *testing.T) {
	t.Parallel()
	out := remotesync.Outcome{Workflow: "wf-1", Local: 8, Conflict: &remotesync.Conflict{Common: 6,
		By: store.Event{Kind: "var\x1b[2J"}, State: "implement\x1b]0;title\x07", Session: "s-2\x1b[1m",
		Archive: store.ArchiveInfo{Revision: 8, Dir: "conflict-wf-1-x"}}}
	want := "wf-1: origin changed it first by session s-2[1m (var[2J, in implement]0;title, after r6); this machine's r8 is kept in archive/conflict-wf-1-x; now at r8"
	if got := conflictLine(out, "origin", true); got != want {
		t.Errorf("conflictLine = %q\nwant            %q", got, want)
	}
	// The remote's line it adopted had ended there: the line says so, as a plain pull's does.
	out.Ended = workflow.StatusCompleted
	if got := conflictLine(out, "origin", true); got != want+": it was completed on another machine" {
		t.Errorf("conflictLine of an ended line = %q; want it to say it was completed there", got)
	}
}

// show's value is one line that reads back as the value: what clean would blur (a break, a
// tab, an escape sequence, an invisible character) is escaped, not turned into ' ' or '?'.
func TestShownValue(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]string{
		"plans/001.md":         `'plans/001.md'`,
		`it's \ here`:          `'it'\''s \ here'`,
		"":                     `''`,
		"one\ntwo":             `$'one\ntwo'`,
		"a\tb's \\":            `$'a\tb\'s \\'`,
		"red\x1b[31m\r":        `$'red\u001B[31m\r'`,
		"hid\u200bden":         `$'hid\u200Bden'`,
		"tag\U000E0041":        `$'tag\U000E0041'`,
		"para\u2028line\u2029": `$'para\u2028line\u2029'`,
	} {
		if got := shownValue(v); got != want {
			t.Errorf("shownValue(%q) = %s, want %s", v, got, want)
		}
	}
}

// The engine's refusals after a race end in the agent's step (resume_check); at a shell the
// step is the command that shows the same (cairn status), one step, in errors and warnings.
func TestFailSaysTheShellsStep(t *testing.T) {
	t.Parallel()
	var stderr strings.Builder
	a := &app{stderr: &stderr, name: "archive", getenv: func(string) string { return "" }}
	a.fail(fmt.Errorf("workflow w-1 changed while it was being archived; nothing was archived: %s", engine.CheckOnRecord))
	a.warn("the workflow is completed and kept, but archiving it failed: " + engine.CheckOnRecord)
	got := stderr.String()
	if strings.Contains(got, "resume_check") || strings.Count(got, "check it with cairn status") != 2 {
		t.Errorf("stderr = %q, want the shell's step (check it with cairn status) in both lines", got)
	}
}

// The engine's start refusals name start_workflow's argument; a person is told the CLI's flag
// (a start whose drawn ids were all taken cannot be brought about from here, so its line is
// checked on the engine's words).
func TestShellStepsNameTheIDFlag(t *testing.T) {
	t.Parallel()
	got := shellSteps("starting a workflow: 16 ids drawn for this second were all taken; "+engine.GiveAnID, false)
	if want := "starting a workflow: 16 ids drawn for this second were all taken; start again with --id set to an id not used before"; got != want {
		t.Errorf("shellSteps = %q, want %q", got, want)
	}
}

// TestShellStepsForAFullRecord: the steps a record over 1 MiB names, in the agent's tools,
// reach the person as the commands they run; before, the person read save_checkpoint and
// set_enforcement, and the tasks step named both readers' words at once.
func TestShellStepsForAFullRecord(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ agent, person string }{
		{engine.ShortenTasks, "cairn task ID STATUS --note N"},
		{engine.SplitCheckpoint, "cairn checkpoint save NAME JSON"},
		{engine.ShortenViolations, "the agent records"},
		{engine.ArchiveToGoOn, "cairn archive keeps the workflow whole"},
		{engine.ShowWhatFills, "run cairn show, which shows what fills it"},
		// Not a full record, but the same shape: the claims line too large to keep.
		{claimsync.TooManyStep, "cairn archive keeps the workflow whole and another workflow can take over the work on a claims line of its own"},
		// Nor this: a take-back's changes not replayed, in an archive cairn history reads.
		{remotesync.AskHistory + "wf-x-20261129T194444.253Z", "list them with cairn history wf-x-20261129T194444.253Z"},
		// Nor this: a workflow whose definition stopped loading, the person's file to fix.
		{engine.DefinitionAsk, ": fix or restore its definition file"},
		{engine.RecordAsk, ": run `cairn doctor`, which names what to correct, then run the command again"},
		// Nor this: a change that stood, its snapshot refused for want of room.
		{store.NoRoomStep, ": free some room on that file system"},
		// Nor this: an archive index too large to read, which may be someone's.
		{store.IndexTooLargeStep, ": move it out of the state directory (it may be someone's)"},
		// Nor this: something in the claims state's place, which may be someone's.
		{claimsync.InTheWayStep, ": look at what it is: it may be someone's"},
		// Nor this: a task finished on another machine, whose done only a sync brings.
		{claimsync.DoneStep, ": run cairn sync, which brings its done here"},
	} {
		got := shellSteps("nothing was changed: "+tt.agent+".", false)
		if !strings.Contains(got, tt.person) || strings.Contains(got, "ask the user") || strings.Contains(got, "tell the user") || strings.Contains(got, "update_task") || strings.Contains(got, "save_checkpoint") || strings.Contains(got, "set_enforcement") || strings.Contains(got, "start_workflow") {
			t.Errorf("shellSteps(%q) = %q, want the person's step %q and no tool name", tt.agent, got, tt.person)
		}
	}
}

// TestLinkCheckWhereThisCairnIsUnknown: when the executable's path cannot be told, the check
// still says what is fine (the plugin needs no cairn on PATH); --link, which cannot be done
// then, fails and says how to make the link by hand.
func TestLinkCheckWhereThisCairnIsUnknown(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	a := &app{getenv: func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}, executable: func() (string, error) { return "", errors.New("no executable") }}
	c := a.linkCheck(false, runtime.GOOS)
	if want := "not needed: the plugin runs its binaries by their paths (where this cairn is cannot be told)"; !c.OK || c.Detail != want {
		t.Errorf("without --link: ok=%v %q, want ok %q", c.OK, c.Detail, want)
	}
	c = a.linkCheck(true, runtime.GOOS)
	dest := filepath.Join(home, ".local", "bin", "cairn")
	if c.OK || c.Detail != "where this cairn is cannot be told, so no link was made" || c.Fix != "ln -s PATH/TO/cairn "+vars.Quote(dest) {
		t.Errorf("with --link: ok=%v %q, fix %q", c.OK, c.Detail, c.Fix)
	}
}

// TestLinkCheckWithoutAHome: with no home directory to link from, --link fails and its fix is
// a command that works once DIR is named: the path quoted, the link's name after it.
func TestLinkCheckWithoutAHome(t *testing.T) {
	t.Setenv("HOME", "") // os.UserHomeDir finds none either
	exe := filepath.Join(t.TempDir(), "my tools", "cairn")
	a := &app{getenv: func(string) string { return "" }, executable: func() (string, error) { return exe, nil }}
	c := a.linkCheck(true, runtime.GOOS)
	if want := "ln -s " + vars.Quote(exe) + " DIR/cairn, DIR a directory on your PATH"; c.OK || c.Fix != want {
		t.Errorf("with --link and no home: ok=%v, fix %q, want %q", c.OK, c.Fix, want)
	}
}

// The model's steps that go through "the user" are the person's own at the CLI: the person is
// not told to ask or tell themselves.
func TestShellStepsSpeakToThePerson(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&workflow.ActiveError{WorkflowID: "w1", Type: "apex", Phase: "plan"},
			"workflow w1 (apex, at plan) is still active; nothing was changed: to start another instead, start again with --replace (it archives the active one, kept, not lost)"},
		{&workflow.TransitionError{Type: "apex", From: "old", Phases: []string{"analyze", "plan"}},
			"apex workflow is in phase old, which is not a phase of its definition now (analyze, plan): it cannot move from there; nothing was changed: restore the phase in the definition"},
		{&workflow.TransitionError{Type: "note", From: "only"},
			"note workflow cannot move from only: only is a terminal phase of its definition, so no move leads out of it; nothing was changed: finish the workflow with cairn complete OUTCOME"},
	} {
		if got := shellSteps(tt.err.Error(), false); got != tt.want {
			t.Errorf("shellSteps(%q)\n = %q\nwant %q", tt.err.Error(), got, tt.want)
		}
	}
}

// The agent, which has no tool that deletes a checkpoint or unsets a variable, is told to ask
// the user which are no longer needed; the person, who is that user, gets the command.
func TestShellStepsGiveTheLimitsCommands(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ agent, person string }{
		{engine.AskWhichVars, "unset ones no longer needed with `cairn vars unset NAME...`"},
		{engine.AskWhichCheckpoints, "save over one no longer needed (the same name replaces it), or delete one with `cairn checkpoint delete NAME`"},
	} {
		if got, want := shellSteps("nothing was changed: "+tt.agent+", then set these again", false), "nothing was changed: "+tt.person+", then set these again"; got != want {
			t.Errorf("shellSteps\n = %q\nwant %q", got, want)
		}
	}
}

// TestHelpOverviewFits: cairn help lists each command on one line of at most 100 columns;
// doctor's, with its exit codes, ran to 132.
func TestHelpOverviewFits(t *testing.T) {
	t.Parallel()
	for _, l := range strings.Split(overview(), "\n") {
		if n := utf8.RuneCountInString(l); n > 100 {
			t.Errorf("cairn help (%d columns): %q", n, l)
		}
	}
}

// TestHelpDocsAreFilled: a command's help reads as filled paragraphs, every line but a
// paragraph's last (or one that opens an example with ':', or a table's, in columns) between
// 60 and 95 columns; approve's broke after "To let agents" and ran on past 95, and sync's ran
// to 131.
func TestHelpDocsAreFilled(t *testing.T) {
	t.Parallel()
	for _, name := range slices.Sorted(maps.Keys(commands)) {
		lines := strings.Split(strings.TrimSpace(commands[name].doc), "\n")
		for i, l := range lines {
			n := utf8.RuneCountInString(l)
			last := i == len(lines)-1 || lines[i+1] == "" || strings.HasPrefix(lines[i+1], " ")
			if strings.Contains(l, "  ") {
				continue // a table's line
			}
			if n > 95 || n < 60 && !last && !strings.HasSuffix(l, ":") && !strings.HasPrefix(l, " ") {
				t.Errorf("cairn help %s, line %d (%d columns): %q", name, i+1, n, l)
			}
		}
	}
}

// TestInstalledPluginWindowsBin: a plugin installed from a checkout whose bin/ holds this
// machine's binaries is run from that bin/ by the launcher, on Windows too, where they are
// cairn-mcp.exe and the others: doctor checked the data directory's set instead, which is not
// what runs (and is missing, so every binary failed).
func TestInstalledPluginWindowsBin(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	root := filepath.Join(t.TempDir(), "cairn")
	plugins := filepath.Join(home, ".claude", "plugins")
	quoted, _ := json.Marshal(root)
	for p, data := range map[string]string{
		filepath.Join(root, ".claude-plugin", "plugin.json"): `{"name": "cairn", "version": "0.2.0"}`,
		filepath.Join(plugins, "installed_plugins.json"):     `{"version": 2, "plugins": {"cairn@cairn": [{"scope": "user", "installPath": ` + string(quoted) + `}]}}`,
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ goos, file, wantBin string }{
		{"windows", "cairn-mcp.exe", filepath.Join(root, "bin")},
		{"linux", "cairn-mcp.exe", filepath.Join(plugins, "data", "cairn-cairn", "bin-0.2.0")},
		{"linux", "cairn-mcp", filepath.Join(root, "bin")},
	} {
		os.RemoveAll(filepath.Join(root, "bin"))
		if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "bin", tc.file), nil, 0o755); err != nil {
			t.Fatal(err)
		}
		getenv := func(string) string { return "" }
		if r, bin, _ := installedPlugin(getenv, home, t.TempDir(), tc.goos); r != root || bin != tc.wantBin {
			t.Errorf("%s, bin/%s: installedPlugin = %q, %q, want %q, %q", tc.goos, tc.file, r, bin, root, tc.wantBin)
		}
	}
}

// TestOwnSetCheckWindows: a cairn run from the set of the version before an update is told to
// link the installed plugin's; where that one is there, the step is the link alone, on Windows
// too, where it is cairn.exe: it said to start a session to install it first.
func TestOwnSetCheckWindows(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	old, cur := filepath.Join(data, "bin-0.0.9"), filepath.Join(data, "bin-0.2.0")
	for _, p := range []string{filepath.Join(old, "cairn"), filepath.Join(cur, "cairn.exe")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	a := &app{getenv: func(string) string { return "" }, executable: func() (string, error) { return filepath.Join(old, "cairn"), nil }}
	for _, tc := range []struct{ goos, want string }{
		{"windows", vars.Quote(filepath.Join(cur, "cairn")) + " doctor --link"},
		{"linux", "start a Claude Code session (the plugin installs its binaries), then " + vars.Quote(filepath.Join(cur, "cairn")) + " doctor --link"},
	} {
		if c := a.ownSetCheck(cur, tc.goos); c == nil || c.OK || c.Fix != tc.want {
			t.Errorf("%s: ownSetCheck = %+v, want the fix %q", tc.goos, c, tc.want)
		}
	}
}

// cairn types names a definition file whose name holds a character no one sees with it
// escaped, as the warnings about such a file do: "x?.md" named no file a person could type.
func TestTypesNamesAnUnseenFileName(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	writeType(&app{stdout: &out}, typeInfo{Name: "rev", Phases: []string{"a"}, Source: "/p/.claude/workflows/x\u200b.md"})
	if want := `  from:        /p/.claude/workflows/x\u200b.md` + "\n"; !strings.HasSuffix(out.String(), want) {
		t.Errorf("types says\n%s\nwant it to end with %q", out.String(), want)
	}
}
