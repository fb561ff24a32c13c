package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/project"
)

// twoProjectsOneMemory makes two projects Claude Code gives one memory directory: their
// paths differ only in a character it turns into "-" (two worktrees of one repository share
// it alike), each with its own Cairn state.
func twoProjectsOneMemory(t *testing.T) (a, b *env) {
	t.Helper()
	a, b = newEnv(t), newEnv(t)
	base := t.TempDir()
	a.project, b.project, b.home = filepath.Join(base, "my-proj"), filepath.Join(base, "my.proj"), a.home
	for _, e := range []*env{a, b} {
		if err := os.MkdirAll(filepath.Join(e.project, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		e.vars = map[string]string{"HOME": e.home, "CLAUDE_PROJECT_DIR": e.project}
	}
	if a.memoryDir() != b.memoryDir() {
		t.Fatalf("the projects' memory directories differ: %s, %s", a.memoryDir(), b.memoryDir())
	}
	return a, b
}

// twoProjectsPlanning is twoProjectsOneMemory with a workflow in each moved to plan, a's
// ("first") before b's ("second"), and their engines.
func twoProjectsPlanning(t *testing.T) (a, b *env, ea, eb *engine.Engine) {
	t.Helper()
	a, b = twoProjectsOneMemory(t)
	ea, eb = a.open("s1"), b.open("s2")
	must(ea.Start(engine.StartRequest{Type: "apex", Context: "first"}))(t)
	must(ea.Transition(engine.TransitionRequest{To: "plan"}))(t)
	must(eb.Start(engine.StartRequest{Type: "apex", Context: "second"}))(t)
	must(eb.Transition(engine.TransitionRequest{To: "plan"}))(t)
	return a, b, ea, eb
}

// stopsKeepMemory runs a Stop in each project in turn, which must write nothing: MEMORY.md
// and the topic file stay as the last move left them.
func stopsKeepMemory(t *testing.T, envs ...*env) {
	t.Helper()
	index, topic := envs[0].readMemory("MEMORY.md"), envs[0].readMemory("cairn-workflow.md")
	for i, e := range envs {
		if out := must(e.open("s1").Stop(engine.StopInput{}))(t); len(out.Wrote) > 0 || out.SystemMessage != "" {
			t.Errorf("Stop %d wrote %q (%q), want nothing", i+1, out.Wrote, out.SystemMessage)
		}
	}
	if got := envs[0].readMemory("MEMORY.md"); got != index {
		t.Errorf("MEMORY.md after the Stops:\n%s\nwant as the last move left it:\n%s", got, index)
	}
	if got := envs[0].readMemory("cairn-workflow.md"); got != topic {
		t.Errorf("the topic file after the Stops:\n%s\nwant as the last move left it:\n%s", got, topic)
	}
}

// Two projects that share a memory directory each write their lines into the one topic file.
// The other project's line, added onto the topic file as this Cairn marked it, is another
// Cairn's write, not a background memory writer's rewrite: a Stop does not put this project's
// older topic file back over it (which dropped the other project's lines, and each project's
// Stop then undid the other's after every turn); it keeps it, and marks it as what L2 holds.
func TestAnotherProjectsLineIsNotUndone(t *testing.T) {
	t.Parallel()
	a, b, ea, _ := twoProjectsPlanning(t)
	stopsKeepMemory(t, a, b, a)
	if got := a.readMemory("cairn-workflow.md"); !strings.Contains(got, "“first”") {
		t.Errorf("the topic file lost the first project's line:\n%s", got)
	}
	must(ea.Transition(engine.TransitionRequest{To: "analyze"}))(t)
	if got := a.topicLines(t); len(got) != 3 || !strings.Contains(got[1], "second") || !strings.Contains(got[2], "back from plan, analyzing “first”") {
		t.Errorf("the topic file's lines after the next move are %q, want both projects' in order", got)
	}
}

// The topic file was dropped (by a person, or a memory writer of Claude Code's), and the next
// move of one project wrote it anew, with its own line only: the other project's Stop took it
// for a rewrite and put back its own topic file, erasing that project's latest line; whose
// Stop then put back its own, and so on, every turn of either. A topic file in Cairn's own
// rendering that names another project's state directory is that project's write: it is kept.
func TestAnotherProjectsNewTopicFileIsNotUndone(t *testing.T) {
	t.Parallel()
	a, b, ea, eb := twoProjectsPlanning(t)
	if err := os.Remove(filepath.Join(a.memoryDir(), "cairn-workflow.md")); err != nil {
		t.Fatal(err)
	}
	must(ea.Transition(engine.TransitionRequest{To: "analyze"}))(t)
	stopsKeepMemory(t, b, a, b)
	must(eb.Transition(engine.TransitionRequest{To: "analyze"}))(t)
	if got := a.topicLines(t); len(got) != 3 || !strings.Contains(got[1], "analyzing “first”") || !strings.Contains(got[2], "analyzing “second”") {
		t.Errorf("the topic file's lines after b's next move are %q, want a's, then b's added", got)
	}
}

// The topic file says where the full state of its latest line is: the project's .claude/cairn
// (by its absolute path, which tells projects sharing the memory directory apart), or the
// directory CAIRN_STATE_DIR names. A project whose state is elsewhere, sharing the
// memory directory, writes onto the other's topic file as another Cairn, not as a rewrite that
// the other's Stop undoes.
func TestTopicFileNamesTheStateDirectory(t *testing.T) {
	t.Parallel()
	a, b := twoProjectsOneMemory(t)
	state := filepath.Join(t.TempDir(), "cairn-state")
	b.vars["CAIRN_STATE_DIR"] = state
	ea, eb := a.open("s1"), b.open("s2")
	must(ea.Start(engine.StartRequest{Type: "apex", Context: "first"}))(t)
	must(ea.Transition(engine.TransitionRequest{To: "plan"}))(t)
	if got := a.readMemory("cairn-workflow.md"); !strings.Contains(got, "its full state is in "+filepath.Join(a.project, ".claude", "cairn")+".") {
		t.Errorf("the topic file of a project's own state directory:\n%s", got)
	}
	must(eb.Start(engine.StartRequest{Type: "apex", Context: "second"}))(t)
	must(eb.Transition(engine.TransitionRequest{To: "plan"}))(t)
	topic := a.readMemory("cairn-workflow.md")
	if !strings.Contains(topic, "its full state is in "+state+".") || strings.Contains(topic, ".claude/cairn") {
		t.Errorf("the topic file of a state directory CAIRN_STATE_DIR names (%s):\n%s", state, topic)
	}
	stopsKeepMemory(t, a, b, a)
}

// A git worktree shares the repository's memory directory (Claude Code keys it on the main
// checkout) with every other checkout of it: in one that has no workflow, the last position
// memory holds may be another checkout's, whose state is not missing. The report does not tell
// the agent it is lost and to start the work over; in a project that shares its memory with no
// other, it still does.
func TestWorktreeWithoutStateIsNotToldAnothersStateIsMissing(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		shared bool // the repository has a linked worktree
		reader int  // 0: the main checkout reads, 1: the worktree
		bare   bool // the main repository is bare: its directory is the git directory
	}{{"in a new worktree", true, 1, false}, {"in the main checkout", true, 0, false}, {"in a lone checkout that lost its state", false, 0, false},
		{"in a bare repository", true, 0, true}, {"in a bare repository's worktree", true, 1, true}} {
		t.Run(c.name, func(t *testing.T) {
			main := newEnv(t)
			if c.bare {
				if err := os.Remove(filepath.Join(main.project, ".git")); err != nil {
					t.Fatal(err)
				}
			}
			wt := worktreeOf(t, main, c.shared)
			envs := []*env{main, wt}
			reader, writer := envs[c.reader], envs[1-c.reader]
			if !c.shared {
				writer = main
			}
			ew, er := writer.open("s1"), reader.open("s2")
			if ew.MemoryDir() != er.MemoryDir() {
				t.Fatalf("the memory directories differ: %s, %s", ew.MemoryDir(), er.MemoryDir())
			}
			must(ew.Start(engine.StartRequest{Type: "apex", Context: "the work"}))(t)
			must(ew.Transition(engine.TransitionRequest{To: "plan"}))(t)
			if !c.shared {
				if err := os.RemoveAll(filepath.Join(main.project, ".claude", "cairn")); err != nil {
					t.Fatal(err)
				}
			}
			r := reader.open("s3").Resume(engine.ResumeOptions{Apply: true})
			if r.Tier != "L2-only" || !strings.Contains(r.L2Line, "the work") {
				t.Fatalf("resume: tier %s, line %q", r.Tier, r.L2Line)
			}
			if another := strings.Contains(r.Next, "another worktree"); another != c.shared || strings.Contains(r.Next, "missing") == c.shared {
				t.Errorf("told %q", r.Next)
			}
		})
	}
}

// worktreeOf is a project beside main's that is a linked git worktree of it when linked (main
// then has a linked worktree; main is a bare repository when it has no .git), and a project of
// its own with no git repository when not: the same home, so the same memory directory when
// linked.
func worktreeOf(t *testing.T, main *env, linked bool) *env {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "feat")
	wt := &env{t: t, project: dir, home: main.home, clock: main.clock,
		vars: map[string]string{"HOME": main.home, "CLAUDE_PROJECT_DIR": dir}}
	if !linked {
		return wt
	}
	gitDir := filepath.Join(main.project, ".git")
	if !project.HasGit(main.project) {
		gitDir = main.project
	}
	link := filepath.Join(gitDir, "worktrees", "feat")
	for p, data := range map[string]string{
		filepath.Join(link, "commondir"): "../..\n",
		filepath.Join(link, "gitdir"):    filepath.Join(dir, ".git") + "\n",
		filepath.Join(dir, ".git"):       "gitdir: " + link + "\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return wt
}

// An ending memory holds, with none on record in this checkout, may be another worktree's
// when every worktree shares the memory: the SessionStart report says nothing of it, and
// resume_check's report (and cairn status) do not call it "the last one" here either.
func TestWorktreeIsNotToldAnothersEnding(t *testing.T) {
	t.Parallel()
	for _, reader := range []int{0, 1} { // 0: the main checkout reads, 1: the worktree
		t.Run([]string{"in the main checkout", "in a worktree"}[reader], func(t *testing.T) {
			main := newEnv(t)
			envs := []*env{main, worktreeOf(t, main, true)}
			ew := envs[1-reader].open("s1")
			must(ew.Start(engine.StartRequest{Type: "debug", Context: "the work"}))(t)
			must(ew.Complete("shipped"))(t)
			for _, opt := range []engine.ResumeOptions{{Apply: true, ReportOnly: true}, {Apply: true}, {Person: true}} {
				r := envs[reader].open("s2").Resume(opt)
				if r.Ended != "" || strings.Contains(r.Report, "ended") {
					t.Errorf("%+v: ended %q, report:\n%s", opt, r.Ended, r.Report)
				}
			}
		})
	}
}

// An autoMemoryDirectory in the user's settings gives every project one memory directory:
// in a project with no workflow of its own, the last position or ending memory holds may be
// another project's. The report does not tell the agent its state is missing, nor that its
// last workflow ended.
func TestUserMemoryDirectoryIsNotReadAsThisProjects(t *testing.T) {
	t.Parallel()
	for _, end := range []bool{false, true} {
		t.Run([]string{"a position", "an ending"}[boolIndex(end)], func(t *testing.T) {
			a, b := newEnv(t), newEnv(t)
			b.home = a.home
			b.vars["HOME"] = a.home
			settings := filepath.Join(a.home, ".claude", "settings.json")
			if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(settings, []byte(`{"autoMemoryDirectory": "~/mem"}`), 0o644); err != nil {
				t.Fatal(err)
			}
			ea, eb := a.open("s1"), b.open("s2")
			if ea.MemoryDir() != eb.MemoryDir() || ea.MemoryDir() != filepath.Join(a.home, "mem") {
				t.Fatalf("the memory directories: %s, %s", ea.MemoryDir(), eb.MemoryDir())
			}
			if end {
				must(ea.Start(engine.StartRequest{Type: "debug", Context: "the work"}))(t)
				must(ea.Complete("shipped"))(t)
			} else {
				must(ea.Start(engine.StartRequest{Type: "apex", Context: "the work"}))(t)
				must(ea.Transition(engine.TransitionRequest{To: "plan"}))(t)
			}
			for _, opt := range []engine.ResumeOptions{{Apply: true, ReportOnly: true}, {Apply: true}} {
				r := b.open("s3").Resume(opt)
				if strings.Contains(r.Next, "missing") || !end && !strings.Contains(r.Next, "another project's") || r.Ended != "" || strings.Contains(r.Report, "ended") {
					t.Errorf("%+v: next %q, ended %q, report:\n%s", opt, r.Next, r.Ended, r.Report)
				}
			}
		})
	}
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Two projects whose paths Claude Code names alike (my-proj, my.proj) share one memory
// directory, as every project does under a CAIRN_MEMORY_DIR set for all of them. In the one
// with no workflow, the last line memory holds is the other's: its report told the agent that
// this project's workflow state was missing and to start it again, and told the other's
// ending as this project's last. The topic file names the state directory of its latest line:
// a line of another's is told as one that may be another project's.
func TestCollidingProjectIsNotToldAnothersPositionAsItsOwn(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		set  func(a, b *env)
	}{
		{"paths Claude Code names alike", func(a, b *env) {}},
		{"one CAIRN_MEMORY_DIR", func(a, b *env) {
			dir := filepath.Join(t.TempDir(), "memory")
			a.vars["CAIRN_MEMORY_DIR"], b.vars["CAIRN_MEMORY_DIR"] = dir, dir
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := twoProjectsOneMemory(t)
			c.set(a, b)
			ea := a.open("s1")
			must(ea.Start(engine.StartRequest{Type: "apex", Context: "the other work"}))(t)
			must(ea.Transition(engine.TransitionRequest{To: "plan"}))(t)
			r := b.open("s2").Resume(engine.ResumeOptions{Apply: true})
			if r.Tier != "L2-only" || !strings.Contains(r.L2Line, "the other work") {
				t.Fatalf("resume: tier %s, line %q", r.Tier, r.L2Line)
			}
			if strings.Contains(r.Next, "missing") || !strings.Contains(r.Next, "another project shares that memory") {
				t.Errorf("told %q", r.Next)
			}
			if r := a.open("s4").Resume(engine.ResumeOptions{Apply: true}); r.Tier != "Full" {
				t.Errorf("the project's own workflow: tier %s", r.Tier)
			}
			must(ea.CompleteByPerson("done"))(t)
			if r := b.open("s3").Resume(engine.ResumeOptions{Apply: true}); r.Ended != "" {
				t.Errorf("told the other project's ending as this one's: %q", r.Ended)
			}
		})
	}
}

// The L2-only report of a project whose memory another shares has no workflow state behind
// it, as the plain L2-only one has not: it pointed to resume_check for details, which only
// tells the same again.
func TestSharedMemoryOnlyReportPointsToNoDetails(t *testing.T) {
	a, b := twoProjectsOneMemory(t)
	ea := a.open("s1")
	must(ea.Start(engine.StartRequest{Type: "apex", Context: "the other work"}))(t)
	must(ea.Transition(engine.TransitionRequest{To: "plan"}))(t)
	r := b.open("s2").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true})
	if r.Tier != "L2-only" || !strings.Contains(r.Next, "another project shares that memory") {
		t.Fatalf("resume: tier %s, next %q", r.Tier, r.Next)
	}
	if strings.Contains(r.Report, "Details:") {
		t.Errorf("report:\n%s", r.Report)
	}
}
