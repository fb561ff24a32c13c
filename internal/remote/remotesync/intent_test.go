package remotesync_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote/memremote"
	"github.com/cairn-dev/cairn/internal/remote/remotesync"
	"github.com/cairn-dev/cairn/internal/store"
)

// conflictArchives are the directories of wf's conflict archives, newest first.
func conflictArchives(t *testing.T, st *store.Store, wf string) []string {
	t.Helper()
	archives, err := st.ListArchives()
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, a := range archives {
		if a.WorkflowID == wf && a.Reason == "conflict" {
			dirs = append(dirs, a.Dir)
		}
	}
	return dirs
}

// TestDamagedIntentDoesNotBlockSync: a replay intent that cannot be read (a hand edit, a bad
// disk) does not stop every sync. The sync goes on and says so, and the conflict archive the
// intent may owe a replay from is not lost: with only one to owe from, the newest conflict
// archive (which retention keeps), the intent is set aside in quarantine; with more, it is left
// where it is, so that retention keeps them all.
func TestDamagedIntentDoesNotBlockSync(t *testing.T) {
	for _, name := range []string{"one conflict archive", "two conflict archives"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			r := memremote.New()
			a, b := newMachine(t, 0), newMachine(t, 0)
			st, err := store.Open(a.en.StateDir(), store.WithRetention(3))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			raceOnWFX(a, b, r, "wf-dmg")
			killAfterAdoption(t, st, r, a.en)
			owed := conflictArchives(t, st, "wf-dmg")
			if len(owed) != 1 {
				t.Fatalf("conflict archives after the adoption: %v", owed)
			}
			if name == "two conflict archives" {
				doc := `{"version":"2.0","workflow_id":"wf-dmg","type":"apex","state":"analyze","status":"active","revision":1}`
				if _, err := st.ArchiveRecord([]byte(doc), "conflict", nil); err != nil {
					t.Fatal(err)
				}
			}
			intent := filepath.Join(a.en.StateDir(), remotesync.IntentDoc+".json")
			if err := os.WriteFile(intent, []byte(`{"workflow_id": "wf-dmg", `), 0o600); err != nil {
				t.Fatal(err)
			}

			out, err := remotesync.Sync(ctx, st, r, "origin", "", remotesync.EngineReplayer(a.en))
			if err != nil {
				t.Fatalf("the sync stopped on the damaged intent: %v", err)
			}
			if len(out.Notices) != 1 || !strings.Contains(out.Notices[0], remotesync.IntentDoc+".json") {
				t.Fatalf("the sync did not say the intent cannot be read: %q", out.Notices)
			}
			_, stat := os.Stat(intent)
			q, _ := filepath.Glob(filepath.Join(a.en.StateDir(), "quarantine", remotesync.IntentDoc+".json-*"))
			if name == "one conflict archive" {
				if len(q) != 1 || !strings.Contains(out.Notices[0], "quarantine") {
					t.Errorf("the damaged intent was not set aside (quarantine %v): %q", q, out.Notices)
				}
			} else if stat != nil || len(q) != 0 || !strings.Contains(out.Notices[0], owed[0]) {
				t.Errorf("the damaged intent did not stay (%v, quarantine %v) or the notice does not name %s: %q", stat, q, owed[0], out.Notices)
			} else if strings.Contains(out.Notices[0], "the user") || !strings.Contains(out.Notices[0], "compare them with the workflow (cairn show)") {
				// cairn sync prints it to the person, who is the user; the agent never reads it.
				t.Errorf("the notice sends the person to ask the user: %q", out.Notices)
			}
			// More archives than retention keeps: the one owed stays all the same.
			for i := range 4 {
				doc := fmt.Sprintf(`{"version":"2.0","workflow_id":"other-%d","type":"apex","state":"analyze","status":"active","revision":1}`, i)
				if _, err := st.ArchiveRecord([]byte(doc), "replaced", nil); err != nil {
					t.Fatal(err)
				}
			}
			if left := conflictArchives(t, st, "wf-dmg"); !slices.Contains(left, owed[0]) {
				t.Errorf("retention removed %s, the conflict archive the intent owed from: left %v", owed[0], left)
			}
			if _, err := remotesync.Sync(ctx, st, r, "origin", "", remotesync.EngineReplayer(a.en)); err != nil {
				t.Fatalf("the next sync: %v", err)
			}
		})
	}
}
