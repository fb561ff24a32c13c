package mcptools_test

import (
	"os"
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
		name     string
		readOnly bool
	}{{"disk full", false}, {"read-only", true}} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t)
			if err := os.MkdirAll(p.state, 0o700); err != nil {
				t.Fatal(err)
			}
			durabletest.Mount(t, "tmpfs", p.state, "tmpfs", 0, "size=256k,mode=0700", false)
			if _, err := p.other(t, "seed").Start(engine.StartRequest{Type: "apex", Context: "full"}); err != nil {
				t.Fatal(err)
			}
			if tc.readOnly {
				durabletest.Mount(t, p.state, p.state, "", syscall.MS_BIND, "", true)
			} else {
				durabletest.FillDisk(t, p.state)
			}
			c := stdioClient(t, p, protocol)
			res := mustFail(t, c, "save_checkpoint", `{"name":"plan","data":{"a":"`+strings.Repeat("x", 8<<10)+`"}}`,
				"Tell the user", "do not delete or move files", "Call save_checkpoint again once it is fixed")
			if got := text(res); strings.Contains(got, "free some space") {
				t.Errorf("the model is told to free space itself: %s", got)
			}
		})
	}
}
