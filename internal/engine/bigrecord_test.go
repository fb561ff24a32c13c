package engine_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/store/storetest"
	"github.com/cairn-dev/cairn/internal/vars"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// A record an older Cairn let grow to the edge of the 1 MiB a record may hold (it took
// tasks without bound) cannot take one more write. The refusal says that, and what to do,
// rather than "invalid JSON at byte 1048576".
func TestWriteOverTheRecordCapSaysSo(t *testing.T) {
	t.Parallel()
	e, en := startApex(t)
	path, rec := storedRecord(t, en)
	var tasks []any
	for i := range 2000 {
		tasks = append(tasks, map[string]any{"id": fmt.Sprintf("t%04d", i), "phase": "analyze", "status": "pending", "attempts": 0, "note": strings.Repeat("n", 420)})
	}
	rec["tasks"] = tasks
	// To 100 bytes short of the cap: a transition adds more than that.
	b, _ := json.Marshal(rec)
	first := tasks[0].(map[string]any)
	first["note"] = first["note"].(string) + strings.Repeat("n", 1<<20-100-len(b))
	big := writeRecord(t, path, rec)
	_, err := e.open("s1").Transition(engine.TransitionRequest{To: "plan"})
	if err == nil || strings.Contains(err.Error(), "invalid JSON") || !strings.Contains(err.Error(), "1 MiB") ||
		!strings.Contains(err.Error(), "tasks take") || !strings.Contains(err.Error(), "shorten") || strings.Contains(err.Error(), "archive") {
		t.Fatalf("a write past the record cap: %v, want a refusal that says the record is full, that tasks fill it, and a step that keeps the workflow", err)
	}
	// The agent reads it: its own tool, not the person's command beside it.
	if msg := err.Error(); !strings.Contains(msg, engine.ShortenTasks) || strings.Contains(msg, "cairn task") {
		t.Errorf("refusal %q: want the agent's step (%s) alone", msg, engine.ShortenTasks)
	}
	if after, _ := os.ReadFile(path); string(after) != string(big) {
		t.Errorf("the refused write changed the record")
	}
	// What the refusal says to do works, and then the move does.
	must(e.open("s1").UpdateTask(engine.TaskRequest{ID: "t0000", Status: "pending", Note: "short"}))(t)
	must(e.open("s1").Transition(engine.TransitionRequest{To: "plan"}))(t)
}

// Variables fill a record too (256 of up to 64 KiB each): the refusal names them and the
// step that makes room, not archiving the live workflow. The record is filled by hand to
// where one more value does not fit, rather than by a SetVars per value, each writing the
// whole growing record.
func TestVarsFillingTheRecordSayUnset(t *testing.T) {
	t.Parallel()
	e, en := startApex(t)
	path, rec := storedRecord(t, en)
	value := strings.Repeat("v", vars.MaxValueLen)
	kv := map[string]any{}
	rec["vars"] = kv
	name := func(i int) string { return fmt.Sprintf("WF_BIG%02d", i) }
	set := 0
	for ; ; set++ {
		kv[name(set)] = value
		if b, _ := json.Marshal(rec); len(b)+len(value) > 1<<20 {
			break
		}
	}
	set++
	writeRecord(t, path, rec)
	_, err := e.open("s1").SetVars(map[string]string{name(set): value})
	if err == nil {
		t.Fatalf("%d values of %d bytes fit in one record", set+1, len(value))
	}
	if msg := err.Error(); !strings.Contains(msg, "1 MiB") || !strings.Contains(msg, "variables take") ||
		!strings.Contains(msg, engine.AskWhichVars) || strings.Contains(msg, "cairn vars") || strings.Contains(msg, "archive") {
		t.Fatalf("refusal %q: want the 1 MiB limit, the variables named, and the agent's step (%s), no CLI command", msg, engine.AskWhichVars)
	}
	en = e.open("s1")
	must(en.UnsetVars([]string{name(0)}))(t)
	must(en.SetVars(map[string]string{name(set): value}))(t)
}

