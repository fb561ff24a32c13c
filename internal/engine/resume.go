package engine

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/project"
	"github.com/cairn-dev/cairn/internal/remote/mirror"
	"github.com/cairn-dev/cairn/internal/report"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/textsafe"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// ResumeOptions steers the read protocol.
type ResumeOptions struct {
	Apply bool // expire, archive, recover and write L2 (SessionStart, resume_check)
	// ReportOnly leaves Resume.Workflow empty: the SessionStart hook prints the report and
	// the summary fields, never the whole record.
	ReportOnly bool
	// Person is a view for a person at a terminal (cairn status), not for a session's model:
	// without a session id the caller is no session, so a live one owning the workflow is
	// another, as the CLI's changes warn.
	Person bool
	// Compaction is a SessionStart whose source is "compact": the session starting again
	// after its own compaction, mid-work. Its TTL does not expire the workflow the session
	// owns (the TTL counts only real changes, and the owner is demonstrably live); any other
	// session's compaction expires it as any start does.
	Compaction bool
	// FromClient is a read from inside a running Claude Code client: resume_check through
	// cairn-mcp, whose engine has its client's pid (the server's parent, the CLAUDE_PID its
	// hooks record) and the session that client is in now (sessions/<pid>.json, followed
	// before every call). When the workflow's owner is that session, its TTL does not expire
	// it: the owner is live and calling. Every other caller expires it.
	FromClient bool
	// AfterRead, with Apply, runs once the workflow is read and any repair that read needed is
	// made, before the report is built from it: the SessionStart hook records there the task
	// events earlier hooks kept, which may have waited for that repair, so that the report
	// lists them. When it says it changed the workflow, the workflow is read again. Nil
	// (resume_check) records them here, for one lock wait at most, those that could not be
	// read said in the notices, and those left kept in one warning (keptNotListed).
	AfterRead func() (changed bool)
}

// Resume is the read protocol's answer.
type Resume struct {
	Tier        string   `json:"tier"` // Full, Minimal, L2-only, None; Damaged, Newer (state it cannot read)
	WorkflowID  string   `json:"workflow_id,omitempty"`
	Type        string   `json:"type,omitempty"`
	Context     string   `json:"context,omitempty"`
	Phase       string   `json:"phase,omitempty"`
	PhaseStatus string   `json:"phase_status,omitempty"`
	AgeSeconds  int64    `json:"age_seconds,omitempty"`
	Completed   []string `json:"completed,omitempty"`
	Allowed     []string `json:"allowed,omitempty"` // next phases
	Next        string   `json:"next,omitempty"`
	// AwaitingApproval names the approval phase waiting for a person's yes, if any.
	AwaitingApproval string      `json:"awaiting_approval,omitempty"`
	Warnings         []string    `json:"warnings,omitempty"`
	Blocking         []Violation `json:"blocking,omitempty"`
	Notices          []string    `json:"notices,omitempty"` // what the protocol did: expired, quarantined, recovered
	L2Line           string      `json:"l2_line,omitempty"`
	// Ended is the L2 line of the workflow that ended last, when none is active: there is
	// nothing to resume.
	Ended string `json:"last_ended,omitempty"`
	// Details (resume_check and cairn status only): task counts, failed task ids and
	// checkpoint names.
	Tasks       string   `json:"tasks,omitempty"`
	FailedTasks []string `json:"failed_tasks,omitempty"`
	Checkpoints []string `json:"checkpoints,omitempty"`
	// CheckpointsBefore are those of Checkpoints saved before this workflow started (their
	// files' times against its start): the project keeps checkpoints across workflows, so
	// these may hold an earlier workflow's results.
	CheckpointsBefore []string `json:"checkpoints_before_workflow,omitempty"`
	// PhaseCheckpoints are the phases that keep the checkpoint a transition out of them was
	// given: load_checkpoint with phase reads it.
	PhaseCheckpoints []string        `json:"phase_checkpoints,omitempty"`
	Approvals        []string        `json:"approvals,omitempty"`  // who approved which phase, when
	OpenTasks        []string        `json:"open_tasks,omitempty"` // pending or running tasks, oldest first
	Workflow         json.RawMessage `json:"workflow,omitempty"`
	Report           string          `json:"-"` // the fenced resume report; "" when nothing to say
	SystemMessage    string          `json:"-"` // one line for the user when something needs their eye

	// Shared says how this clone's mirror of the remote stands, when it shares its workflow
	// through one: "shared via origin: synced 4m ago, 2 changes not pushed".
	Shared string `json:"shared,omitempty"`

	// archives (a read without Apply, in a state directory that can be written): the next
	// read with Apply archives the workflow (archivedAtRead), so there is nothing to resume.
	archives bool
	// finished: the workflow reported is completed (or otherwise ended), still in the active
	// slot until a read with Apply archives it (see Finished).
	finished bool
	// left: the workflow reported has ended or is past its TTL, left in the active slot by a
	// read that did not archive it; it is not resumed (Title names none).
	left bool
}

// Finished says the workflow reported has ended (completed on this machine, or on another
// whose end a sync pulled) though a read without Apply (cairn status) still finds it in the
// active slot: nothing is left to do in it, and the next read with Apply archives it.
func (r *Resume) Finished() bool { return r.finished }

// keptNotListed is resume_check's line when the task events hooks kept were not all recorded
// before it answered (err, ApplyKeptClaudeTasks'): they stay kept, and what records them.
func keptNotListed(err error) string {
	said := "task events kept by hooks are not in the task list yet"
	te, _ := errors.AsType[*durable.LockTimeoutError](err)
	switch {
	case errors.Is(err, ErrKeptBusy):
		return said + ": " + err.Error()
	case te == nil:
		return said + "; the next Cairn hook records them"
	case store.KeptTasksLocked(err):
		said += ": they are locked " + te.Who()
	default:
		said += ": the workflow is locked " + te.Who()
	}
	if te.Stopped { // it keeps them out until it is resumed
		return said + "; " + te.Resume()
	}
	return said + "; the next Cairn hook records them"
}

// DefinitionWarning is how the resume report words d, one of Warnings' broken definitions:
// by the file's path in the project, which says enough, and not loaded until fixed.
func (e *Engine) DefinitionWarning(d string) string {
	if rel, ok := strings.CutPrefix(d, "workflow definition "+e.root+string(filepath.Separator)); ok {
		d = "workflow definition " + rel
	}
	return d + " (not loaded until fixed)"
}

