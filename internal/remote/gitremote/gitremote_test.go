package gitremote_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
	"github.com/cairn-dev/cairn/internal/remote/remotetest"
)

// TestConformance runs the suite over a bare repository reached as file:// and through git
// daemon on 127.0.0.1, in both layouts; each client is its own clone.
func TestConformance(t *testing.T) {
	opts := remotetest.Options{Clients: scaled(3, 10), Appends: scaled(3, 100), Rounds: scaled(2, 20),
		Timeout: time.Duration(scaled(1, 20)) * time.Minute}
	for _, tc := range []struct {
		name   string
		layout gitremote.Layout
		daemon bool
	}{
		{"file", gitremote.Refs, false},
		{"daemon", gitremote.Refs, true},
		{"file-branches", gitremote.Branches, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			remotetest.Run(t, func(t *testing.T) func() remote.Backend {
				bare := bareRepo(t)
				url := "file://" + bare
				if tc.daemon {
					url = "git://" + daemon(t, filepath.Dir(bare)) + "/" + filepath.Base(bare)
				}
				return func() remote.Backend { return clone(t, url, tc.layout) }
			}, opts)
		})
	}
}
