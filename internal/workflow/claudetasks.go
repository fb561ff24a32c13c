package workflow

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/textsafe"
)

// ClaudeTaskPrefix starts the id of a task that mirrors one of Claude Code's own tasks
// (TaskCreate/TaskUpdate). Claude Code keeps those per session (~/.claude/tasks/<session>/),
// numbering them "1", "2", ... afresh in each, so the id carries the session too:
// "claude-<8 hex digits of the session id's SHA-256>-<task id>". A hash of the whole id, not
// its first characters: sequential session ids ("…-000000000001", "…-000000000002") share
// those, and their tasks would share ids. Earlier versions stored the first 8 characters
// (legacyClaudePrefix); such ids still read as their session's (ownClaudeTask).
const ClaudeTaskPrefix = "claude-"

// maxSubject bounds a mirrored task's subject, kept as the task's note.
const maxSubject = 200

// maxDoneClaudeTasks bounds the finished mirrored tasks a record keeps: Claude Code's task
// list is a working list, and the journal holds every change anyway. Older ones go first.
const maxDoneClaudeTasks = 50

// ClaudeTask is one of Claude Code's tasks as its TaskCreated and TaskCompleted hook events
// carry it.
type ClaudeTask struct {
	SessionID   string
	TaskID      string
	Subject     string
	Description string
	// Withheld, when not "", is why Subject is empty: the refusal of the secret it held, as a
	// kept completion carries it (KeptClaudeTask). The task is then known by its id alone.
	Withheld string
	// Theirs holds the ids of pending tasks of sessions still at work beside SessionID's
	// (their clients running): each is in its session's list, not one an earlier session
	// left, so one of the same subject is another task, never this one created again or
	// completed (mirroredTask).
	Theirs []string
}

// ClaudeTaskID is the id a new task mirroring t takes; one t's session recorded before may
// have an earlier version's id (ClaudeTaskIDIn).
func ClaudeTaskID(t ClaudeTask) string {
	return claudeSessionPrefix(t.SessionID) + strings.TrimSpace(t.TaskID)
}

// ClaudeTaskIDIn is the id of r's task mirroring t from t's own session's list: the one r
// holds, which an earlier version may have named, else ClaudeTaskID(t).
func ClaudeTaskIDIn(r *Record, t ClaudeTask) string {
	if i := ownTask(r, t); i >= 0 {
		return r.Tasks[i].ID
	}
	return ClaudeTaskID(t)
}

// claudeSessionPrefix starts the ids of session's mirrored tasks, up to the task id.
func claudeSessionPrefix(session string) string {
	s := strings.TrimSpace(session)
	if s == "" {
		return ClaudeTaskPrefix + "nosession-"
	}
	sum := sha256.Sum256([]byte(s))
	return ClaudeTaskPrefix + hex.EncodeToString(sum[:4]) + "-"
}

// legacyClaudePrefix is claudeSessionPrefix as earlier versions made it: the session id's
// first 8 bytes, cut back to a whole character.
func legacyClaudePrefix(session string) string {
	s := strings.TrimSpace(session)
	n := min(len(s), 8)
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n-- // a cut inside a character would store invalid UTF-8
	}
	return ClaudeTaskPrefix + cmp.Or(s[:n], "nosession") + "-"
}

// ownClaudeTask returns the Claude Code task id of the record's task id when it mirrors one
// of session's own: its prefix, or an earlier version's followed by a number (Claude Code's
// ids are numbers; the session part of such an id may be another session's that began alike,
// which an earlier version could not tell apart either).
func ownClaudeTask(id, session string) (task string, ok bool) {
	if task, ok := strings.CutPrefix(id, claudeSessionPrefix(session)); ok && task != "" {
		return task, true
	}
	if task, ok := strings.CutPrefix(id, legacyClaudePrefix(session)); ok && task != "" &&
		strings.Trim(task, "0123456789") == "" {
		return task, true
	}
	return "", false
}