// Resume runs the read protocol: L1 (with the store's repairs), TTL expiry, recovery,
// integrity checks, then L2, then the directory scan, and builds the resume plan and report.
// With opt.Apply it changes state as the protocol says (expire and archive, recover tasks,
// settle owed L2 lines); without, it only reports.
func (e *Engine) Resume(opt ResumeOptions) *Resume {
	out := &Resume{}
	var eye []string // what the user should see in a systemMessage
	// next makes the next step the agent's, or the person's for a person.
	next := func(agent, person string) {
		out.Next = agent
		if opt.Person {
			out.Next = person
		}
	}

	r, read, err := e.activeRead()
	notices := read.Notices
	var kept []string // what became of kept task events that could not be read
	after := opt.AfterRead
	if after == nil { // resume_check records the task events hooks kept, as SessionStart does
		after = func() bool {
			if !e.HasKeptClaudeTasks() {
				return false
			}
			// For as long as one lock wait: those left stay kept for the next hook.
			var err error
			kept, err = e.ApplyKeptClaudeTasks(0, time.Now().Add(e.cfg.LockWait), func(ClaudeTask, bool, *Result, error) {})
			if err != nil {
				out.Warnings = append(out.Warnings, keptNotListed(err))
			}
			return true
		}
	}
	if err == nil && opt.Apply && after() {
		r, read, err = e.activeRead()
		notices = append(notices, read.Notices...)
	}
	// Read after the state: a record migrated by that read takes the time of the migration
	// for the times it lacks, which an earlier reading would call in the future.
	now := e.now()
	var damaged *store.DamagedError
	var newer *NewerStateError
	errors.As(err, &damaged)
	for _, n := range notices {
		out.Notices = append(out.Notices, n.Message)
		// Damaged state's warning names the quarantined snapshot and what to do: the user's
		// line, cut at a few hundred characters, says it once.
		if (n.Kind == "quarantined" || n.Kind == "rebuilt") && damaged == nil {
			eye = append(eye, n.Message)
		}
	}
	out.Notices = append(out.Notices, kept...)
	if err != nil {
		said := err // the report's warning says what is wrong; its next step, what to do
		if re, ok := errors.AsType[*recordError](err); ok {
			said = re.err
		}
		msg := "the workflow state could not be read: " + inTheWayFor(said, opt.Person)
		if errors.Is(err, syscall.ENOSPC) {
			// It reads; what the read settles first could not be written.
			msg = "the workflow state could not be settled: " + err.Error()
		}
		if n := newerState(err); n != nil {
			msg, newer = n.Error(), n
		}
		told := msg
		if ue, ok := errors.AsType[*store.UnmigratableError](err); ok && !opt.Person && errors.Unwrap(ue.Err) != nil {
			// What to correct first, then the file, which a cut may drop: the store's text,
			// with the directory first and the next step's step after, was cut in the report
			// before it said what.
			file := filepath.Join(e.st.Dir(), store.WorkflowFile)
			if rel, rerr := filepath.Rel(e.root, file); rerr == nil && filepath.IsLocal(rel) {
				file = rel
			}
			msg = "the workflow snapshot is in an older format that could not be migrated and was left as it is: " + errors.Unwrap(ue.Err).Error() + "; it is " + file
		}
		out.Warnings = append(out.Warnings, msg)
		if IsForeignSnapshot(err) {
			// The user's one line, cut at a few hundred characters, starts with the step:
			// the store's text says why at a length that would cut it off.
			told = e.moveOut() + ": it holds no workflow record this Cairn reads (another tool's file, or a newer Cairn's) and was left as it is; Cairn then reads the workflow from its journal, if there is one"
		}
		// The person's line: their own step in the agent's place.
		eye = append(eye, strings.Replace(told, DamagedStep, DoctorSetsAside, 1))
		r = nil
	}
	// Broken workflow definitions are shown to the person and the model, not only logged.
	// Only a project with its own definitions (or a file, or a link that leads nowhere, where
	// their directory belongs) can have one (and such a project's hooks run in the cairn
	// binary, which reads YAML).
	if _, err := os.Lstat(e.workflow); err == nil && e.cfg.YAML != nil {
		for _, d := range e.definitionErrors() {
			msg := e.DefinitionWarning(d)
			out.Warnings = append(out.Warnings, msg)
			eye = append(eye, msg)
		}
	}
	// A state directory not created yet (a command that only reads) is writable if it
	// can be created.
	l1ok := writable(e.st.Dir()) || !e.st.Exists() && creatable(e.st.Dir())
	if !l1ok {
		eye = append(eye, workflow.WarnL1Unavailable+" ("+e.st.Dir()+" is not writable)")
	}

	if r != nil && opt.Apply && l1ok {
		r = e.readProtocol(r, now, out, &eye, opt, 1)
		now = e.now() // r may have been read again there, and written since the first read
	} else if e.archivedAtRead(r, now, opt) {
		// A read without Apply: the next one with it archives it, if it can write.
		out.archives, out.left = l1ok, true
		out.finished = r.Status != workflow.StatusActive
		if r.Status == workflow.StatusActive { // past its TTL
			by := "the next session start archives it"
			switch {
			case opt.Person && !l1ok:
				by = "archive it with `cairn expire` once " + e.st.Dir() + " is writable"
			case opt.Person:
				by = "archive it with `cairn expire`"
			case !l1ok:
				by = "the first session start that can write the state directory archives it"
			}
			out.Warnings = append(out.Warnings, fmt.Sprintf("workflow %s has %s; %s", r.WorkflowID, r.ExpiredAfter(), by))
		}
	}
	if opt.Apply && l1ok {
		_, _, w := e.settleL2(r)
		out.Warnings = warned(out.Warnings, w)
	}

	var def *workflow.Definition
	var findings []workflow.Finding
	if r != nil {
		def, _ = e.definitionFor(r) // nil: the checks report it, and broken files are warned of above
		findings = workflow.Check(workflow.CheckInput{Def: def, Record: r, Now: now, Exists: e.exists, By: e.actor(), LiveWindow: e.liveWindow(r, now)})
		if opt.Person && e.actor().SessionID == "" {
			// Check names a live owner only for a session; a change from this terminal
			// warns of one all the same.
			if w := workflow.OwnershipWarning(r, e.actor(), now, e.liveWindow(r, now)); w != "" {
				i := slices.IndexFunc(findings, func(f workflow.Finding) bool { return f.Severity == workflow.Low || f.Severity == workflow.Info })
				if i < 0 {
					i = len(findings)
				}
				findings = slices.Insert(findings, i, workflow.Finding{Code: workflow.FindingOwnedElsewhere, Severity: workflow.Medium, Text: w})
			}
		}
		if opt.Person {
			personWords(findings)
		}
		findings = e.dropEndedOwner(r, findings)
		for _, f := range findings {
			if f.Code == workflow.FindingOwnedElsewhere {
				// The user reads it: their own step, not one through them.
				eye = append(eye, strings.Replace(f.Text, workflow.OwnedAsk, OwnedOne, 1))
			}
		}
	}

	l2ok := e.memWarn == ""
	l2said := false // a warning here says why L2 is unavailable: the plan's generic one is not added
	if l2ok {
		if why, step := e.memoryNotDir(); why != "" {
			// The plan says L2 is unavailable; why, with its step, once (an owed line's write said it).
			l2ok, l2said = false, true
			if !slices.ContainsFunc(out.Warnings, func(w string) bool { return strings.Contains(w, why) }) {
				out.Warnings = append(out.Warnings, "auto-memory: "+why+"; "+step)
			}
		}
	}
	l2line, l2at := "", time.Time{}
	if r == nil && l2ok {
		if last, ok, err := e.mem.LastPosition(); err == nil && ok {
			l2line, l2at = last.Text, last.At
		} else if err != nil {
			l2ok, l2said = false, true
			out.Warnings = append(out.Warnings, err.Error())
		}
	}
	// An ending is not lost state: the last workflow completed, expired or was archived, so
	// there is nothing to resume. The next session start is told once; later ones nothing.
	// State on record that could not be read (damaged, a newer Cairn's) is not an ending,
	// whatever ended before it: the report says what is there, not "the last one ended".
	told := true
	var endID string
	if r == nil && (l2line == "" || workflow.IsEndingLine(l2line)) {
		if end, ok := e.lastEnding(); ok && err == nil && e.archivedLast(end.WorkflowID) {
			out.Ended, told, endID = end.Line, end.Told, end.WorkflowID
		} else if err == nil && l2line != "" && e.SharedMemory() == "" {
			// Known only from memory: nothing to tell. Memory other projects or worktrees
			// share may hold another's, which is not this one's last one.
			out.Ended = l2line
		}
		l2line = ""
	} else if r == nil && e.SharedMemory() == "" && (err == nil || errors.As(err, new(*store.WriteError))) {
		// Memory's position line of a workflow the archive holds: the archive's last steps
		// (the index line, this line's ending, the record of it) did not reach the disk.
		if a, ar, ok := e.archivedPosition(l2line, l2at); ok {
			// Untold: the session's context holds memory's line, which calls it active.
			out.Ended, l2line, told, endID = endingLine(ar, a.Reason), "", false, ar.WorkflowID
			if opt.Apply && l1ok {
				// Memory goes on calling it active, in every session's context, until its
				// ending's line is written: nothing else owes it.
				out.Warnings = warned(out.Warnings, e.ended(ar.WorkflowID, endingRev(ar, a.Reason), out.Ended))
			}
		}
	}
	if r == nil && l2line == "" && out.Ended == "" && err == nil {
		out.Notices = append(out.Notices, e.scanMilestones()...)
	}

	var runs func(string) (mirror.Claim, bool) // running on another machine, with its claim
	if r != nil {
		runs = e.runsElsewhere(r)
	}
	mid := e.ownerMidWork(r, opt)
	if expired, _ := r.Expired(now); expired && !mid {
		// Beside the live owner the read leaves it (archivedAtRead), as the owner goes on with
		// it: a step to expire_ttl would archive it under that owner's work.
		mid = e.besideLiveOwner(r)
	}
	plan := workflow.BuildPlan(workflow.PlanInput{Record: e.planView(def, r, now), Def: def, L1Available: l1ok, L2Available: l2ok,
		L2Off: e.memoryOff(), L2Said: l2said,
		L2Line: l2line, Findings: findings, Now: now, OwnerMidWork: mid, RunsElsewhere: heldElsewhere(runs)})
	out.Tier = tierName(plan.Tier)
	out.WorkflowID, out.Type, out.Context, out.Phase = plan.WorkflowID, plan.Type, plan.Context, plan.Phase
	out.PhaseStatus = string(plan.PhaseStatus)
	out.AgeSeconds = int64(plan.Age / time.Second)
	out.Completed, out.Allowed, out.Next = def.DoneSoFar(plan.Phase, plan.Completed), plan.Allowed, plan.Next
	if plan.Tier == workflow.TierL2Only {
		if kind := e.SharedMemory(); kind != "" {
			out.Next = sharedL2Next(kind)
		}
	}
	out.AwaitingApproval = plan.AwaitingApproval
	out.L2Line = plan.L2Line
	if r != nil && r.Status == workflow.StatusActive && !(read.JournalRead && read.ID == r.WorkflowID) {
		// The snapshot reads, but every change commits to the journal first: one Lstat, not a
		// read, and none when the read above read the journal.
		if jerr := e.st.JournalInTheWay(r.WorkflowID); jerr != nil {
			out.Warnings = append(out.Warnings, inTheWayFor(jerr, opt.Person))
			eye = append(eye, jerr.Error())
			out.Next = doctorStep("Every change to the workflow is refused until its journal is a file again"+seeWarning, opt.Person)
		}
	}
	if !l1ok && r != nil && r.Status == workflow.StatusActive {
		// Every change would be refused: going on with the phase is not the step, and the
		// cause (another user's directory, a read-only mount, a mode) is doctor's to name.
		const head, kept = "The workflow state cannot be written", ", so no change to it would be kept"
		next(doctorStep(head+seeWarning+kept, false), doctorStep(head+kept, true))
	}
	if !l1ok && plan.Tier.Stateless() {
		// The user's request need not wait, but the user is told: a workflow started would be
		// refused, memory's position line or not.
		const head = "No workflow can be recorded"
		next(head+seeWarning+": ask the user to run `cairn doctor`, which says what to fix. Then go on with the user's request; a workflow can be started once the state directory is writable.",
			head+": run `cairn doctor`, which says what to fix.")
	}
	// Nothing to resume: none, or one that ended, whose archiving waits for room.
	none := r == nil || r.Status != workflow.StatusActive
	if what, inodes := noRoom(e.st.Dir()); l1ok && what != "" && (none && err == nil || !none) {
		// Writable, but every change would be refused for want of room: access(2) does not say
		// so, and going on with the phase, or starting a workflow, is not the step.
		warn := e.st.Dir() + ": " + what + ", so no change to the workflow would be kept"
		if none {
			warn = e.st.Dir() + ": " + what + ", so no workflow started now would be kept"
		}
		out.Warnings, eye = append(out.Warnings, warn), append(eye, warn)
		again := "there is space"
		if inodes {
			again = "some inodes are freed"
		}
		out.Next = "The workflow state cannot be written" + seeWarning + ": tell the user " + what + "; do not delete or move files to make room. Call " + ToolPrefix + "resume_check again once " + again + "; start no new work before."
		if none {
			// Nothing to resume: the user's request, which Cairn does not track, need not wait.
			out.Next = "No workflow can be recorded" + seeWarning + ": tell the user " + what + "; do not delete or move files to make room. Then go on with the user's request; a workflow can be started once " + again + "."
		}
		if opt.Person {
			out.Next = "The workflow state cannot be written" + seeWarning + ": " + freeStep(inodes) + ", then run cairn status again."
		}
	}
	var elsewhere func(string) (bool, bool, bool)
	var lapsed []string // running on another machine whose claim lapsed: this one may take them
	if runs != nil {
		elsewhere = func(task string) (bool, bool, bool) {
			k, ok := runs(task)
			if k.Lapsed() {
				lapsed = append(lapsed, task)
			}
			return k.Holder != "", k.Lapsed(), ok
		}
	}
	out.OpenTasks = workflow.OpenTasksExcept(r, e.runnerEnded(r), elsewhere)
	if len(lapsed) > 0 && opt.Apply && !opt.Person {
		// Cairn's own step, after the fence (as the earlier tasks' below).
		out.Next = report.NextWith(out.Next, "Also, to take over "+lapsedTasks(lapsed)+" from the other machine, whose claim lapsed, call "+ToolPrefix+"update_task with status running (or done if finished).")
	}
	earlier := e.untoldEarlierTasks(r)
	earlierNotice := ""
	if n := len(earlier); n > 0 {
		earlierNotice = "1 open task came from an earlier Claude Code session's task list, which this session does not have; Claude Code does not say when a task is deleted, so it may be gone there. Cairn says this once; the task then stands as the workflow's own"
		step := "Also create again with TaskCreate the open task from the earlier session's list if it is still to do."
		if n > 1 {
			earlierNotice = fmt.Sprintf("%d open tasks came from an earlier Claude Code session's task list, which this session does not have; Claude Code does not say when a task is deleted, so each may be gone there. Cairn says this once; the tasks then stand as the workflow's own", n)
			step = "Also create again with TaskCreate each open task from the earlier session's list that is still to do."
		}
		if e.cfg.Getenv(claudeTaskListVar) != "" {
			// Sessions sharing one list: this one has the earlier tasks, unless deleted there,
			// and creating them again blindly would put a second copy of each in that list.
			earlierNotice = "1 open task came from an earlier Claude Code session; this session shares its task list (" + claudeTaskListVar + "), which holds it unless it was deleted there, and Claude Code does not say when a task is deleted. Cairn says this once; the task then stands as the workflow's own"
			step = "Also look in TaskList for the open task from the earlier session: if it is not there and is still to do, create it again with TaskCreate."
			if n > 1 {
				earlierNotice = fmt.Sprintf("%d open tasks came from an earlier Claude Code session; this session shares its task list (%s), which holds each unless it was deleted there, and Claude Code does not say when a task is deleted. Cairn says this once; the tasks then stand as the workflow's own", n, claudeTaskListVar)
				step = "Also look in TaskList for each open task from the earlier session: create again with TaskCreate one that is not there and is still to do."
			}
		}
		out.Notices = append(out.Notices, earlierNotice)
		// The step is Cairn's own, so it goes with the next step, after the fence: in the
		// notice it would sit among the stored data the report says to read as data. Only
		// whole: a step the cut would end early is left to the notice's facts. Only to a
		// session that is told (Apply): not to a person (cairn status), nor in the anchor a
		// compaction keeps (CompactAnchor), before the report after it tells.
		if opt.Apply && !opt.Person {
			out.Next = report.NextWith(out.Next, step)
		}
	}
	out.Warnings = append(out.Warnings, plan.Warnings...)
	for _, v := range plan.Blocking {
		out.Blocking = append(out.Blocking, Violation{Code: v.Code, Severity: string(v.Severity), Details: v.Details})
	}
	unreadable := err != nil && newer == nil
	if unreadable {
		// Not "nothing to resume", nor "missing" with a line in memory: state is there that
		// could not be read, and a start would fail on it too.
		out.Next = doctorStep("The workflow state could not be read"+seeWarning, opt.Person)
		if errors.Is(err, syscall.ENOSPC) {
			// Nothing is damaged: what the read settles first (an archive's last step) needs
			// space, and a restore would put back what was archived.
			what, inodes := noSpace(err, e.st.Dir())
			again, free := "there is space", "free some space"
			if inodes {
				again, free = "some inodes are freed", "free some inodes"
			}
			settled := strings.ToUpper(what[:1]) + what[1:] + ", so the workflow state could not be settled" + seeWarning
			next(settled+": tell the user "+what+"; do not delete or move files to make room. Call "+ToolPrefix+"resume_check again once "+again+"; start no new work before.",
				settled+": "+free+", then run cairn status again.")
		}
	}
	if ids := damagedIDs(damaged); len(ids) > 0 {
		// On record but unreadable: never reported as no workflow (issue 13.3).
		out.WorkflowID = ids[0]
		out.Type, out.Phase, out.Tier = "unknown", "unknown", "Damaged"
		const head = "The workflow's snapshot and journal are damaged and kept" + seeWarning
		next(doctorStep(head, false), head+": "+DoctorSetsAside+".")
	}
	if unr, ok := errors.AsType[*store.UnreadableError](err); ok && newer == nil {
		// There but not readable as a file: on record all the same.
		if len(unr.IDs) > 0 {
			out.WorkflowID = unr.IDs[0]
		}
		out.Type, out.Phase, out.Tier = "unknown", "unknown", "Damaged"
		out.Next = doctorStep("A file of the workflow's state is there but cannot be read and was left as it is"+seeWarning, opt.Person)
		if e.rebuildsOnceMoved() {
			// Doctor's step: the journal holds the workflow, and the next read rebuilds from it.
			const head = "The workflow snapshot cannot be read and was left as it is" + seeWarning
			next(doctorStep(head, false), head+": "+e.moveOut()+", then run `cairn status`, which rebuilds it from the journal; start no new work before.")
		}
		if IsForeignSnapshot(err) {
			// Another tool's file or a newer Cairn's, not damage: the warning's one step.
			const head = "The workflow snapshot holds no workflow record this Cairn reads and was left as it is"
			next(doctorStep(head+seeWarning, false), head+": "+e.moveOut()+", then run `cairn status`; start no new work before.")
		}
	}
	if store.OtherUsers(err) && newer == nil {
		// Not damage: cairn run with sudo left it another user's. A restore or a move would
		// only lose it; the chown the warning gives is the one step.
		const head = "The workflow state belongs to another user, as after a cairn run with sudo, and was left as it is" + seeWarning + ": "
		// The command itself: the warning, cut to its length in the report, may lose it.
		cmd := cmp.Or(store.GiveBack(err), "the sudo chown command the warning gives")
		next(head+"ask the user to run "+cmd+", then call "+ToolPrefix+"resume_check again; start no new work before.",
			head+"run the sudo chown command the warning gives, then run `cairn status` again; start no new work before.")
	}
	if re, ok := errors.AsType[*recordError](err); ok {
		out.WorkflowID, out.Type, out.Phase, out.Tier = re.id, "unknown", "unknown", "Damaged"
		out.Next = doctorStep("The workflow's record is there but does not read as one and was left as it is"+seeWarning, opt.Person)
	}
	if ue, ok := errors.AsType[*store.UnmigratableError](err); ok {
		// An older record this Cairn could not convert: on record, and left for a person.
		out.WorkflowID, out.Type, out.Phase, out.Tier = ue.ID, "unknown", "unknown", "Damaged"
		// Doctor does not read old formats: the warning holds the one fix, the person's to make.
		const head = "The workflow snapshot is in an older format that could not be migrated and was left as it is" + seeWarning
		next(head+": ask the user to correct it by hand as the warning says, then call "+ToolPrefix+"resume_check again; start no new work before.",
			head+": correct it by hand as the warning says, then run `cairn status`; start no new work before.")
	}
	if newer != nil {
		// Not "no workflow": one this Cairn cannot read, and must not start over.
		out.Tier, out.Next = "Newer", newer.Next()
	}
	sh := e.shared(r, out)
	out.Warnings = dedupe(out.Warnings)
	if r != nil && !opt.ReportOnly {
		out.Workflow, _ = json.Marshal(r)
		e.details(out, r, runs)
	}
	hideSecrets(out)
	ended := out.Ended
	if opt.ReportOnly && told {
		ended = "" // said once already
	}
	// Told only when the report said it (report.Render knows its layout); an ending left out
	// stays to be told.
	var endedShown bool
	out.Report, endedShown = e.render(out, plan, ended, !opt.ReportOnly, sh)
	// A damaged record of what was told is set aside: after the report, so it is said in the
	// notices and to the user.
	var aside []*store.Notice
	if opt.ReportOnly && opt.Apply && !told && endedShown {
		aside = append(aside, e.markEndingTold(endID))
	}
	if opt.Apply && earlierNotice != "" && strings.Contains(out.Report, earlierNotice) {
		aside = append(aside, e.markEarlierTasksTold(r, earlier))
	}
	for _, n := range aside {
		if n != nil {
			out.Notices = append(out.Notices, n.Message)
			eye = append(eye, n.Message)
		}
	}
	if opt.Apply && l1ok && err == nil {
		e.endBreak(notices) // said in the notices and to the user
	}
	if len(eye) > 0 {
		// Not cut here: the hook cuts it to one line between characters (hook.OneLine).
		out.SystemMessage = "Cairn: " + strings.Join(dedupe(eye), "; ")
	}
	return out
}