// A variable set that took the record into the room kept for its ending, the checkpoint kept
// with a phase it left taking more of it than the variables, was told to archive the
// workflow (start_workflow with replace), as no operation shortens those: a smaller value, or
// one kept in a file, fits. It is told the variables' step.
func TestVarSetThatFillsTheRecordNamesItsOwnStep(t *testing.T) {
	t.Parallel()
	e, en := startApex(t)
	path, rec := storedRecord(t, en)
	cp, _ := json.Marshal(strings.Repeat("c", 500<<10))
	rec["phases"] = map[string]any{"analyze": map[string]any{"completed": false}, "review": map[string]any{"completed": true, "metadata": map[string]any{"checkpoint": json.RawMessage(cp)}}}
	var tasks []any
	for i := range 200 {
		tasks = append(tasks, map[string]any{"id": fmt.Sprintf("t%04d", i), "phase": "analyze", "status": "pending", "attempts": 0, "note": strings.Repeat("n", 1000)})
	}
	rec["tasks"] = tasks
	kv := map[string]any{}
	rec["vars"] = kv
	for i := 0; ; i++ { // to a value, less 4 KiB, short of the room kept for the ending
		b, _ := json.Marshal(rec)
		room := 1<<20 - 16<<10 - vars.MaxValueLen + 4<<10 - len(b)
		if room <= 40 {
			break
		}
		kv[fmt.Sprintf("WF_V%02d", i)] = strings.Repeat("v", min(room-20, vars.MaxValueLen))
	}
	writeRecord(t, path, rec)
	_, err := e.open("s1").SetVars(map[string]string{"WF_BIG": strings.Repeat("v", vars.MaxValueLen)})
	if err == nil || !strings.Contains(err.Error(), "keep a large value in a file") || strings.Contains(err.Error(), "replace") {
		t.Fatalf("a value that took the record into its last 16 KiB: %v, want the variables' step", err)
	}
	must(e.open("s1").SetVars(map[string]string{"WF_BIG": "in a file"}))(t)
}

// A record an older Cairn filled with artifacts (it took outputs without bound) is refused
// in words that name them, not "run cairn show", and with the agent's step that keeps the
// work (its tools, asking the user first), not `cairn archive`.
func TestArtifactsFillingTheRecordAreNamed(t *testing.T) {
	t.Parallel()
	e, en := startApex(t)
	path, rec := storedRecord(t, en)
	var arts []string
	for i := range 1000 {
		arts = append(arts, fmt.Sprintf("out/%04d/%s", i, strings.Repeat("a", 1000)))
	}
	rec["artifacts"] = arts
	b, _ := json.Marshal(rec)
	arts[0] += strings.Repeat("a", 1<<20-100-len(b))
	writeRecord(t, path, rec)
	_, err := e.open("s1").Transition(engine.TransitionRequest{To: "plan"})
	if err == nil || !strings.Contains(err.Error(), "1 MiB") || !strings.Contains(err.Error(), "artifacts take") || strings.Contains(err.Error(), "cairn show") ||
		strings.Contains(err.Error(), "cairn archive") || !strings.Contains(err.Error(), engine.ArchiveToGoOn) {
		t.Fatalf("a write past the record cap filled by artifacts: %v, want a refusal that names them", err)
	}
}

