package remotesync_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
	"github.com/cairn-dev/cairn/internal/remote/gittest"
	"github.com/cairn-dev/cairn/internal/remote/remotesync"
	"github.com/cairn-dev/cairn/internal/store"
)

// TestIdleSyncLeavesWorkflowRunElsewhere: machine B completes its own workflow while A's live
// session runs another on the same remote (a bare git repository). B's next idle sync (cairn-mcp
// runs one within seconds) used to take A's workflow into B's empty slot, where start_workflow
// refused the model and a replace archived A's workflow on every machine. Now a workflow whose
// owner on the remote is a live session is offered (ErrRunningElsewhere, Available), not taken
// by the unasked sync (Background); a person's cairn sync still takes it, and one whose owner
// went quiet is taken by either as the remote's only one.
func TestIdleSyncLeavesWorkflowRunElsewhere(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		quiet time.Duration // how long A's session has been silent
		taken bool
	}{
		{name: "live elsewhere", quiet: 0},
		{name: "silent for an hour", quiet: time.Hour, taken: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b, ra, rb := sharing(t, time.Since(base)-tc.quiet, time.Since(base))
			a.en.SetSession("session-a")
			b.en.SetSession("session-b")
			a.start("wf-a", "A's work")
			a.sync(ra, "")
			b.start("wf-b", "B's work")
			b.sync(rb, "")
			b.complete()
			out, err := remotesync.Background(ctx, b.st, rb, "origin", nil)
			if !tc.taken {
				if !errors.Is(err, remotesync.ErrRunningElsewhere) || out.Workflow != "" || out.Available["wf-a"] == 0 || out.Shared == 0 {
					t.Fatalf("B's idle sync = %+v, %v; want wf-b's end shared and wf-a offered, not taken", out, err)
				}
				if _, err := os.Stat(filepath.Join(b.en.StateDir(), store.WorkflowFile)); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("B's active slot holds a workflow after its idle sync: %v", err)
				}
				if out := b.sync(rb, ""); out.Workflow != "wf-a" || out.Pulled == 0 {
					t.Fatalf("B's cairn sync = %+v, want wf-a taken as asked", out)
				}
				return
			}
			if err != nil || out.Workflow != "wf-a" || !out.Taken {
				t.Fatalf("B's idle sync = %+v, %v; want wf-a taken, its session silent", out, err)
			}
		})
	}
}

// TestStartRefusalSaysReplaceEndsItEverywhere: B took A's workflow from the remote (a bare git
// repository). start_workflow's refusal on B said a replace "archives the active one, kept, not
// lost", and the model, told so, replaced it: the next sync pushed its end and A's copy was
// archived too. The refusal now says that a replace ends it on the other machines as well; a
// workflow never shared is refused as before.
func TestStartRefusalSaysReplaceEndsItEverywhere(t *testing.T) {
	t.Parallel()
	const ends = "it is shared through origin, so a replace ends it on the other machines sharing it too"
	a, b, ra, rb := sharing(t, 0, 0)
	a.start("wf-a", "A's work")
	_, err := a.en.Start(engine.StartRequest{Type: "apex", Context: "another", WorkflowID: "wf-n"})
	if err == nil || strings.Contains(err.Error(), ends) {
		t.Fatalf("A's start over its unshared workflow: %v; want it refused without %q", err, ends)
	}
	a.sync(ra, "")
	b.sync(rb, "")
	for _, m := range []*machine{a, b} {
		_, err := m.en.Start(engine.StartRequest{Type: "apex", Context: "another", WorkflowID: "wf-n"})
		if err == nil || !strings.Contains(err.Error(), ends) {
			t.Errorf("start over the shared wf-a: %v; want it to say %q", err, ends)
		}
	}
}

// TestNotReplayedCutsWholeWords: a step named in the not-replayed summary is cut to fit, and
// the cut fell inside a word: "workflow apex-20261130T2…", a date no one can read back. It now
// ends at the last whole word, wherever the cut falls.
func TestNotReplayedCutsWholeWords(t *testing.T) {
	t.Parallel()
	const id = "apex-20261130T224828Z-c1a5"
	for pad := 100; pad <= 150; pad++ {
		skip := "task " + strings.Repeat("t", pad) + ": workflow " + id + " is archived, not active; nothing was changed"
		got := (&remotesync.Conflict{Skipped: []string{skip}}).NotReplayed()
		words := strings.Fields(skip)
		for _, w := range strings.Fields(strings.TrimSuffix(got, "…")) {
			if !slices.Contains(words, w) {
				t.Fatalf("pad %d: summary %q holds %q, cut from a word", pad, got, w)
			}
		}
	}
}

