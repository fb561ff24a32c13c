package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// Debounce: one write is several events (temp file, rename, directory sync), and a burst of
// writes should print once, but a steady stream must still show within maxDelay.
const (
	quiet    = 75 * time.Millisecond
	maxDelay = 500 * time.Millisecond
	// readerPoll is how often watch looks whether the reader of its piped output has gone.
	readerPoll = 500 * time.Millisecond
)

func runWatch(a *app, _ []string, e *engine.Engine) error {
	ctx, stop := signal.NotifyContext(a.ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer pipeErrors()()
	err := a.watchMade(ctx, e)
	if readerLeft(err) {
		// The reader went between two looks for it (readerGone): it ends as they would.
		a.outputDone()
		return nil
	}
	return err
}

// watchLine is one line of `cairn watch --json`. Every line has every key, so that a script
// reads the first line (no changes yet) or one with no workflow as it reads any other.
type watchLine struct {
	At         time.Time  `json:"at"`
	WorkflowID string     `json:"workflow_id"`
	Revision   int64      `json:"revision"`
	Phase      string     `json:"phase"`
	SessionID  string     `json:"session_id"`
	UpdatedAt  *time.Time `json:"updated_at"` // null when no workflow is active
	Changes    []string   `json:"changes"`    // what changed, in words: "phase analyze -> plan", "vars set PLAN"
	By         string     `json:"by"`         // who changed it: "cli", "mcp in session S"
}

// newWatchLine is the line for s (nil: no workflow) at now.
func newWatchLine(now time.Time, s *engine.Snapshot, changes []string, by string) watchLine {
	l := watchLine{At: now, Changes: orEmpty(changes), By: by}
	if s != nil {
		l.WorkflowID, l.Revision, l.Phase, l.SessionID = s.WorkflowID, s.Revision, s.Phase, s.SessionID
		if !s.UpdatedAt.IsZero() {
			l.UpdatedAt = &s.UpdatedAt
		}
	}
	return l
}

// watchMade is watch in a git project Cairn has not run in yet too, where the engine made no
// state directory (watch makes none: onState): it prints the current position (no workflow),
// waits for the first session or command to make the directory, then watches it from there.
func (a *app) watchMade(ctx context.Context, e *engine.Engine) error {
	if _, err := os.Lstat(e.StateDir()); !errors.Is(err, fs.ErrNotExist) || !e.InGit() {
		return a.watch(ctx, e, nil)
	}
	first, err := e.Snapshot()
	if err != nil {
		return a.watch(ctx, e, nil) // which says why
	}
	if err := a.watchLine(e, nil, first, nil, nil); err != nil {
		return err
	}
	if made, err := waitMade(ctx, e.StateDir(), readerGone(a.stdout)); !made || err != nil {
		return err
	}
	// The engine read the missing directory as empty and reads no other: open it anew.
	e.Close()
	a.eng = nil
	if e, err = a.engine(); err != nil {
		return err
	}
	return a.watch(ctx, e, &first)
}

// waitMade waits until dir is there (true), ctx ends or gone says the reader of the output
// has gone (false). It watches the nearest directory there on the way to dir, and the next
// one down once that is made.
func waitMade(ctx context.Context, dir string, gone func() bool) (bool, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return false, watchFailed("starting the file watcher", err)
	}
	defer w.Close()
	var readerTick <-chan time.Time
	if gone != nil {
		t := time.NewTicker(readerPoll)
		defer t.Stop()
		readerTick = t.C
	}
	watching := ""
	for {
		there := dir
		for _, err := os.Lstat(there); err != nil && filepath.Dir(there) != there; _, err = os.Lstat(there) {
			there = filepath.Dir(there)
		}
		if there == dir {
			return true, nil
		}
		if there != watching {
			// Looked at again once watched: one made between the look and the watch is seen.
			if err := w.Add(there); err != nil {
				return false, watchFailed("watching "+there, err)
			}
			watching = there
			continue
		}
		select {
		case <-ctx.Done():
			return false, nil
		case <-readerTick:
			if gone() {
				return false, nil
			}
		case _, ok := <-w.Events:
			if !ok {
				return false, nil
			}
		case err, ok := <-w.Errors:
			if !ok {
				return false, nil
			}
			return false, &codeError{code: ExitInternal, msg: fmt.Sprintf("watching %s: %v", watching, err)}
		}
	}
}