// storedRecord is the path of the workflow record en keeps and what it holds, for a test to
// grow past what the tools allow and write back with writeRecord.
func storedRecord(t *testing.T, en *engine.Engine) (string, map[string]any) {
	t.Helper()
	path := filepath.Join(en.StateDir(), store.WorkflowFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	return path, rec
}

// writeRecord writes rec to path as the next revision and returns what it wrote.
func writeRecord(t *testing.T, path string, rec map[string]any) []byte {
	t.Helper()
	rec["revision"] = rec["revision"].(float64) + 1
	big, _ := json.Marshal(rec)
	if err := os.WriteFile(path, big, 0o600); err != nil {
		t.Fatal(err)
	}
	return big
}

// A record no one part of which fills it (variables, tasks, a phase's checkpoint, moves and
// artifacts, each under a quarter of it) is refused with the step that shows what does: the
// agent runs cairn show itself, in its Bash tool (the plugin's bin/ is on its PATH), rather
// than asking the user to run it.
func TestRecordFilledByNoOnePartSaysRunShow(t *testing.T) {
	t.Parallel()
	e, en := startApex(t)
	path, rec := storedRecord(t, en)
	kv := map[string]any{}
	var tasks, history []any
	for i := range 40 { // fewer than the moves a record keeps: the move adds one
		kv[fmt.Sprintf("WF_V%02d", i)] = strings.Repeat("v", 5700)
		history = append(history, map[string]any{"from": "analyze", "to": "analyze", "at": "2026-11-29T10:00:00Z", "note": strings.Repeat("h", 5000)})
	}
	for i := range 200 {
		tasks = append(tasks, map[string]any{"id": fmt.Sprintf("t%04d", i), "phase": "analyze", "status": "pending", "attempts": 0, "note": strings.Repeat("n", 1100)})
	}
	rec["vars"], rec["tasks"], rec["history"] = kv, tasks, history
	// Kept with a phase left before: the move would replace analyze's, and be told that.
	rec["phases"] = map[string]any{"analyze": map[string]any{"completed": false}, "review": map[string]any{"completed": true, "metadata": map[string]any{"checkpoint": strings.Repeat("c", 230_000)}}}
	rec["artifacts"] = []string{""}
	b, _ := json.Marshal(rec)
	rec["artifacts"] = []string{strings.Repeat("a", 1<<20-100-len(b))}
	writeRecord(t, path, rec)
	_, err := e.open("s1").Transition(engine.TransitionRequest{To: "plan"})
	if err == nil || !strings.Contains(err.Error(), "1 MiB") || !strings.Contains(err.Error(), "No one part a change shortens fills it: "+engine.ShowWhatFills) {
		t.Fatalf("a write past the record cap filled by no one part: %v, want a refusal with the step that shows what fills it", err)
	}
	if msg := err.Error(); strings.Contains(msg, "ask the user to run `cairn show`") || !strings.Contains(msg, "run `cairn show` in your Bash tool") {
		t.Errorf("refusal %q: want the agent to run cairn show itself", msg)
	}
}

// fillWithVars fills the workflow's record with variables as close to the 1 MiB a record may
// hold as set_vars takes it: values of 64 KiB (set_vars's most) written in by hand to 40 KiB
// short of the cap, as set_vars would have set them, then through set_vars as the agent
// would, each value sized to what set_vars leaves of the record (the cap less the room kept
// for its ending, and a few bytes for what the write changes besides), halved when refused,
// to within a KiB. It returns the variables set.
func fillWithVars(t *testing.T, en *engine.Engine) map[string]string {
	t.Helper()
	path, rec := storedRecord(t, en)
	set := map[string]string{}
	kv, _ := rec["vars"].(map[string]any)
	if kv == nil {
		kv = map[string]any{}
		rec["vars"] = kv
	}
	for i := 0; ; i++ {
		name, value := fmt.Sprintf("WF_BULK%02d", i), strings.Repeat("v", vars.MaxValueLen)
		kv[name] = value
		if b, _ := json.Marshal(rec); len(b) > 1<<20-40<<10 {
			delete(kv, name)
			break
		}
		set[name] = value
	}
	writeRecord(t, path, rec)
	for i := 0; ; i++ {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("WF_FILL%02d", i)
		value := strings.Repeat("v", max(0, min(1<<20-workflow.EndingRoom-128-int(fi.Size())-len(`,"":""`)-len(name), vars.MaxValueLen)))
		for len(value) >= 1<<10 {
			if _, err := en.SetVars(map[string]string{name: value}); err == nil {
				set[name] = value
				break
			}
			value = value[:len(value)/2] // refused: set_vars takes less than that
		}
		if len(value) < 1<<10 {
			return set // within a KiB of what set_vars takes
		}
	}
}

// A record filled by set_vars to as near the 1 MiB cap as set_vars takes it can still be
// ended every way there is: replaced by a new start (the step the refusals name), completed,
// archived, expired, and by a move into a terminal phase carrying a long note. Each ending
// adds to the record (its status, an outcome, a history entry), and before the record kept
// room for it, the write of the ending was refused as over the cap: nothing could end or
// replace the workflow. The archive keeps every variable.
func TestRecordFilledToTheCapCanStillEnd(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("<&>", 500/3) // 500 characters, each written escaped (6 bytes)
	for _, tc := range []struct {
		name   string
		before func(t *testing.T, e *env, en *engine.Engine) // moves made before the record is filled
		end    func(e *env, en *engine.Engine) error
		reason string
	}{
		{"replace", nil, func(e *env, en *engine.Engine) error {
			_, err := en.Start(engine.StartRequest{Type: "apex", Context: "next", Replace: true})
			return err
		}, "replaced"},
		{"complete", nil, func(e *env, en *engine.Engine) error { _, err := en.CompleteByPerson(long); return err }, "completed"},
		{"archive", nil, func(e *env, en *engine.Engine) error { _, err := en.Archive("abandoned"); return err }, "abandoned"},
		{"expire", nil, func(e *env, en *engine.Engine) error {
			e.clock.Add(25 * time.Hour)
			_, err := en.ExpireTTL(false)
			return err
		}, "expired"},
		{"terminal move", func(t *testing.T, e *env, en *engine.Engine) {
			must(en.Transition(engine.TransitionRequest{To: "plan"}))(t)
			must(e.open("person").Approve("ok"))(t)
			for _, to := range []string{"implement", "review"} {
				must(en.Transition(engine.TransitionRequest{To: to}))(t)
			}
		}, func(e *env, en *engine.Engine) error {
			_, err := en.Transition(engine.TransitionRequest{To: "git-commit", Note: long})
			return err
		}, "completed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, en := startApex(t)
			id := storetest.ReadRecord(t, en.StateDir()).WorkflowID
			if tc.before != nil {
				tc.before(t, e, en)
			}
			set := fillWithVars(t, en)
			if err := tc.end(e, en); err != nil {
				t.Fatalf("%s of a record filled to the cap: %v", tc.name, err)
			}
			st, err := store.Open(en.StateDir())
			if err != nil {
				t.Fatal(err)
			}
			archives, _, err := st.RecentArchives(5)
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(archives, func(a store.ArchiveInfo) bool { return a.WorkflowID == id })
			if i < 0 || archives[i].Reason != tc.reason {
				t.Fatalf("archives after the %s: %+v, want %s archived as %s", tc.name, archives, id, tc.reason)
			}
			data, err := st.ReadArchiveRecord(archives[i].Dir)
			if err != nil {
				t.Fatal(err)
			}
			r, err := store.ParseRecord(data)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range set {
				if r.Vars[k] != v {
					t.Fatalf("the archived record lost %s (%d bytes of %d)", k, len(r.Vars[k]), len(v))
				}
			}
		})
	}
}

