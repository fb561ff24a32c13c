package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// A learning refused by a full disk said "Auto-memory unavailable — learnings will not persist:
// writing ...: no space left on device", which reads as for good and gives no step: it says
// the disk is full and the step, and once there is space the same call records it. With room
// for data but no free inode, it said the disk is full too, which the user would not find (df
// -h shows space): it says the file system has no free inodes.
func TestRecordLearningOnAFullDisk(t *testing.T) {
	t.Parallel()
	for _, tc := range fullDisks {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			smallDisks(t, e.home)
			en := e.open("s1")
			must(en.RecordLearning(engine.LearningRequest{Title: "first", Body: "b"}))(t)
			filler := tc.fill(t, e.home)
			l := engine.LearningRequest{Title: "second", Body: strings.Repeat("a line of the body, long enough to need a page of its own. ", 8) + "\nsecond line"}
			_, err := en.RecordLearning(l)
			if err == nil {
				t.Fatal("a learning was recorded on a full disk")
			}
			// The person's step, as a full store write's: the tools put the model's in its place.
			if msg := err.Error(); !strings.Contains(msg, "no space left") || !strings.Contains(msg, tc.said) || strings.Contains(msg, tc.unsaid) ||
				!strings.Contains(msg, tc.step) || !strings.HasSuffix(msg, "and try again") || strings.Contains(msg, "will not persist") {
				t.Errorf("refusal %q: want what failed (%s) and the step, not \"will not persist\"", msg, tc.said)
			}
			if err := os.RemoveAll(filler); err != nil {
				t.Fatal(err)
			}
			must(en.RecordLearning(l))(t)
		})
	}
}

// A workflow's memory line refused by a full disk said "auto-memory line not written (Cairn
// retries after the next turn): Auto-memory unavailable — learnings will not persist: ...":
// no learning failed, and once there is space they persist. With the state directory full
// too, it said "nor could it be kept to be retried", and the Stop after space was freed wrote
// it all the same, from the journal. It says the line was not written, the disk full, and
// that Cairn retries; the Stop after space is freed writes it. With room for data but no free
// inode, it said the disk is full too: it says the file system has no free inodes.
func TestWorkflowLineOnAFullDisk(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		stateFull bool
		fill      func(testing.TB, string) string
		said      string
	}{
		{false, durabletest.FillDisk, "the disk is full"},
		{true, durabletest.FillDisk, "the disk is full"},
		{false, durabletest.FillInodes, "the file system has no free inodes"},
	} {
		stateFull := tc.stateFull
		e := newEnv(t)
		full := []string{e.memoryDir()}
		if stateFull {
			full = append(full, filepath.Join(e.project, ".claude"))
		}
		smallDisks(t, full...)
		en := e.open("s1")
		must(en.Start(engine.StartRequest{Type: "apex", Context: "full memory"}))(t)
		var fillers []string
		for _, d := range full {
			fillers = append(fillers, tc.fill(t, d))
		}
		res := must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
		w := strings.Join(res.Warnings, "\n")
		if !strings.Contains(w, "auto-memory line not written") || strings.Contains(w, "learnings") || strings.Contains(w, "nor could it be kept") ||
			!strings.Contains(w, tc.said) || !strings.Contains(w, "Cairn retries after the next turn") || !strings.Contains(w, store.NoRoomStep) {
			t.Errorf("state directory full %v: warnings %q: want the line not written, %s and the retry, nothing of learnings", stateFull, res.Warnings, tc.said)
		}
		for _, f := range fillers {
			noErr(t, os.RemoveAll(f))
		}
		if out := must(en.Stop(engine.StopInput{SessionID: "s1"}))(t); len(out.Wrote) != 1 || !strings.Contains(out.Wrote[0], "planning") {
			t.Errorf("state directory full %v: stop wrote %q once there is space; want the line owed since the move to plan", stateFull, out.Wrote)
		}
	}
}

