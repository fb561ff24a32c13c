package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/store/migrate"
	"github.com/cairn-dev/cairn/internal/strictjson"
	"github.com/cairn-dev/cairn/internal/workflow"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want Class
	}{
		{"transition refused", &workflow.TransitionError{Type: "apex", From: "plan"}, Refused},
		{"conflict", fmt.Errorf("moving: %w", &workflow.ConflictError{WorkflowID: "w"}), Refused},
		{"no active workflow", errNoActive{}, Refused},
		{"bad name", &store.NameError{Name: "../x", Reason: "it contains .."}, Refused},
		{"bad json", fmt.Errorf("saving: %w", &strictjson.Error{Reason: "duplicate key"}), Refused},
		{"untyped", errors.New("unknown workflow type"), Refused},
		{"checkpoint not found", &store.NotFoundError{What: "checkpoint", Name: "x"}, NotFound},
		{"variable not set", fmt.Errorf("variable X is not set (%w)", ErrNotFound), NotFound},
		{"read-only write", &store.WriteError{Dir: "/s", Name: "f", Err: fs.ErrPermission}, StateUnusable},
		{"lock held", fmt.Errorf("x: %w", &durable.LockTimeoutError{Path: ".lock-workflow"}), StateUnusable},
		{"newer format", fmt.Errorf("reading: %w", &migrate.NewerError{}), StateUnusable},
		{"symlinked state dir", fmt.Errorf("opening: %w", durable.ErrSymlinkDir), StateUnusable},
		{"permission", fmt.Errorf("reading: %w", fs.ErrPermission), StateUnusable},
		{"directory in a checkpoint's place", fmt.Errorf("reading: %w", &fs.PathError{Op: "read", Path: "checkpoints/plan.json", Err: &durable.NotRegularError{Mode: fs.ModeDir}}), StateUnusable},
		{"FIFO in the snapshot's place", fmt.Errorf("reading: %w", &fs.PathError{Op: "read", Path: "workflow-state.json", Err: durable.ErrNotRegular}), StateUnusable},
		{"I/O error reading the snapshot", fmt.Errorf("reading: %w", &fs.PathError{Op: "open", Path: "workflow-state.json", Err: syscall.EIO}), StateUnusable},
		{"too many open files", &os.LinkError{Op: "rename", Old: "a", New: "b", Err: syscall.EMFILE}, StateUnusable},
		{"a missing file is no failure", fmt.Errorf("renaming: %w", &os.LinkError{Op: "rename", Old: "a", New: "b", Err: syscall.ENOENT}), Refused},
		{"hard-linked log", fmt.Errorf("reading: %w", &fs.PathError{Op: "open", Path: "logs/x.jsonl", Err: durable.ErrHardLinked}), StateUnusable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Classify(tt.err); got != tt.want {
				t.Errorf("Classify(%v) = %d, want %d", tt.err, got, tt.want)
			}
		})
	}
}