// A record an older Cairn let fill to a byte short of the cap (before a record kept room
// for its ending) is still ended, replaced, archived or completed: what gives is the oldest
// moves the record keeps, which its journal keeps all of (cairn history lists them), and the
// caller is told; every variable, and a replace's own entry (which a retry after a crash
// reads), stay in the archived record.
func TestOlderRecordAtTheCapEndsGivingOldMoves(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		end  func(en *engine.Engine) (*engine.Result, error)
	}{
		{"replace", func(en *engine.Engine) (*engine.Result, error) {
			return en.Start(engine.StartRequest{Type: "loop", Context: "next", Replace: true})
		}},
		{"archive", func(en *engine.Engine) (*engine.Result, error) { return en.Archive("abandoned") }},
		{"complete", func(en *engine.Engine) (*engine.Result, error) { return en.CompleteByPerson(strings.Repeat("&", 500)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			olderRecordAtTheCapEnds(t, tc.name, tc.end)
		})
	}
}

func olderRecordAtTheCapEnds(t *testing.T, name string, end func(en *engine.Engine) (*engine.Result, error)) {
	e := newEnv(t)
	en := startLoop(t, e)
	note := strings.Repeat("<", 500) // written escaped: 3000 bytes a move
	phase := "a"
	const moves = workflow.MaxHistory - 10 // fewer than the record keeps: the replace's entry adds to them
	for range moves {
		phase = must(en.Transition(engine.TransitionRequest{To: loopNext[phase], Note: note}))(t).Phase
	}
	path, rec := storedRecord(t, en)
	id := rec["workflow_id"].(string)
	kv := map[string]any{}
	rec["vars"] = kv
	for i := 0; ; i++ {
		kv[fmt.Sprintf("WF_OLD%02d", i)] = strings.Repeat("v", vars.MaxValueLen)
		if b, _ := json.Marshal(rec); len(b) > 1<<20-vars.MaxValueLen {
			break
		}
	}
	kv["WF_LAST"] = ""
	b, _ := json.Marshal(rec)
	kv["WF_LAST"] = strings.Repeat("v", 1<<20-1-len(b)) // a byte short: any ending adds more
	writeRecord(t, path, rec)
	res := must(end(en))(t)
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "cairn history "+id) }) {
		t.Errorf("warnings %q: want the moves left out of the archived record said, with where they all are", res.Warnings)
	}
	st, err := store.Open(en.StateDir())
	if err != nil {
		t.Fatal(err)
	}
	dir, err := st.ArchiveDirOf(id)
	if err != nil || dir == "" {
		t.Fatalf("archive of %s: %q, %v", id, dir, err)
	}
	data, err := st.ReadArchiveRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := store.ParseRecord(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Vars) != len(kv) || r.Vars["WF_LAST"] != kv["WF_LAST"] {
		t.Errorf("the archived record keeps %d variables of %d", len(r.Vars), len(kv))
	}
	if last := r.History[len(r.History)-1]; name == "replace" && (r.Status != workflow.StatusArchived || !strings.HasPrefix(last.Note, "archived: replaced by ")) {
		t.Errorf("archived record: status %s, last entry %+v; want archived, replaced by the new one", r.Status, last)
	}
	if kept := slices.DeleteFunc(r.History, func(h workflow.HistoryEntry) bool { return h.Note != note }); len(kept) >= moves {
		t.Errorf("the archived record keeps %d of the %d moves: nothing gave", len(kept), moves)
	}
	evs := slices.DeleteFunc(must(en.History(id))(t), func(ev engine.Event) bool { return ev.Kind != "transition" })
	if len(evs) != moves {
		t.Errorf("cairn history lists %d moves; want all %d", len(evs), moves)
	}
}

