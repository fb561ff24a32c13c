package memremote_test

import (
	"testing"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
	"github.com/cairn-dev/cairn/internal/remote/remotetest"
)

func TestConformance(t *testing.T) {
	remotetest.Run(t, func(t *testing.T) func() remote.Backend {
		b := memremote.New()
		return func() remote.Backend { return b }
	}, remotetest.Options{Clients: 10, Appends: 100, Rounds: 20})
}
