package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
)

// TestSyncOnAFullDisk: a sync whose git could not write this clone's objects (the disk full)
// said only git's line ("git hash-object: fatal: unable to write loose object file: No space
// left on device") and exited 1, a refusal. It says the disk is full, that nothing here
// changed, and the step, with exit 3 as every write a full disk refuses; once there is space
// the same command pushes. A file system out of inodes, with room for data, gives the same
// ENOSPC: it was said to be full, and df -h showed free space; it is said to have no inodes.
func TestSyncOnAFullDisk(t *testing.T) {
	t.Parallel()
	for _, tc := range noRoomCases("cairn sync") {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := bareRepo(t)
			m := newMachine(t, "file://"+filepath.Join(base, "shared.git"))
			m.must("start", "apex", "full disk", "--id", "wf-f")
			m.must("remote", "enable", "--yes")
			objects := filepath.Join(m.dir, ".git", "objects")
			durabletest.Mount(t, "tmpfs", objects, "tmpfs", 0, tc.opts+",mode=0700", false)
			for _, d := range []string{"info", "pack"} {
				if err := os.Mkdir(filepath.Join(objects, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			filler := tc.fill(t, objects)
			code, out, errb := m.cairn("sync")
			if code != 3 || !strings.Contains(errb, tc.said) || !strings.Contains(errb, "nothing here changed") || !strings.Contains(errb, tc.step) {
				t.Errorf("sync: exit %d\n%s%s", code, out, errb)
			}
			if err := os.RemoveAll(filler); err != nil {
				t.Fatal(err)
			}
			if out := m.must("sync"); !strings.Contains(out, "wf-f: pushed 1 revision to origin") {
				t.Errorf("sync once there is room: %s", out)
			}
		})
	}
}

// noRoomCase is a small tmpfs's mount options, how to fill it, and what a command that runs out
// of room there says of it and as its step.
type noRoomCase struct {
	name, opts string
	fill       func(testing.TB, string) string
	said, step string
}

// noRoomCases are a full disk and a file system out of inodes with room for data, for command.
func noRoomCases(command string) []noRoomCase {
	return []noRoomCase{
		{"no space", "size=256k", durabletest.FillDisk, "the disk is full", "free some space, then run " + command + " again"},
		{"no inodes", "size=16m,nr_inodes=64", durabletest.FillInodes, "its file system has no free inodes, though it may have room for data",
			"free some inodes there (each file takes one), then run " + command + " again"},
	}
}

// TestSyncPullCutShortByAFullDisk: a pull that the full disk stopped after some of the remote's
// revisions were written here said only the store's refusal ("... it was left as it was; free
// some space and try again"), as if nothing had been taken. It says how many revisions were
// pulled and where this clone is now; the next sync once there is space pulls the rest.
func TestSyncPullCutShortByAFullDisk(t *testing.T) {
	t.Parallel()
	url := "file://" + filepath.Join(bareRepo(t), "shared.git")
	a := newMachine(t, url)
	b := newMachine(t, url)
	state := filepath.Join(b.dir, ".claude")
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	durabletest.Mount(t, "tmpfs", state, "tmpfs", 0, "size=512k,mode=0700", false)
	a.must("remote", "enable", "--yes")
	a.must("start", "apex", "pulled on a full disk", "--id", "wf-p")
	a.must("sync")
	b.must("remote", "enable", "--yes")
	b.must("sync")
	const revisions = 6
	for i := range revisions {
		a.must("vars", "set", fmt.Sprintf("WF_K%d", i), strings.Repeat("v", 6000))
	}
	a.must("sync")
	here := func() string {
		out := b.must("remote", "status")
		i := strings.Index(out, "wf-p at r")
		if i < 0 {
			t.Fatalf("remote status: %s", out)
		}
		return strings.Fields(out[i:])[2]
	}
	filler := durabletest.FillDisk(t, state)
	partial := false
	for free := int64(1); ; free++ {
		st, err := os.Stat(filler)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(filler, st.Size()-4096); err != nil {
			t.Fatal(err)
		}
		before := here()
		code, out, errb := b.cairn("sync")
		if code == 0 {
			if !strings.Contains(out, "wf-p: pulled") || !strings.Contains(out, fmt.Sprintf("now r%d", revisions+1)) {
				t.Errorf("the sync with %d pages free: %s", free, out)
			}
			break
		}
		if free > 200 {
			t.Fatalf("no sync went through: %s%s", out, errb)
		}
		if after := here(); after == before {
			if strings.Contains(out+errb, "pulled") {
				t.Errorf("a sync that pulled nothing (%d pages free, %s here) said: %s%s", free, after, out, errb)
			}
			continue
		} else if !strings.Contains(errb, "wf-p: pulled ") || !strings.Contains(errb, "now "+after+" here") || !strings.Contains(errb, "the disk is full") ||
			!strings.Contains(errb, "free some space, then run cairn sync again") {
			t.Errorf("a sync that pulled from %s to %s (%d pages free) said:\n%s%s", before, after, free, out, errb)
		}
		partial = true
	}
	if !partial {
		t.Fatal("no amount of free space cut a pull short: the test tries none of the cases it is for")
	}
}