// A record an older Cairn let moves' outputs fill to a byte short of the cap, with no moves
// to give, is still replaced (the step the refusal names for outputs): what gives is the
// outputs its phases keep that its artifacts list too, and the caller is told; every path
// stays in the artifacts.
func TestOlderRecordFullOfOutputsEndsGivingThePhasesCopies(t *testing.T) {
	t.Parallel()
	e, en := startApex(t)
	path, rec := storedRecord(t, en)
	id := rec["workflow_id"].(string)
	var outs []string
	for i := range 500 {
		outs = append(outs, fmt.Sprintf("out/%03d/%s", i, strings.Repeat("p", 1000)))
	}
	rec["phases"] = map[string]any{"analyze": map[string]any{"completed": false, "outputs": outs}}
	rec["artifacts"] = outs
	kv := map[string]any{"WF_LAST": ""}
	rec["vars"] = kv
	b, _ := json.Marshal(rec)
	kv["WF_LAST"] = strings.Repeat("v", 1<<20-1-len(b))
	writeRecord(t, path, rec)
	res := must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "next", Replace: true}))(t)
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "outputs from its phases, which its artifacts list") }) {
		t.Errorf("warnings %q: want the outputs left out of the phases said", res.Warnings)
	}
	st, err := store.Open(en.StateDir())
	if err != nil {
		t.Fatal(err)
	}
	dir, err := st.ArchiveDirOf(id)
	if err != nil || dir == "" {
		t.Fatalf("archive of %s: %q, %v", id, dir, err)
	}
	data, err := st.ReadArchiveRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := store.ParseRecord(data)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Artifacts, outs) || r.Vars["WF_LAST"] != kv["WF_LAST"] {
		t.Errorf("the archived record keeps %d artifacts of %d, WF_LAST %d bytes", len(r.Artifacts), len(outs), len(r.Vars["WF_LAST"]))
	}
}

