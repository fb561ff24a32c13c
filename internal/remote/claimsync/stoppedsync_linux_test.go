package claimsync_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
	"github.com/cairn-dev/cairn/internal/remote/gittest"
)

// TestClaimBesideAStoppedSync: a cairn sync stopped with Ctrl-Z while it fetched holds the
// clone's mirror lock (<git dir>/.lock-cairn-mirror) until it is resumed. A task set running
// meanwhile was said unclaimed because "it could not be reached", which git fetch origin shows
// is not so, and the step that ends it (resume the stopped sync) was lost. The warning now names
// the stopped process and how to resume it.
func TestClaimBesideAStoppedSync(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a")
	a := gitClone(t, "file://"+gittest.Bare(t), dir)
	stopped := durabletest.StoppedHolder(t, filepath.Join(dir, ".git"), ".lock-cairn-mirror")
	res, err := a.task("t1", "running")
	if err != nil || len(res.Warnings) != 1 {
		t.Fatalf("running beside a stopped sync: %v %+v", err, res)
	}
	if w := res.Warnings[0]; strings.Contains(w, "could not be reached") || !strings.Contains(w, "kill -CONT "+strconv.Itoa(stopped)) {
		t.Fatalf("running beside a stopped sync warned %q; want the stopped process named, with the step that resumes it", w)
	}
}