// watch prints the current position and then one line per change until ctx ends. It
// watches the state directory, not the file: the file is replaced by rename on every write,
// which a watch on the file itself would lose (on Linux the new file shows as a CREATE).
// first, when not nil, is the position already printed.
func (a *app) watch(ctx context.Context, e *engine.Engine, first *engine.Snapshot) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return watchFailed("starting the file watcher", err)
	}
	defer w.Close()
	dir := e.StateDir()
	moved := func() bool { return false }
	if err := w.Add(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) && !e.InGit() {
			// Outside a project the state directory is not created (commands.go, onState).
			return &codeError{code: ExitRefused, msg: fmt.Sprintf("no project here (%s, and CLAUDE_PROJECT_DIR is unset or relative), so no state to watch: run it in the project", engine.NoGit(e.ProjectRoot()))}
		}
		return watchFailed("watching "+dir, err)
	}
	// The engine holds the state directory open, so its own removal sends it no event until
	// watch closes it; the directory above it sees the name go. Without that watch, the
	// removal is still seen at the look after its files' events, when it comes soon enough.
	parent := filepath.Dir(dir)
	_ = w.Add(parent)
	// The directory watched, to tell it from one made anew in its place: the engine reads on
	// from the one it holds open, which no write will touch again.
	watched, _ := os.Lstat(dir)
	// Held open to tell, once the name is gone, a directory removed from one moved away (the
	// project moved or renamed): its files are all still there.
	if held, err := os.Open(dir); err == nil {
		defer held.Close()
		moved = func() bool {
			fi, err := held.Stat()
			n, ok := uint64(0), false
			if err == nil {
				n, ok = durable.LinkCount(fi)
			}
			return ok && n > 0
		}
	}
	// The store's checkpoints/NAME.json, absent until the first save: added when it appears.
	cpDir := filepath.Join(dir, "checkpoints")
	// A checkpoints directory there but not watched (a kernel limit) is said, not lost quietly.
	addCheckpoints := func() bool {
		err := w.Add(cpDir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			a.warn(watchFailed("watching "+cpDir+" (checkpoint saves are not shown)", err).Error())
		}
		return err == nil
	}
	cpWatched := addCheckpoints()
	// What checkpoints/ held when last looked at: each file's modification time by name, to
	// tell after an overflow of the kernel's queue which were saved or deleted meanwhile.
	look := func() map[string]time.Time {
		held := map[string]time.Time{}
		ents, _ := durable.ReadDirPath(cpDir)
		for _, e := range ents {
			if n, ok := checkpointName(e.Name()); ok {
				if fi, err := e.Info(); err == nil {
					held[n] = fi.ModTime()
				}
			}
		}
		return held
	}
	seen := look()
	// Watch first, then read, so a change between the two is not missed.
	last := first
	var lastRec *workflow.Record
	show := func() error {
		s, err := e.Snapshot()
		if err != nil {
			a.warn("reading the workflow: " + err.Error())
			return nil
		}
		if last != nil && *last == s {
			return nil
		}
		var rec *workflow.Record
		if s.WorkflowID != "" {
			rec, _ = readRecord(e, s.WorkflowID)
		}
		if err := a.watchLine(e, last, s, lastRec, rec); err != nil {
			return err
		}
		last, lastRec = &s, rec
		return nil
	}
	cps := map[string]bool{} // checkpoints changed since the last line about them
	showCheckpoints := func() error {
		if len(cps) == 0 {
			return nil
		}
		names := slices.Sorted(maps.Keys(cps))
		clear(cps)
		seen = look()
		for _, n := range names {
			what := "checkpoint " + n + " saved"
			if _, err := os.Lstat(filepath.Join(cpDir, n+".json")); err != nil {
				what = "checkpoint " + n + " deleted"
			}
			if err := a.watchNote(last, what); err != nil {
				return err
			}
		}
		return nil
	}
	if err := show(); err != nil {
		return err
	}
	// Since Go 1.23 a stopped timer sends nothing, and Reset starts it afresh.
	timer := time.NewTimer(maxDelay)
	timer.Stop()
	// `cairn watch | head -1`: a write would find the pipe closed, but while nothing changes
	// there is no write, so the reader is looked for; when it is gone watch ends, as on Ctrl-C.
	var readerTick <-chan time.Time
	gone := readerGone(a.stdout)
	if gone != nil {
		t := time.NewTicker(readerPoll)
		defer t.Stop()
		readerTick = t.C
	}
	var pending time.Time // when the first unprinted event came
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-readerTick:
			if gone() {
				return nil
			}
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if !cpWatched && ev.Name == cpDir && ev.Has(fsnotify.Create) {
				// Files saved between the directory's creation and this watch were missed:
				// the directory is new, so whatever is in it is.
				if cpWatched = addCheckpoints(); cpWatched {
					ents, _ := durable.ReadDirPath(cpDir)
					for _, e := range ents {
						if n, ok := checkpointName(e.Name()); ok {
							cps[n] = true
						}
					}
				}
			}
			switch {
			case ev.Name == dir:
				if !ev.Has(fsnotify.Remove) && !ev.Has(fsnotify.Rename) {
					continue
				}
			case filepath.Dir(ev.Name) == parent:
				continue // the state directory's neighbours
			case ev.Name == cpDir:
				if len(cps) == 0 {
					continue
				}
			case filepath.Dir(ev.Name) == cpDir:
				n, ok := checkpointName(ev.Name)
				if !ok || ev.Has(fsnotify.Chmod) && !ev.Has(fsnotify.Write) {
					continue // temp files; a chmod is no change of content
				}
				cps[n] = true
			case filepath.Base(ev.Name) != engine.WorkflowFile && !ev.Has(fsnotify.Remove):
				continue // journal, locks, temp files: the snapshot is what moves
			}
			now := time.Now()
			if pending.IsZero() {
				pending = now
			}
			timer.Reset(min(quiet, maxDelay-now.Sub(pending)))
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// The kernel dropped events, the change's among them maybe: read it again, and
				// the checkpoints, whose changes are known only by their events.
				a.warn("watching " + dir + ": the kernel's event queue overflowed and changes were not seen: the workflow and its checkpoints are read again")
				now := look()
				for n, t := range now {
					if was, ok := seen[n]; !ok || !was.Equal(t) {
						cps[n] = true
					}
				}
				for n := range seen {
					if _, ok := now[n]; !ok {
						cps[n] = true
					}
				}
				if pending.IsZero() {
					pending = time.Now()
				}
				timer.Reset(quiet)
				continue
			}
			a.warn("watching " + dir + ": " + err.Error())
		case <-timer.C:
			pending = time.Time{}
			// Files went, maybe the directory with them: no write will show here again.
			fi, err := os.Lstat(dir)
			if errors.Is(err, fs.ErrNotExist) {
				return stateGone(dir, e.ProjectRoot(), moved())
			}
			if err == nil && watched != nil && !os.SameFile(watched, fi) {
				return &codeError{code: ExitInternal, msg: fmt.Sprintf("the state directory %s was removed and made anew: run cairn watch again to follow the new one", dir)}
			}
			if err := show(); err != nil {
				return err
			}
			if err := showCheckpoints(); err != nil {
				return err
			}
		}
	}
}