// A record an older Cairn let artifacts alone fill to the cap (no moves, no
// phase outputs to give) is still completed, archived, expired or replaced: what gives is its
// oldest artifacts, which its journal keeps in the record as it stood before its end, and the
// caller is told. Before, every ending was refused, and the refusal named replace, which was
// refused the same way: the workflow could never end.
func TestOlderRecordFullOfArtifactsEnds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		end  func(e *env, en *engine.Engine) (*engine.Result, error)
	}{
		{"complete", func(e *env, en *engine.Engine) (*engine.Result, error) {
			return en.CompleteByPerson(strings.Repeat("&", 500))
		}},
		{"archive", func(e *env, en *engine.Engine) (*engine.Result, error) { return en.Archive("abandoned") }},
		{"expire", func(e *env, en *engine.Engine) (*engine.Result, error) {
			e.clock.Add(25 * time.Hour)
			return en.ExpireTTL(false)
		}},
		{"replace", func(e *env, en *engine.Engine) (*engine.Result, error) {
			return en.Start(engine.StartRequest{Type: "apex", Context: "next", Replace: true})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, en := startApex(t)
			var id string
			var arts []string
			// Written through the store, as an older Cairn wrote it: its journal holds it.
			editSlot(t, en, func(cur []byte) ([]byte, error) {
				var rec map[string]any
				if err := json.Unmarshal(cur, &rec); err != nil {
					return nil, err
				}
				id = rec["workflow_id"].(string)
				for i := range 1000 {
					arts = append(arts, fmt.Sprintf("out/%04d/%s", i, strings.Repeat("a", 1000)))
				}
				rec["artifacts"] = arts
				rec["revision"] = rec["revision"].(float64) + 1
				b, _ := json.Marshal(rec)
				arts[len(arts)-1] += strings.Repeat("a", 1<<20-len(b)) // at the cap
				rec["artifacts"] = arts
				return json.Marshal(rec)
			})
			res, err := tc.end(e, en)
			if err != nil {
				t.Fatalf("%s of a record artifacts fill to the cap: %v", tc.name, err)
			}
			// In Warnings, whichever the ending: an expiry said it in its message, which the
			// model, reading the structured content, did not see as a warning.
			if !slices.ContainsFunc(res.Warnings, func(w string) bool {
				return strings.Contains(w, "oldest artifact") && strings.Contains(w, ", which its journal keeps")
			}) {
				t.Errorf("%s; warnings %q: want the artifacts left out of the archived record said, with where they are kept", res.Message, res.Warnings)
			}
			st := must(store.Open(en.StateDir()))(t)
			defer st.Close()
			dir, err := st.ArchiveDirOf(id)
			if err != nil || dir == "" {
				t.Fatalf("archive of %s: %q, %v", id, dir, err)
			}
			r, err := store.ParseRecord(must(st.ReadArchiveRecord(dir))(t))
			if err != nil {
				t.Fatal(err)
			}
			if n := len(r.Artifacts); n == 0 || n == len(arts) || !slices.Equal(r.Artifacts, arts[len(arts)-n:]) {
				t.Errorf("the archived record keeps %d artifacts of %d: want the newest, some left out", n, len(arts))
			}
			states := must(must(st.ReadArchiveJournal(dir))(t).States())(t)
			if !slices.ContainsFunc(states, func(s store.Record) bool {
				r, err := store.ParseRecord(s.Snapshot)
				return err == nil && slices.Equal(r.Artifacts, arts)
			}) {
				t.Errorf("the archive's journal holds no state with all %d artifacts", len(arts))
			}
		})
	}
}

