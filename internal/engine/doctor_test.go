package engine_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/alloctest"
	"github.com/cairn-dev/cairn/internal/engine"
)

// doctorCheck is the check named name in en's doctor report (nil when there is none).
func doctorCheck(en *engine.Engine, opt engine.DoctorOptions, name string) *engine.Check {
	for _, c := range en.Doctor(opt) {
		if c.Name == name {
			return &c
		}
	}
	return nil
}

// pluginWithBin is a plugin root whose release/checksums.txt holds sums and whose bin/ holds
// every binary, stamped with stamp (no .checksums when stamp is "-").
func pluginWithBin(t *testing.T, sums, stamp string) (root, bin string) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "plugin")
	bin = filepath.Join(root, "bin")
	files := map[string]string{"release/checksums.txt": sums, "Makefile": "build:\n"}
	for _, b := range []string{"cairn-mcp", "cairn-session-start", "cairn-stop", "cairn-event", "cairn"} {
		files["bin/"+b] = "#!/bin/sh\n"
	}
	if stamp != "-" {
		files["bin/.checksums"] = stamp
	}
	writeFiles(t, root, files)
	return root, bin
}

// dataSet is the launcher's set in a plugin data directory, data/bin-1.0.0, holding the
// binaries named, stamped with stamp (no .checksums when stamp is "-").
func dataSet(t *testing.T, stamp string, binaries ...string) (data, set string) {
	t.Helper()
	data = filepath.Join(t.TempDir(), "data")
	files := map[string]string{}
	for _, b := range binaries {
		files["bin-1.0.0/"+b] = "#!/bin/sh\n"
	}
	if stamp != "-" {
		files["bin-1.0.0/.checksums"] = stamp
	}
	writeFiles(t, data, files)
	return data, filepath.Join(data, "bin-1.0.0")
}

// writeFiles writes each of files (path under root: content), executable.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDoctorStaleBinaries: a set whose stamp is not the plugin's release checksums (git pull
// without make build) is named stale, with the command that rebuilds it.
func TestDoctorStaleBinaries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	const sums = "aaaa  cairn_1.0.0_linux_amd64.tar.gz\n"
	for _, stamp := range []string{"bbbb  cairn_0.9.0_linux_amd64.tar.gz\n", "-"} {
		root, bin := pluginWithBin(t, sums, stamp)
		c := doctorCheck(en, engine.DoctorOptions{PluginRoot: root, BinDir: bin}, "binary stamp")
		if c == nil || c.OK || !strings.Contains(c.Detail, "cairn-stop") || !strings.Contains(c.Detail, "stale") ||
			c.Fix != "make -C '"+root+"' build" {
			t.Fatalf("stamp %q: doctor says %+v", stamp, c)
		}
	}
	root, bin := pluginWithBin(t, sums, sums)
	if c := doctorCheck(en, engine.DoctorOptions{PluginRoot: root, BinDir: bin}, "binary stamp"); c == nil || !c.OK {
		t.Fatalf("current set: doctor says %+v", c)
	}

	// The launcher's set in the data dir: the launcher installs it anew.
	root, _ = pluginWithBin(t, sums, "-")
	data, set := dataSet(t, "old\n", "cairn-mcp", "cairn-session-start", "cairn-stop", "cairn-event", "cairn")
	c := doctorCheck(en, engine.DoctorOptions{PluginRoot: root, BinDir: set}, "binary stamp")
	if c == nil || c.OK || !strings.HasPrefix(c.Fix, "CLAUDE_PLUGIN_DATA='"+data+"' sh '"+root+"/hooks/launch' cairn version") {
		t.Fatalf("data set: doctor says %+v", c)
	}

	// A set Go built carries the plugin's stamp and names the plugin it was built from: that of
	// another checkout with the same checksums, sharing the data dir, is not this one's. This
	// one's path spelled otherwise (a symlink to it) is this one, as the launcher has it.
	type builtFrom struct {
		from string
		ok   bool
	}
	cases := []builtFrom{{root + "\n", true}, {"/elsewhere/cairn\n", false}}
	if link := filepath.Join(t.TempDir(), "cairn"); os.Symlink(root, link) == nil {
		cases = append(cases, builtFrom{link + "\n", true})
	}
	for _, tc := range cases {
		data, set := dataSet(t, sums, "cairn-mcp", "cairn-session-start", "cairn-stop", "cairn-event", "cairn")
		writeFiles(t, set, map[string]string{".built-from": tc.from})
		c := doctorCheck(en, engine.DoctorOptions{PluginRoot: root, BinDir: set}, "binary stamp")
		if c == nil || c.OK != tc.ok || !tc.ok && (!strings.Contains(c.Detail, "/elsewhere/cairn") || !strings.HasPrefix(c.Fix, "CLAUDE_PLUGIN_DATA='"+data+"' sh ")) {
			t.Errorf("a set Go built from %q: doctor says %+v", tc.from, c)
		}
	}
}

// sum is memory's content sum in a temp file's name: the first 8 bytes of the SHA-256, in hex.
func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

// TestDoctorKeptMemoryTemps: a temp file in which a killed Cairn write left another writer's
// MEMORY.md content is kept by Cairn for good; doctor lists it, says what it holds and what to
// do (merge it: no deletion by hand, the next write removes a merged one), and removes
// nothing. Temp files the next Cairn write settles are no failure.
func TestDoctorKeptMemoryTemps(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	dir := e.memoryDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	old := e.clock.Now().Add(-time.Hour)
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, old, old)
		return p
	}
	write("MEMORY.md", "- the user's line\n")
	settled := []string{
		write(".tmp-MEMORY.md-"+sum("before")+"-"+sum("after")+"-111", "after"),  // the killed write's own edit
		write(".tmp-MEMORY.md-"+sum("before")+"-"+sum("after")+"-222", "before"), // what it was built on
	}
	if c := doctorCheck(en, engine.DoctorOptions{}, "auto-memory temp files"); c == nil || !c.OK {
		t.Fatalf("only temp files the next write settles: doctor says %+v", c)
	}
	kept := write(".tmp-MEMORY.md-"+sum("before")+"-"+sum("after")+"-333", "- the model's line\n")
	c := doctorCheck(en, engine.DoctorOptions{}, "auto-memory temp files")
	if c == nil || c.OK || !strings.Contains(c.Detail, filepath.Base(kept)) || strings.Contains(c.Detail, "-111") ||
		!strings.Contains(c.Detail, "MEMORY.md") || strings.Contains(c.Fix, "delete") || !strings.Contains(c.Fix, "copy back") {
		t.Fatalf("a kept temp file: doctor says %+v", c)
	}
	for _, p := range append(settled, kept) {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("doctor removed %s: %v", p, err)
		}
	}

	// MEMORY.md still holds the killed write's edit: the next write puts the content back.
	write("MEMORY.md", "after")
	if c := doctorCheck(en, engine.DoctorOptions{}, "auto-memory temp files"); c == nil || !c.OK {
		t.Fatalf("a temp file the next write puts back: doctor says %+v", c)
	}
}