// endBreak ends the break in the journal's chain that a read's notices, said, tell of
// (store.EndBreak), so that later reads do not say it again. A failure costs only the notice
// said again by the next read.
func (e *Engine) endBreak(notices []store.Notice) {
	if slices.ContainsFunc(notices, func(n store.Notice) bool { return n.Kind == "rebuilt" }) {
		_ = e.st.EndBreak()
	}
}

// hideSecrets puts secrets.Hidden in place of each of out's strings read from stored text that
// has a secret's shape: memory has other writers, and state may be older than the scan that
// refuses such text (a rule added since, a hand edit). The report, resume_check's structured
// content and cairn status then say it is there, and none repeats it.
func hideSecrets(out *Resume) {
	// The next step names phases, stored text too: each of a secret's shape is hidden in it,
	// the step kept; a step of that shape all the same is hidden whole. Without a workflow it
	// is Cairn's own words, which name none.
	if out.Next != workflow.NothingToResume && secrets.ScanString(out.Next) != nil {
		for _, name := range slices.Concat([]string{out.Phase, out.AwaitingApproval, out.Type, out.WorkflowID}, out.Allowed) {
			if name != "" && secrets.ScanString(name) != nil {
				out.Next = strings.ReplaceAll(out.Next, name, secrets.Hidden)
			}
		}
		out.Next = secrets.Shown(out.Next)
	}
	for _, s := range []*string{&out.WorkflowID, &out.Type, &out.Context, &out.Phase, &out.PhaseStatus, &out.AwaitingApproval, &out.L2Line, &out.Ended, &out.Tasks} {
		*s = secrets.Shown(*s)
	}
	for _, l := range []*[]string{&out.Completed, &out.Allowed, &out.Warnings, &out.Notices, &out.FailedTasks, &out.Checkpoints, &out.CheckpointsBefore, &out.PhaseCheckpoints, &out.Approvals, &out.OpenTasks} {
		*l = allShown(*l)
	}
	for i, v := range out.Blocking {
		out.Blocking[i] = Violation{Code: secrets.Shown(v.Code), Severity: secrets.Shown(v.Severity), Details: secrets.Shown(v.Details)}
	}
}