// A record whose checkpoints kept with phases fill it within the room kept for its ending
// refused a move with "move with a small checkpoint or none" when the move carried none: the
// model, doing what it was told, was refused the same way again. Only a move out of a phase
// replaces the checkpoint kept with it: that of the phase the workflow is in gives way to a
// small one, and the refusal names it; those kept with the phases it left earlier no
// operation shortens, and the refusal names the step that keeps the work. A move whose own
// checkpoint took the record into that room was told what filled the record most (its
// variables here, to ask the user to unset), though the same move with a smaller checkpoint
// fits: it is told that. So is a move whose own outputs took it there, that fewer fit.
func TestCheckpointsFillingTheRecordNameAStepThatWorks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, at, kept, to, step string
		carried                  int // the size of the checkpoint the move carries
		outputs                  int // how many outputs of about a KiB the move carries
	}{
		{"the phase it is in", "analyze", "analyze", "plan", "leave that phase with a small checkpoint", 0, 0},
		{"a phase it left", "plan", "analyze", "analyze", engine.ArchiveToGoOn, 0, 0},
		{"the move's own", "analyze", "", "plan", "move with a smaller checkpoint", 100 << 10, 0},
		{"the move's outputs", "analyze", "", "plan", "move with fewer, naming the directory", 0, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, en := startApex(t)
			path, rec := storedRecord(t, en)
			rec["state"] = tc.at
			phases := rec["phases"].(map[string]any)
			cp, _ := json.Marshal(strings.Repeat("c", 512<<10-2))
			phases[tc.at] = map[string]any{"completed": false}
			if tc.kept != "" {
				phases[tc.kept] = map[string]any{"completed": tc.kept != tc.at, "metadata": map[string]any{"checkpoint": json.RawMessage(cp)}}
			}
			kv := map[string]any{}
			rec["vars"] = kv
			for i := 0; ; i++ { // to 8 KiB short of the cap, within the room kept for the ending
				b, _ := json.Marshal(rec)
				room := 1<<20 - 8<<10 - tc.carried - tc.outputs<<10 - len(b)
				if room <= 40 {
					break
				}
				kv[fmt.Sprintf("WF_V%02d", i)] = strings.Repeat("v", min(room-20, 60<<10))
			}
			writeRecord(t, path, rec)
			var carried json.RawMessage
			if tc.carried > 0 {
				carried, _ = json.Marshal(map[string]string{"data": strings.Repeat("c", tc.carried)})
			}
			var outputs []string
			for i := range tc.outputs {
				outputs = append(outputs, fmt.Sprintf("out/%02d/%s", i, strings.Repeat("o", 1000)))
			}
			_, err := e.open("s1").Transition(engine.TransitionRequest{To: tc.to, Checkpoint: carried, Outputs: outputs})
			if err == nil || !strings.Contains(err.Error(), tc.step) || strings.Contains(err.Error(), "or none") || strings.Contains(err.Error(), "variables") {
				t.Fatalf("a move with %d bytes of checkpoint and %d outputs: %v, want a refusal naming %q", len(carried), len(outputs), err, tc.step)
			}
			if tc.kept == tc.at || tc.carried > 0 || tc.outputs > 0 { // the step named works
				must(e.open("s1").Transition(engine.TransitionRequest{To: tc.to, Checkpoint: json.RawMessage(`{"in":"named"}`), Outputs: []string{"out"}}))(t)
			}
		})
	}
}