// TestDoctorForeignBinaries: a set built for another OS or CPU (a data dir shared between
// machines) is named, with the command that installs this machine's; the launcher runs it all
// the same, since its stamp is the plugin's.
func TestDoctorForeignBinaries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	const sums = "aaaa  cairn_1.0.0_linux_amd64.tar.gz\n"
	foreign := func(p string) string {
		if filepath.Base(p) == "cairn-stop" || filepath.Base(p) == "cairn" {
			return "a plan9/mips binary"
		}
		return ""
	}
	root, bin := pluginWithBin(t, sums, sums)
	c := doctorCheck(en, engine.DoctorOptions{PluginRoot: root, BinDir: bin, Foreign: foreign}, "binary platform")
	if c == nil || c.OK || !strings.Contains(c.Detail, "cairn-stop is a plan9/mips binary") || !strings.Contains(c.Detail, "cairn is a plan9/mips binary") ||
		strings.Contains(c.Detail, "cairn-mcp") || !strings.HasPrefix(c.Fix, "make -C '"+root+"' build") {
		t.Fatalf("checkout: doctor says %+v", c)
	}
	if c := doctorCheck(en, engine.DoctorOptions{PluginRoot: root, BinDir: bin, Foreign: func(string) string { return "" }}, "binary platform"); c == nil || !c.OK {
		t.Fatalf("this machine's binaries: doctor says %+v", c)
	}

	// The fix runs what the launcher finds wanting by running it, never a hook (run by hand, it
	// acts on the project's workflow): cairn where the set lacks it, which the launcher then
	// installs, or a foreign cairn-mcp; a foreign hook alone, the session's own run of it.
	for _, tc := range []struct {
		name     string
		binaries []string
		foreign  string
		fix      string
	}{
		{"a set without cairn", []string{"cairn-mcp", "cairn-session-start", "cairn-stop", "cairn-event"}, "cairn-stop", "launch' cairn version ("},
		{"a foreign cairn-mcp", []string{"cairn-mcp", "cairn-session-start", "cairn-stop", "cairn-event", "cairn"}, "cairn-mcp", "launch' cairn-mcp </dev/null ("},
		{"a foreign hook", []string{"cairn-mcp", "cairn-session-start", "cairn-stop", "cairn-event", "cairn"}, "cairn-stop", "start a new session: when it runs cairn-stop,"},
	} {
		data, set := dataSet(t, sums, tc.binaries...)
		foreign := func(p string) string {
			if filepath.Base(p) == tc.foreign {
				return "a plan9/mips binary"
			}
			return ""
		}
		c = doctorCheck(en, engine.DoctorOptions{PluginRoot: root, BinDir: set, Foreign: foreign}, "binary platform")
		if c == nil || c.OK || !strings.Contains(c.Fix, tc.fix) || strings.HasPrefix(tc.fix, "launch") && !strings.HasPrefix(c.Fix, "CLAUDE_PLUGIN_DATA='"+data+"' sh '"+root+"/hooks/") ||
			strings.Contains(c.Fix, "rm ") || !strings.Contains(c.Fix, "shared") {
			t.Errorf("data set, %s: doctor says %+v", tc.name, c)
		}
	}
}

// TestDoctorStampReadAsTheLauncher: hooks/launch reads both files line by line, each line
// ending in a newline, and hooks/install writes the stamp that way: a checksums file without
// its last newline matches such a stamp.
func TestDoctorStampReadAsTheLauncher(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	root, bin := pluginWithBin(t, "aaaa  cairn_1.0.0_linux_amd64.tar.gz", "aaaa  cairn_1.0.0_linux_amd64.tar.gz\n")
	if c := doctorCheck(en, engine.DoctorOptions{PluginRoot: root, BinDir: bin}, "binary stamp"); c == nil || !c.OK {
		t.Fatalf("doctor says %+v", c)
	}
}