// allShown is l with secrets.Shown applied to each item: a copy when one changes, for l may be
// a definition's or a record's own.
func allShown(l []string) []string {
	copied := false
	for i, s := range l {
		if h := secrets.Shown(s); h != s {
			if !copied {
				l, copied = slices.Clone(l), true
			}
			l[i] = h
		}
	}
	return l
}

// doctorStep is the next step after head, for state the agent is not to change itself (no
// restore, fix or move of a state file): the user runs cairn doctor, which names the fix.
// A person runs it.
func doctorStep(head string, person bool) string {
	if person {
		return head + ": run `cairn doctor`, which says what to fix; start no new work before."
	}
	return head + ": ask the user to run `cairn doctor`, which says what to fix, then call " + ToolPrefix + "resume_check again; start no new work before."
}

// inTheWayFor is the text of err, something in the place of a state file, for the report's
// reader: a person's says to move it; the agent's leaves that out, for what is there may be
// someone's and is the user's to move (the report's next step: cairn doctor, which says it).
func inTheWayFor(err error, person bool) string {
	if person {
		return err.Error()
	}
	return store.WithoutPersonStep(err)
}

// moveOut is a person's step for a snapshot that holds no workflow record this Cairn reads
// (IsForeignSnapshot): Cairn leaves it where it is.
func (e *Engine) moveOut() string {
	return "move " + filepath.Join(e.st.Dir(), store.WorkflowFile) + " out of " + e.st.Dir()
}

