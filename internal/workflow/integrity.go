package workflow

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/secrets"
)

// AncientAge is how old a workflow's last activity may be before resuming it is warned about
// (seed 002: state from 7 days ago is stale).
const AncientAge = 7 * 24 * time.Hour

// Finding codes.
const (
	FindingNoDefinition     = "no-definition"
	FindingUnknownPhase     = "unknown-phase"
	FindingOutputMissing    = "output-missing"
	FindingArtifactMissing  = "artifact-missing"
	FindingFutureTime       = "future-timestamp"
	FindingAncient          = "ancient"
	FindingHistoryInvalid   = "history-invalid"
	FindingNoHistory        = "no-history"
	FindingHistoryChanged   = "history-phase-gone"
	FindingInterrupted      = "interrupted-write"
	FindingSafetyUnknown    = "interruption-safe-unset"
	FindingOwnedElsewhere   = "owned-by-live-session"
	FindingApprovalPending  = "approval-pending"
	FindingBadTTL           = "bad-ttl"
	FindingBadPhaseStatus   = "bad-phase-status"
	FindingBadStatus        = "bad-status"
	FindingUnknownTaskState = "bad-task-status"
)

// Finding is one result of the integrity checks run before resuming.
type Finding struct {
	Code     string
	Severity Severity
	Text     string
}

// CheckInput is what the integrity checks look at.
type CheckInput struct {
	Def    *Definition // nil: checks that need the definition are reported as not possible
	Record *Record
	Now    time.Time
	// Exists reports whether a referenced output exists (paths as stored; the engine resolves
	// them). nil: outputs are not checked.
	Exists func(path string) bool
	// By is the session about to resume; when set, a live owner elsewhere is reported.
	By Actor
	// LiveWindow is how recent the owner's heartbeat must be for it to count as live
	// (0: DefaultLiveWindow); the caller may know it live longer (its client runs).
	LiveWindow time.Duration
}