// TestDoctorDamagedState: snapshot and journal both unreadable is a failing check whose one
// fix line sends nobody to delete anything; doctor itself moves nothing.
func TestDoctorDamagedState(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.startDamaged()
	c := doctorCheck(e.open("s2"), engine.DoctorOptions{}, "workflow state")
	if c == nil || c.OK || !strings.Contains(c.Detail, "journal/apex-dmg.jsonl") || c.Fix == "" || strings.Contains(c.Fix, "\n") ||
		strings.Contains(c.Fix, "delete") || strings.Contains(c.Fix, "rm ") || strings.Contains(c.Fix, "remove") {
		t.Fatalf("doctor says %+v", c)
	}
	if data, err := os.ReadFile(filepath.Join(en.StateDir(), "workflow-state.json")); err != nil || string(data) != "{{{" {
		t.Fatalf("doctor changed the snapshot: %q, %v", data, err)
	}
	// The state directory is not committed, so there is seldom a backup: the one step is a
	// command that keeps the files aside, after which a new workflow can start. Before, the
	// fix offered a backup or a look at them, and no command got anyone going again.
	runFix := func(c *engine.Check) {
		t.Helper()
		_, cmd, _ := strings.Cut(c.Fix, ": ")
		if out, err := exec.Command("sh", "-c", cmd).CombinedOutput(); err != nil {
			t.Fatalf("the fix %q fails: %v %s", c.Fix, err, out)
		}
	}
	runFix(c)
	kept := func() []string {
		t.Helper()
		names, _ := filepath.Glob(filepath.Join(en.StateDir(), "quarantine", "apex-dmg.jsonl*"))
		var out []string
		for _, n := range names {
			data, err := os.ReadFile(n)
			noErr(t, err)
			out = append(out, string(data))
		}
		return out
	}
	if got := kept(); len(got) != 1 || got[0] != "not a journal\n" {
		t.Fatalf("the fix %q did not keep the journal in quarantine/: %q", c.Fix, got)
	}
	// The same id started again and damaged again: its fix keeps both journals. Before, the
	// second mv replaced the first one kept in quarantine/.
	e.clock.Add(time.Minute)
	must(e.open("s2").Start(engine.StartRequest{Type: "apex", Context: "again", WorkflowID: "apex-dmg"}))(t)
	damage(en, "apex-dmg")
	os.WriteFile(filepath.Join(en.StateDir(), "journal", "apex-dmg.jsonl"), []byte("not a journal either\n"), 0o600)
	runFix(doctorCheck(e.open("s2"), engine.DoctorOptions{}, "workflow state"))
	if got := kept(); !slices.Equal(got, []string{"not a journal\n", "not a journal either\n"}) {
		t.Fatalf("quarantine/ keeps %q, want both damaged journals", got)
	}
	must(e.open("s2").Start(engine.StartRequest{Type: "apex", Context: "anew"}))(t)

	// A damaged snapshot the journal can rebuild: the next command repairs it, which doctor says.
	e = newEnv(t)
	en = e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "fragile", WorkflowID: "apex-snap"}))(t)
	os.WriteFile(filepath.Join(en.StateDir(), "workflow-state.json"), []byte("{{{"), 0o600)
	c = doctorCheck(e.open("s2"), engine.DoctorOptions{}, "workflow state")
	if c == nil || c.OK || !strings.Contains(c.Detail, "journal") || c.Fix == "" || strings.Contains(c.Fix, "delete") {
		t.Fatalf("rebuildable: doctor says %+v", c)
	}

	// A damaged snapshot with no journal to rebuild it from: doctor said every check passed,
	// and the next command set the file aside and answered "No active workflow". It now says
	// so before anything is moved, and the step it gives keeps the file.
	e = newEnv(t)
	en = e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "fragile", WorkflowID: "apex-lone"}))(t)
	noErr(t, os.RemoveAll(filepath.Join(en.StateDir(), "journal")))
	noErr(t, os.WriteFile(filepath.Join(en.StateDir(), "workflow-state.json"), []byte("{{{"), 0o600))
	c = doctorCheck(e.open("s2"), engine.DoctorOptions{}, "workflow state")
	if c == nil || c.OK || !strings.Contains(c.Detail, "workflow-state.json is damaged") || !strings.Contains(c.Detail, "no journal") ||
		!strings.Contains(c.Fix, "cairn status: it keeps") || strings.Contains(c.Fix, "delete") || strings.Contains(c.Fix, "rm ") {
		t.Fatalf("no journal: doctor says %+v", c)
	}
	e.open("s2").Resume(engine.ResumeOptions{Person: true}) // cairn status, the fix
	if kept, _ := filepath.Glob(filepath.Join(en.StateDir(), "quarantine", "workflow-state.json*")); len(kept) != 1 {
		t.Fatalf("after cairn status, quarantine/ holds %q, want the damaged snapshot", kept)
	}

	// A record that reads as JSON but not as a workflow (a hand edit): resume_check sends the
	// user to cairn doctor, which said every state check passed. It now says what is wrong,
	// and its step, the field corrected, gets the workflow back.
	e, en = startApexWith(t, "odd")
	replaceInSlot(t, en, 1, `"context":"odd"`, `"context":5`)
	c = doctorCheck(e.open("s2"), engine.DoctorOptions{}, "workflow state")
	if c == nil || c.OK || !strings.Contains(c.Detail, "does not read as a workflow record: ") || !strings.Contains(c.Detail, "context") ||
		!strings.HasPrefix(c.Fix, "correct the field the error names in ") || strings.Contains(c.Fix, "delete") {
		t.Fatalf("a record that does not decode: doctor says %+v", c)
	}
	replaceInSlot(t, en, 2, `"context":5`, `"context":"odd"`)
	if r := e.open("s2").Resume(engine.ResumeOptions{Person: true}); r.Context != "odd" {
		t.Fatalf("after the fix, status reads %+v", r)
	}

	// Sound state: no such check fails.
	e = newEnv(t)
	en = e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "fine", WorkflowID: "apex-ok"}))(t)
	for _, c := range en.Doctor(engine.DoctorOptions{}) {
		if !c.OK && c.Name != "auto-memory (L2)" {
			t.Fatalf("sound state: %+v", c)
		}
	}
}

// TestDoctorMissingBinary: a missing binary's fix is the one command that puts this plugin's
// set back where it is missing, never a bare make build, which in a project's directory runs
// that project's own Makefile.
func TestDoctorMissingBinary(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	const sums = "aaaa  cairn_1.0.0_linux_amd64.tar.gz\n"
	root, bin := pluginWithBin(t, sums, sums)
	os.Remove(filepath.Join(bin, "cairn-stop"))
	if c := doctorCheck(en, engine.DoctorOptions{PluginRoot: root, BinDir: bin}, "binary cairn-stop"); c == nil || c.OK || c.Fix != "make -C '"+root+"' build" {
		t.Fatalf("a checkout's bin/: doctor says %+v", c)
	}
	// The launcher's set in the data dir: the launcher installs a set lacking any binary for
	// cairn, so the fix runs no hook by hand.
	data, set := dataSet(t, "-", "cairn-mcp", "cairn-session-start", "cairn-event", "cairn")
	c := doctorCheck(en, engine.DoctorOptions{PluginRoot: root, BinDir: set}, "binary cairn-stop")
	if c == nil || c.OK || !strings.HasPrefix(c.Fix, "CLAUDE_PLUGIN_DATA='"+data+"' sh '"+root+"/hooks/launch' cairn version (") || strings.Contains(c.Fix, "rm ") {
		t.Fatalf("data set: doctor says %+v", c)
	}
}

// TestDoctorEmptyBinary: a power loss soon after an install can leave a binary empty, which
// the launcher takes for no binary (it would run as an empty script, doing nothing) and
// installs anew only where it is the one it runs. doctor passed it as there; it fails it as
// a missing one, with the step that puts the set back.
func TestDoctorEmptyBinary(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	const sums = "aaaa  cairn_1.0.0_linux_amd64.tar.gz\n"
	root, _ := pluginWithBin(t, sums, "-")
	data, set := dataSet(t, sums, "cairn-mcp", "cairn-session-start", "cairn-stop", "cairn-event", "cairn")
	if err := os.WriteFile(filepath.Join(set, "cairn-stop"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	c := doctorCheck(en, engine.DoctorOptions{PluginRoot: root, BinDir: set}, "binary cairn-stop")
	if c == nil || c.OK || !strings.Contains(c.Detail, "empty") ||
		!strings.HasPrefix(c.Fix, "CLAUDE_PLUGIN_DATA='"+data+"' sh '"+root+"/hooks/launch' cairn version (") || strings.Contains(c.Fix, "rm ") {
		t.Fatalf("an empty binary: doctor says %+v", c)
	}
	if c := doctorCheck(en, engine.DoctorOptions{PluginRoot: root, BinDir: set}, "binary cairn-mcp"); c == nil || !c.OK {
		t.Errorf("a whole binary beside it: doctor says %+v", c)
	}
}

// TestDoctorMemoryNotFound: a memory directory that cannot be named gets the one step that
// names it again, never "check that it exists" (there is none to check) nor "or that
// auto-memory is meant to be off" (the check passes when it is). A repository's
// autoMemoryDirectory that Cairn refuses is no auto-memory switched off (Claude Code writes
// there): it passed as "Auto-memory is off", and now fails with the step that lets Cairn in.
func TestDoctorMemoryNotFound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		set   map[string]string
		files map[string]string // under the project
		fix   string
	}{
		{"no home", map[string]string{"HOME": ""}, nil, "set HOME as Claude Code has it: the memory directory is named from it; Cairn retries L2 lines after each turn"},
		{"bad override", map[string]string{"CAIRN_MEMORY_DIR": "~nobody/mem"}, nil, "give CAIRN_MEMORY_DIR an absolute path; Cairn retries L2 lines after each turn"},
		{"relative config dir", map[string]string{"CLAUDE_CONFIG_DIR": "rel/dir"}, nil, "give CLAUDE_CONFIG_DIR an absolute path; Cairn retries L2 lines after each turn"},
		{"relative home", map[string]string{"HOME": "."}, nil, "give HOME an absolute path; Cairn retries L2 lines after each turn"},
		{"a repository's directory refused", nil, map[string]string{".claude/settings.json": `{"autoMemoryDirectory": "/elsewhere/memory"}`},
			"set autoMemoryDirectory in your user settings, or CAIRN_MEMORY_DIR, to use that directory; Cairn retries L2 lines after each turn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			for k, v := range tc.set {
				e.vars[k] = v
			}
			writeFiles(t, e.project, tc.files)
			c := doctorCheck(e.open("s1"), engine.DoctorOptions{}, "auto-memory (L2)")
			if c == nil || c.OK || c.Fix != tc.fix || strings.Contains(c.Detail, "is off") {
				t.Fatalf("doctor says %+v, want the fix %q", c, tc.fix)
			}
		})
	}
}

