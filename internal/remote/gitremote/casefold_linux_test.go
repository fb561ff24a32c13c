package gitremote_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
	"github.com/cairn-dev/cairn/internal/remote/gittest"
)

// TestTwinRefsOnACaseInsensitiveFileSystem: refs whose ids differ only in case (pushed by two
// machines at once, or by a Cairn from before Append refused them) are one loose ref file on
// macOS and Windows. Every fetch filled that file with whichever line it wrote last, so the
// clone reported a workflow it shares as a line "Cairn did not write" (telling the user to
// delete it) and never saw the other. The first of the twins is synced, and the other is named
// as left out, with the step that ends it; the clone's other workflows sync as before.
func TestTwinRefsOnACaseInsensitiveFileSystem(t *testing.T) {
	ctx := bg(t)
	bare := bareRepo(t)
	url := "file://" + bare
	linux := clone(t, url, gitremote.Refs)
	for _, id := range []string{"Deploy-1", "other"} {
		if _, err := linux.Append(ctx, id, 0, remote.Slice([]byte(`{"id":"`+id+`"}`))); err != nil {
			t.Fatal(err)
		}
	}
	// As a Cairn that did not yet refuse twins would have written it.
	forge(t, bare, "refs/cairn/wf/deploy-1", `{"id":"deploy-1"}`, "cairn deploy-1 r1\n")

	t.Setenv("LD_PRELOAD", gittest.CaseFold(t))
	mac := clone(t, url, gitremote.Refs)
	for round := range 3 {
		h, err := mac.Heads(ctx)
		ue, ok := errors.AsType[*remote.UnreadableError](err)
		if !ok || !slices.Equal(ue.IDs, []string{"deploy-1"}) || !strings.Contains(err.Error(), "only in case") ||
			!strings.Contains(err.Error(), "git push origin :refs/cairn/wf/deploy-1, leaving refs/cairn/wf/Deploy-1 alone") {
			t.Fatalf("round %d: Heads error = %v, want deploy-1 left out as Deploy-1's twin, with the step", round, err)
		}
		if l := ue.LeftOut(); len(l) != 1 || l[0].Reason != remote.CaseTwin || l[0].Twin != "Deploy-1" || l[0].Ref != "refs/cairn/wf/deploy-1" {
			t.Fatalf("round %d: lines left out = %+v, want deploy-1 as Deploy-1's twin", round, l)
		}
		if h["Deploy-1"] != 1 || h["other"] != 1 || len(h) != 2 {
			t.Fatalf("round %d: Heads = %v, want Deploy-1 and other at 1", round, h)
		}
		recs, err := mac.Since(ctx, "Deploy-1", 0)
		if err != nil || len(recs) != 1 || string(recs[0].Data) != `{"id":"Deploy-1"}` {
			t.Fatalf("round %d: Since(Deploy-1) = %d records, %v; want Deploy-1's own record", round, len(recs), err)
		}
		if recs, err := mac.Since(ctx, "deploy-1", 0); err == nil || !strings.Contains(err.Error(), "only in case") {
			t.Fatalf("round %d: Since(deploy-1) = %d records, %v; want the twin's error", round, len(recs), err)
		}
	}
	if _, err := mac.Append(ctx, "Deploy-1", 1, remote.Slice([]byte(`{"id":"Deploy-1","n":2}`))); err != nil {
		t.Fatalf("appending to Deploy-1 beside its twin: %v", err)
	}

	// Once the twin is gone from the remote, the clone syncs every line as before.
	git(t, bare, "update-ref", "-d", "refs/cairn/wf/deploy-1")
	h, err := mac.Heads(ctx)
	if err != nil || h["Deploy-1"] != 2 || h["other"] != 1 || len(h) != 2 {
		t.Fatalf("after the twin's deletion: Heads = %v, %v", h, err)
	}
}

// TestSinceOnAPrefixOfTwinsBeforeHeads: Since fetches "<id>*", which takes twins that id
// prefixes into their one loose ref file before any Heads has left one out; the file then
// held the other twin's line, and appending to the kept twin failed as a line "Cairn did not
// write". The misfiled file is found and the twin left out, as Heads does.
func TestSinceOnAPrefixOfTwinsBeforeHeads(t *testing.T) {
	ctx := bg(t)
	bare := bareRepo(t)
	url := "file://" + bare
	forge(t, bare, "refs/cairn/wf/wf-aB", `{"id":"wf-aB"}`, "cairn wf-aB r1\n")
	forge(t, bare, "refs/cairn/wf/wf-ab", `{"id":"wf-ab"}`, "cairn wf-ab r1\n")

	t.Setenv("LD_PRELOAD", gittest.CaseFold(t))
	mac := clone(t, url, gitremote.Refs)
	if recs, err := mac.Since(ctx, "wf-a", 0); err != nil || len(recs) != 0 {
		t.Fatalf("Since(wf-a) = %d records, %v", len(recs), err)
	}
	if _, err := mac.Append(ctx, "wf-aB", 1, remote.Slice([]byte(`{"id":"wf-aB","n":2}`))); err != nil {
		t.Fatalf("appending to wf-aB after Since(wf-a): %v", err)
	}
	recs, err := mac.Since(ctx, "wf-aB", 0)
	if err != nil || len(recs) != 2 || string(recs[0].Data) != `{"id":"wf-aB"}` {
		t.Fatalf("Since(wf-aB) = %d records, %v", len(recs), err)
	}
	if recs, err := mac.Since(ctx, "wf-ab", 0); err == nil || !strings.Contains(err.Error(), "only in case") {
		t.Fatalf("Since(wf-ab) = %d records, %v; want the twin's error", len(recs), err)
	}
}
