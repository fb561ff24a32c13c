package store

import (
	"errors"
	"io/fs"
)

// DeleteCheckpoint removes checkpoints/NAME.json durably; a missing one is a *NotFoundError.
// Like a save it takes no lock: removing a whole file is atomic, and a save racing it simply
// wins or loses.
func (s *Store) DeleteCheckpoint(name string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	file := checkpoints.file(name)
	err := s.fs.Remove(file)
	if errors.Is(err, fs.ErrNotExist) {
		return &NotFoundError{What: checkpoints.what, Name: name}
	}
	if err != nil {
		return s.writeErr(file, err)
	}
	return s.writeErr(file, s.fs.SyncDir(checkpointsDir))
}