// TestDoctorMemoryNotFoundLinesComeLater: of a memory directory that cannot be named, doctor
// said "L2 lines are skipped meanwhile". They are not: once it is named again, the Stop after
// the next turn writes the lines of the moves made meanwhile (read from the journal). The step
// says so, as it does where the directory is named.
func TestDoctorMemoryNotFoundLinesComeLater(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.vars["HOME"] = ""
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "unnamed memory"}))(t)
	must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
	c := doctorCheck(en, engine.DoctorOptions{}, "auto-memory (L2)")
	e.vars["HOME"] = e.home
	must(e.open("s1").Stop(engine.StopInput{SessionID: "s1"}))(t)
	if mem := e.readMemory("MEMORY.md"); !strings.Contains(mem, "analyze completed") {
		t.Fatalf("the line of the move made while HOME was unset was not written once it was set: MEMORY.md = %q", mem)
	}
	if c == nil || c.OK || strings.Contains(c.Fix, "skipped") || !strings.Contains(c.Fix, "Cairn retries L2 lines after each turn") {
		t.Errorf("doctor says %+v, want the step saying the lines are retried", c)
	}
}

// TestDoctorStaleTemps: temp files interrupted writes left are a failed check whose fix is one
// command that removes them (they hold no state of record) and nothing else: before, the fix
// line only explained, with no step.
func TestDoctorStaleTemps(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "temps", WorkflowID: "apex-tmp"}))(t)
	must(en.SaveCheckpoint("plan", []byte(`{"a":1}`)))(t)
	dir := en.StateDir()
	old := e.clock.Now().Add(-time.Hour)
	var stale []string
	noErr(t, os.MkdirAll(filepath.Join(dir, engine.KeptTasksDir), 0o700))
	for _, p := range []string{".tmp-workflow-state.json-1", "checkpoints/.tmp-plan.json-2", "journal/.tmp-apex-tmp.jsonl-3",
		engine.KeptTasksDir + "/.tmp-0000000000000000001-1.json-6"} {
		p = filepath.Join(dir, p)
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, old, old)
		stale = append(stale, p)
	}
	// The directory an archive is made under (archive/.tmp-archive-dir-*) is recovery's to
	// finish or remove, not a temp file: before, it was listed and the fix's rm failed on it.
	made := filepath.Join(dir, "archive", ".tmp-archive-dir-5")
	if err := os.MkdirAll(made, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(made, old, old)
	young := filepath.Join(dir, "checkpoints", ".tmp-plan.json-4") // a write in flight
	if err := os.WriteFile(young, []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := doctorCheck(en, engine.DoctorOptions{}, "stale temp files")
	if c == nil || c.OK || strings.Contains(c.Detail, "-4") || strings.Contains(c.Detail, "archive-dir") {
		t.Fatalf("doctor says %+v", c)
	}
	_, cmd, ok := strings.Cut(c.Fix, ": ")
	if !ok {
		t.Fatalf("the fix names no command: %q", c.Fix)
	}
	if out, err := exec.Command("sh", "-c", cmd).CombinedOutput(); err != nil {
		t.Fatalf("the fix %q fails: %v %s", cmd, err, out)
	}
	for _, p := range stale {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("the fix %q left %s", cmd, p)
		}
	}
	for _, p := range []string{young, made, filepath.Join(dir, "workflow-state.json"), filepath.Join(dir, "checkpoints", "plan.json")} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("the fix %q removed %s: %v", cmd, p, err)
		}
	}
	if c := doctorCheck(en, engine.DoctorOptions{}, "stale temp files"); c == nil || !c.OK {
		t.Fatalf("after the fix doctor says %+v", c)
	}
}

// TestDoctorPluginFileOneFix: a plugin file that is missing or not valid JSON gets one fix
// that works where the plugin is: in a git checkout, the command that restores the file (run
// here, after which the check passes); elsewhere (Claude Code's copy of a marketplace
// install), the reinstall. Before, the fix offered both, neither as a command.
func TestDoctorPluginFileOneFix(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	root := filepath.Join(t.TempDir(), "plugin")
	files := map[string]string{".claude-plugin/plugin.json": `{"name":"cairn"}`, "hooks/hooks.json": `{"hooks":{}}`,
		".mcp.json": `{"mcpServers":{}}`, "skills/cairn/SKILL.md": "---\nname: cairn\n---\n"}
	for name, data := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opt := engine.DoctorOptions{PluginRoot: root}
	os.WriteFile(filepath.Join(root, ".mcp.json"), []byte("{"), 0o644)
	c := doctorCheck(en, opt, "plugin file .mcp.json")
	if c == nil || c.OK || c.Fix != "reinstall the plugin: claude plugin uninstall cairn@cairn && claude plugin install cairn@cairn" {
		t.Fatalf("a marketplace copy: doctor says %+v", c)
	}

	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(root, ".mcp.json"), []byte(files[".mcp.json"]), 0o644)
	git("init", "-q")
	git("add", ".")
	git("commit", "-qm", "plugin")
	os.WriteFile(filepath.Join(root, ".mcp.json"), []byte("{"), 0o644)
	os.Remove(filepath.Join(root, "hooks", "hooks.json"))
	for _, f := range []string{".mcp.json", "hooks/hooks.json"} {
		c := doctorCheck(en, opt, "plugin file "+f)
		if c == nil || c.OK {
			t.Fatalf("%s: doctor says %+v", f, c)
		}
		_, cmd, _ := strings.Cut(c.Fix, ": ")
		if out, err := exec.Command("sh", "-c", cmd).CombinedOutput(); err != nil {
			t.Fatalf("%s: the fix %q fails: %v %s", f, c.Fix, err, out)
		}
		if c := doctorCheck(en, opt, "plugin file "+f); c == nil || !c.OK {
			t.Fatalf("%s: after the fix doctor says %+v", f, c)
		}
	}
}