// ownTask returns the index of r's task mirroring t from t's own session's list, or -1: the
// one of t's id, else one an earlier version named.
func ownTask(r *Record, t ClaudeTask) int {
	id := ClaudeTaskID(t)
	if i := slices.IndexFunc(r.Tasks, func(k Task) bool { return k.ID == id }); i >= 0 {
		return i
	}
	task := strings.TrimSpace(t.TaskID)
	return slices.IndexFunc(r.Tasks, func(k Task) bool {
		own, ok := ownClaudeTask(k.ID, t.SessionID)
		return ok && own == task
	})
}

// RecordClaudeTask mirrors one of Claude Code's tasks into the active workflow's tasks, in
// its current phase: created as pending, completed as done. Claude Code's own store is
// per session, so a task the agent creates again in a new session (same subject, new id)
// is the same pending task, not a second one; and a completion from a session that never saw
// the task's creation closes the pending task of the same subject (a running one is its
// session's: see mirroredTask). A completion of a task never
// recorded is recorded as done, so the record holds what the session did.
func RecordClaudeTask(r *Record, t ClaudeTask, completed bool, now time.Time, by Actor) (Result, error) {
	if err := requireActive(r); err != nil {
		return Result{}, err
	}
	if strings.TrimSpace(t.TaskID) == "" {
		return Result{}, fmt.Errorf("the task event carries no task_id; nothing was recorded")
	}
	id := ClaudeTaskIDIn(r, t)
	subj, refused := claudeTaskNote(t)
	existing := mirroredTask(r, t, subj)
	if refused != "" && existing < 0 {
		return Result{}, errors.New(refused)
	}
	if !completed {
		switch {
		case existing < 0:
		case r.Tasks[existing].ID == id:
			return unchanged(r), nil
		default:
			// Created again by this session: the task is in this session's list now, and
			// takes its id, so OpenTasksExcept no longer reads it as an earlier session's.
			return change(r, EventTask, now, by, func(n *Record) {
				n.Tasks[existing].ID = id
				n.Tasks[existing].UpdatedAt = now.UTC()
			}), nil
		}
		return UpdateTask(r, TaskUpdate{ID: id, Status: TaskPending, Note: subj}, now, by)
	}
	if existing >= 0 && r.Tasks[existing].ID != id {
		// An earlier session's, completed by this one: it takes this session's id, as one
		// created again does, so that this session's list is followed for it (reopened or
		// renamed there, it fires no hook). The steps below are one change of this clone.
		r = r.Clone()
		r.Tasks[existing].ID = id
	}
	// Claude Code has no running state that Cairn hears of: pending → running → done in one
	// change, along the task machine, so attempts and times stay consistent.
	res := Result{Record: r, Event: EventNone, From: r.State, To: r.State}
	var err error
	var kept []string // the subject not stored, said
	if existing < 0 || r.Tasks[existing].Status == TaskPending || r.Tasks[existing].Status == TaskFailed {
		if refused != "" { // an existing task: a new one with a secret was refused above
			subj, kept = "", []string{refused + "; the task keeps its note"}
		}
		if res, err = UpdateTask(r, TaskUpdate{ID: id, Status: TaskRunning, Note: subj}, now, by); err != nil {
			return Result{}, err
		}
	}
	step, err := UpdateTask(res.Record, TaskUpdate{ID: id, Status: TaskDone}, now, by)
	if err != nil {
		return Result{}, err
	}
	if !step.Changed && res.Changed {
		step, res.Warnings = res, nil
	}
	step.Warnings = slices.Concat(kept, res.Warnings, step.Warnings)
	if step.Changed {
		pruneDoneClaudeTasks(step.Record)
	}
	return step, nil
}

// claudeTaskNote is the note the record keeps for t: its subject (else its description) on
// one line, and, when it has a secret's shape (or was withheld for one), the refusal that
// names the field, with no note. A note is never a secret: a new task with one is refused,
// and an existing task keeps its note.
func claudeTaskNote(t ClaudeTask) (note, refused string) {
	if t.Withheld != "" {
		return "", t.Withheld
	}
	note, place := textsafe.OneLine(t.Subject), "the task's subject"
	if note == "" {
		note, place = textsafe.OneLine(t.Description), "the task's description"
	}
	if f := secrets.ScanString(note); f != nil {
		return "", f.Refusal(place)
	}
	return cmp.Or(secrets.Clip(note, maxSubject), "task "+strings.TrimSpace(t.TaskID)), ""
}

