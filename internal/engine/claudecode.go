package engine

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/project"
	"github.com/cairn-dev/cairn/internal/remote/mirror"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/textsafe"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// This file serves Claude Code's own events: its task list (TaskCreated, TaskCompleted),
// compaction (PreCompact), the session title and the status line.

// ClaudeTask is one of Claude Code's tasks as its TaskCreated and TaskCompleted hooks carry it.
type ClaudeTask = workflow.ClaudeTask

// RecordClaudeTask mirrors one of Claude Code's tasks into the active workflow, in its
// current phase, through the same locked, journaled write as every change (see
// workflow.RecordClaudeTask). Claude Code's own task store is never touched. With no active
// workflow it returns ErrNoActiveWorkflow and writes nothing.
//
// A session working beside the workflow's owner, a Claude Code client still running that
// changed it within the live window, keeps its task list to itself: mirrored, its tasks
// would be the workflow's open tasks in every later report and would take the workflow from
// its owner. Only a task it mirrored before is still recorded (its completion).
func (e *Engine) RecordClaudeTask(t ClaudeTask, completed bool) (*Result, error) {
	return e.recordClaudeTask(t, completed, "")
}

// recordClaudeTask is RecordClaudeTask of an event that came under workflow under (a kept
// one, ApplyKeptClaudeTasks): recorded only while that workflow is the active one. "" is
// whichever is active.
func (e *Engine) recordClaudeTask(t ClaudeTask, completed bool, under string) (*Result, error) {
	// The task the event is about, after the change: this session's (an earlier session's
	// completed here takes this session's id).
	var id string
	res, wres, err := e.change(func(cur *workflow.Record) (workflow.Result, error) {
		if cur == nil {
			return workflow.Result{}, ErrNoActiveWorkflow
		}
		if under != "" && cur.WorkflowID != under {
			return workflow.Result{}, fmt.Errorf("it came while workflow %s was active, which %s has replaced since", under, cur.WorkflowID)
		}
		id = workflow.ClaudeTaskIDIn(cur, t)
		t := t
		t.Theirs = nil
		if workflow.CompletedTaskID(cur, t) != id {
			// Another session's task of the same subject: looked up only then, as it reads
			// the session records.
			t.Theirs = e.othersOpenTasks(cur, t)
		}
		if _, mirrored := workflow.FindTask(cur, id); !mirrored && e.besideLiveOwner(cur) {
			return workflow.Result{}, fmt.Errorf("workflow %s belongs to another live session (a running Claude Code client changed it %s), so this session's task list is kept out of it", cur.WorkflowID, workflow.Ago(e.now().Sub(cur.Owner.Heartbeat)))
		}
		if completed {
			done := workflow.CompletedTaskID(cur, t)
			// Running under another machine's claim, the task is that machine's to finish, as
			// update_task holds: recorded here, the done would be pushed over its run.
			if k, ok := workflow.FindTask(cur, done); ok && k.Status == workflow.TaskRunning {
				if elsewhere := e.runsElsewhere(cur); elsewhere != nil {
					if k, far := elsewhere(done); far {
						return workflow.Result{}, fmt.Errorf("task %s of workflow %s runs on another machine sharing it, so this session's completion is not recorded: %s", done, cur.WorkflowID, elsewhereStep(k))
					}
				}
			}
		}
		return workflow.RecordClaudeTask(cur, t, completed, e.now(), e.actor())
	}, "claude code task "+strings.TrimSpace(t.TaskID))
	if err != nil {
		return nil, err
	}
	// The message says what the task is and where, not what the event asked (a late or
	// repeated event changes nothing) nor the workflow's phase (the task keeps its own).
	task := workflow.Task{Phase: wres.To, Status: workflow.TaskPending}
	if completed {
		task.Status = workflow.TaskDone
	}
	if r := wres.Record; r != nil {
		if k, ok := workflow.FindTask(r, id); ok {
			task = k
		}
	}
	verb := "open"
	if task.Status == workflow.TaskDone || task.Status == workflow.TaskFailed {
		verb = string(task.Status)
	}
	if wres.Changed {
		res.Message = fmt.Sprintf("Claude Code task %s recorded as %s in phase %s", strings.TrimSpace(t.TaskID), verb, cmp.Or(task.Phase, wres.To))
	} else {
		res.Message = fmt.Sprintf("Claude Code task %s was already recorded as %s; nothing changed", strings.TrimSpace(t.TaskID), verb)
	}
	return res, nil
}