// TestDoctorLauncherFiles: without hooks/launch (or the install it sources, or the checksums it
// compares) every hook ended at once, saying nothing, and the MCP server did not start, and
// doctor passed every check; a launcher that is not executable stopped the MCP server alone
// (.mcp.json runs it with no shell). Each is a failed plugin file check with its one step, and
// without the checksums no stamp check sends the user to an install that cannot run.
func TestDoctorLauncherFiles(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("execute bits")
	}
	e := newEnv(t)
	en := e.open("s1")
	const sums = "aaaa  cairn_1.0.0_linux_amd64.tar.gz\n"
	for _, f := range []string{"hooks/launch", "hooks/install", "release/checksums.txt"} {
		root, bin := pluginWithBin(t, sums, sums)
		writeFiles(t, root, map[string]string{"hooks/launch": "#!/bin/sh\n", "hooks/install": "#!/bin/sh\n"})
		opt := engine.DoctorOptions{PluginRoot: root, BinDir: bin}
		if c := doctorCheck(en, opt, "plugin file "+f); c == nil || !c.OK {
			t.Fatalf("%s there: doctor says %+v", f, c)
		}
		os.Remove(filepath.Join(root, f))
		c := doctorCheck(en, opt, "plugin file "+f)
		if c == nil || c.OK || c.Fix != "reinstall the plugin: claude plugin uninstall cairn@cairn && claude plugin install cairn@cairn" {
			t.Errorf("%s missing: doctor says %+v", f, c)
		}
		if c := doctorCheck(en, opt, "binary stamp"); (c != nil) != (f != "release/checksums.txt") || c != nil && !c.OK {
			t.Errorf("%s missing: the stamp check says %+v", f, c)
		}
	}
	root, bin := pluginWithBin(t, sums, sums)
	writeFiles(t, root, map[string]string{"hooks/launch": "#!/bin/sh\n"})
	launch := filepath.Join(root, "hooks", "launch")
	os.Chmod(launch, 0o644)
	opt := engine.DoctorOptions{PluginRoot: root, BinDir: bin}
	c := doctorCheck(en, opt, "plugin file hooks/launch")
	if c == nil || c.OK || !strings.Contains(c.Detail, "not executable") || c.Fix != "chmod +x '"+launch+"'" {
		t.Fatalf("a launcher that is not executable: doctor says %+v", c)
	}
	if out, err := exec.Command("sh", "-c", c.Fix).CombinedOutput(); err != nil {
		t.Fatalf("the fix %q: %v %s", c.Fix, err, out)
	}
	if c := doctorCheck(en, opt, "plugin file hooks/launch"); c == nil || !c.OK {
		t.Errorf("after the fix doctor says %+v", c)
	}
}

// TestDoctorJournalNotAFile: a directory or symlink in the active workflow's journal's place
// leaves the snapshot readable but refuses every move; doctor, status and the resume report
// say so, with one step that discards nothing, instead of "ok" (or nothing at all).
func TestDoctorJournalNotAFile(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"directory", "symlink"} {
		t.Run(kind, func(t *testing.T) {
			e := newEnv(t)
			en := e.open("s1")
			must(en.Start(engine.StartRequest{Type: "apex", Context: "in the way", WorkflowID: "apex-way"}))(t)
			jf := filepath.Join(en.StateDir(), "journal", "apex-way.jsonl")
			os.Remove(jf)
			var err error
			if kind == "directory" {
				err = os.Mkdir(jf, 0o700)
			} else {
				outside := filepath.Join(t.TempDir(), "outside.jsonl")
				os.WriteFile(outside, nil, 0o600)
				err = os.Symlink(outside, jf)
			}
			if err != nil {
				t.Skip(err)
			}
			if _, err := e.open("s2").Transition(engine.TransitionRequest{To: "plan"}); err == nil {
				t.Fatal("a move went through with no journal to commit it to")
			}
			c := doctorCheck(e.open("s2"), engine.DoctorOptions{}, "workflow state")
			if c == nil || c.OK || !strings.Contains(c.Detail, jf) || !strings.Contains(c.Detail, "a "+kind+" is in its place") ||
				!strings.Contains(c.Fix, "move "+jf+" out of the state directory") || strings.Contains(c.Fix, "\n") ||
				strings.Contains(c.Fix, "delete") || strings.Contains(c.Fix, "rm ") || strings.Contains(c.Fix, "remove") {
				t.Fatalf("doctor says %+v", c)
			}
			// Status says so too, with the same step, not "continue"; the resume report says
			// what is wrong, and leaves the move to the user (its next step: cairn doctor).
			for _, opt := range []engine.ResumeOptions{{Person: true}, {Apply: true, ReportOnly: true}} {
				r := e.open("s2").Resume(opt)
				if w := strings.Join(r.Warnings, "\n"); !strings.Contains(w, "a "+kind+" is in its place") || strings.Contains(w, "move "+jf+" out of the state directory") != opt.Person {
					t.Errorf("%+v: warnings %q", opt, r.Warnings)
				}
				if !opt.Person && (strings.Contains(r.Next, "Continue phase") || !strings.Contains(r.Next, engine.ToolPrefix+"resume_check")) {
					t.Errorf("next %q", r.Next)
				}
			}
			if fi, err := os.Lstat(jf); err != nil || fi.Mode().IsRegular() {
				t.Fatalf("doctor or a read changed what is in the journal's place: %v, %v", fi, err)
			}
		})
	}
}

// TestDoctorPhaseNotInDefinition: the active workflow's phase, removed from its definition
// since, or its type's definition gone (the file removed, or renamed to another type), is said
// by doctor as by resume, not "workflow definitions: ok", with the step that lets it move.
func TestDoctorPhaseNotInDefinition(t *testing.T) {
	t.Parallel()
	const review = "---\nname: review\ndescription: review\nphases: [draft, check, done]\ntransitions: {draft: [check], check: [done]}\nterminal: [done]\n---\nbody\n"
	for _, tc := range []struct{ name, edited, want, fix string }{
		{"phase renamed", strings.ReplaceAll(review, "draft", "write"), `phase "draft" is not a phase of the review definition`, filepath.Join("workflows", "review.md") + ": the workflow cannot move"},
		{"type renamed", strings.Replace(review, "name: review", "name: audit", 1), `no workflow definition "review" is loaded`, "review.md"},
		{"file removed", "", `no workflow definition "review" is loaded`, "review.md"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.write(".claude/workflows/review.md", review)
			must(e.open("s1").Start(engine.StartRequest{Type: "review", Context: "renamed"}))(t)
			if tc.edited == "" {
				if err := os.Remove(filepath.Join(e.project, ".claude", "workflows", "review.md")); err != nil {
					t.Fatal(err)
				}
			} else {
				e.write(".claude/workflows/review.md", tc.edited)
			}
			c := doctorCheck(e.open("s2"), engine.DoctorOptions{}, "workflow definitions")
			if c == nil || c.OK || !strings.Contains(c.Detail, tc.want) || !strings.Contains(c.Fix, tc.fix) {
				t.Fatalf("doctor: %+v", c)
			}
		})
	}
}

