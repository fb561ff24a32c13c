package store_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/cairn-dev/cairn/internal/store"
)

// A write refused by what the file system is, not by what is in it, says what it is and the
// step: a share without a lock service (ENOLCK) fails every write the same way, so "try
// again" or the bare errno would leave the person nowhere.
func TestWriteErrorSaysWhatToDo(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want []string
	}{
		{fmt.Errorf("lock .lock-workflow: %w", syscall.ENOLCK), []string{"gives no file locks", "nothing was changed", "keep the project on a local disk, or mount the share with locking on"}},
		{syscall.ENOSPC, []string{"the disk is full", store.FreeSpaceStep}},
		// A quota used up: df shows room, and freeing this user's own files is the step.
		{syscall.EDQUOT, []string{"disk quota", "quota -s", "it was left as it was", store.FreeSpaceStep}},
		{syscall.EIO, []string{"I/O error", "check the disk"}},
		{syscall.EROFS, []string{"read-only or not writable", "nothing was changed"}},
	} {
		msg := (&store.WriteError{Dir: "/p/.claude/cairn", Name: ".lock-workflow", Err: tc.err}).Error()
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%v: %q lacks %q", tc.err, msg, w)
			}
		}
		if !strings.Contains(msg, ".lock-workflow") || !strings.Contains(msg, "/p/.claude/cairn") {
			t.Errorf("%v: %q names not the file and the directory", tc.err, msg)
		}
	}
}