// KeptClaudeTask is t as it may wait on disk to be recorded (see engine.KeepClaudeTask): its
// session, its id and the note it would be recorded with, nothing more. A note with a
// secret's shape is not kept: a creation would be refused, so it is refused now; a completion
// keeps the refusal instead (Withheld), and is recorded as it would be now: it closes the task
// of its id, and with none it is refused. An id with a secret's shape is refused.
func KeptClaudeTask(t ClaudeTask, completed bool) (ClaudeTask, error) {
	if f := secrets.ScanString(t.TaskID); f != nil {
		return ClaudeTask{}, errors.New(f.Refusal("the task's id"))
	}
	note, refused := claudeTaskNote(t)
	if refused != "" && !completed {
		return ClaudeTask{}, errors.New(refused)
	}
	return ClaudeTask{SessionID: t.SessionID, TaskID: t.TaskID, Subject: note, Withheld: refused}, nil
}

// mirroredTask returns the index of r's task that mirrors t (note its claudeTaskNote), or -1:
// the task of t's id, else a pending one of another session with the same note (the same task,
// created again in a new session, whose list starts empty); with no note (one refused), none. Within one session the ids tell
// tasks apart: the same subject twice there is two. Another session's running task is not
// taken: it was set running (update_task) by a session still at it, here or on a machine
// sharing the workflow under its claim (recovery puts an ended session's back to pending).
// Nor is one of t.Theirs, a session's at work beside t's: it is in that session's list, and
// completed there it would close t's with it.
func mirroredTask(r *Record, t ClaudeTask, note string) int {
	if i := ownTask(r, t); i >= 0 {
		return i
	}
	if note == "" {
		return -1
	}
	return slices.IndexFunc(r.Tasks, func(k Task) bool {
		_, own := ownClaudeTask(k.ID, t.SessionID)
		return strings.HasPrefix(k.ID, ClaudeTaskPrefix) && !own &&
			k.Status == TaskPending && strings.EqualFold(k.Note, note) && !slices.Contains(t.Theirs, k.ID)
	})
}

// CompletedTaskID is the id of r's task that a TaskCompleted of t completes: the task
// mirroring t, which may be an earlier session's (see RecordClaudeTask), else t's own. Once
// completed, the task has t's own id (ClaudeTaskIDIn).
func CompletedTaskID(r *Record, t ClaudeTask) string {
	note, _ := claudeTaskNote(t)
	if i := mirroredTask(r, t, note); i >= 0 {
		return r.Tasks[i].ID
	}
	return ClaudeTaskID(t)
}

// pruneDoneClaudeTasks drops the oldest finished mirrored tasks beyond maxDoneClaudeTasks.
// r is a fresh clone the caller owns.
func pruneDoneClaudeTasks(r *Record) {
	kept := 0
	for i := len(r.Tasks) - 1; i >= 0; i-- {
		if t := r.Tasks[i]; strings.HasPrefix(t.ID, ClaudeTaskPrefix) && t.Status == TaskDone {
			if kept++; kept > maxDoneClaudeTasks {
				r.Tasks = slices.Delete(r.Tasks, i, i+1)
			}
		}
	}
}

// RunningElsewhere words a running task another machine's claim holds, as last read; lapsed
// says the claim went unrenewed past its lease, so this machine may take the task over.
func RunningElsewhere(lapsed bool) string {
	if lapsed {
		return "running on another machine, whose claim of it lapsed"
	}
	return "running on another machine"
}