// TestDoctorDoesNotReadAHealthyJournal: with the snapshot readable, doctor's state check asks
// (which says nothing when all is well) asks only whether each journal is a file in its place,
// which every change needs: it does not read
// a long workflow's history, active and sealed, so its cost does not grow with that history.
func TestDoctorDoesNotReadAHealthyJournal(t *testing.T) {
	cost := func(rounds int) (uint64, int64) {
		e := newEnv(t)
		en := e.open("s1")
		must(en.Start(engine.StartRequest{Type: "apex", Context: "long", WorkflowID: "apex-long"}))(t)
		for i := range rounds {
			must(en.SetVars(map[string]string{"WF_BIG": fmt.Sprintf("%d %s", i, strings.Repeat("b", 50<<10))}))(t)
		}
		var journal int64
		filepath.Walk(filepath.Join(en.StateDir(), "journal"), func(_ string, fi os.FileInfo, err error) error {
			if err == nil && fi.Mode().IsRegular() {
				journal += fi.Size()
			}
			return nil
		})
		doctor := e.open("s1")
		var c *engine.Check
		n := alloctest.Bytes(func() { c = doctorCheck(doctor, engine.DoctorOptions{}, "workflow state") })
		if c != nil {
			t.Fatalf("doctor's state check: %+v, want nothing to say", c)
		}
		t.Logf("doctor with a %d-byte journal allocated %d bytes", journal, n)
		return n, journal
	}
	short, shortJournal := cost(5)
	long, longJournal := cost(60)
	if longJournal < 4*shortJournal || longJournal < 2<<20 {
		t.Fatalf("journals of %d and %d bytes: want the longer one sealed, many times the shorter", shortJournal, longJournal)
	}
	if slack := uint64(longJournal-shortJournal) / 4; long > short+slack {
		t.Errorf("doctor with a %d-byte journal allocated %d bytes, with a %d-byte one %d: want at most %d more", longJournal, long, shortJournal, short, slack)
	}
}

// TestDoctorMemoryIndexLeftAlone: a MEMORY.md Cairn leaves as it is (a symbolic link, a file
// over 4 MiB) keeps every L2 line and learning out of auto-memory, and every write says so;
// cairn doctor, the person's check, said "All checks passed". It now fails the check with the
// memory's own step.
func TestDoctorMemoryIndexLeftAlone(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		lay  func(t *testing.T, index string)
		fix  string
	}{
		{"link", func(t *testing.T, index string) {
			real := filepath.Join(t.TempDir(), "MEMORY.md")
			noErr(t, os.WriteFile(real, []byte("- mine\n"), 0o600))
			noErr(t, os.Symlink(real, index))
		}, "replace the link with a copy of the file it leads to; Cairn retries L2 lines after each turn"},
		{"read-only", func(t *testing.T, index string) {
			noErr(t, os.WriteFile(index, []byte("- mine\n"), 0o400))
		}, "make it writable (chmod u+w); Cairn retries L2 lines after each turn"},
		{"too large", func(t *testing.T, index string) {
			noErr(t, os.WriteFile(index, bytes.Repeat([]byte("x"), 5<<20), 0o600))
		}, "shorten it to under 4 MiB; Cairn retries L2 lines after each turn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			noErr(t, os.MkdirAll(e.memoryDir(), 0o700))
			tc.lay(t, filepath.Join(e.memoryDir(), "MEMORY.md"))
			c := doctorCheck(e.open("s1"), engine.DoctorOptions{}, "auto-memory index")
			if c == nil || c.OK || c.Fix != tc.fix || !strings.Contains(c.Detail, "MEMORY.md") {
				t.Fatalf("doctor says %+v, want the fix %q", c, tc.fix)
			}
		})
	}
	// A usable MEMORY.md, or none yet, passes.
	e := newEnv(t)
	if c := doctorCheck(e.open("s1"), engine.DoctorOptions{}, "auto-memory index"); c == nil || !c.OK {
		t.Fatalf("no MEMORY.md yet: doctor says %+v", c)
	}
}