// watchFailed is watch's end when the file watcher cannot start or watch: err's own text, or
// the kernel limit it ran into, which is what a person can change.
func watchFailed(what string, err error) error {
	if limit := watchLimit(err); limit != "" {
		return &codeError{code: ExitInternal, msg: what + ": " + limit + "; close a program that watches many files or raise the limit, then run cairn watch again"}
	}
	return &codeError{code: ExitInternal, msg: fmt.Sprintf("%s: %v", what, err)}
}

// stateGone is watch's end when the state directory dir of the project root is no longer
// there: removed, or moved away whole (moved).
func stateGone(dir, root string, moved bool) error {
	msg := fmt.Sprintf("the state directory %s was removed: nothing left to watch", dir)
	if moved {
		msg = fmt.Sprintf("the state directory %s was moved away, not removed: nothing left to watch here; put it back, then run cairn watch again", dir)
		if _, err := os.Lstat(root); errors.Is(err, fs.ErrNotExist) {
			msg = fmt.Sprintf("the project %s was moved or renamed, its state directory with it: run cairn watch in the project where it is now", root)
		}
	}
	return &codeError{code: ExitInternal, msg: msg}
}

// checkpointName is the checkpoint the file checkpoints/NAME.json holds; false for temp files.
func checkpointName(file string) (string, bool) {
	n, ok := strings.CutSuffix(filepath.Base(file), ".json")
	return n, ok && !strings.HasPrefix(n, ".")
}

// watchLine prints one change: a JSON line, or for a person the time, the workflow, what
// changed and who changed it (and the type and context when the workflow is new).
func (a *app) watchLine(e *engine.Engine, prev *engine.Snapshot, s engine.Snapshot, prevRec, rec *workflow.Record) error {
	now := time.Now().UTC()
	var changes []string
	by := ""
	if s.WorkflowID != "" {
		from := int64(0)
		if prev != nil && prev.WorkflowID == s.WorkflowID {
			changes, from = recordChanges(prevRec, rec), prev.Revision
		}
		if prev != nil {
			by = a.changedBy(e, s.WorkflowID, from)
		}
	}
	if a.json {
		return a.jsonLine(newWatchLine(now, &s, changes, by))
	}
	t := a.style(dim, now.Local().Format("15:04:05"))
	if s.WorkflowID == "" {
		_, err := fmt.Fprintf(a.stdout, "%s  no active workflow\n", t)
		return err
	}
	if rec != nil && (prev == nil || prev.WorkflowID != s.WorkflowID) {
		header := fmt.Sprintf("%s  workflow %s (%s)", t, a.style(bold, clean(s.WorkflowID)), clean(rec.Type))
		if rec.Context != "" { // a migrated seed's record may have none
			header += ": " + clean(rec.Context)
		}
		fmt.Fprintln(a.stdout, header)
	}
	line := fmt.Sprintf("%s  %s  phase %s  revision %d", t, clean(s.WorkflowID), a.style(cyan, clean(s.Phase)), s.Revision)
	if len(changes) > 0 {
		line += "  " + a.style(bold, clean(strings.Join(changes, "; ")))
	}
	if by != "" {
		line += "  by " + clean(by)
	} else if s.SessionID != "" {
		line += "  session " + clean(s.SessionID)
	}
	_, err := fmt.Fprintln(a.stdout, line)
	return err
}

