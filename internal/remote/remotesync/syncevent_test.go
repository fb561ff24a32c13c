package remotesync_test

import (
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote/remotesync"
	"github.com/cairn-dev/cairn/internal/store"
)

// The event a sync records for a revision it took is of the kind the engine, the CLI's history
// and the MCP server's notices tell pulled revisions apart by, and it reads back as the
// remote's own event; one of another kind never reads as pulled.
func TestSyncEventReadsBackAsPulled(t *testing.T) {
	t.Parallel()
	for _, remote := range []store.Event{
		{Kind: "start", Detail: `{"actor":"b","session_id":"s-1"}`},
		{Kind: "transition"},
		{Kind: "replace", Detail: "by apex-2 with spaces"},
	} {
		ev := remotesync.SyncEventOf(remotesync.Entry{Revision: 3, Event: remote}, "origin")
		if ev.Kind != engine.SyncEvent {
			t.Errorf("%v recorded as kind %q, which the engine does not count as a sync's (%q)", remote, ev.Kind, engine.SyncEvent)
		}
		from, got, ok := remotesync.PulledEvent(ev)
		if !ok || from != "origin" || got != remote {
			t.Errorf("%v recorded as %v reads back as %v from %q (ok %v)", remote, ev, got, from, ok)
		}
		if _, _, ok := remotesync.PulledEvent(store.Event{Kind: "transition", Detail: ev.Detail}); ok {
			t.Errorf("a local event with detail %q reads as pulled", ev.Detail)
		}
	}
}
