package mcptools_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/engine"
)

// TestStateUnwritableStepIsTheUsers: a write the file system refuses (the disk full, the
// state directory read-only) is the user's to fix. The model read the store's words for a
// person, "free some space and try again", or no step at all; with a shell it could make room
// by deleting files. It is told to tell the user, not to delete or move files, and which call
// to make again.
func TestStateUnwritableStepIsTheUsers(t *testing.T) {
	for _, tc := range []struct {
		name             string
		readOnly, inodes bool
		said, unsaid     string // what the model is to tell the user, and not
	}{
		{name: "disk full", said: "the disk is full"},
		{name: "read-only", readOnly: true, said: "they can make the directory it names writable"},
		// Room for data, no free inode: not a full disk, which the user would not find.
		{name: "no free inode", inodes: true, said: "the file system of the directory it names has no free inodes", unsaid: "the disk is full"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t)
			if err := os.MkdirAll(p.state, 0o700); err != nil {
				t.Fatal(err)
			}
			durabletest.Mount(t, "tmpfs", p.state, "tmpfs", 0, "size=256k,nr_inodes=64,mode=0700", false)
			if _, err := p.other(t, "seed").Start(engine.StartRequest{Type: "apex", Context: "full"}); err != nil {
				t.Fatal(err)
			}
			if tc.readOnly {
				durabletest.Mount(t, p.state, p.state, "", syscall.MS_BIND, "", true)
			} else if tc.inodes {
				durabletest.FillInodes(t, p.state)
			} else {
				durabletest.FillDisk(t, p.state)
			}
			c := stdioClient(t, p, protocol)
			res := mustFail(t, c, "save_checkpoint", `{"name":"plan","data":{"a":"`+strings.Repeat("x", 8<<10)+`"}}`,
				"Tell the user: "+tc.said, "do not delete or move files", "Call save_checkpoint again once it is fixed")
			if got := text(res); strings.Contains(got, "free some") || tc.unsaid != "" && strings.Contains(got, tc.unsaid) {
				t.Errorf("the model is told to free space itself, or %q: %s", tc.unsaid, got)
			}
		})
	}
}

// TestStateUncreatableStepIsTheUsers: when the state directory cannot even be made (no free
// inode, or a read-only file system, where it goes), the model is told the cause in the
// user's words, as for a write refused later, not a step that does not fit it ("make that
// directory writable" for a file system out of inodes).
func TestStateUncreatableStepIsTheUsers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		readOnly bool
		said     string
	}{
		{name: "no free inode", said: "the file system of the directory it names has no free inodes"},
		{name: "read-only", readOnly: true, said: "they can make the directory it names writable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t)
			parent := filepath.Dir(p.state)
			if err := os.MkdirAll(parent, 0o700); err != nil {
				t.Fatal(err)
			}
			durabletest.Mount(t, "tmpfs", parent, "tmpfs", 0, "size=256k,nr_inodes=64,mode=0700", false)
			if tc.readOnly {
				durabletest.Mount(t, parent, parent, "", syscall.MS_BIND, "", true)
			} else {
				durabletest.FillInodes(t, parent)
			}
			c := stdioClient(t, p, protocol)
			mustFail(t, c, "start_workflow", `{"type":"apex","context":"x"}`, "nothing was changed", "Tell the user: "+tc.said, "do not delete or move files")
		})
	}
}

// TestLearningOnAFullDiskIsOneStep: a learning refused by a full auto-memory disk read
// "Auto-memory unavailable — learnings will not persist: ...; the learning was not recorded:
// the disk is full; once some space is freed there, call record_learning again. Tell the
// user: the disk is full; ... Call record_learning again once it is fixed": for good, then
// not, and two steps. It says the learning was not recorded and gives the model's one step.
func TestLearningOnAFullDiskIsOneStep(t *testing.T) {
	for _, tc := range []struct {
		name   string
		inodes bool
		said   string
	}{
		{name: "disk full", said: "the disk is full"},
		{name: "no free inode", inodes: true, said: "the file system of the directory it names has no free inodes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t)
			durabletest.Mount(t, "tmpfs", p.memory, "tmpfs", 0, "size=256k,nr_inodes=64,mode=0700", false)
			c := stdioClient(t, p, protocol)
			mustOK(t, c, "record_learning", `{"title":"first","body":"b"}`)
			if tc.inodes {
				durabletest.FillInodes(t, p.memory)
			} else {
				durabletest.FillDisk(t, p.memory)
			}
			res := mustFail(t, c, "record_learning", `{"title":"second","body":"b"}`,
				"the learning was not recorded", "Tell the user: "+tc.said, "do not delete or move files")
			got := text(res)
			if n := strings.Count(strings.ToLower(got), "record_learning again"); n != 1 || strings.Contains(got, "will not persist") || strings.Contains(got, "free some") {
				t.Errorf("want one step (the model's), and no \"will not persist\" nor a person's step; got %d steps: %s", n, got)
			}
		})
	}
}

// TestStateBehindALinkToNothingSaysSo: CAIRN_STATE_DIR through a link whose target is gone
// read "Tell the user: they can make that directory writable; ... do not delete or move files
// to make room", a step and a warning for a cause that was not there. The model is told what
// is in the way and the variable's step.
func TestStateBehindALinkToNothingSaysSo(t *testing.T) {
	p := newProject(t)
	base := filepath.Dir(p.root)
	if err := os.Symlink(filepath.Join(base, "gone"), filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	p.state = filepath.Join(base, "link", "state")
	c := stdioClient(t, p, protocol)
	got := text(mustFail(t, c, "start_workflow", `{"type":"apex","context":"x"}`, "nothing was changed",
		"a link to "+filepath.Join(base, "gone")+", which is not there", "Tell the user: they create the directory it names (a link's target)"))
	for _, wrong := range []string{"writable", "make room"} {
		if strings.Contains(got, wrong) {
			t.Errorf("the step says %q, which does not fit a link to nothing: %s", wrong, got)
		}
	}
}