// TestDoctorWindowsBinaries: on Windows the binaries are cairn-mcp.exe and the others (the
// release's zip, hooks/install), and Go reports no execute bits there: the set the launcher
// installs passes, where doctor looked for cairn-mcp and its x bits and failed every binary.
func TestDoctorWindowsBinaries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	const sums = "aaaa  cairn_1.0.0_windows_amd64.zip\n"
	root, _ := pluginWithBin(t, sums, sums)
	data, set := dataSet(t, sums)
	var asked []string
	foreign := func(p string) string { asked = append(asked, filepath.Base(p)); return "" }
	for _, b := range []string{"cairn-mcp", "cairn-session-start", "cairn-stop", "cairn-event", "cairn"} {
		if err := os.WriteFile(filepath.Join(set, b+".exe"), []byte("MZ"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opt := engine.DoctorOptions{PluginRoot: root, BinDir: set, Foreign: foreign, GOOS: "windows"}
	for _, b := range []string{"cairn-mcp", "cairn-session-start", "cairn-stop", "cairn-event"} {
		if c := doctorCheck(en, opt, "binary "+b); c == nil || !c.OK || c.Detail != filepath.Join(set, b+".exe") {
			t.Fatalf("binary %s: doctor says %+v", b, c)
		}
	}
	if c := doctorCheck(en, opt, "binary stamp"); c == nil || !c.OK {
		t.Fatalf("stamp: doctor says %+v", c)
	}
	if c := doctorCheck(en, opt, "binary platform"); c == nil || !c.OK || !slices.Contains(asked, "cairn.exe") || !slices.Contains(asked, "cairn-mcp.exe") {
		t.Fatalf("platform: doctor says %+v, read %v", c, asked)
	}
	// One missing: named as Windows names it, and said missing (the line named the path alone,
	// the same for a file there that cannot run).
	os.Remove(filepath.Join(set, "cairn-stop.exe"))
	if c := doctorCheck(en, opt, "binary cairn-stop"); c == nil || c.OK || c.Detail != filepath.Join(set, "cairn-stop.exe")+" is missing" || !strings.Contains(c.Fix, data) {
		t.Fatalf("missing: doctor says %+v", c)
	}
	// Elsewhere a file without x bits still fails: the launcher cannot exec it.
	os.WriteFile(filepath.Join(set, "cairn-stop"), []byte("#!/bin/sh\n"), 0o644)
	if c := doctorCheck(en, engine.DoctorOptions{PluginRoot: root, BinDir: set, GOOS: "linux"}, "binary cairn-stop"); c == nil || c.OK || c.Detail != filepath.Join(set, "cairn-stop")+" is not executable" {
		t.Fatalf("linux, not executable: doctor says %+v", c)
	}
	os.Remove(filepath.Join(set, "cairn-stop"))
	os.Mkdir(filepath.Join(set, "cairn-stop"), 0o755)
	if c := doctorCheck(en, engine.DoctorOptions{PluginRoot: root, BinDir: set, GOOS: "linux"}, "binary cairn-stop"); c == nil || c.OK || c.Detail != filepath.Join(set, "cairn-stop")+" is not a file" {
		t.Fatalf("linux, a directory: doctor says %+v", c)
	}
}

// TestDoctorWorkflowsDirUnreadable: .claude/workflows that is no directory (a file there)
// loads none of the user's definitions: doctor said "fix the files named (the others load
// fine)", of a directory, with no others loading. It says what to make of it.
func TestDoctorWorkflowsDirUnreadable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	wf := filepath.Join(e.project, ".claude", "workflows")
	writeFiles(t, filepath.Join(e.project, ".claude"), map[string]string{"workflows": "notes\n"})
	en := e.open("s1")
	c := doctorCheck(en, engine.DoctorOptions{}, "workflow definitions")
	if c == nil || c.OK || strings.Contains(c.Fix, "the others load fine") || !strings.Contains(c.Fix, wf) {
		t.Fatalf("doctor says %+v, want a step about %s itself", c, wf)
	}
}

// TestDefinitionsReadmeSkipped: a README.md beside the definitions (Markdown with no front
// matter) was parsed as a definition and warned about at every start and every command, with
// doctor failing. It is skipped without a warning, and doctor names it once, as fine. A file
// that opens with a definition key but no "---" is a definition whose front matter was
// forgotten, and is still reported.
func TestDefinitionsReadmeSkipped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	wf := filepath.Join(e.project, ".claude", "workflows")
	writeFiles(t, wf, map[string]string{
		"README.md": "# Our workflows\r\n\r\nname: is a key only in a definition's front matter\n",
		"ok.md":     "---\nphases: [a, b]\n---\n",
	})
	en := e.open("s1")
	c := doctorCheck(en, engine.DoctorOptions{}, "workflow definitions")
	if c == nil || !c.OK || !strings.Contains(c.Detail, "skipped as documentation (no front matter): README.md") {
		t.Fatalf("doctor says %+v, want ok naming README.md", c)
	}
	if w := en.Warnings(); len(w) != 0 {
		t.Fatalf("warnings %q, want none for a README", w)
	}
	writeFiles(t, wf, map[string]string{"forgot.md": "phases: [a, b]\n"})
	en = e.open("s1")
	if c := doctorCheck(en, engine.DoctorOptions{}, "workflow definitions"); c == nil || c.OK || !strings.Contains(c.Detail, "forgot.md:1: no YAML front matter") {
		t.Fatalf("doctor says %+v, want forgot.md reported", c)
	}
}

// TestDoctorNamesDuplicateDefinitionEntries: an entry listed twice under approvals (the
// second meant to be another phase, which so had no gate) loaded as if listed once, and
// doctor said "workflow definitions: ok". The definition still loads and works as before;
// doctor fails the check at the file's line, with the step.
func TestDoctorNamesDuplicateDefinitionEntries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	wf := filepath.Join(e.project, ".claude", "workflows")
	writeFiles(t, wf, map[string]string{"rev.md": "---\nphases: [draft, review, deploy, done]\napprovals: [review, review]\n---\n"})
	en := e.open("s1")
	c := doctorCheck(en, engine.DoctorOptions{}, "workflow definitions")
	want := filepath.Join(wf, "rev.md") + `:3: approvals lists phase "review" twice: remove one, or name the phase you meant`
	if c == nil || c.OK || !strings.Contains(c.Detail, want) || c.Fix == "" {
		t.Fatalf("doctor says %+v, want a failure naming %q", c, want)
	}
	if d, ok := en.Definition("rev"); !ok || !d.IsGate("review") {
		t.Fatalf("rev: %+v, %v; want it loaded as before", d, ok)
	}
	if w := en.Warnings(); len(w) != 0 {
		t.Fatalf("warnings %q, want none: the definition loads", w)
	}
}

// TestDoctorNamesAGateAWayPassesBy: "draft: [review, deploy]" with the gate on review lets a
// workflow go draft -> deploy -> done with no approval, and doctor said only that the
// definitions were ok. Such a gate may be meant (an optional one), so the definition loads
// and the check passes, naming the way that enters no gate.
func TestDoctorNamesAGateAWayPassesBy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeFiles(t, filepath.Join(e.project, ".claude", "workflows"), map[string]string{
		"rev.md": "---\nphases: [draft, review, deploy, done]\ntransitions: {draft: [review, deploy], review: [deploy], deploy: [done]}\napprovals: [review]\n---\n",
	})
	en := e.open("s1")
	c := doctorCheck(en, engine.DoctorOptions{}, "workflow definitions")
	const want = "rev completes with no approval by draft -> deploy -> done, which enters no gate (review)"
	if c == nil || !c.OK || !strings.Contains(c.Detail, want) {
		t.Fatalf("doctor says %+v, want ok, naming %q", c, want)
	}
}

// TestDefinitionWarningsNameAnUnseenFileName: a definition file whose name holds a
// zero-width space was named with it dropped in the warnings at session start and on the
// command line ("x.md" for "x\u200b.md", a file that is not there); doctor showed '?'. Each
// names it with the character escaped.
func TestDefinitionWarningsNameAnUnseenFileName(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	wf := filepath.Join(e.project, ".claude", "workflows")
	writeFiles(t, wf, map[string]string{"x\u200b.md": "---\nphases: [a, b]\nbogus: 1\n---\n", "y\u202e.MD": "---\nphases: [a, b]\n---\n"})
	en := e.open("s1")
	en.Definitions()
	got := strings.Join(en.Warnings(), "\n")
	for _, want := range []string{
		"workflow definition " + filepath.Join(wf, `x\u200b.md`) + `:3: unknown key "bogus"`,
		"workflow definition " + filepath.Join(wf, `y\u202e.MD`) + `: not read: Cairn reads only files ending in .md, in lower case; rename it to y\u202e.md`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings:\n%s\nwant one saying %q", got, want)
		}
	}
}