// An archive whose index line a full disk refused is made, and its finishing waits for space;
// every read meanwhile fails with the write it tries. resume_check then told the model "The
// workflow state could not be read (see the warning): fix or restore it before starting new
// work", while nothing was damaged and a restore would put back what was archived, and the
// warning said it could not be read. It says the disk is full, that the model is not to make
// room, and to call resume_check again, and the warning that the state could not be settled;
// the same read once there is space finishes the archive. With room for data but no free
// inode, it said the disk is full too: it says the file system has no free inodes.
func TestResumeWhileAnArchiveWaitsForSpace(t *testing.T) {
	t.Parallel()
	for _, tc := range fullDisks {
		t.Run(tc.name, func(t *testing.T) {
			tried := false
			for free := int64(0); free <= 8 && !tried; free++ {
				e := newEnv(t)
				st := filepath.Join(e.project, ".claude")
				smallDisks(t, st)
				en := e.open("s1")
				must(en.Start(engine.StartRequest{Type: "apex", Context: "archived on a full disk"}))(t)
				filled := tc.fill(t, st)
				tc.free(t, filled, free)
				if _, err := en.Archive("because"); err != nil {
					continue // not archived: nothing waits
				}
				r := en.Resume(engine.ResumeOptions{})
				if !strings.Contains(strings.Join(r.Warnings, "\n"), "could not be settled") {
					continue // archived whole, or its move not made (TestNothingToResumeOnAFullDisk): nothing waits to be settled
				}
				tried = true
				if strings.Contains(r.Next, "restore") || strings.Contains(strings.Join(r.Warnings, "\n"), "could not be read") || !strings.Contains(r.Next, tc.said) || !strings.Contains(r.Next, "do not delete or move files") ||
					!strings.Contains(r.Next, "resume_check again") {
					t.Errorf("%d free: next %q, warnings %q", free, r.Next, r.Warnings)
				}
				if p := en.Resume(engine.ResumeOptions{Person: true}); !strings.Contains(strings.ToLower(p.Next), tc.said) || !strings.Contains(p.Next, tc.step) {
					t.Errorf("%d free: a person is told %q; want %q and %q", free, p.Next, tc.said, tc.step)
				}
				noErr(t, os.RemoveAll(filled))
				if r := en.Resume(engine.ResumeOptions{}); len(r.Warnings) != 0 || r.Ended == "" || r.Next != workflow.NothingToResume {
					t.Errorf("%d free, then space: tier %s ended %q next %q warnings %q", free, r.Tier, r.Ended, r.Next, r.Warnings)
				}
			}
			if !tried {
				t.Fatal("no amount of free space left an archive waiting: the test tries none of the cases it is for")
			}
		})
	}
}

// An archive whose memory line a full disk refused left MEMORY.md saying the workflow is
// active ("Active APEX workflow: ..."), in every session's context, for good: nothing owed the
// line once l2-state.json could not be written either. The first session start once there is
// space writes the archive's line.
func TestArchiveLineOnceThereIsSpace(t *testing.T) {
	t.Parallel()
	tried := false
	for free := int64(0); free <= 10; free++ {
		e := newEnv(t)
		mem, st := e.memoryDir(), filepath.Join(e.project, ".claude")
		var fillers []string
		for _, d := range []string{mem, st} {
			noErr(t, os.MkdirAll(d, 0o700))
			durabletest.Mount(t, "tmpfs", d, "tmpfs", 0, "size=256k,mode=0700", false)
		}
		en := e.open("s1")
		must(en.Start(engine.StartRequest{Type: "apex", Context: "archived on a full disk"}))(t)
		must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
		for _, d := range []string{mem, st} {
			fillers = append(fillers, durabletest.FillDisk(t, d))
		}
		fi, err := os.Stat(fillers[1])
		noErr(t, err)
		noErr(t, os.Truncate(fillers[1], fi.Size()-free*4096))
		if _, err := en.Archive("because"); err != nil {
			continue
		}
		tried = true
		for _, f := range fillers {
			noErr(t, os.Remove(f))
		}
		// That session's context holds MEMORY.md's line as it was, which calls the workflow
		// active: its report says it was archived, and the next session's, which loads the
		// ending's line, says nothing.
		const ending = "Abandoned APEX workflow at plan for “archived on a full disk”, archived"
		if r := e.open("s2").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true}); !strings.Contains(r.Report, ending) {
			t.Errorf("%d pages free: the session start with space reports %q", free, r.Report)
		}
		if b, err := os.ReadFile(filepath.Join(mem, "MEMORY.md")); err != nil || !strings.Contains(string(b), "— "+ending) {
			t.Errorf("%d pages free: MEMORY.md after a session start with space: %s %v", free, b, err)
		}
		if r := e.open("s3").Resume(engine.ResumeOptions{Apply: true, ReportOnly: true}); r.Report != "" {
			t.Errorf("%d pages free: the session start after it reports %q", free, r.Report)
		}
	}
	if !tried {
		t.Fatal("no amount of free space let the archive be made")
	}
}

