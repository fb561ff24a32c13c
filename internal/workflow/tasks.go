package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/textsafe"
)

// taskMoves is the task status machine: the statuses a task in s may go to. A done task is
// final; a failed one may be retried. Going from running back to pending is an interrupted
// run (recovery does it too). A switch, not a map: every hook links this package.
func taskMoves(s TaskStatus) []TaskStatus {
	switch s {
	case TaskPending:
		return []TaskStatus{TaskRunning}
	case TaskRunning:
		return []TaskStatus{TaskDone, TaskFailed, TaskPending}
	case TaskFailed:
		return []TaskStatus{TaskPending, TaskRunning}
	}
	return nil
}

// A record is at most 1 MiB (strictjson.MaxSize) and every write rewrites it whole, so tasks
// that filled it would make every later write fail, transitions included. They are bounded
// where they are added or grow, well under that; status moves are never refused, so a record
// stored over these bounds stays movable.
const (
	// maxTasks is the most tasks one workflow keeps.
	maxTasks = 500
	// maxTasksBytes bounds the tasks as JSON writes them: "<" in a note takes six bytes.
	maxTasksBytes = 256 << 10
	maxTaskOutput = 1024 // characters, as update_task's schema counts them
	// maxTaskID is in bytes, as a claim line keeps it (claim, claimsync).
	maxTaskID = 128
)

// TaskStatusError refuses a task status change the machine does not allow.
type TaskStatusError struct {
	ID      string
	From    TaskStatus // empty for a new task
	To      TaskStatus
	Allowed []TaskStatus
	// Phase is the task's phase when it is not the workflow's current one: a model numbering
	// its tasks afresh in each phase gives an earlier phase's id.
	Phase string
}

func (e *TaskStatusError) Error() string {
	id := TaskID(e.ID)
	if e.From == "" {
		// The step, not only the rule: the work was done before its start was recorded.
		return fmt.Sprintf("task %s is new and cannot start as %s: a new task starts as pending, running or done; set it running first, then %s", id, e.To, e.To)
	}
	if len(e.Allowed) == 0 {
		if e.Phase != "" {
			return fmt.Sprintf("task %s is phase %s's and cannot go from %s to %s: %s is final; for this phase's work, add a task with another id", id, e.Phase, e.From, e.To, e.From)
		}
		return fmt.Sprintf("task %s cannot go from %s to %s: %s is final; to redo the work, add a task with another id", id, e.From, e.To, e.From)
	}
	names := make([]string, len(e.Allowed))
	for i, s := range e.Allowed {
		names[i] = string(s)
	}
	return fmt.Sprintf("task %s cannot go from %s to %s: allowed next: %s", id, e.From, e.To, strings.Join(names, ", "))
}

// TaskUpdate adds a task or changes one.
type TaskUpdate struct {
	ID     string
	Status TaskStatus
	// Output, when not empty, sets the task's output path.
	Output string
	// Note, when it has visible text, sets the task's note.
	Note string
	// Rerun, with Status running, starts a new run of a task already running: one taken over
	// from another machine whose claim lapsed (a takeover), its run counted as an attempt. The
	// record then shows the run is another's, which a sync of the old holder's changes to the
	// task does not overwrite (Step.Apply).
	Rerun bool
}

// lookAlikeScripts are the alphabets whose letters are drawn alike (a and а, o and ο).
var lookAlikeScripts = []*unicode.RangeTable{unicode.Latin, unicode.Cyrillic, unicode.Greek}

// mixedScript reports whether a word of id (a run of letters) has letters of two of
// lookAlikeScripts: "tаsk" with a Cyrillic а reads as "task". Telling every look-alike apart
// needs Unicode's confusables and normal forms, which no package here has; this needs none.
func mixedScript(id string) bool {
	word := -1 // the script of the current word's letters so far; -1 for none yet
	for _, r := range id {
		if !unicode.IsLetter(r) {
			word = -1
			continue
		}
		for i, s := range lookAlikeScripts {
			if unicode.Is(s, r) {
				if word >= 0 && word != i {
					return true
				}
				word = i
			}
		}
	}
	return false
}