// seeWarning points a next step to the warning that says what is wrong: the report shows it,
// the compaction anchor, which has no warnings, leaves the pointer out.
const seeWarning = " (see the warning)"

// AncientCheck ends a long idle workflow's finding for a person (personWords), where the
// agent's asks the user (workflow.AncientAsk).
const AncientCheck = "; check that it still applies before going on with it"

// OwnedOne is the ownership warning's step for a person (personWords, the user's
// systemMessage), where the agent's asks the user (workflow.OwnedAsk).
const OwnedOne = "go on with it in one session only"

// personWords rewords, in place, the findings whose text tells the agent what to ask the
// user, with the step a person takes.
func personWords(fs []workflow.Finding) {
	for i, f := range fs {
		if f.Code == workflow.FindingAncient {
			if head, ok := strings.CutSuffix(f.Text, workflow.AncientAsk); ok {
				fs[i].Text = head + AncientCheck
			}
		}
		if f.Code == workflow.FindingOwnedElsewhere {
			fs[i].Text = strings.Replace(f.Text, workflow.OwnedAsk, OwnedOne, 1)
		}
	}
}

// planView is r as the resume plan sees it. With approvals turned off for the project, the
// move out of a gate is made without asking (approvalPolicy), so a gate's open request counts
// as given there: the plan must not send the agent to ask for a yes. The record is not changed.
func (e *Engine) planView(def *workflow.Definition, r *workflow.Record, now time.Time) *workflow.Record {
	if !e.approvalsOff() {
		return r
	}
	if _, open := workflow.Awaiting(def, r); !open {
		return r
	}
	res, err := workflow.Approve(def, r, workflow.ApprovalSetting, "", now, e.actor())
	if err != nil || res.Record == nil {
		return r
	}
	v := r.Clone() // the approval only: Approve's record has its times touched
	v.Approvals = res.Record.Approvals
	return v
}

// WithoutRetry is err for a text that says its own next step (the report's warnings, a tool
// result, the Stop hook's line): a lock wait given up says who holds the lock and that nothing
// changed, without the lock error's "try again", which names no step the model can take.
func WithoutRetry(err error) string { return withoutRetry(err.Error(), err) }

// withoutRetry is msg, err's words or a part of them, without the "try again" of the lock
// wait err gave up.
func withoutRetry(msg string, err error) string {
	if te, ok := errors.AsType[*durable.LockTimeoutError](err); ok {
		// A stopped holder keeps the lock until resumed: that step stays, without the retry.
		gaveUp := te.GaveUp()
		if r := te.Resume(); r != "" {
			gaveUp += "; " + r
		}
		return strings.Replace(msg, te.Error(), gaveUp, 1)
	}
	return msg
}

// ownerMidWork reports whether the read is the owning session's own, mid-work, so that r's
// TTL does not expire it: the SessionStart after that session's compaction (its session id),
// or its resume_check from a client running it (its session id, followed through the client's
// pid, which must be known: without it the id is the one the server started with, stale after
// /clear). The same session id is the live session in whichever client, as at its compaction:
// a second terminal's, or one resumed after its first client exited.
func (e *Engine) ownerMidWork(r *workflow.Record, opt ResumeOptions) bool {
	if r == nil || r.Owner == nil || e.cfg.SessionID == "" || r.Owner.SessionID != e.cfg.SessionID {
		return false
	}
	return opt.Compaction || opt.FromClient && e.cfg.PID > 0
}

// archivedAtRead reports whether the read protocol archives r as it stands: finished, or past
// its TTL and not read by its owner mid-work (ownerMidWork) nor beside it (besideLiveOwner: a
// second terminal's session start would archive the workflow the owner's client is working
// in, and tell that session there is none to resume).
func (e *Engine) archivedAtRead(r *workflow.Record, now time.Time, opt ResumeOptions) bool {
	if r == nil || !r.Status.Valid() {
		return false
	}
	if r.Status != workflow.StatusActive {
		return true
	}
	expired, err := r.Expired(now)
	return err == nil && expired && !e.ownerMidWork(r, opt) && !e.besideLiveOwner(r)
}

// archiveFinished archives r, a finished workflow left in the active slot (a crash between
// completing and archiving, or a sync that pulled another machine's end), and owes its ending
// line. It returns what is in the active slot after: nil, r when archiving failed (said in
// out.Warnings), or what another process put there meanwhile.
func (e *Engine) archiveFinished(r *workflow.Record, out *Resume) *workflow.Record {
	info, _, err := e.archiveActive(r, nil, e.archiveReason(r)) // nothing to commit: no warnings
	if errors.Is(err, store.ErrNotActive) || errors.Is(err, store.ErrNotFound) {
		// Another process archived it since it was read (and owes its ending line): what
		// is in the active slot now, if anything, is what there is to resume.
		fresh, _, err := e.active()
		if err != nil {
			out.Warnings = append(out.Warnings, "the workflow state could not be read: "+err.Error())
		}
		return fresh
	} else if err != nil {
		out.Warnings = append(out.Warnings, "archiving the finished workflow failed: "+WithoutRetry(err))
		return r
	}
	pruneWarning(out, info)
	// The report's one line about the ending says it; no notice repeats it.
	out.Warnings = warned(out.Warnings, e.ended(r.WorkflowID, r.Revision, endingLine(r, e.archiveReason(r))))
	return nil
}