// A record an older Cairn let the checkpoints kept with the phases it left fill to the cap
// (no moves, outputs or artifacts to give) was refused every ending, and the refusal named
// replace, refused the same way: it could never end. It ends leaving out those checkpoints,
// which no move replaces now and its journal keeps, and the caller is told.
func TestOlderRecordFullOfPhaseCheckpointsEnds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		end  func(e *env, en *engine.Engine) (*engine.Result, error)
	}{
		{"complete", func(e *env, en *engine.Engine) (*engine.Result, error) {
			return en.CompleteByPerson(strings.Repeat("&", 500))
		}},
		{"archive", func(e *env, en *engine.Engine) (*engine.Result, error) { return en.Archive("abandoned") }},
		{"expire", func(e *env, en *engine.Engine) (*engine.Result, error) {
			e.clock.Add(25 * time.Hour)
			return en.ExpireTTL(false)
		}},
		{"replace", func(e *env, en *engine.Engine) (*engine.Result, error) {
			return en.Start(engine.StartRequest{Type: "apex", Context: "next", Replace: true})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, en := startApex(t)
			var id string
			editSlot(t, en, func(cur []byte) ([]byte, error) {
				var rec map[string]any
				if err := json.Unmarshal(cur, &rec); err != nil {
					return nil, err
				}
				id = rec["workflow_id"].(string)
				phases := rec["phases"].(map[string]any)
				cp := func(n int) json.RawMessage { b, _ := json.Marshal(strings.Repeat("c", n)); return b }
				for _, p := range []string{"plan", "implement", "review"} {
					phases[p] = map[string]any{"completed": true, "metadata": map[string]any{"checkpoint": cp(300 << 10)}}
				}
				rec["revision"] = rec["revision"].(float64) + 1
				b, _ := json.Marshal(rec)
				phases["review"] = map[string]any{"completed": true, "metadata": map[string]any{"checkpoint": cp(300<<10 + 1<<20 - len(b))}}
				return json.Marshal(rec)
			})
			res, err := tc.end(e, en)
			if err != nil {
				t.Fatalf("%s of a record phase checkpoints fill to the cap: %v", tc.name, err)
			}
			if !slices.ContainsFunc(res.Warnings, func(w string) bool {
				return strings.Contains(w, "leaves out the checkpoint kept with a phase, which its journal keeps")
			}) {
				t.Errorf("%s; warnings %q: want the checkpoints left out of the archived record said, with where they are kept", res.Message, res.Warnings)
			}
			st := must(store.Open(en.StateDir()))(t)
			defer st.Close()
			dir, err := st.ArchiveDirOf(id)
			if err != nil || dir == "" {
				t.Fatalf("archive of %s: %q, %v", id, dir, err)
			}
			r, err := store.ParseRecord(must(st.ReadArchiveRecord(dir))(t))
			if err != nil || r.Status == workflow.StatusActive {
				t.Fatalf("archived record: %v", err)
			}
			states := must(must(st.ReadArchiveJournal(dir))(t).States())(t)
			if !slices.ContainsFunc(states, func(s store.Record) bool {
				r, err := store.ParseRecord(s.Snapshot)
				return err == nil && workflow.PhaseCheckpointsSize(r) > 900<<10
			}) {
				t.Errorf("the archive's journal holds no state with the checkpoints")
			}
		})
	}
}

// A move into a terminal phase carrying a checkpoint that takes the record past 1 MiB is
// refused with the step that fits (a smaller checkpoint), as any move is: the checkpoint is in
// no record before the ending, so leaving it out to fit would lose it.
func TestEndingMoveKeepsItsOwnCheckpoint(t *testing.T) {
	t.Parallel()
	e, en := startApex(t)
	path, rec := storedRecord(t, en)
	rec["state"] = "review"
	rec["phases"] = map[string]any{"review": map[string]any{"completed": false}}
	kv := map[string]any{}
	rec["vars"] = kv
	for i := 0; ; i++ { // to 8 KiB short of the cap, within the room kept for the ending
		b, _ := json.Marshal(rec)
		room := 1<<20 - 8<<10 - len(b)
		if room <= 40 {
			break
		}
		kv[fmt.Sprintf("WF_V%02d", i)] = strings.Repeat("v", min(room-20, 60<<10))
	}
	before := writeRecord(t, path, rec)
	carried, _ := json.Marshal(map[string]string{"data": strings.Repeat("c", 100<<10)})
	_, err := e.open("s1").Transition(engine.TransitionRequest{To: "git-commit", Checkpoint: carried})
	if err == nil || !strings.Contains(err.Error(), "move with a smaller checkpoint") {
		t.Fatalf("an ending move with %d bytes of checkpoint past the cap: %v, want a refusal naming a smaller checkpoint", len(carried), err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("the refused move changed the record")
	}
	must(e.open("s1").Transition(engine.TransitionRequest{To: "git-commit", Checkpoint: json.RawMessage(`{"in":"named"}`)}))(t)
}