// detachedAccent reports whether id has a combining mark right after a letter of
// lookAlikeScripts: "cafe" and U+0301 reads as "café" with its one character (the decomposed
// form macOS file names and some keyboards give). Those alphabets have their accented letters
// as single characters, so refusing the mark needs none of Unicode's normal forms.
func detachedAccent(id string) bool {
	letter := false // the rune before is a letter of lookAlikeScripts
	for _, r := range id {
		if letter && unicode.Is(unicode.Mn, r) {
			return true
		}
		letter = unicode.IsLetter(r) && unicode.In(r, lookAlikeScripts...)
	}
	return false
}

// ValidTaskID reports whether id, trimmed, is one a task may have: one short line.
func ValidTaskID(id string) bool {
	return id != "" && len(id) <= maxTaskID && !strings.ContainsAny(id, "\r\n\t")
}

// UpdateTask adds task u.ID (in the current phase, as pending, running or done) or moves it to
// u.Status along the task machine: pending → running → done | failed | pending (interrupted),
// failed → pending | running (retry); done is final. A pending task recovery put back may be
// reported done or failed (endedAfterItsRun). Entering running stamps started_at;
// entering done or failed stamps completed_at; a run that ends failed or interrupted adds one
// to attempts; the agent putting a task back to pending clears started_at. The same status
// with nothing new changes nothing.
func UpdateTask(r *Record, u TaskUpdate, now time.Time, by Actor) (Result, error) {
	if err := requireActive(r); err != nil {
		return Result{}, err
	}
	id := strings.TrimSpace(u.ID)
	if len(id) > maxTaskID {
		// Not repeated: it is long. A schema's length counts characters, so a one-line id of
		// 128 of them can be over.
		return Result{}, fmt.Errorf("the task id is %d bytes, the most is %d bytes: use a shorter one", len(id), maxTaskID)
	}
	if id == "" {
		return Result{}, errors.New("the task id is empty: give the task's id")
	}
	if !ValidTaskID(id) {
		return Result{}, errors.New("the task id is not valid: use one short line")
	}
	if !u.Status.Valid() {
		return Result{}, fmt.Errorf("task %s: status %s is not valid: %w", TaskID(id), Quote(string(u.Status)), ErrTaskStatus)
	}
	note := textsafe.OneLine(u.Note)
	// In characters, as update_task's schema says it: a model cannot count bytes.
	if err := textFits("task "+TaskID(id)+": the note", note, maxNoteRunes); err != nil {
		return Result{}, err
	}
	// Spaces name no file: resume would warn of it as missing on every start (transition
	// refuses such an output too).
	if u.Output != "" && strings.TrimSpace(u.Output) == "" {
		return Result{}, fmt.Errorf("task %s: the output path is empty, nothing was changed: name the file the task wrote, or leave the output out", TaskID(id))
	}
	if n := utf8.RuneCountInString(u.Output); n > maxTaskOutput {
		return Result{}, fmt.Errorf("task %s: the output is %d characters, the most is %d: give the path of a file that holds it", TaskID(id), n, maxTaskOutput)
	}
	now = now.UTC()
	i := slices.IndexFunc(r.Tasks, func(t Task) bool { return t.ID == id })
	if i < 0 {
		// Retyped in another case, it would be a second task beside the open first (and a
		// move of it, refused as a new task's, would send the caller to add that second).
		if j := slices.IndexFunc(r.Tasks, func(t Task) bool { return strings.EqualFold(t.ID, id) }); j >= 0 {
			return Result{}, fmt.Errorf("task %s not added: task %s is on record, an id that differs only in letter case: use %s, or an id of its own", TaskID(id), TaskID(r.Tasks[j].ID), TaskID(r.Tasks[j].ID))
		}
		// The report lists an open mirrored Claude Code task by its subject: given as the id,
		// it would be a second task for the same work.
		if j := slices.IndexFunc(r.Tasks, func(t Task) bool {
			return strings.HasPrefix(t.ID, ClaudeTaskPrefix) && (t.Status == TaskPending || t.Status == TaskRunning) && strings.EqualFold(t.Note, id)
		}); j >= 0 {
			return Result{}, fmt.Errorf("task %s not added: it is the subject of Claude Code's task %s, open on record: use %s, or an id of its own", TaskID(id), TaskID(r.Tasks[j].ID), TaskID(r.Tasks[j].ID))
		}
		// A task already stored with such an id (an older Cairn took them) stays updatable.
		// Refused before the status is: a new id that looks like one on record is told so.
		if unclearID(id) {
			return Result{}, errors.New("the task id holds control or invisible characters, so it would read as another id: use letters, digits, '.', '_', ':' or '-'")
		}
		if mixedScript(id) {
			return Result{}, errors.New("the task id mixes Latin, Cyrillic or Greek letters in one word, so it may read as another id: write each word in one alphabet")
		}
		if detachedAccent(id) {
			return Result{}, errors.New("the task id writes an accent as a mark apart from its letter, so it reads as the same id written with the accented letter but is another: type each accented letter as one character")
		}
		// Done at once is a run recorded whole (running, then done, in one write): work
		// finished before its task was added. Failed is not: a failure is retried, and a
		// task never run has no failure to retry.
		if u.Status == TaskFailed {
			return Result{}, &TaskStatusError{ID: id, To: u.Status}
		}
		if len(r.Tasks) >= maxTasks {
			return Result{}, fmt.Errorf("task %s not added: a workflow keeps at most %d tasks and this one has %d; move an existing task instead, or complete this workflow and start another", TaskID(id), maxTasks, len(r.Tasks))
		}
		t := Task{ID: id, Phase: r.State, Status: u.Status, Output: u.Output, Note: note, UpdatedAt: now}
		if u.Status != TaskPending {
			t.StartedAt = now
		}
		if u.Status == TaskDone {
			t.CompletedAt = now
		}
		if err := tasksFit(r.Tasks, -1, t); err != nil {
			return Result{}, err
		}
		res := change(r, EventTask, now, by, func(n *Record) { n.Tasks = append(n.Tasks, t) })
		res.Subject = taskSubject(id, u.Status)
		return res, nil
	}
	old := r.Tasks[i]
	rerun := u.Rerun && old.Status == TaskRunning && u.Status == TaskRunning
	if old.Status == u.Status {
		if !rerun && (u.Output == "" || u.Output == old.Output) && (note == "" || note == old.Note) {
			// Another live session may have set it so: a second claim of a running task is
			// not the caller's own to go on with unawares.
			res := unchanged(r)
			if w := OwnershipWarning(r, by, now, DefaultLiveWindow); w != "" {
				res.Warnings = []string{w}
			}
			return res, nil
		}
	} else if next := taskMoves(old.Status); !slices.Contains(next, u.Status) && !endedAfterItsRun(old, u.Status) {
		e := &TaskStatusError{ID: id, From: old.Status, To: u.Status, Allowed: next}
		if old.Phase != "" && old.Phase != r.State {
			e.Phase = old.Phase
		}
		return Result{}, e
	}
	if len(u.Output) > len(old.Output) || len(note) > len(old.Note) {
		grown := old
		if u.Output != "" {
			grown.Output = u.Output
		}
		if note != "" {
			grown.Note = note
		}
		if err := tasksFit(r.Tasks, i, grown); err != nil {
			return Result{}, err
		}
	}
	res := change(r, EventTask, now, by, func(n *Record) {
		t := &n.Tasks[i]
		if old.Status != u.Status {
			if old.Status == TaskRunning && (u.Status == TaskFailed || u.Status == TaskPending) {
				t.Attempts++
			}
			t.CompletedAt = time.Time{}
			switch u.Status {
			case TaskPending:
				// Put back by the agent: no run of it stands. Only recovery's put-back keeps
				// started_at, the run it took as interrupted (DoneAfterItsRun).
				t.StartedAt = time.Time{}
			case TaskRunning:
				t.StartedAt = now
			case TaskDone, TaskFailed:
				t.CompletedAt = now
			}
			t.Status = u.Status
		} else if rerun {
			t.Attempts++
			t.StartedAt = now
		}
		if u.Output != "" {
			t.Output = u.Output
		}
		if note != "" { // a note that cleans to nothing is no note: it wipes none
			t.Note = note
		}
		t.UpdatedAt = now
	})
	res.Subject = taskSubject(id, u.Status)
	switch {
	case DoneAfterItsRun(old, u.Status):
		res.Warnings = append(res.Warnings, fmt.Sprintf("task %s had been put back to pending, its run taken as interrupted (after a crash or /clear); it is recorded done, its work finished by that run: if the work is not finished, set it running and do it", TaskID(id)))
	case endedAfterItsRun(old, u.Status):
		res.Warnings = append(res.Warnings, fmt.Sprintf("task %s had been put back to pending, its run taken as interrupted (after a crash or /clear) and counted as an attempt; it is recorded failed: to retry it, set it running", TaskID(id)))
	}
	return res, nil
}