// Check runs the integrity checks of seed 002 before a resume: referenced outputs exist,
// timestamps are not in the future and not ancient, the phase history is a valid path in the
// definition, interruption_safe is set; also the phase is known, the TTL parses, and no other
// live session owns the workflow. Findings come most serious first.
func Check(in CheckInput) []Finding {
	r := in.Record
	if r == nil {
		return nil
	}
	var out []Finding
	add := func(code string, sev Severity, format string, args ...any) {
		out = append(out, Finding{Code: code, Severity: sev, Text: fmt.Sprintf(format, args...)})
	}
	def := in.Def
	if def == nil {
		add(FindingNoDefinition, High, "no workflow definition %q is loaded, so its phases and moves cannot be checked; the state was kept as it is", r.Type)
	} else if !def.HasPhase(r.State) {
		add(FindingUnknownPhase, Critical, "phase %s is not a phase of the %s definition now (%s), so the workflow cannot move: put the phase back in the definition", Quote(r.State), def.Name, strings.Join(def.Phases, ", "))
	}
	if !r.Status.Valid() {
		add(FindingBadStatus, High, "the workflow's status is not one of active, completed, expired, archived; the state was kept as it is")
	}
	if r.PhaseStatus != "" && !r.PhaseStatus.Valid() {
		add(FindingBadPhaseStatus, Medium, "phase_status %s is not one of pending, in_progress, complete, failed, blocked", Quote(string(r.PhaseStatus)))
	}
	if _, err := ParseTTL(r.TTL); err != nil {
		add(FindingBadTTL, Medium, "%s", r.ttlUnread())
	}

	if in.Exists != nil {
		// Each path named is cut to maxShownPath: five of 1000 characters made the session
		// start's report 5 KB longer. lost is the outputs missing, whole.
		var missing, lost []string
		for _, name := range slices.Sorted(maps.Keys(r.Phases)) {
			for _, o := range r.Phases[name].Outputs {
				if !in.Exists(o) {
					missing = append(missing, fmt.Sprintf("%s (output of %s)", secrets.Clip(o, maxShownPath), name))
					lost = append(lost, o)
				}
			}
		}
		for _, t := range r.Tasks {
			// Spaces name no file (an earlier Cairn stored them as an output).
			if t.Status == TaskDone && strings.TrimSpace(t.Output) != "" && !in.Exists(t.Output) {
				missing = append(missing, fmt.Sprintf("%s (output of done task %s)", secrets.Clip(t.Output, maxShownPath), TaskID(t.ID)))
				lost = append(lost, t.Output)
			}
		}
		if len(missing) > 0 {
			add(FindingOutputMissing, High, "referenced outputs are missing: %s", listCapped(missing, 5))
		}
		var gone []string
		for _, a := range r.Artifacts {
			if !in.Exists(a) && !slices.Contains(lost, a) {
				gone = append(gone, secrets.Clip(a, maxShownPath))
			}
		}
		if len(gone) > 0 {
			add(FindingArtifactMissing, Medium, "artifacts are missing: %s", listCapped(gone, 5))
		}
	}

	if future := futureTimes(r, in.Now); len(future) > 0 {
		add(FindingFutureTime, High, "timestamps are in the future (after %s): %s; the clock or the file is wrong", fmtTime(in.Now), listCapped(future, 5))
	}
	if last := r.LastActivity(); !last.IsZero() && in.Now.Sub(last) > AncientAge {
		add(FindingAncient, Medium, "last activity was %s ago (%s), more than 7 days: the work may have moved on"+AncientAsk,
			Age(in.Now.Sub(last)), fmtTime(last))
	}

	if def != nil {
		out = append(out, checkHistory(def, r)...)
	}

	switch {
	case r.InterruptionSafe == nil:
		add(FindingSafetyUnknown, Low, "interruption_safe is not recorded, so a half-finished write cannot be ruled out")
	case !*r.InterruptionSafe:
		add(FindingInterrupted, High, "interruption_safe is false: the last change was interrupted before it finished; check the phase's outputs before continuing")
	}
	var unknown []string // tasks of a status not known, said in one finding
	for _, t := range r.Tasks {
		if !t.Status.Valid() {
			unknown = append(unknown, TaskID(t.ID)+" "+secrets.Clip(Quote(string(t.Status)), 40))
		}
	}
	if len(unknown) > 0 {
		add(FindingUnknownTaskState, Medium, "tasks of a status this Cairn does not know: %s", listCapped(unknown, 5))
	}
	if in.By.SessionID != "" {
		if w := OwnershipWarning(r, in.By, in.Now, cmp.Or(in.LiveWindow, DefaultLiveWindow)); w != "" {
			add(FindingOwnedElsewhere, Medium, "%s", w)
		}
	}
	if p, ok := Awaiting(def, r); ok {
		add(FindingApprovalPending, Info, "the %s phase awaits the user's approval: if its result was shown before the interruption, present it again rather than re-running it", p)
	}
	slices.SortStableFunc(out, func(a, b Finding) int { return a.Severity.rank() - b.Severity.rank() })
	return out
}

func checkHistory(def *Definition, r *Record) []Finding {
	bad := func(format string, args ...any) []Finding {
		return []Finding{{Code: FindingHistoryInvalid, Severity: High,
			Text: "phase history is not a valid path in the " + def.Name + " definition: " + fmt.Sprintf(format, args...)}}
	}
	// Same-phase entries are notes, not moves.
	moves := slices.DeleteFunc(slices.Clone(r.History), func(h HistoryEntry) bool { return h.From == h.To })
	if len(moves) == 0 {
		if r.State != def.Start() && def.HasPhase(r.State) {
			return []Finding{{Code: FindingNoHistory, Severity: Low,
				Text: fmt.Sprintf("no phase history records how the workflow got from %s to %s", def.Start(), r.State)}}
		}
		return nil
	}
	// Phases the workflow passed that the definition no longer has (renamed or removed since):
	// the moves through them cannot be checked, but while the workflow's own phase is still
	// there it can move on, so they are said, not a doubt on the resume. Where its own phase
	// is gone too, FindingUnknownPhase says so, with the step: the moves through it are not
	// reported again.
	var gone []string
	lost := func(p string) bool {
		if def.HasPhase(p) {
			return false
		}
		if !slices.Contains(gone, p) {
			gone = append(gone, p)
		}
		return true
	}
	// A history at its bound may have lost its beginning to TrimHistory.
	if moves[0].From != def.Start() && len(r.History) < MaxHistory && !lost(moves[0].From) {
		return bad("it begins in %s, not in the start phase %s", moves[0].From, def.Start())
	}
	for i, h := range moves {
		if i > 0 && moves[i-1].To != h.From {
			return bad("move %d leaves %s but the move before it ended in %s", i+1, h.From, moves[i-1].To)
		}
		if fromLost, toLost := lost(h.From), lost(h.To); !def.CanMove(h.From, h.To) && !fromLost && !toLost {
			// A phase renamed or removed in the definition since: say which, or the person
			// looks for a wrong move in the workflow.
			why, gone := "", h.From
			if def.HasPhase(gone) {
				gone = h.To
			}
			if !def.HasPhase(gone) {
				why = fmt.Sprintf(": phase %q is not in the %s definition now", gone, def.Name)
			}
			return bad("move %d, %s->%s, is not allowed%s", i+1, h.From, h.To, why)
		}
	}
	if last := moves[len(moves)-1].To; last != r.State {
		return bad("it ends in %s but the workflow is in %s", last, r.State)
	}
	if len(gone) > 0 && def.HasPhase(r.State) {
		return []Finding{{Code: FindingHistoryChanged, Severity: Medium,
			Text: fmt.Sprintf("the workflow passed phases the %s definition no longer has (renamed or removed since): %s; it goes on from %s as the definition is now",
				def.Name, listCapped(gone, 5), r.State)}}
	}
	return nil
}

