package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/engine"
)

// A change whose journal line fit but whose snapshot a file system out of inodes refused
// warned "revision 2 is saved in the journal, but cannot write workflow-state.json ...: its
// file system has no free inodes ...; the next write brings the snapshot up to date": no step,
// where every other full-disk text tells the agent to tell the user and not to make room
// itself. It says so now.
func TestStaleSnapshotOnAFullDiskTellsTheUser(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	st := filepath.Join(e.project, ".claude")
	noErr(t, os.MkdirAll(st, 0o700))
	durabletest.Mount(t, "tmpfs", st, "tmpfs", 0, "size=1m,nr_inodes=64,mode=0700", false)
	en := e.open("s1")
	must(en.Start(engine.StartRequest{Type: "apex", Context: "vars on a full disk"}))(t)
	durabletest.FillInodes(t, st)
	res, err := en.SetVars(map[string]string{"PLAN_PATH": "plans/001.md"})
	if err != nil {
		t.Fatalf("the journal line needs no new inode: %v", err)
	}
	var stale string
	for _, w := range res.Warnings {
		if strings.Contains(w, "saved in the journal") {
			stale = w
		}
	}
	if stale == "" {
		t.Fatalf("warnings %q: want the stale snapshot's", res.Warnings)
	}
	for _, want := range []string{"no free inodes", "tell the user", "do not delete or move files"} {
		if !strings.Contains(stale, want) {
			t.Errorf("warning %q: want %q", stale, want)
		}
	}
}

// resume_check on a state directory whose disk is full, with no workflow active, said
// "Nothing to resume; go on with the user's request" and nothing of the disk: access(2), all
// it asked, passes on a full disk, so the state counted as writable and the next start_workflow
// was refused. It warns that no change would be kept and says the disk is full, as it does
// with a workflow active.
func TestResumeWithNothingActiveOnAFullDisk(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		fill func(testing.TB, string) string
		said string
	}{
		{"data", durabletest.FillDisk, "the disk is full"},
		{"inodes", durabletest.FillInodes, "no free inodes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			st := filepath.Join(e.project, ".claude")
			noErr(t, os.MkdirAll(st, 0o700))
			durabletest.Mount(t, "tmpfs", st, "tmpfs", 0, "size=256k,nr_inodes=64,mode=0700", false)
			en := e.open("s1")
			must(en.Start(engine.StartRequest{Type: "apex", Context: "ended before the disk filled"}))(t)
			must(en.Archive("done"))(t)
			tc.fill(t, st)
			r := en.Resume(engine.ResumeOptions{Apply: true})
			if r.WorkflowID != "" {
				t.Fatalf("resumed %s", r.WorkflowID)
			}
			if !strings.Contains(r.Next, tc.said) || !strings.Contains(r.Next, "do not delete or move files") || !strings.Contains(strings.Join(r.Warnings, "\n"), tc.said) {
				t.Errorf("next %q, warnings %q: want %s said, and the step", r.Next, r.Warnings, tc.said)
			}
			if p := en.Resume(engine.ResumeOptions{Person: true}); !strings.Contains(p.Next, "free some") {
				t.Errorf("the person's next %q: want their step", p.Next)
			}
		})
	}
}