// endedAfterItsRun says whether moving t to status to is a pending task that recovery put
// back reported done (DoneAfterItsRun) or failed: the failure of that run, often the call the
// interruption cut off retried. Recovery counted the run as an attempt already; "allowed
// next: running" would have the agent record a run that never happened, counted again, to
// get to failed.
func endedAfterItsRun(t Task, to TaskStatus) bool {
	return (to == TaskDone || to == TaskFailed) && DoneAfterItsRun(t, TaskDone)
}

// DoneAfterItsRun says whether moving t to status to is a pending task that recovery put back
// (it takes a running task as interrupted after a crash or /clear, and keeps its started_at,
// which the agent's own move to pending clears) reported done: the agent finished the work of
// that run and says so, often retrying the done the interruption cut off. "Allowed next:
// running" would have it run the finished work again, or record a run that never happened to
// get to done. A task the agent put back itself, from a run it ended or one that failed, has
// no such run.
func DoneAfterItsRun(t Task, to TaskStatus) bool {
	return t.Status == TaskPending && to == TaskDone && !t.StartedAt.IsZero()
}

// tasksFit refuses t, replacing tasks[i] (added when i < 0), when the tasks would then take
// more than maxTasksBytes as JSON.
func tasksFit(tasks []Task, i int, t Task) error {
	all, err := json.Marshal(tasks)
	if err != nil {
		return err
	}
	size := len(all)
	add, err := json.Marshal(t)
	if err != nil {
		return err
	}
	if i < 0 {
		size += len(add) + 1 // and a comma
	} else {
		was, _ := json.Marshal(tasks[i])
		size += len(add) - len(was)
	}
	if size <= maxTasksBytes {
		return nil
	}
	verb := "not added"
	if i >= 0 {
		verb = "not changed"
	}
	return fmt.Errorf("task %s %s: the workflow's tasks would take %d KiB, the most they may take is %d KiB (a workflow record is at most 1 MiB); shorten notes and outputs, or complete this workflow and start another", TaskID(t.ID), verb, (size+1023)>>10, maxTasksBytes>>10)
}

// TaskCounts summarises tasks by status.
type TaskCounts struct {
	Pending, Running, Done, Failed int
}

// CountTasks counts r's tasks by status (only those of phase, when phase is not empty).
func CountTasks(r *Record, phase string) TaskCounts {
	var c TaskCounts
	if r == nil {
		return c
	}
	for _, t := range r.Tasks {
		if phase != "" && t.Phase != "" && t.Phase != phase {
			continue
		}
		switch t.Status {
		case TaskPending:
			c.Pending++
		case TaskRunning:
			c.Running++
		case TaskDone:
			c.Done++
		case TaskFailed:
			c.Failed++
		}
	}
	return c
}

// taskSubject is Result.Subject of a change to task id that leaves it in status s.
func taskSubject(id string, s TaskStatus) string { return "task " + TaskID(id) + " " + string(s) }
