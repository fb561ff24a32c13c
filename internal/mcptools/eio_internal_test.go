package mcptools

import (
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/cairn-dev/cairn/internal/store"
)

// TestIOErrorStepForTheModel: a write the disk failed with an I/O error (EIO) gave the model
// the person's step, "check the disk before trying again", which a model with a shell would
// take as its own (fsck, dd). It is told to tell the user the disk reported an I/O error,
// to leave the disk to them, and to call the tool again once they have checked it.
func TestIOErrorStepForTheModel(t *testing.T) {
	we := &store.WriteError{Dir: "/p/.claude/cairn", Name: "checkpoints/plan.json",
		Err: &fs.PathError{Op: "write", Path: "/p/.claude/cairn/checkpoints/.tmp-plan.json-1", Err: syscall.EIO}}
	msg := usersToFix("save_checkpoint", we).Error()
	for _, want := range []string{"checkpoints/plan.json", "I/O error", "Tell the user", "Call save_checkpoint again"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q: want %q", msg, want)
		}
	}
	if strings.Contains(msg, "check the disk before trying again") {
		t.Errorf("%q: the person's step is the model's", msg)
	}
}