// ArchiveEnded archives the workflow in the active slot when it has ended (completed, expired
// or archived: another machine's end, pulled by a sync), as the next session start would, and
// owes its ending line. It reports whether the active slot was freed, and what the archive
// warned of; a workflow still active, or of a status not known to be finished, stays.
func (e *Engine) ArchiveEnded() (freed bool, warnings []string) {
	r, _, err := e.active()
	if err != nil || r == nil || !r.Status.Valid() || r.Status == workflow.StatusActive {
		return false, nil
	}
	out := &Resume{}
	left := e.archiveFinished(r, out)
	return left == nil || left.WorkflowID != r.WorkflowID, out.Warnings
}

// readProtocol archives a finished or expired workflow and recovers an interrupted one. It
// returns the record still active afterwards, or nil. Nothing the owning session reads
// mid-work (ownerMidWork) is expired. An expiry another process's change overtook (a move, a
// heartbeat, between this read and the expiry's write) reads the workflow again and goes on
// with that, again times at most.
func (e *Engine) readProtocol(r *workflow.Record, now time.Time, out *Resume, eye *[]string, opt ResumeOptions, again int) *workflow.Record {
	r = e.resolveLegacy(r, out, eye)
	if r == nil {
		return nil
	}
	if !r.Status.Valid() {
		return r // not known to be finished: kept where it is, and Check says why
	}
	if r.Status != workflow.StatusActive {
		return e.archiveFinished(r, out)
	}
	if e.archivedAtRead(r, now, opt) { // past its TTL
		msg, info, warnings, err := e.expire(r, false)
		if errors.Is(err, errArchiveRaced) && again > 0 {
			if fresh, _, ferr := e.active(); ferr == nil && fresh != nil {
				return e.readProtocol(fresh, e.now(), out, eye, opt, again-1)
			}
		}
		if err != nil {
			out.Warnings = append(out.Warnings, WithoutRetry(err))
			return r
		}
		pruneWarning(out, info)
		out.Warnings = append(out.Warnings, warnings...)
		*eye = append(*eye, msg) // the person is told here; the model by the ending line
		return nil
	}
	// A task the model deleted, reopened or renamed (no hook says it), or completed when its hook
	// failed, in a turn whose end never ran
	// (a client killed mid-turn) is as it was: a session resumed under that id has Claude
	// Code's list, which tells. One look at the tasks when none is this session's.
	if f, err := e.followClaudeTasks(r); err != nil {
		out.Notices = append(out.Notices, "Claude Code's task list not followed, retried after the next turn: "+WithoutRetry(err))
	} else if f != (TasksFollowed{}) { // an earlier session's task taken is not said
		out.Notices = append(out.Notices, f.Said()...)
		if fresh, _, err := e.active(); err == nil && fresh != nil {
			r = fresh
		}
	}
	// No task running, nothing to recover: RecoverExcept's copy of the record is not made.
	if !running(r) || !e.interrupted(r, now) {
		return r
	}
	elsewhere := elsewhereOnly(e.runsElsewhere(r))
	res, acts, err := workflow.RecoverExcept(r, now, e.written, e.actor(), elsewhere)
	if err == nil && res.Changed {
		_, wres, cerr := e.change(func(cur *workflow.Record) (workflow.Result, error) {
			if cur == nil || cur.WorkflowID != r.WorkflowID {
				return workflow.Result{Event: workflow.EventNone}, nil
			}
			res, _, err := workflow.RecoverExcept(cur, now, e.written, e.actor(), elsewhere)
			return res, err
		}, "recovered after an interruption")
		if cerr != nil {
			out.Warnings = append(out.Warnings, "recovering interrupted tasks failed: "+WithoutRetry(cerr))
			return r
		}
		// What a record at the cap left out to take it (no owner is warned of: an
		// interrupted one has ended or gone quiet).
		out.Warnings = append(out.Warnings, wres.Warnings...)
		if fresh, _, err := e.active(); err == nil && fresh != nil {
			r = fresh
		}
	}
	out.Notices = append(out.Notices, acts...)
	return r
}

// interrupted says whether the workflow's running tasks can be taken as interrupted: the
// session that last changed it is not the caller (whose tasks may well be running: a
// resume_check mid-session, a start after /compact) and it has ended or gone quiet, its
// client not known to run in it still (liveWindow: one long turn refreshes no heartbeat). A
// workflow no session owns (changed only by the CLI) counts as interrupted. The caller's own
// session in a client that has exited (`claude --continue` after the client was killed
// mid-turn) was interrupted too; in another client still alive it was not.
func (e *Engine) interrupted(r *workflow.Record, now time.Time) bool {
	o := r.Owner
	if o == nil || o.SessionID == "" {
		return true
	}
	if o.SessionID == e.cfg.SessionID {
		return e.ownerEnded(r)
	}
	return e.ownerEnded(r) || !workflow.OwnerLive(r, e.actor(), now, e.liveWindow(r, now))
}

// lapsedTasks names tasks whose claim on another machine lapsed, for a step.
func lapsedTasks(ids []string) string {
	if len(ids) == 1 {
		return "task " + ids[0]
	}
	return "tasks " + strings.Join(ids, ", ")
}

// runnerEnded reports whether r has running tasks and the client of the session that last
// changed it has certainly ended (ownerEnded), so that a view which recovers nothing (cairn
// status, a read-only state directory) does not say they still run. A session merely quiet
// may be alive, and is not judged.
func (e *Engine) runnerEnded(r *workflow.Record) bool {
	return r != nil && r.Status == workflow.StatusActive &&
		running(r) && e.ownerEnded(r)
}

// expire archives an expired workflow (never deletes it) and writes the expiry line. info is
// what the archive did besides, and warnings what it warned of (what the record left out at
// the cap, an ending line not written), for the caller to say.
func (e *Engine) expire(r *workflow.Record, dryRun bool) (msg string, info store.ArchiveInfo, warnings []string, err error) {
	res, err := workflow.Expire(r, e.now())
	if err != nil {
		return "", info, nil, err
	}
	if dryRun {
		return fmt.Sprintf("workflow %s (%s, at %s) has %s and would be archived", r.WorkflowID, r.Type, r.State, r.ExpiredAfter()), info, nil, nil
	}
	msg = fmt.Sprintf("workflow %s (%s, at %s) %s and was archived", r.WorkflowID, r.Type, r.State, r.ExpiredAfter())
	if info, warnings, err = e.archiveActive(r, res.Archive, "expired"); errors.Is(err, store.ErrNotActive) || errors.Is(err, store.ErrNotFound) {
		// The expiry was committed; another process archived it before this one could.
		msg = fmt.Sprintf("workflow %s (%s, at %s) %s; another process has since moved it out of the active slot", r.WorkflowID, r.Type, r.State, r.ExpiredAfter())
	} else if err != nil {
		return "", info, warnings, fmt.Errorf("archiving the expired workflow %s failed; it is still in place: %w", r.WorkflowID, err)
	}
	return msg, info, warned(warnings, e.ended(r.WorkflowID, r.Revision+1, res.L2)), nil
}

// ExpireTTL expires the active workflow if its TTL has passed (dry run: only says so).
func (e *Engine) ExpireTTL(dryRun bool) (*Result, error) { return e.expireTTL(dryRun, 1) }