// othersOpenTasks lists the ids of r's pending tasks mirrored from sessions other running
// clients run (workflow.ClaudeTask.Theirs), but for one of t's number in a list they share
// (CLAUDE_CODE_TASK_LIST_ID): that is the same entry of the list, which t's session may complete.
func (e *Engine) othersOpenTasks(r *workflow.Record, t ClaudeTask) []string {
	shared := e.cfg.Getenv(claudeTaskListVar) != ""
	var ids []string
	for _, s := range e.otherClientsSessions() {
		for id, n := range workflow.OwnClaudeTasks(r, s, workflow.TaskPending) {
			if !shared || n != strings.TrimSpace(t.TaskID) {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// claudeTaskList is the directory of Claude Code's task list for session, one <task
// id>.json a task, as the 2.1.330 CLI keeps it: <config>/tasks/<list id>, config
// project.ConfigDir, the list id CLAUDE_CODE_TASK_LIST_ID or the session id, each
// with every character outside [A-Za-z0-9_-] a '-'. "" when it cannot be named.
func (e *Engine) claudeTaskList(session string) string {
	config := project.ConfigDir(e.cfg.Getenv, e.cfg.Getenv("HOME"))
	if config == "" {
		return ""
	}
	return filepath.Join(config, "tasks", claudeTaskName(cmp.Or(e.cfg.Getenv(claudeTaskListVar), session)))
}

// claudeTaskListVar names the task list Claude Code's sessions share; unset, each session has
// its own.
const claudeTaskListVar = "CLAUDE_CODE_TASK_LIST_ID"

// claudeTaskName is name as Claude Code puts it in a task store path.
func claudeTaskName(name string) string {
	return strings.Map(func(c rune) rune {
		if c == '_' || c == '-' || c < utf8.RuneSelf && (unicode.IsLetter(c) || unicode.IsDigit(c)) {
			return c
		}
		return '-'
	}, name)
}

// TasksFollowed counts what followClaudeTasks changed.
type TasksFollowed struct {
	Dropped  int // tasks Claude Code deleted, taken out
	Reopened int // tasks it set back from completed, open again
	Renamed  int // tasks it gave a new subject, which they take
	// Completed counts tasks it completed whose TaskCompleted was lost, recorded done.
	Completed int
	// Taken counts earlier sessions' tasks found in the list this session shares with them,
	// which take its id to be followed: bookkeeping, not said.
	Taken int
}

// Said says what f counts, one line each, for the logs and the report's notices.
func (f TasksFollowed) Said() []string {
	var out []string
	if f.Dropped > 0 {
		out = append(out, fmt.Sprintf("%d task%s Claude Code deleted taken out of the workflow", f.Dropped, workflow.Plural(f.Dropped)))
	}
	if f.Reopened > 0 {
		out = append(out, fmt.Sprintf("%d task%s Claude Code set back from completed open again", f.Reopened, workflow.Plural(f.Reopened)))
	}
	if f.Completed > 0 {
		its := "their"
		if f.Completed == 1 {
			its = "its"
		}
		out = append(out, fmt.Sprintf("%d task%s Claude Code completed recorded as done (%s TaskCompleted event was not recorded when it came)", f.Completed, workflow.Plural(f.Completed), its))
	}
	if f.Renamed > 0 {
		their := "their"
		if f.Renamed == 1 {
			their = "its"
		}
		out = append(out, fmt.Sprintf("%d task%s Claude Code renamed given %s new subject", f.Renamed, workflow.Plural(f.Renamed), their))
	}
	return out
}

// FollowClaudeTasks is followClaudeTasks of the active workflow, for a compaction:
// auto-compaction comes mid-turn, before the end of turn that would follow the list, and its
// anchor names the first open task. One read of the record when this session has no task.
func (e *Engine) FollowClaudeTasks() (TasksFollowed, error) {
	r, _, err := e.active()
	if err != nil || r == nil || r.Status != workflow.StatusActive {
		return TasksFollowed{}, err
	}
	return e.followClaudeTasks(r)
}

// followClaudeTasks makes the active workflow (r, as read) follow what this session's Claude
// Code task list changed without a hook event (workflow.FollowClaudeTasks):
//
//   - A TaskUpdate to status deleted removes the task's file and fires no hook, so without
//     this the task would stand open in every later report. Claude Code writes a task's file
//     before its TaskCreated hook runs (and removes it when a hook blocks the creation), and
//     empties a list only when every task in it is completed, so a pending task whose file is
//     gone from a list that is there was deleted.
//   - A TaskUpdate of a completed task back to pending or in_progress fires no hook either:
//     its file says so, and without this the task would stay done, in no later report.
//   - Nor does a TaskUpdate of a task's subject: its file has the new one, and without this
//     the reports would name the task by the old one, which a new session would create again
//     beside it.
//   - A pending task whose file says completed lost its TaskCompleted (the hook failed, was
//     killed, or found no room), which Claude Code does not send again: without this it would
//     stand open in every later report, and the compaction anchor would name it as the work.
//
// With a list sessions share (CLAUDE_CODE_TASK_LIST_ID), an earlier session's task that it
// holds, the same number with the same subject, is this session's to follow: it takes this
// session's id (workflow.ClaudeListChanges.Listed), at the session's start before the model
// changes it. Not beside a live owner, whose own tasks they may be, nor a task of a session
// another client on this machine runs, which follows it.
//
// A list not there (another list id, a store elsewhere) proves nothing: nothing changes. It
// costs nothing when r has no pending or done task of this session's (or of an earlier one's,
// with a shared list).
func (e *Engine) followClaudeTasks(r *workflow.Record) (TasksFollowed, error) {
	pending := workflow.OwnClaudeTasks(r, e.cfg.SessionID, workflow.TaskPending)
	done := workflow.OwnClaudeTasks(r, e.cfg.SessionID, workflow.TaskDone)
	var earlier map[string]string
	if e.cfg.Getenv(claudeTaskListVar) != "" {
		// Either may be nil (none of that status): a copy into a nil map panics.
		earlier = map[string]string{}
		maps.Copy(earlier, workflow.EarlierSessionTasks(r, e.cfg.SessionID, workflow.TaskPending))
		maps.Copy(earlier, workflow.EarlierSessionTasks(r, e.cfg.SessionID, workflow.TaskDone))
		if len(earlier) > 0 && e.besideLiveOwner(r) {
			earlier = nil
		}
		if len(earlier) > 0 {
			// A session another client runs follows its own tasks: taken here, they would
			// be taken back at its turn's end, their ids swapped at every turn.
			for _, s := range e.otherClientsSessions() {
				for _, st := range []workflow.TaskStatus{workflow.TaskPending, workflow.TaskDone} {
					for id := range workflow.OwnClaudeTasks(r, s, st) {
						delete(earlier, id)
					}
				}
			}
		}
	}
	if len(pending) == 0 && len(done) == 0 && len(earlier) == 0 {
		return TasksFollowed{}, nil
	}
	dir := e.claudeTaskList(e.cfg.SessionID)
	if dir == "" {
		return TasksFollowed{}, nil
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return TasksFollowed{}, nil
	}
	var c workflow.ClaudeListChanges
	type taskFile struct {
		Subject     string `json:"subject"`
		Description string `json:"description"`
		Status      string `json:"status"`
	}
	// read reads task's file: gone says it is not there; ok false, that it proves nothing (a
	// file being written, or not Claude Code's). Never a FIFO or a device, which would hold
	// every turn's end to its deadline, nor a file past the cap of a hook's input.
	read := func(task string) (file taskFile, gone, ok bool) {
		data, err := durable.ReadPath(filepath.Join(dir, claudeTaskName(task)+".json"), 1<<20, true)
		if errors.Is(err, fs.ErrNotExist) {
			return file, true, false
		}
		return file, false, err == nil && json.Unmarshal(data, &file) == nil
	}
	look := func(id, task string, st workflow.TaskStatus) {
		file, gone, ok := read(task)
		switch {
		case gone:
			if st == workflow.TaskPending {
				c.Gone = append(c.Gone, id)
			}
			return
		case !ok:
			return
		}
		if st == workflow.TaskDone && (file.Status == "pending" || file.Status == "in_progress") {
			c.Reopened = append(c.Reopened, id)
		}
		if st == workflow.TaskPending && file.Status == "completed" {
			c.Completed = append(c.Completed, id)
		}
		if file.Subject != "" || file.Description != "" {
			if c.Renamed == nil {
				c.Renamed = map[string]workflow.ClaudeTask{}
			}
			c.Renamed[id] = workflow.ClaudeTask{TaskID: task, Subject: file.Subject, Description: file.Description}
		}
	}
	for id, task := range pending {
		look(id, task, workflow.TaskPending)
	}
	for id, task := range done {
		look(id, task, workflow.TaskDone)
	}
	for id, task := range earlier {
		if file, _, ok := read(task); ok {
			if c.Listed == nil {
				c.Listed = map[string]workflow.ClaudeTask{}
			}
			c.Listed[id] = workflow.ClaudeTask{SessionID: e.cfg.SessionID, TaskID: task, Subject: file.Subject, Description: file.Description}
		}
	}
	// Every task's file has a subject, so Renamed is seldom empty: r, as read, says whether
	// anything changes before every turn's end takes the lock (FollowClaudeTasks is pure).
	if res, err := workflow.FollowClaudeTasks(r, c, e.now(), workflow.Actor{}); err == nil && !res.Changed {
		return TasksFollowed{}, nil
	}
	var f TasksFollowed
	_, _, err := e.change(func(cur *workflow.Record) (workflow.Result, error) {
		f = TasksFollowed{}
		if cur == nil || cur.WorkflowID != r.WorkflowID {
			return workflow.Result{Event: workflow.EventNone}, nil
		}
		res, err := workflow.FollowClaudeTasks(cur, c, e.now(), e.actor())
		if err == nil && res.Changed {
			for _, t := range cur.Tasks {
				k, ok := workflow.FindTask(res.Record, t.ID)
				if _, listed := c.Listed[t.ID]; listed && !ok {
					f.Taken++ // under this session's id now
					continue
				}
				switch {
				case !ok && t.Status == workflow.TaskPending: // not a done one pruned
					f.Dropped++
				case t.Status == workflow.TaskDone && k.Status == workflow.TaskPending:
					f.Reopened++
				case t.Status == workflow.TaskPending && k.Status == workflow.TaskDone:
					f.Completed++
				}

				if ok && k.Note != t.Note {
					f.Renamed++
				}
			}
		}
		return res, err
	}, "claude code tasks changed")
	if err != nil {
		return TasksFollowed{}, err
	}
	return f, nil
}

// elsewhereStep is what to do about a task running under k, another machine's claim, that
// this session finished: take it over once the claim lapsed (that machine may be gone), else
// leave it to its holder.
func elsewhereStep(k mirror.Claim) string {
	switch {
	case k.Lapsed():
		return "that machine's claim of it lapsed, so to take it over call " + ToolPrefix + "update_task with status done"
	case k.Holder != "":
		return fmt.Sprintf("%s holds it for %s more unless renewed, and marks it done", textsafe.Line(k.Holder, 80), workflow.Age(k.Left))
	}
	return "that machine marks it done"
}

// earlierTasksDoc names the mirrored tasks of earlier Claude Code sessions that a report has
// told of. Claude Code's task list is empty in every new session, so without it the notice
// would come back at every start until the tasks are done; told once, a task stands as the
// workflow's own, listed as open like any other.
const earlierTasksDoc = "earlier-tasks-told"

type earlierTasksTold struct {
	WorkflowID string   `json:"workflow_id"`
	IDs        []string `json:"ids"`
}

// untoldEarlierTasks returns the ids of r's open mirrored tasks of another session than this
// one (workflow.EarlierClaudeTasks) that no report has told of yet. Most starts have none and
// read nothing more. A session beside the live owner has none: the owner's open tasks are in
// that session's list, not an earlier one's. Nor are those of a session another running client
// runs (whoever owns the workflow) an earlier one's: they are in its list, told to be created
// again here they would be a second copy.
func (e *Engine) untoldEarlierTasks(r *workflow.Record) []string {
	if workflow.EarlierClaudeTasks(r, e.cfg.SessionID) == 0 || e.besideLiveOwner(r) {
		return nil
	}
	var told earlierTasksTold
	if data, err := e.st.Read(earlierTasksDoc); err == nil && json.Unmarshal(data, &told) == nil && told.WorkflowID != r.WorkflowID {
		told.IDs = nil
	}
	for _, s := range e.otherClientsSessions() {
		for id := range workflow.OwnClaudeTasks(r, s, workflow.TaskPending) {
			told.IDs = append(told.IDs, id) // not to tell, nor to mark told
		}
	}
	var ids []string
	for i, t := range r.Tasks {
		if !slices.Contains(told.IDs, t.ID) && workflow.EarlierClaudeTasks(&workflow.Record{Tasks: r.Tasks[i : i+1]}, e.cfg.SessionID) == 1 {
			ids = append(ids, t.ID)
		}
	}
	return ids
}

// markEarlierTasksTold records that ids, tasks of r, were told of. Ids of tasks no longer in
// r go, so the document stays as small as the workflow's task list. Failing to record it
// costs only the notice said again. It returns the notice of a damaged document set aside,
// or nil.
func (e *Engine) markEarlierTasksTold(r *workflow.Record, ids []string) *store.Notice {
	_, aside, _ := e.st.UpdateOwn(earlierTasksDoc, func(cur []byte) ([]byte, error) {
		var told earlierTasksTold
		if json.Unmarshal(cur, &told) != nil || told.WorkflowID != r.WorkflowID {
			told = earlierTasksTold{WorkflowID: r.WorkflowID}
		}
		told.IDs = slices.DeleteFunc(append(told.IDs, ids...), func(id string) bool {
			return !slices.ContainsFunc(r.Tasks, func(t workflow.Task) bool { return t.ID == id })
		})
		slices.Sort(told.IDs)
		return json.Marshal(told)
	})
	return aside
}

// maxAnchor bounds the compaction anchor: it is added to the compaction request, where a
// few lines keep the position and more would only dilute the summary.
const maxAnchor = 700

// CompactAnchor is the short text the PreCompact hook adds to the compaction request so that
// the summary keeps the workflow's position: workflow, phase, progress, next step, open
// tasks. It reads and never changes state. "" when there is no active workflow; problem is
// then what the read left for the user to see (state that is there but was not read: a newer
// Cairn's, a lock held through a needed repair), or "" when there is nothing to say. "" too,
// with problem saying why, when the session start after the compaction archives the workflow
// (finished, or past its TTL and not the compacting owner's): there is no position to keep,
// and no step to take before that start says the workflow ended.
//
// Over maxAnchor, the completed phases give way first and the rest is cut after that, but the
// last sentence, the pointer to resume_check, always stays whole.
func (e *Engine) CompactAnchor() (anchor, problem string) {
	// It is the compaction: the owning session's start after it resumes a workflow past its TTL.
	res := e.Resume(ResumeOptions{ReportOnly: true, Compaction: true})
	if res.WorkflowID == "" {
		return "", strings.TrimPrefix(res.SystemMessage, "Cairn: ")
	}
	if res.archives {
		return "", "workflow " + oneLine(res.WorkflowID, 80) + " is finished or past its TTL, so the session start after the compaction archives it"
	}
	head := fmt.Sprintf("Cairn workflow position (keep it in the summary): workflow %s (%s), phase %s", oneLine(res.WorkflowID, 80), oneLine(res.Type, 64), oneLine(res.Phase, 64))
	if res.PhaseStatus != "" {
		head += fmt.Sprintf(" (%s)", oneLine(res.PhaseStatus, 20))
	}
	var next, tasks string
	if res.Next != "" {
		next = "; next: " + strings.TrimSuffix(oneLine(anchorNext(res.Next), 300), ".") // a sentence; this is a clause
	}
	if n := len(res.OpenTasks); n > 0 {
		// The compaction request reads this as instructions: a task's title, stored text,
		// shows only quoted and escaped, as in the memory topic file.
		tasks = fmt.Sprintf("; %d open task%s, first: %s", n, workflow.Plural(n), secrets.LineQuoted(secrets.Quote(res.OpenTasks[0], 82), 92))
	}
	const pointer = ". After compaction, call " + ToolPrefix + "resume_check if unsure where the work stands."
	completed := ""
	if len(res.Completed) > 0 {
		const label = "; completed: "
		room := maxAnchor - utf8.RuneCountInString(head+next+tasks+pointer+label)
		if room >= 12 { // below that a cut list says nothing
			completed = label + oneLine(strings.Join(res.Completed, ", "), min(160, room))
		}
	}
	return secrets.Clip(head+completed+next+tasks, maxAnchor-utf8.RuneCountInString(pointer)) + pointer, ""
}

// anchorNext is a next step of the resume plan as the anchor, which holds no warnings, gives
// it: without the pointer to "the warning", and "the warnings above" named as resume_check's.
func anchorNext(next string) string {
	return WarningsAt(strings.Replace(next, seeWarning, "", 1), ToolPrefix+"resume_check gives")
}

// WarningsAt is a next step of the resume plan for a reader that sees the warnings elsewhere
// than above it: "the warnings above" says where instead.
func WarningsAt(next, where string) string {
	return strings.Replace(next, "the warnings above", "the warnings "+where, 1)
}

// Title is the session title for the resume picker: "Cairn: <type> · <phase>", or "" when no
// workflow is active, it is not resumed (ended or past its TTL, left in place) or its type and
// phase cannot be read (tier Damaged). res is what Resume returned.
func Title(res *Resume) string {
	if res == nil || res.WorkflowID == "" || res.Phase == "" || res.Tier == "Damaged" || res.left {
		return ""
	}
	return textsafe.Clip("Cairn: "+oneLine(cmp.Or(res.Type, "workflow"), 30)+" · "+oneLine(res.Phase, 40), 80)
}

// Status is the active workflow at a glance, for `cairn statusline`.
type Status struct {
	Type        string
	Phase       string
	PhaseStatus string
	Done, Total int           // phases completed, phases in the definition (0: unknown type)
	Age         time.Duration // since the last change; 0 when unknown
}

// QuickStatus reads the active workflow for a status bar: the record only (without a lock
// when all is well, as Store.ReadWorkflow reads; an engine opened with Config.NoLockWait
// never waits for one), no read protocol and no memory, so it costs a few milliseconds. ok
// is false when no workflow is active.
func (e *Engine) QuickStatus() (s Status, ok bool, err error) {
	r, _, err := e.active()
	if err != nil || r == nil || r.Status != workflow.StatusActive {
		return Status{}, false, err
	}
	def := e.quickDefinition(r.Type)
	// Stored text: the record may be older than the scan that refuses such text (hideSecrets).
	s = Status{Type: secrets.Shown(r.Type), Phase: secrets.Shown(r.State), PhaseStatus: secrets.Shown(string(r.PhaseStatus))}
	done := def.DoneSoFar(r.State, r.CompletedPhases(def))
	if def != nil {
		// Of its phases: one completed before an edit dropped it is not part of Total.
		done = slices.DeleteFunc(done, func(p string) bool { return !def.HasPhase(p) })
		s.Total = len(def.Phases)
	}
	s.Done = len(done)
	if last := r.LastActivity(); !last.IsZero() {
		s.Age = max(e.now().Sub(last), 0)
	}
	return s, true, nil
}

// oneLine is stored text made safe for one line of a status bar or a title, at most max
// runes, ended before a word its cut would make a secret of (secrets.Clip).
func oneLine(s string, max int) string { return secrets.Clip(textsafe.OneLine(s), max) }
