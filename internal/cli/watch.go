package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/cairn-dev/cairn/internal/engine"
)

// Debounce: one write is several events (temp file, rename, directory sync), and a burst of
// writes should print once, but a steady stream must still show within maxDelay.
const (
	quiet    = 75 * time.Millisecond
	maxDelay = 500 * time.Millisecond
)

func runWatch(a *app, args []string) error {
	if _, err := a.parse(a.flags(), args, 0, 0); err != nil {
		return err
	}
	e, err := a.engine()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(a.ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return a.watch(ctx, e)
}

// watchLine is one line of `cairn watch --json`.
type watchLine struct {
	At         time.Time `json:"at"`
	WorkflowID string    `json:"workflow_id"`
	Revision   int64     `json:"revision"`
	Phase      string    `json:"phase,omitempty"`
	SessionID  string    `json:"session_id,omitempty"`
	UpdatedAt  time.Time `json:"updated_at,omitzero"`
}

// watch prints the current position and then one line per change until ctx ends. It
// watches the state directory, not the file: the file is replaced by rename on every write,
// which a watch on the file itself would lose (on Linux the new file shows as a CREATE).
func (a *app) watch(ctx context.Context, e *engine.Engine) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return &codeError{code: ExitInternal, msg: fmt.Sprintf("starting the file watcher: %v", err)}
	}
	defer w.Close()
	dir := e.StateDir()
	if err := w.Add(dir); err != nil {
		return &codeError{code: ExitInternal, msg: fmt.Sprintf("watching %s: %v", dir, err)}
	}
	// Watch first, then read, so a change between the two is not missed.
	var last *engine.Snapshot
	show := func() error {
		s, err := e.Snapshot()
		if err != nil {
			a.warn("reading the workflow: " + err.Error())
			return nil
		}
		if last != nil && *last == s {
			return nil
		}
		if err := a.watchLine(e, last, s); err != nil {
			return err
		}
		last = &s
		return nil
	}
	if err := show(); err != nil {
		return err
	}
	var fire <-chan time.Time
	var timer *time.Timer
	var pending time.Time // when the first unprinted event came
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if filepath.Base(ev.Name) != engine.WorkflowFile {
				continue // journal, locks, temp files, checkpoints: the snapshot is what moves
			}
			now := time.Now()
			if pending.IsZero() {
				pending = now
			}
			wait := min(quiet, maxDelay-now.Sub(pending))
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			fire = timer.C
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			a.warn("watching " + dir + ": " + err.Error())
		case <-fire:
			fire, pending = nil, time.Time{}
			if err := show(); err != nil {
				return err
			}
		}
	}
}

// watchLine prints one change: a JSON line, or for a person the time, workflow, phase,
// revision and who made the change (and the type and context when the workflow is new).
func (a *app) watchLine(e *engine.Engine, prev *engine.Snapshot, s engine.Snapshot) error {
	now := time.Now().UTC()
	if a.json {
		b, err := json.Marshal(watchLine{At: now, WorkflowID: s.WorkflowID, Revision: s.Revision, Phase: s.Phase,
			SessionID: s.SessionID, UpdatedAt: s.UpdatedAt})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(a.stdout, "%s\n", b)
		return err
	}
	t := now.Local().Format("15:04:05")
	if s.WorkflowID == "" {
		_, err := fmt.Fprintf(a.stdout, "%s  no active workflow\n", t)
		return err
	}
	if prev == nil || prev.WorkflowID != s.WorkflowID {
		if data, err := e.Show(s.WorkflowID); err == nil {
			var r struct{ Type, Context string }
			if json.Unmarshal(data, &r) == nil {
				fmt.Fprintf(a.stdout, "%s  workflow %s (%s): %s\n", t, clean(s.WorkflowID), clean(r.Type), clean(r.Context))
			}
		}
	}
	line := fmt.Sprintf("%s  %s  phase %s  revision %d", t, clean(s.WorkflowID), clean(s.Phase), s.Revision)
	if s.SessionID != "" {
		line += "  session " + clean(s.SessionID)
	}
	_, err := fmt.Fprintln(a.stdout, line)
	return err
}