// OpenTasksExcept lists the record's open tasks (pending or running) for the resume report,
// oldest first: a mirrored Claude Code task by its subject, any other by its id and note; a
// task of another phase than the current one says which. ended says the session that ran the
// running tasks has ended (and nothing recovered them yet): they read as running when it
// ended, not as running. ended leaves out the running tasks elsewhere reports (when not nil):
// they run on another machine sharing the workflow, whose session is not the one that ended
// (see RecoverExcept). One whose claim there was read (held) says it runs there, not this
// session's to work on; one whose claim lapsed says so: that machine may be gone, and this
// one may take the task over.
func OpenTasksExcept(r *Record, ended bool, elsewhere func(task string) (held, lapsed, ok bool)) []string {
	if r == nil {
		return nil
	}
	var out []string
	for _, t := range r.Tasks {
		if t.Status != TaskPending && t.Status != TaskRunning {
			continue
		}
		s := t.Note
		if !strings.HasPrefix(t.ID, ClaudeTaskPrefix) || s == "" {
			s = t.ID
			if t.Note != "" {
				s = secrets.Joined(t.ID+":", " "+t.Note)
			}
		}
		sep := " (" // what is said of the task goes in one parenthesis
		if t.Status == TaskRunning {
			var held, lapsed, far bool
			if elsewhere != nil {
				held, lapsed, far = elsewhere(t.ID)
			}
			switch {
			case held:
				s += sep + RunningElsewhere(lapsed)
			case ended && !far:
				s += sep + "running when its session ended"
			default:
				s += sep + "running"
			}
			sep = ", "
		}
		if t.Phase != "" && t.Phase != r.State {
			s += sep + "phase " + t.Phase
			sep = ", "
		}
		if sep == ", " {
			s += ")"
		}
		out = append(out, s)
	}
	return out
}

// EarlierClaudeTasks counts r's pending mirrored tasks of another Claude Code session than
// session (0 when session is not known). Claude Code starts each session with an empty task
// list and sends no event when a task is deleted, so such a task may be gone there: the
// report says so rather than Cairn closing it. Creating it again (same subject) makes it
// session's; completing it closes it.
func EarlierClaudeTasks(r *Record, session string) int {
	if r == nil || strings.TrimSpace(session) == "" {
		return 0
	}
	n := 0
	for _, t := range r.Tasks {
		if !strings.HasPrefix(t.ID, ClaudeTaskPrefix) || t.Status != TaskPending { // a running one is its session's (mirroredTask)
			continue
		}
		if _, own := ownClaudeTask(t.ID, session); !own {
			n++
		}
	}
	return n
}

// OwnClaudeTasks lists the Claude Code task ids of r's tasks in status st mirrored from
// session's own task list, by their record ids; nil when it has none (or session is not known).
func OwnClaudeTasks(r *Record, session string, st TaskStatus) map[string]string {
	return claudeTasks(r, session, st, true)
}

// EarlierSessionTasks is OwnClaudeTasks of every other session than session: their Claude
// Code task ids (the part after the session's), by record ids.
func EarlierSessionTasks(r *Record, session string, st TaskStatus) map[string]string {
	return claudeTasks(r, session, st, false)
}

func claudeTasks(r *Record, session string, st TaskStatus, own bool) map[string]string {
	if r == nil || strings.TrimSpace(session) == "" {
		return nil
	}
	var out map[string]string
	for _, t := range r.Tasks {
		id, mine := ownClaudeTask(t.ID, session)
		if !own {
			if mine || !strings.HasPrefix(t.ID, ClaudeTaskPrefix) {
				continue
			}
			// The session part has no '-' past its own: Claude Code's ids are numbers.
			id = t.ID[strings.LastIndexByte(t.ID, '-')+1:]
		} else if !mine {
			continue
		}
		if id != "" && t.Status == st {
			if out == nil {
				out = map[string]string{}
			}
			out[t.ID] = id
		}
	}
	return out
}

// ClaudeListChanges is what a session's Claude Code task list changed without a hook event
// (see engine.followClaudeTasks), by record ids.
type ClaudeListChanges struct {
	Gone     []string              // pending tasks deleted (TaskUpdate to status deleted)
	Reopened []string              // done tasks set back to pending or in_progress
	Renamed  map[string]ClaudeTask // open tasks given a new subject (or description): the task as its file holds it
	// Completed are pending tasks the list has completed: their TaskCompleted was lost (its
	// hook failed or was killed), and Claude Code does not send it again.
	Completed []string
	// Listed are earlier sessions' tasks whose number this session's list, shared with them
	// (CLAUDE_CODE_TASK_LIST_ID), holds: the task as its file holds it, under this session.
	// One of the same note is the same task, which takes this session's id to be followed.
	Listed map[string]ClaudeTask
}