func futureTimes(r *Record, now time.Time) []string {
	var out []string
	check := func(name string, t time.Time) {
		if !t.IsZero() && t.After(now) {
			out = append(out, name+" "+fmtTime(t))
		}
	}
	check("created_at", r.CreatedAt)
	check("updated_at", r.UpdatedAt)
	check("changed_at", r.ChangedAt)
	check("completed_at", r.CompletedAt)
	for _, n := range slices.Sorted(maps.Keys(r.Phases)) {
		check("phases."+n+".completed_at", r.Phases[n].CompletedAt)
	}
	for i, h := range r.History {
		check(fmt.Sprintf("history[%d].at", i), h.At)
	}
	for _, t := range r.Tasks {
		id := TaskID(t.ID)
		check("task "+id+" started_at", t.StartedAt)
		check("task "+id+" completed_at", t.CompletedAt)
		check("task "+id+" updated_at", t.UpdatedAt)
	}
	for i, a := range r.Approvals {
		check(fmt.Sprintf("approvals[%d].requested_at", i), a.RequestedAt)
		check(fmt.Sprintf("approvals[%d].approved_at", i), a.ApprovedAt)
	}
	if r.Owner != nil {
		check("owner.heartbeat", r.Owner.Heartbeat)
	}
	return out
}

// maxShownPath is the most runes of a path a finding names: its start, which says where.
const maxShownPath = 120

// UnwrittenOutputs is the warning for a call that records outputs the project does not hold
// (exists says which it does), or "": said while they can still be written, before each
// session start asks about them (FindingOutputMissing).
func UnwrittenOutputs(paths []string, exists func(string) bool) string {
	var missing []string
	for i, p := range paths {
		if strings.TrimSpace(p) != "" && !slices.Contains(paths[:i], p) && !exists(p) {
			missing = append(missing, secrets.Clip(p, maxShownPath))
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return "outputs are missing: " + listCapped(missing, 5) + "; write them at those paths, or each session start asks about them until the user chooses to go on without them (cairn outputs drop)"
}

func listCapped(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:max], ", ") + fmt.Sprintf(" and %d more", len(items)-max)
}

// PendingApproval reports the gate phase the workflow is waiting in for the user's approval:
// the record is in a phase whose latest approval was requested but not given.
func PendingApproval(r *Record) (string, bool) {
	if r == nil || r.Status != StatusActive {
		return "", false
	}
	for i := len(r.Approvals) - 1; i >= 0; i-- {
		if r.Approvals[i].Phase == r.State {
			return r.State, r.Approvals[i].Open()
		}
	}
	return "", false
}

