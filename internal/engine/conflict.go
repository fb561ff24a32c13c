package engine

import (
	"errors"
	"fmt"

	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// resolveLegacy settles two copies competing for the active slot (seed 004): Cairn's active
// workflow and a seed's state file that appeared beside it (an older tool still writing it, a
// second session that resumed from it). The newer copy stays active; the other is archived
// under a conflict- name, never deleted, and the seed file is renamed to its .bak name so it
// is not considered again. It returns the record active afterwards.
func (e *Engine) resolveLegacy(r *workflow.Record, out *Resume, eye *[]string) *workflow.Record {
	l, finished, ok := e.st.FindLegacy()
	if finished != nil {
		out.Notices = append(out.Notices, finished.Message)
	}
	if !ok {
		return r
	}
	other, err := store.ParseRecord(l.Record)
	if err != nil {
		return r
	}
	d := workflow.ResolveConflict(r, other)
	var msg string
	if d.KeepIndex == 0 {
		info, err := e.st.ArchiveRecord(l.Record, "conflict", l.Source)
		if err != nil {
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s is a second copy of the workflow state and could not be archived: %s", l.Name, leftToNextStart(err, settles)))
			return r
		}
		msg = fmt.Sprintf("two copies of the workflow state: kept the active %s, archived %s as archive/%s (%s)", r.WorkflowID, l.Name, info.Dir, d.Reason)
		msg += pruneWarning(out, info)
	} else {
		info, res, err := e.st.ReplaceWorkflow(l.Record, "conflict", e.event("migrated", eventDetail{To: other.State}, "newer copy from "+l.Name), l.Source)
		if err != nil && info.Dir != "" {
			// The copy waits in its file, which the next start takes up as any seed's; the
			// cause's own "nothing was changed" and step are of a write that changed nothing.
			out.Warnings = append(out.Warnings, fmt.Sprintf("no workflow is active: the active %[2]s was archived as archive/%[3]s to make room for %[1]s, a newer copy of the workflow state, and `cairn show %[2]s` shows it; the copy could not be saved: %[4]s", l.Name, r.WorkflowID, info.Dir, leftToNextStart(errors.Unwrap(err), "takes the copy up")))
			return nil
		}
		if err != nil {
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s is a newer copy of the workflow state but could not replace the active one; nothing was lost: %s", l.Name, leftToNextStart(err, settles)))
			return r
		}
		msg = fmt.Sprintf("two copies of the workflow state: %s was newer and is now active; the previous active %s was archived as archive/%s (%s)", l.Name, r.WorkflowID, info.Dir, d.Reason)
		msg += pruneWarning(out, info)
		if n, err := res.Record(); err == nil {
			r = n
		}
	}
	if backup, err := e.st.RetireLegacy(l); err != nil {
		out.Warnings = append(out.Warnings, leftToNextStart(err, "renames it"))
	} else {
		msg += "; the seed file is kept as " + backup
	}
	if d.Tie {
		msg += "; " + ConfirmCopy
	}
	out.Notices = append(out.Notices, msg)
	*eye = append(*eye, msg)
	return r
}

// settles is what the next session start does with two copies not settled now (FindLegacy
// finds the second again).
const settles = "settles the two copies"

// ConfirmCopy ends the notice of two copies of the workflow state that neither wins: the agent
// goes through the user; the CLI puts the person's own step in its place.
const ConfirmCopy = "confirm with the user which copy to keep"

// pruneWarning says, as for any other archive (Result.retention), what finishing a conflict
// archive kept aside and that retention could not remove older archives; it returns what goes
// on the settling's notice: "; " and the older archives retention removed, "" for none.
func pruneWarning(out *Resume, info store.ArchiveInfo) string {
	notices, warning := ArchiveReport(info)
	out.Notices = append(out.Notices, notices...)
	if warning != "" {
		out.Warnings = append(out.Warnings, warning)
	}
	if p := PrunedLine(info); p != "" {
		return "; " + p
	}
	return ""
}