// FollowClaudeTasks makes r's mirrored tasks follow what Claude Code changed in its list
// without a hook event: an earlier session's task listed (c.Listed) with its note takes the
// listing session's id, unless a task has it; the pending tasks gone are taken out, the done ones reopened are
// pending again, the pending ones completed are done (as RecordClaudeTask completes one, its
// run and its end at once), and those renamed take the note of their new subject (one with a
// secret's shape keeps its note). A done task is final for Cairn's own tasks; a mirrored one is Claude
// Code's, which reopens it. A task in another status than the one named stays. The owner
// stays too: this is bookkeeping, not the session's work, and from a session beside the live
// owner it would take the workflow from that owner.
func FollowClaudeTasks(r *Record, c ClaudeListChanges, now time.Time, by Actor) (Result, error) {
	if err := requireActive(r); err != nil {
		return Result{}, err
	}
	mirrored := func(t Task, st TaskStatus) bool { return strings.HasPrefix(t.ID, ClaudeTaskPrefix) && t.Status == st }
	adopt := func(t Task) string {
		l, ok := c.Listed[t.ID]
		if !ok || !mirrored(t, TaskPending) && !mirrored(t, TaskDone) {
			return ""
		}
		id := ClaudeTaskID(l)
		if note, refused := claudeTaskNote(l); refused != "" || note != t.Note || id == t.ID || ownTask(r, l) >= 0 {
			return ""
		}
		return id
	}
	drop := func(t Task) bool { return mirrored(t, TaskPending) && slices.Contains(c.Gone, t.ID) }
	reopen := func(t Task) bool { return mirrored(t, TaskDone) && slices.Contains(c.Reopened, t.ID) }
	complete := func(t Task) bool { return mirrored(t, TaskPending) && slices.Contains(c.Completed, t.ID) }
	rename := func(t Task) string {
		l, ok := c.Renamed[t.ID]
		if !ok || !mirrored(t, TaskPending) && !reopen(t) {
			return ""
		}
		if note, refused := claudeTaskNote(l); refused == "" && note != t.Note {
			return note
		}
		return ""
	}
	if !slices.ContainsFunc(r.Tasks, func(t Task) bool {
		return adopt(t) != "" || drop(t) || reopen(t) || complete(t) || rename(t) != ""
	}) {
		return unchanged(r), nil
	}
	return change(r, EventTask, now, by, func(n *Record) {
		for i, t := range n.Tasks {
			// Two listed as one number (one adopted already) leave the second as it is.
			if id := adopt(t); id != "" && !slices.ContainsFunc(n.Tasks, func(k Task) bool { return k.ID == id }) {
				n.Tasks[i].ID = id
			}
		}
		n.Tasks = slices.DeleteFunc(n.Tasks, drop)
		for i, t := range n.Tasks {
			if note := rename(t); note != "" {
				n.Tasks[i].Note, n.Tasks[i].UpdatedAt = note, now.UTC()
			}
			if reopen(t) {
				// Put back as the agent's own move to pending puts a task: no run of it
				// stands. A started_at kept would read as a run recovery took as interrupted
				// (DoneAfterItsRun).
				k := &n.Tasks[i]
				k.Status, k.StartedAt, k.CompletedAt, k.UpdatedAt = TaskPending, time.Time{}, time.Time{}, now.UTC()
			}
			if complete(t) {
				k := &n.Tasks[i]
				k.Status, k.StartedAt, k.CompletedAt, k.UpdatedAt = TaskDone, now.UTC(), now.UTC(), now.UTC()
			}
		}
		if slices.ContainsFunc(r.Tasks, complete) {
			pruneDoneClaudeTasks(n)
		}
		n.Owner = r.Clone().Owner
	}), nil
}
