package engine_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// garbageSnapshot leaves a snapshot that is not JSON and no journal: the store sets it aside
// on the next read and says so in a notice.
func garbageSnapshot(t *testing.T, en *engine.Engine) {
	t.Helper()
	state := en.StateDir()
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "workflow-state.json"), []byte("{{{"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestStartOverQuarantinedSnapshotSaysSo: a start that finds a garbage snapshot (and no journal
// to rebuild it from) starts the new workflow, and says that the old snapshot was set aside.
func TestStartOverQuarantinedSnapshotSaysSo(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	en := e.open("s1")
	garbageSnapshot(t, en)
	res := must(en.Start(engine.StartRequest{Type: "apex", Context: "after the damage"}))(t)
	if !containsAny(res.Warnings, "quarantine/workflow-state.json-") {
		t.Errorf("the start did not say the damaged snapshot was set aside: %q", res.Warnings)
	}
}

// TestSecondCopyArchiveSaysWhatRetentionDid: settling two copies of the workflow state archives
// one of them; as for any other archive, a notice names the older archives retention removed
// to make room, and when retention cannot remove them (here a damaged index), a warning says so.
func TestSecondCopyArchiveSaysWhatRetentionDid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		legacyAge time.Duration // how long before now the seed file was last updated
		damaged   bool          // the archive index's newest two lines damaged
	}{
		{"seed-file-newer", -time.Minute, true},
		{"active-newer", -2 * time.Hour, true},
		{"seed-file-newer-pruned", -time.Minute, false},
		{"active-newer-pruned", -2 * time.Hour, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			en := e.open("s1")
			state := en.StateDir()
			if err := os.MkdirAll(state, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(state, "config.json"), []byte(`{"archive_retention": 5}`), 0o600); err != nil {
				t.Fatal(err)
			}
			e.clock.Add(-2 * time.Hour)
			for i := range 5 {
				en := e.open("s1")
				must(en.Start(engine.StartRequest{Type: "apex", Context: fmt.Sprintf("done %d", i)}))(t)
				must(en.Archive("abandoned"))(t)
				e.clock.Add(time.Minute)
			}
			if tc.damaged {
				// The newest two index lines: one cut short, one no longer naming its directory.
				ip := filepath.Join(state, "archive", "index.jsonl")
				b, err := os.ReadFile(ip)
				if err != nil {
					t.Fatal(err)
				}
				lines := bytes.SplitAfter(b, []byte("\n"))
				lines[3] = append(lines[3][:20:20], '\n')
				lines[4] = bytes.Replace(lines[4], []byte(`"dir"`), []byte(`"dXr"`), 1)
				if err := os.WriteFile(ip, bytes.Join(lines, nil), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			e.clock.Add(-time.Hour)
			must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "cairn copy"}))(t)
			e.clock.Add(2 * time.Hour)
			e.seedCopy(tc.legacyAge)
			r := e.open("s2").Resume(engine.ResumeOptions{Apply: true})
			if !containsAny(r.Notices, "two copies") {
				t.Fatalf("the two copies were not settled: notices %v, warnings %v", r.Notices, r.Warnings)
			}
			if tc.damaged && !containsAny(r.Warnings, "older archives were not removed this time") {
				t.Errorf("retention's failure was not said: warnings %v", r.Warnings)
			}
			if !tc.damaged && !containsAny(r.Notices, "retention removed 1 older archive: ") {
				t.Errorf("the archive retention removed was not named: notices %v", r.Notices)
			}
		})
	}
}

// TestQuarantineOfAnUnknownFormatSaysOneThing: a snapshot that is JSON but no format Cairn
// knows is moved to quarantine; the notice saying so must not also say it was left as it is
// (the migrate error it quotes used to end "Cairn leaves it as it is").
func TestQuarantineOfAnUnknownFormatSaysOneThing(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{`{"hello": "world"}`, `{"name": "x", "steps": []}`} {
		t.Run(doc, func(t *testing.T) {
			e := newEnv(t)
			en := e.open("s1")
			state := en.StateDir()
			if err := os.MkdirAll(state, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(state, "workflow-state.json"), []byte(doc), 0o600); err != nil {
				t.Fatal(err)
			}
			res := must(en.Start(engine.StartRequest{Type: "apex", Context: "after the damage"}))(t)
			if !containsAny(res.Warnings, "moved to quarantine/workflow-state.json-") {
				t.Fatalf("the snapshot was not said to be set aside: %q", res.Warnings)
			}
			if containsAny(res.Warnings, "as it is") {
				t.Errorf("the notice says the file was both moved and left as it is: %q", res.Warnings)
			}
		})
	}
}

// TestL2WriteSaysWhatTheStoreDid: the L2 write after an archive reads the active slot, now
// empty, and that read migrates the seed's state file found there into it. The archive's
// answer says so: the migration's notice is told once, on the read that did it.
func TestL2WriteSaysWhatTheStoreDid(t *testing.T) {
	t.Parallel()
	e, en := startApex(t)
	seed := `{"type":"APEX","phase":"implement","lastUpdated":"` + e.clock.Now().Format(time.RFC3339) + `","ttl":"24h","context":"seed copy"}`
	if err := os.WriteFile(filepath.Join(e.project, ".claude", "workflow-state.json"), []byte(seed), 0o644); err != nil {
		t.Fatal(err)
	}
	res := must(en.Archive("abandoned"))(t)
	if !containsAny(res.Warnings, "was migrated to this Cairn's format") {
		t.Errorf("the archive did not say that the seed's state file was migrated: %q", res.Warnings)
	}
}

// TestStopSaysWhatTheStoreDid: the Stop hook after a turn is often the first to read a
// snapshot damaged since; its read sets it aside and rebuilds it from the journal, and no
// later read has anything to say of it. The hook's line to the user says so.
func TestStopSaysWhatTheStoreDid(t *testing.T) {
	t.Parallel()
	e, en := startApex(t)
	garbageSnapshot(t, en)
	out := must(e.open("s1").Stop(engine.StopInput{}))(t)
	if !strings.Contains(out.SystemMessage, "quarantine/workflow-state.json-") {
		t.Errorf("the Stop hook did not say the damaged snapshot was set aside: %q", out.SystemMessage)
	}
}
