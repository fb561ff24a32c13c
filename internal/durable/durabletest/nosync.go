package durabletest

import (
	"io/fs"

	"github.com/cairn-dev/cairn/internal/durable"
)

// NoSync wraps an FS whose file and directory syncs do nothing, for a test that cuts no power
// and so never sees what a sync would have kept: a fault-injection run (wrapped in Faulty, the
// syncs are still steps that fail), or a benchmark. Lost power is simfs's to show.
type NoSync struct{ durable.FS }

type noSyncFile struct{ durable.File }

func (n NoSync) OpenFile(name string, flag int, perm fs.FileMode) (durable.File, error) {
	f, err := n.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return noSyncFile{f}, nil
}

func (NoSync) SyncDir(string) error { return nil }

func (noSyncFile) Sync() error { return nil }