// TestDoctorOnAFullDisk: doctor said "ok  state directory writable" and "ok  auto-memory (L2)"
// on a full disk, where every transition and memory line is refused: it asked only access(2),
// which a full disk does not change. It fails both checks saying the disk is full (or that the
// file system has no free inodes) and the step.
func TestDoctorOnAFullDisk(t *testing.T) {
	t.Parallel()
	for _, tc := range fullDisks {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			claude := filepath.Join(e.project, ".claude")
			mem := e.memoryDir()
			var fills []string
			smallDisks(t, claude, mem)
			en := e.open("s1")
			must(en.Start(engine.StartRequest{Type: "apex", Context: "full disk"}))(t)
			for _, name := range []string{"state directory writable", "auto-memory (L2)"} {
				if c := doctorCheck(en, engine.DoctorOptions{}, name); c == nil || !c.OK {
					t.Fatalf("before the disk fills: %+v", c)
				}
			}
			for _, d := range []string{claude, mem} {
				fills = append(fills, tc.fill(t, d))
			}
			for _, name := range []string{"state directory writable", "auto-memory (L2)"} {
				if c := doctorCheck(en, engine.DoctorOptions{}, name); c == nil || c.OK || !strings.Contains(c.Detail, tc.said) || !strings.Contains(c.Fix, tc.step+" there") {
					t.Errorf("%s on a full disk: %+v, want it failed saying %q with the step %q", name, c, tc.said, tc.step+" there")
				}
			}
			for _, f := range fills {
				noErr(t, os.RemoveAll(f))
			}
			if c := doctorCheck(en, engine.DoctorOptions{}, "state directory writable"); c == nil || !c.OK {
				t.Errorf("once there is space: %+v", c)
			}
		})
	}
}

// TestResumeOnAFullDisk: resume_check on a full disk (or one with no free inode) told the
// model "Continue phase analyze, then move on to plan", no warning, as a read-only state
// directory is warned of: the work it then did was refused at its first save. It warns that
// no change would be kept, and the step is to tell the user (not to make room) and call
// resume_check again once there is space; a person is told to free some. Once there is
// space, the step is the phase again.
func TestResumeOnAFullDisk(t *testing.T) {
	t.Parallel()
	for _, tc := range fullDisks {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			claude := filepath.Join(e.project, ".claude")
			smallDisks(t, claude)
			must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "full disk"}))(t)
			filler := tc.fill(t, claude)
			r := e.open("s1").Resume(engine.ResumeOptions{Apply: true})
			w := strings.Join(r.Warnings, "\n")
			if !strings.Contains(w, tc.said) || !strings.Contains(w, "no change to the workflow would be kept") {
				t.Errorf("warnings %q: want %q and that no change would be kept", r.Warnings, tc.said)
			}
			if !strings.Contains(r.Next, "tell the user "+tc.said) ||
				!strings.Contains(r.Next, "do not delete or move files to make room") || !strings.Contains(r.Next, "resume_check again") || strings.Contains(r.Next, "Continue phase") {
				t.Errorf("next %q: want the user told %q, no room made, resume_check again", r.Next, tc.said)
			}
			if p := e.open("s1").Resume(engine.ResumeOptions{Apply: true, Person: true}); !strings.Contains(p.Next, tc.step) || strings.Contains(p.Next, "tell the user") {
				t.Errorf("a person's next %q: want %q", p.Next, tc.step)
			}
			noErr(t, os.RemoveAll(filler))
			if r := e.open("s1").Resume(engine.ResumeOptions{Apply: true}); !strings.Contains(r.Next, "Continue phase analyze") || len(r.Warnings) > 0 {
				t.Errorf("once there is space: next %q warnings %q", r.Next, r.Warnings)
			}
		})
	}
}

