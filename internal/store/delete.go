package store

import (
	"errors"
	"io/fs"
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
	err = s.fs.Remove(file)
	if errors.Is(err, fs.ErrNotExist) {
		return &NotFoundError{What: checkpoints.what, Name: name}
	}
	if err != nil {
		return s.writeErr(file, err)
	}
	return s.writeErr(file, s.fs.SyncDir(checkpointsDir))
}