// RecoverExcept repairs what an interruption leaves behind (seed 002's scenarios) and says
// what it did, a line each: a running task with no output of its run (none recorded, the file
// is missing, or it was written before the run started, by an earlier run) goes back to
// pending with attempts + 1, to be run again; a running task whose output was written since it
// started is marked done. (A workflow waiting in an approval gate needs no repair: Check's
// approval-pending finding asks for the approval to be re-presented, not re-run.) written
// says whether a recorded output exists and when it was last modified; it may be nil (then
// every recorded output counts as missing). The result is unchanged when there was nothing to
// repair. It leaves running the tasks elsewhere reports (nil for none): their runs are not
// this machine's to judge, as when another machine sharing the workflow runs them.
func RecoverExcept(r *Record, now time.Time, written func(path string) (modified time.Time, ok bool), by Actor, elsewhere func(task string) bool) (Result, []string, error) {
	if err := requireActive(r); err != nil {
		return Result{}, nil, err
	}
	// To the second, as a heartbeat is: the times recovery writes then take no more room
	// than the ones they replace, and a record at its 1 MiB cap still takes it.
	now = now.UTC().Truncate(time.Second)
	n := r.Clone()
	var acts, done []string // done: the ids marked done
	for i := range n.Tasks {
		t := &n.Tasks[i]
		if t.Status != TaskRunning || (elsewhere != nil && elsewhere(t.ID)) {
			continue
		}
		why, shown := "with no output", secrets.Clip(t.Output, maxShownPath)
		if t.Output != "" && written != nil {
			if mod, ok := written(t.Output); ok && (t.StartedAt.IsZero() || !mod.Before(t.StartedAt.Add(-outputTimeSlack))) {
				t.Status = TaskDone
				t.CompletedAt = now
				t.UpdatedAt = now
				acts = append(acts, fmt.Sprintf("task %s was running and its output %s exists: marked done", spaced(t.ID), shown))
				done = append(done, spaced(t.ID))
				continue
			} else if ok {
				why = "and its output " + shown + " was written before this run started"
			}
		}
		t.Status = TaskPending
		t.Attempts++
		t.CompletedAt = time.Time{}
		t.UpdatedAt = now
		acts = append(acts, fmt.Sprintf("task %s was running %s: back to pending, to run again (attempts %d)", spaced(t.ID), why, t.Attempts))
	}
	if len(acts) > maxRecoverLines {
		acts = recoveredBriefly(len(acts)-len(done), done)
	}
	res := Result{Record: n, Event: EventNone, From: r.State, To: r.State}
	if len(acts) > 0 {
		res.Changed, res.Event = true, EventRecover
		// Recovery is housekeeping: it keeps the age and the TTL of the last real change.
		changed := r.LastActivity()
		res.Warnings = touch(n, by, now)
		n.ChangedAt = changed
	}
	return res, acts, nil
}

// maxRecoverLines is the most tasks RecoverExcept says a line each of: past it, a line for
// those put back (the open tasks list them) and one for those marked done, naming the first
// few. The resume report shows only a few notices, and a recovery done is not said again.
const maxRecoverLines = 3

// recoveredBriefly is RecoverExcept's lines for many tasks: pending put back, done marked done.
func recoveredBriefly(pending int, done []string) []string {
	// tasks is "N tasks were ... their", or "1 task was ... its".
	tasks := func(n int, s string) string {
		if n == 1 {
			return "1 task was " + strings.ReplaceAll(s, "their", "its")
		}
		return fmt.Sprintf("%d tasks were %s", n, s)
	}
	var out []string
	if pending > 0 {
		out = append(out, tasks(pending, "running with no output of their run: back to pending, to run again"))
	}
	if len(done) > 0 {
		const named = 5
		ids := strings.Join(done[:min(len(done), named)], ", ")
		if len(done) > named {
			ids += fmt.Sprintf(" +%d more", len(done)-named)
		}
		out = append(out, tasks(len(done), "running and their output exists: marked done ("+ids+")"))
	}
	return out
}

// outputTimeSlack is how much earlier than a run's start its output's modification time may
// be and still be taken as written by that run: file systems that keep it to the second or
// two (FAT keeps two) round it down.
const outputTimeSlack = 2 * time.Second

// AncientAsk ends the FindingAncient text with what the agent asks the user; a view for a
// person (cairn status) puts a person's step in its place.
const AncientAsk = "; confirm with the user before continuing"