// TestNothingToResumeOnAFullDisk: a session start on a full disk, with no workflow, told the
// model "start no new work before" there is space: the user's request, which Cairn does not
// track, stood blocked on Cairn's state directory. It now says no workflow started now would
// be kept, to tell the user (not to make room), and to go on with the user's request. So it
// does when the workflow ended and its archiving waits for room (it said to call
// start_workflow for new work, which the full disk refused, and nothing of the disk).
func TestNothingToResumeOnAFullDisk(t *testing.T) {
	t.Parallel()
	for _, tc := range fullDisks {
		for _, ended := range []bool{false, true} {
			t.Run(fmt.Sprint(tc.name, ended), func(t *testing.T) {
				nothingToResumeOnAFullDisk(t, tc.fill, tc.said, ended)
			})
		}
	}
}

func nothingToResumeOnAFullDisk(t *testing.T, fill func(testing.TB, string) string, said string, ended bool) {
	e := newEnv(t)
	claude := filepath.Join(e.project, ".claude")
	smallDisks(t, claude)
	noErr(t, os.Mkdir(filepath.Join(claude, "cairn"), 0o700)) // with no inode left, Open could not make it
	if ended {                                                // completed, its archiving not made yet (a crash, or a disk full then)
		en := e.open("s1")
		must(en.Start(engine.StartRequest{Type: "apex", Context: "full disk"}))(t)
		replaceInSlot(t, en, 1, `"status":"active"`, `"status":"completed"`)
	}
	fill(t, claude)
	r := e.open("s1").Resume(engine.ResumeOptions{Apply: true})
	if w := strings.Join(r.Warnings, "\n"); !strings.Contains(w, said) || !strings.Contains(w, ", so no workflow started now would be kept") {
		t.Errorf("warnings %q: want %q and that no workflow started now would be kept", r.Warnings, said)
	}
	if !strings.Contains(r.Next, "tell the user "+said) || !strings.Contains(r.Next, "do not delete or move files to make room") ||
		!strings.Contains(r.Next, "go on with the user's request") || strings.Contains(r.Next, "start no new work") {
		t.Errorf("next %q: want the user told %q, no room made, the user's request gone on with", r.Next, said)
	}
}

// fullDisks are the two ways a disk refuses a write, filled by fill: no data blocks left, or
// no inodes. Cairn says said and never unsaid, and tells a person step. free gives back n pages
// or inodes of what fill took.
var fullDisks = []struct {
	name               string
	fill               func(testing.TB, string) string
	free               func(t *testing.T, filled string, n int64)
	said, unsaid, step string
}{
	{"data", durabletest.FillDisk, func(t *testing.T, filler string, n int64) {
		fi, err := os.Stat(filler)
		noErr(t, err)
		noErr(t, os.Truncate(filler, fi.Size()-n*4096))
	}, "the disk is full", "inodes", "free some space"},
	{"inodes", durabletest.FillInodes, func(t *testing.T, dir string, n int64) {
		for i := range n {
			noErr(t, os.Remove(filepath.Join(dir, strconv.FormatInt(i, 10))))
		}
	}, "the file system has no free inodes", "the disk is full", "free some inodes"},
}

// smallDisks makes each of dirs and mounts a tmpfs of 256 kB and 64 inodes on it.
func smallDisks(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		noErr(t, os.MkdirAll(d, 0o700))
		durabletest.Mount(t, "tmpfs", d, "tmpfs", 0, "size=256k,nr_inodes=64,mode=0700", false)
	}
}