// TestDoctorShowsDoubtsBesideBrokenDefinitions: with one definition broken, doctor named it
// and not the doubts of the others (a phase listed twice under approvals): the person fixed
// the broken one, ran doctor again, and only then learnt of the next. It names both at once.
func TestDoctorShowsDoubtsBesideBrokenDefinitions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	wf := filepath.Join(e.project, ".claude", "workflows")
	writeFiles(t, wf, map[string]string{
		"broken.md": "---\nphases: [a, b\n---\n",
		"rev.md":    "---\nphases: [draft, review, done]\napprovals: [review, review]\n---\n",
	})
	c := doctorCheck(e.open("s1"), engine.DoctorOptions{}, "workflow definitions")
	for _, want := range []string{filepath.Join(wf, "broken.md") + ":2: front matter", filepath.Join(wf, "rev.md") + `:3: approvals lists phase "review" twice`} {
		if c == nil || c.OK || !strings.Contains(c.Detail, want) {
			t.Errorf("doctor says %+v, want a failure naming %q", c, want)
		}
	}
}

// TestDoctorNamesAnUnseenDocumentationFile: a README beside the definitions whose name holds a
// zero-width space was named "READ?ME.md" by doctor, a file that is not there. It is named
// with the character escaped, as the warnings about definitions name such files.
func TestDoctorNamesAnUnseenDocumentationFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeFiles(t, filepath.Join(e.project, ".claude", "workflows"), map[string]string{"READ\u200bME.md": "# Our workflows\n"})
	c := doctorCheck(e.open("s1"), engine.DoctorOptions{}, "workflow definitions")
	if want := `skipped as documentation (no front matter): READ\u200bME.md`; c == nil || !c.OK || !strings.Contains(c.Detail, want) {
		t.Fatalf("doctor says %+v, want ok naming %q", c, want)
	}
}

// TestDoctorKeepsItsNotesBesideFailures: the notes of the passing line (a README skipped as
// documentation, a gate a way passes by) vanished from doctor as soon as another definition
// had a doubt or did not load: the person fixed that and learnt of the gateless way only on
// the next run, or never (a README that was meant as a definition). They stay beside the
// failure.
func TestDoctorKeepsItsNotesBesideFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, file, body string }{
		{"doubt", "dup.md", "---\nphases: [a, b]\napprovals: [a, a]\n---\n"},
		{"broken", "broken.md", "---\nphases: [a, b\n---\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			writeFiles(t, filepath.Join(e.project, ".claude", "workflows"), map[string]string{
				"README.md": "# Our workflows\n",
				"rev.md":    "---\nphases: [draft, review, deploy, done]\ntransitions: {draft: [review, deploy], review: [deploy], deploy: [done]}\napprovals: [review]\n---\n",
				tc.file:     tc.body,
			})
			c := doctorCheck(e.open("s1"), engine.DoctorOptions{}, "workflow definitions")
			for _, want := range []string{tc.file, "skipped as documentation (no front matter): README.md", "rev completes with no approval by draft -> deploy -> done"} {
				if c == nil || c.OK || !strings.Contains(c.Detail, want) {
					t.Errorf("doctor says %+v, want a failure that also says %q", c, want)
				}
			}
		})
	}
}

// TestDoctorNamesALostPhaseBesideBrokenDefinitions: with another definition broken, doctor
// named only that file, not that the active workflow's phase was gone from its definition
// (the workflow cannot move): the person fixed the broken file, ran doctor again, and only
// then learnt why the workflow was stuck. Both are named, with both steps.
func TestDoctorNamesALostPhaseBesideBrokenDefinitions(t *testing.T) {
	t.Parallel()
	const review = "---\nname: review\nphases: [draft, check, done]\ntransitions: {draft: [check], check: [done]}\n---\n"
	e := newEnv(t)
	e.write(".claude/workflows/review.md", review)
	must(e.open("s1").Start(engine.StartRequest{Type: "review", Context: "renamed"}))(t)
	e.write(".claude/workflows/review.md", strings.ReplaceAll(review, "draft", "write"))
	e.write(".claude/workflows/broken.md", "---\nphases: [a, b\n---\n")
	c := doctorCheck(e.open("s2"), engine.DoctorOptions{}, "workflow definitions")
	for _, want := range []string{"broken.md:2: front matter", `phase "draft" is not a phase of the review definition`} {
		if c == nil || c.OK || !strings.Contains(c.Detail, want) {
			t.Errorf("doctor says %+v, want a failure naming %q", c, want)
		}
	}
	if want := filepath.Join("workflows", "review.md") + ": the workflow cannot move"; c == nil || !strings.Contains(c.Fix, want) || !strings.Contains(c.Fix, "fix the files named") {
		t.Errorf("doctor's step %+v, want both steps, %q among them", c, want)
	}
}

// TestDoctorActiveTypesDefinitionBroken: the active workflow's own definition file there but
// not loading was told "fix the files named" and then "restore the definition of type apex"
// (the same file), a step that reads as replacing the person's file. The step is to fix it.
func TestDoctorActiveTypesDefinitionBroken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "x"}))(t)
	file := filepath.Join(e.project, ".claude", "workflows", "apex.md")
	writeFiles(t, filepath.Join(e.project, ".claude", "workflows"), map[string]string{"apex.md": "---\nname: apex\nphases: [analyze, plan\n---\nbody\n"})
	c := doctorCheck(e.open("s1"), engine.DoctorOptions{}, "workflow definitions")
	if c == nil || c.OK || strings.Contains(c.Fix, "restore") || !strings.HasPrefix(c.Fix, "fix the files named (the others load fine)") || !strings.Contains(c.Fix, file) {
		t.Fatalf("doctor says %+v, want the one step to fix %s", c, file)
	}
	// Removed, the built-in apex loads again.
	os.Remove(file)
	if c := doctorCheck(e.open("s1"), engine.DoctorOptions{}, "workflow definitions"); c == nil || !c.OK {
		t.Fatalf("removed: doctor says %+v", c)
	}
}

// A CAIRN_ARCHIVE_RETENTION that does not read as a count (not a number, negative) was
// passed over without a word: cairn doctor names it with the step, as it names a bad
// config.json; a good one (0 keeps every archive), or none, is no failure.
func TestDoctorNamesABadArchiveRetention(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"abc", "0", "-3", "5", ""} {
		e := newEnv(t)
		e.vars["CAIRN_ARCHIVE_RETENTION"] = v
		var got *engine.Check
		for _, c := range e.open("s1").Doctor(engine.DoctorOptions{}) {
			if strings.Contains(c.Detail, "CAIRN_ARCHIVE_RETENTION") {
				got = &c
			}
		}
		bad := v != "5" && v != "" && v != "0"
		switch {
		case !bad && got != nil && !(v == "0" && got.OK && got.Detail == "every archive is kept (CAIRN_ARCHIVE_RETENTION is 0)"):
			t.Errorf("%q: doctor says %+v, want nothing", v, *got)
		case bad && (got == nil || got.OK || !strings.Contains(got.Fix, "0 keeps every one")):
			t.Errorf("%q: doctor says %+v, want a failed check with the step", v, got)
		}
	}
}
