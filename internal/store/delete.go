package store

import (
	"errors"
	"io/fs"

	"github.com/cairn-dev/cairn/internal/durable"
)

// DeleteCheckpoint removes checkpoints/NAME.json durably; a missing one is a *NotFoundError.
// It holds the checkpoints' lock, so that SaveCheckpointChanged never reports unchanged a
// save that recreated a checkpoint deleted after its look.
func (s *Store) DeleteCheckpoint(name string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	unlock, err := s.lock(checkpointsLock)
	if err != nil {
		return err
	}
	defer unlock()
	file := checkpoints.file(name)
	if fi, err := s.fs.Lstat(file); err == nil && !fi.Mode().IsRegular() {
		// Not a checkpoint, as load and save say: a directory, symlink or FIFO there may be
		// someone's, and is no one's to remove.
		return s.writeErr(file, &fs.PathError{Op: "remove", Path: file, Err: &durable.NotRegularError{Mode: fi.Mode()}})
	}
	err = s.fs.Remove(file)
	if errors.Is(err, fs.ErrNotExist) {
		return &NotFoundError{What: checkpoints.what, Name: name}
	}
	if err != nil {
		return s.writeErr(file, err)
	}
	return s.writeErr(file, s.fs.SyncDir(checkpointsDir))
}