// watchNote prints a change outside the workflow record (a checkpoint saved or deleted).
func (a *app) watchNote(s *engine.Snapshot, what string) error {
	now := time.Now().UTC()
	if a.json {
		return a.jsonLine(newWatchLine(now, s, []string{what}, ""))
	}
	_, err := fmt.Fprintf(a.stdout, "%s  %s\n", a.style(dim, now.Local().Format("15:04:05")), a.style(bold, clean(what)))
	return err
}

// changedBy names who made the journal's changes after revision from: the actor (cli, mcp,
// a hook) and the session, as the journal recorded them (for a change a sync took from a
// remote, as the remote's entry did, and the remote it came from).
func (a *app) changedBy(e *engine.Engine, id string, from int64) string {
	evs, err := e.HistorySince(id, from)
	if err != nil {
		return ""
	}
	var who []string
	for _, ev := range evs {
		from, remote, ok := pulled(ev)
		if ok {
			ev = remote
		}
		w := ev.Actor
		if ev.Session != "" {
			w = strings.TrimSpace(w + " in session " + ev.Session)
		}
		if ok && w != "" {
			w += " from " + from
		}
		if w != "" && !slices.Contains(who, w) {
			who = append(who, w)
		}
	}
	return strings.Join(who, ", ")
}

// recordChanges says in words what differs between two versions of one workflow record:
// phase and status, approvals, tasks, variables (names only), artifacts, enforcement, outcome.
func recordChanges(prev, cur *workflow.Record) []string {
	if prev == nil || cur == nil {
		return nil
	}
	var out []string
	if prev.State != cur.State {
		out = append(out, "phase "+prev.State+" -> "+cur.State)
	} else if prev.PhaseStatus != cur.PhaseStatus && cur.PhaseStatus != "" {
		out = append(out, "phase "+cur.State+" "+string(cur.PhaseStatus))
	}
	if prev.Status != cur.Status {
		out = append(out, "workflow "+string(cur.Status))
	}
	for _, ap := range cur.Approvals {
		if !ap.ApprovedAt.IsZero() && !slices.ContainsFunc(prev.Approvals, func(p workflow.Approval) bool { return p.Phase == ap.Phase && p.ApprovedAt.Equal(ap.ApprovedAt) }) {
			out = append(out, "phase "+ap.Phase+" approved")
		}
	}
	old := map[string]workflow.Task{}
	for _, t := range prev.Tasks {
		old[t.ID] = t
	}
	for _, t := range cur.Tasks {
		switch o, ok := old[t.ID]; {
		case !ok:
			out = append(out, "task "+t.ID+" "+string(t.Status))
		case o.Status != t.Status:
			out = append(out, "task "+t.ID+" "+string(o.Status)+" -> "+string(t.Status))
		}
	}
	var set, unset []string
	for _, k := range slices.Sorted(maps.Keys(cur.Vars)) {
		if v, ok := prev.Vars[k]; !ok || v != cur.Vars[k] {
			set = append(set, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(prev.Vars)) {
		if _, ok := cur.Vars[k]; !ok {
			unset = append(unset, k)
		}
	}
	if len(set) > 0 {
		out = append(out, "vars set "+strings.Join(set, ", "))
	}
	if len(unset) > 0 {
		out = append(out, "vars unset "+strings.Join(unset, ", "))
	}
	if n := len(cur.Artifacts) - len(prev.Artifacts); n > 0 {
		out = append(out, "artifacts "+strings.Join(cur.Artifacts[len(prev.Artifacts):], ", "))
	}
	if cur.Enforcement != nil && (prev.Enforcement == nil || prev.Enforcement.Summary != cur.Enforcement.Summary) {
		out = append(out, "enforcement: "+cur.Enforcement.Summary)
	}
	if cur.Outcome != "" && cur.Outcome != prev.Outcome {
		out = append(out, "outcome: "+cur.Outcome)
	}
	return out
}

// jsonLine writes v as one line of JSON, safe for a terminal (safeJSON).
func (a *app) jsonLine(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = a.stdout.Write(append(safeJSON(b), '\n'))
	return err
}