// expireTTL is ExpireTTL; an expiry another process's change overtook (as in readProtocol)
// starts again, again times at most.
func (e *Engine) expireTTL(dryRun bool, again int) (*Result, error) {
	r, _, err := e.active()
	if err != nil {
		return nil, err
	}
	if r == nil {
		if a, ok := e.recentArchive("expired"); ok && !dryRun {
			res := &Result{Message: fmt.Sprintf("workflow %s already expired and was archived in archive/%s", a.WorkflowID, a.Dir), WorkflowID: a.WorkflowID}
			e.endingLeft(res, a)
			if res.Changed {
				return res, nil
			}
		}
		return &Result{Message: "no active workflow; nothing to expire"}, nil
	}
	if r.Status != workflow.StatusActive && r.Status.Valid() && !dryRun {
		// An end cut short between its commit and its archive (a crash, a move that failed):
		// finish it, as the next session start would, rather than leave it in the slot.
		return e.archiveEnded(r)
	}
	if r.Status != workflow.StatusActive {
		// Finished but not yet archived (or of a status not known): its TTL no longer applies.
		return &Result{Message: fmt.Sprintf("workflow %s is %s, not active; nothing to expire", r.WorkflowID, r.Status)}, nil
	}
	expired, err := r.Expired(e.now())
	if err != nil {
		return nil, err
	}
	if !expired {
		at, _ := r.ExpiresAt()
		return &Result{Message: fmt.Sprintf("workflow %s has not expired; it expires at %s (ttl %s)", r.WorkflowID, at.UTC().Format(time.RFC3339), cmp.Or(r.TTL, "24h"))}, nil
	}
	msg, info, warnings, err := e.expire(r, dryRun)
	if errors.Is(err, errArchiveRaced) && again > 0 {
		return e.expireTTL(dryRun, again-1)
	}
	if err != nil {
		return nil, err
	}
	res := &Result{Message: msg, Changed: !dryRun, Warnings: warnings}
	res.retention(info)
	if !dryRun {
		res.Warnings = append(res.Warnings, e.archivedUnderLiveOwner(r)...)
	}
	return res, nil
}

// archiveEnded archives r, a record an expiry finds in the active slot ended (an expiry retried,
// an archive or completion whose move was cut short), and writes its ending line, as the end
// would have after its commit.
func (e *Engine) archiveEnded(r *workflow.Record) (*Result, error) {
	said, earlier := fmt.Sprintf("workflow %s is %s, not active; nothing to expire", r.WorkflowID, r.Status), "it had not been filed in the archive"
	if r.Status == workflow.StatusExpired {
		said, earlier = fmt.Sprintf("workflow %s already expired", r.WorkflowID), "the earlier call had not archived it"
	}
	res := &Result{Message: said, WorkflowID: r.WorkflowID, Revision: r.Revision}
	reason := e.archiveReason(r)
	info, err := e.st.ArchiveIf(reason, r.WorkflowID)
	if errors.Is(err, store.ErrNotActive) || errors.Is(err, store.ErrNotFound) {
		res.Message += "; another process has since archived it; nothing changed"
		return res, nil
	}
	if err != nil {
		return nil, fmt.Errorf("archiving the %s workflow %s failed; it is still in place: %w", r.Status, r.WorkflowID, err)
	}
	res.Changed = true
	res.Message += fmt.Sprintf("; %s, so it is archived now in archive/%s", earlier, info.Dir)
	res.retention(info)
	res.Warnings = warned(res.Warnings, e.ended(r.WorkflowID, r.Revision, endingLine(r, reason)))
	return res, nil
}

// exists says whether a referenced output exists; relative paths are from the project root.
func (e *Engine) exists(p string) bool {
	_, ok := e.written(p)
	return ok
}

// written says whether a referenced output exists, and when it was last modified.
func (e *Engine) written(p string) (time.Time, bool) {
	if p == "" {
		return time.Time{}, false
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(e.root, p)
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return time.Time{}, false
	}
	return fi.ModTime(), true
}

// milestoneScanCap bounds the last-resort directory scan of the read protocol: the files it
// opens, in name order; the others are counted.
const milestoneScanCap = 20

// milestoneNoticeMax bounds the scan's notice, in runes: the report cuts a longer one at its
// last whole sentence, which would leave only "no workflow on record".
const milestoneNoticeMax = 280

// milestoneTitleMax bounds one file's title in the notice, in runes.
const milestoneTitleMax = 60