// TestReplacedElsewhereSaysByWhat: B replaced the shared workflow with another, pushed to the
// remote (a bare git repository) with the end of the first. A's sync told A only "it was
// archived on another machine", as if it had been dropped; it now says it was replaced there,
// and by which workflow, whether A pulls the end or loses a race to it.
func TestReplacedElsewhereSaysByWhat(t *testing.T) {
	t.Parallel()
	for _, race := range []bool{false, true} {
		a, b, ra, rb := sharing(t, 0, 0)
		a.start("wf-a", "shared")
		a.sync(ra, "")
		b.sync(rb, "")
		if race {
			a.move("plan")
		}
		if _, err := b.en.Start(engine.StartRequest{Type: "apex", Context: "instead", WorkflowID: "wf-new", Replace: true}); err != nil {
			t.Fatal(err)
		}
		b.sync(rb, "")
		out := a.sync(ra, "")
		const want = "it was replaced on another machine by workflow wf-new"
		if got := remotesync.EndedThere(out); out.Ended != "archived" || got != want || (out.Conflict != nil) != race {
			t.Errorf("race %v: A's sync = %+v, told %q; want %q", race, out, got, want)
		}
	}
}

// TestStartOverAReplacementPulledTakesAFreshID: A pulled the end of its workflow, replaced on B
// by apex workflow X (its record says "replaced by X"). A's start with replace read that as
// its own replace cut short by a crash and started its new workflow under X's id: a workflow
// other than B's under the same id, which every sync on A then refused. A's start now takes an
// id of its own, and its sync pushes it.
func TestStartOverAReplacementPulledTakesAFreshID(t *testing.T) {
	t.Parallel()
	// filed: the ended workflow was filed in the archive first (the next session start does).
	for _, filed := range []bool{false, true} {
		a, b, ra, rb := sharing(t, 0, 0)
		a.start("wf-a", "shared")
		a.sync(ra, "")
		b.sync(rb, "")
		res, err := b.en.Start(engine.StartRequest{Type: "apex", Context: "B's instead", Replace: true})
		if err != nil {
			t.Fatal(err)
		}
		var bs struct {
			ID string `json:"workflow_id"`
		}
		if err := json.Unmarshal(res.Workflow, &bs); err != nil {
			t.Fatal(err)
		}
		b.sync(rb, "")
		a.sync(ra, "")
		if filed {
			if freed, w := a.en.ArchiveEnded(); !freed {
				t.Fatalf("A's ended workflow not filed: %v", w)
			}
		}
		if _, err := a.en.Start(engine.StartRequest{Type: "apex", Context: "A's own next", Replace: true}); err != nil {
			t.Fatal(err)
		}
		if id := a.held().WorkflowID; id == bs.ID {
			t.Fatalf("filed %v: A started its own workflow under B's replacement's id %s", filed, id)
		}
		if _, err := remotesync.Sync(context.Background(), a.st, ra, "origin", "", nil); err != nil {
			t.Fatalf("filed %v: A's sync after its start: %v", filed, err)
		}
	}
}

// TestReplaceSaysItEndsTheSharedWorkflowEverywhere: A's workflow is shared through the remote
// (a bare git repository). A start with replace over it succeeded with no word that the next
// sync ends it on the other machines too, and a record too large to change named the replace
// as "kept, not lost" alone. Both now say it is shared and ends there too; an unshared
// workflow's replace and refusal say nothing of it.
func TestReplaceSaysItEndsTheSharedWorkflowEverywhere(t *testing.T) {
	t.Parallel()
	const ends = "the other machines sharing it too"
	for _, shared := range []bool{false, true} {
		bare := gittest.Bare(t)
		a := newMachine(t, 0)
		ra := gitBackend(t, gitremote.Config{Dir: a.dir, Remote: "file://" + bare})
		a.start("wf-a", "A's work")
		if shared {
			a.sync(ra, "")
		}
		// Fill the record with artifacts, which no operation shortens, to the edge of its cap.
		path := filepath.Join(a.en.StateDir(), store.WorkflowFile)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var rec map[string]any
		if err := json.Unmarshal(data, &rec); err != nil {
			t.Fatal(err)
		}
		arts := []string{strings.Repeat("a", 1000)}
		for i := range 999 {
			arts = append(arts, "out/"+strings.Repeat("b", 990)+string(rune('a'+i%26)))
		}
		rec["artifacts"] = arts
		b, _ := json.Marshal(rec)
		arts[0] += strings.Repeat("a", 1<<20-100-len(b))
		rec["revision"] = rec["revision"].(float64) + 1
		b, _ = json.Marshal(rec)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		_, err = a.en.Transition(engine.TransitionRequest{To: "plan"})
		if err == nil || !strings.Contains(err.Error(), engine.ArchiveToGoOn) || strings.Contains(err.Error(), ends) != shared {
			t.Errorf("shared %v: a move over the cap: %v; want the archive step, saying %q only when shared", shared, err, ends)
		}
		// The record as it was, for the replace (one at its cap is refused alike).
		rec["artifacts"] = nil
		rec["revision"] = rec["revision"].(float64) + 1
		b, _ = json.Marshal(rec)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		res, err := a.en.Start(engine.StartRequest{Type: "apex", Context: "instead", WorkflowID: "wf-n", Replace: true})
		if err != nil {
			t.Fatal(err)
		}
		if told := strings.Join(res.Warnings, "\n"); strings.Contains(told, ends) != shared || shared && !strings.Contains(told, "origin") {
			t.Errorf("shared %v: the replace warned %q; want the remote and %q only when shared", shared, told, ends)
		}
	}
}
