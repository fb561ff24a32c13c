package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
)

// TestStatusAfterAnArchiveOnAFullDisk: an archive whose last steps a full disk cut short (the
// index line, the memory line, the record of the ending) made the archive all the same, and
// status then said "No active workflow; its state is missing. Memory's last line: Active ...",
// and the model was told to start the workflow again, while it was safe in archive/. Status
// now says it was archived, on the full disk and once there is space; an archive whose move
// to archive/ failed says it is marked archived, to be filed by the next session start. Every
// amount of free space from too little to enough is tried: which step fails depends on it.
func TestStatusAfterAnArchiveOnAFullDisk(t *testing.T) {
	t.Parallel()
	partial := 0
	for free := int64(0); free <= 8; free++ {
		mnt := t.TempDir()
		durabletest.Mount(t, "tmpfs", mnt, "tmpfs", 0, "size=256k,mode=0700", false)
		p := &cliProject{base: mnt, root: filepath.Join(mnt, "project"), memory: filepath.Join(mnt, "memory"), home: filepath.Join(mnt, "home")}
		for _, d := range []string{filepath.Join(p.root, ".git"), p.memory, p.home} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				t.Fatal(err)
			}
		}
		mustRun(t, p, "", "start", "apex", "archive on a full disk", "--id", "wf-a")
		mustRun(t, p, "", "transition", "plan")
		filler := durabletest.FillDisk(t, mnt)
		st, err := os.Stat(filler)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(filler, st.Size()-free*4096); err != nil {
			t.Fatal(err)
		}
		code, out := p.run("", "archive", "--reason", "because")
		if code != 0 {
			continue // not archived: status shows it active, as other tests check
		}
		if strings.Contains(out, "warning") {
			partial++
		}
		for _, when := range []string{"on the full disk", "once there is space"} {
			if when == "once there is space" {
				if err := os.Remove(filler); err != nil {
					t.Fatal(err)
				}
			}
			_, status := p.run("", "status")
			// Filed in archive/, or (the move itself cut short) marked archived in place, for
			// the next session start to file.
			filed := strings.Contains(status, "last: Abandoned APEX workflow at plan for “archive on a full disk”, archived")
			marked := strings.Contains(out, "workflow wf-a was marked archived") && strings.Contains(status, "archived (the next session start files it in the archive)")
			if strings.Contains(status, "state is missing") || !filed && !marked {
				t.Errorf("%d pages free: archive said\n%s\nstatus %s said\n%s", free, out, when, status)
			}
		}
	}
	if partial == 0 {
		t.Fatal("no amount of free space cut an archive short: the test tries none of the cases it is for")
	}
}