// scanMilestones is the read protocol's last resort (seed 001): the front matter of
// documentation/milestones/_active/*.md names initiatives in progress. Without a YAML reader
// (a hook binary; internal/hook hands projects with that directory to the cairn binary) the
// files are listed by name only. Every file is listed, in name order, as far as the notice
// has room, and the rest counted: one whose front matter does not read, or that is not read
// at all (a link, a FIFO, too large), by name with a note, as it is there all the same. A
// directory reached through a link (out of the project) is not read.
func (e *Engine) scanMilestones() []string {
	rel := filepath.Join("documentation", "milestones", "_active")
	dir := filepath.Join(e.root, rel)
	if !e.inProject(dir) {
		return nil
	}
	ents, err := durable.ReadDirPath(dir)
	if err != nil {
		return nil
	}
	var files []fs.DirEntry
	for _, ent := range ents {
		if !ent.IsDir() && strings.HasSuffix(ent.Name(), ".md") {
			files = append(files, ent)
		}
	}
	if len(files) == 0 {
		return nil
	}
	slices.SortFunc(files, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	notice := "no workflow on record; active milestone files in " + rel + ": "
	shown := 0
	for i, f := range files[:min(len(files), milestoneScanCap)] {
		label := e.milestoneLabel(dir, f)
		if i > 0 {
			label = ", " + label
		}
		if more := fmt.Sprintf(", and %d more", len(files)-i-1); i < len(files)-1 && utf8.RuneCountInString(notice+label+more) > milestoneNoticeMax ||
			utf8.RuneCountInString(notice+label) > milestoneNoticeMax {
			break
		}
		notice += label
		shown++
	}
	if shown == 0 {
		notice = strings.TrimSuffix(notice, ": ")
	}
	if n := len(files) - shown; n > 0 {
		notice += fmt.Sprintf(", and %d more", n)
	}
	return []string{notice}
}

// milestoneLabel is a milestone file's name, with its front matter's title (or name) and
// status: "m1-auth (Auth rework) [in_progress]". A link is followed only into the project.
func (e *Engine) milestoneLabel(dir string, file fs.DirEntry) string {
	label := strings.TrimSuffix(file.Name(), ".md")
	if secrets.ScanString(label) != nil {
		return "a file whose name has a secret's shape"
	}
	label = secrets.Clip(textsafe.OneLine(label), milestoneTitleMax)
	p := filepath.Join(dir, file.Name())
	if file.Type()&fs.ModeSymlink != 0 && !e.inProject(p) {
		return label + " (not read: a link out of the project)"
	}
	data, err := durable.ReadPath(p, 64<<10, true)
	switch {
	case errors.Is(err, durable.ErrTooLarge):
		return label + " (not read: over 64 KiB)"
	case errors.Is(err, fs.ErrPermission):
		return label + " (not read: permission denied)"
	case err != nil:
		return label + " (not read: not a regular file)"
	case e.cfg.YAML == nil:
		return label
	}
	title, name, status, err := e.cfg.YAML.MilestoneFrontMatter(data)
	if err != nil {
		return label + " (front matter unreadable)"
	}
	if secrets.ScanString(title+"\n"+name+"\n"+status) != nil {
		return label + " (front matter not shown: it has a secret's shape)"
	}
	if t := cmp.Or(textsafe.OneLine(title), textsafe.OneLine(name)); t != "" {
		label += " (" + secrets.Clip(t, milestoneTitleMax) + ")"
	}
	if s := textsafe.OneLine(status); s != "" {
		label += " [" + secrets.Clip(s, milestoneTitleMax) + "]"
	}
	return label
}

// inProject says whether p, its links resolved, lies in the project: what the directory scan
// reads, a repository may have planted as a link to anywhere.
func (e *Engine) inProject(p string) bool {
	root, err := filepath.EvalSymlinks(e.root)
	if err != nil {
		return false
	}
	real, err := filepath.EvalSymlinks(p)
	return err == nil && durable.Beneath(root, real)
}

// tierName is the tier as Resume.Tier says it; any other is "None".
func tierName(t workflow.Tier) string {
	switch t {
	case workflow.TierFull:
		return "Full"
	case workflow.TierMinimal:
		return "Minimal"
	case workflow.TierL2Only:
		return "L2-only"
	}
	return "None"
}

// shownFailed is how many failed tasks' ids the task counts name.
const shownFailed = 5

// details adds what only the details view (resume_check) shows: tasks and checkpoints.
// runs says which running tasks run on another machine (nil when none can): those another
// machine's claim holds, lapsed or not, are counted apart, as the open tasks say them.
func (e *Engine) details(out *Resume, r *workflow.Record, runs func(string) (mirror.Claim, bool)) {
	c := workflow.CountTasks(r, "")
	away := 0
	for _, t := range r.Tasks {
		if t.Status != workflow.TaskRunning || runs == nil {
			continue
		}
		if k, ok := runs(t.ID); ok && k.Holder != "" {
			away++
		}
	}
	var parts []string
	for _, p := range []struct {
		n    int
		what string
	}{{c.Done, "done"}, {c.Running - away, "running"}, {away, "running on another machine"}, {c.Pending, "pending"}, {c.Failed, "failed"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	for _, t := range r.Tasks {
		if t.Status == workflow.TaskFailed {
			out.FailedTasks = append(out.FailedTasks, t.ID)
		}
	}
	out.Tasks = strings.Join(parts, ", ")
	if n := len(out.FailedTasks); n > 0 {
		// The first few: FailedTasks lists them all. Two clean ids may join into a secret.
		out.Tasks += " (failed: " + secrets.JoinNames(out.FailedTasks[:min(n, shownFailed)], ", ")
		if n > shownFailed {
			out.Tasks += fmt.Sprintf(" +%d more", n-shownFailed)
		}
		out.Tasks += ")"
	}
	for i, a := range r.Approvals {
		// A later entry of the phase (it was entered again) is what stands now: the earlier
		// yes would read as approving a phase that waits for a new one.
		if a.ApprovedAt.IsZero() || slices.ContainsFunc(r.Approvals[i+1:], func(b workflow.Approval) bool { return b.Phase == a.Phase }) {
			continue
		}
		s := fmt.Sprintf("%s approved %s by %s", a.Phase, a.ApprovedAt.UTC().Format(minuteUTC), workflow.ApprovedBy(a.Source))
		if a.Note != "" {
			s += ": " + a.Note
		}
		out.Approvals = append(out.Approvals, s)
	}
	out.Checkpoints, _ = e.st.ListCheckpoints("") // sorted; nil on error
	out.CheckpointsBefore = e.checkpointsBefore(r, out.Checkpoints)
	out.PhaseCheckpoints = workflow.PhasesWithCheckpoint(r)
}

// render builds the resume report and says whether it told of the ending. ended is the ending
// to tell of ("" when there is none or it was told already); details asks for resume_check's
// view, which never names itself.
func (e *Engine) render(out *Resume, plan workflow.Plan, ended string, details bool, sh *report.Shared) (string, bool) {
	in := report.Input{
		Tier: out.Tier, WorkflowID: out.WorkflowID, Type: out.Type, Context: out.Context,
		Phase: out.Phase, PhaseStatus: out.PhaseStatus, Age: plan.Age, Completed: out.Completed,
		Next: out.Next, Warnings: out.Warnings, Notices: out.Notices, L2Line: out.L2Line,
		Ended: ended, Details: details, Allowed: out.Allowed, Tasks: out.Tasks, Checkpoints: out.Checkpoints, CheckpointsBefore: out.CheckpointsBefore, PhaseCheckpoints: out.PhaseCheckpoints, Approvals: out.Approvals,
		OpenTasks: out.OpenTasks, Blocking: out.Blocking, Nonce: report.NewNonce(), Shared: sh,
	}
	if !details {
		in.Tool = ToolPrefix + "resume_check"
	}
	return report.Render(in)
}

// dedupe returns a copy of s without empty and repeated items.
func dedupe(s []string) []string {
	seen := map[string]bool{"": true}
	return slices.DeleteFunc(slices.Clone(s), func(v string) bool {
		dup := seen[v]
		seen[v] = true
		return dup
	})
}

// sharedL2Next is the step of the L2-only tier in a project whose memory others share (kind,
// SharedMemory's): the position may be another's, whose state is not missing.
func sharedL2Next(kind string) string {
	noun := SharedNoun(kind)
	return "Tell the user the last position memory holds; " + SharedMemoryWho(kind) + " shares that memory and this one has no active workflow, so the position may be another " + noun + "'s: call " + ToolPrefix + "start_workflow only if this " + noun + "'s work goes on."
}

// SharedMemoryWho says who shares memory that kind names (SharedMemory's): "every worktree of
// this repository", "every project", or "another project".
func SharedMemoryWho(kind string) string {
	switch kind {
	case SharedByWorktrees:
		return "every worktree of this repository"
	case SharedWithAnother:
		return "another project"
	}
	return "every " + kind
}

// SharedNoun is what kind (SharedMemory's) calls this checkout and the others: "worktree" or
// "project".
func SharedNoun(kind string) string {
	if kind == SharedByWorktrees {
		return kind
	}
	return "project"
}

// What SharedMemory names as the others that may write this project's L2.
const (
	SharedByWorktrees = "worktree" // the checkouts of one repository (Claude Code keys memory on the main one)
	SharedByProjects  = "project"  // every project: autoMemoryDirectory in the user's or managed settings
	// SharedWithAnother: the topic file names another project's state directory (a project
	// whose path Claude Code names alike, or a CAIRN_MEMORY_DIR set for several).
	SharedWithAnother = "another"
)

// SharedMemory tells whether this project's L2 is one Claude Code gives other projects too, so
// that its last position may be another's, and whose: SharedByProjects when a setting every
// project reads names it; SharedByWorktrees when it is the default, keyed on the main
// checkout's root, and this project is a linked worktree, or the main checkout (or bare
// repository) of one; else SharedWithAnother when the topic file says its latest line is
// another project's (memory.Last.Another); "" otherwise.
func (e *Engine) SharedMemory() string {
	if kind := e.sharedByPlace(); kind != "" {
		return kind
	}
	if last, ok, err := e.mem.LastPosition(); err == nil && ok && last.Another {
		return SharedWithAnother
	}
	return ""
}

// sharedByPlace is SharedMemory as where the memory directory is says it.
func (e *Engine) sharedByPlace() string {
	loc := e.mem.Location()
	if loc.Shared {
		return SharedByProjects
	}
	if loc.Source != "default" {
		return ""
	}
	common, err := project.GitCommonRoot(e.cfg.Getenv, e.cfg.WorkDir)
	if err != nil {
		return ""
	}
	if common != e.root || project.HasLinkedWorktrees(common) {
		return SharedByWorktrees
	}
	return ""
}
