package cli

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/report"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
)

func runStatus(a *app, _ []string, e *engine.Engine) error {
	r := e.Resume(engine.ResumeOptions{Person: true})
	e.Definitions() // load them, so broken definition files are reported here
	for _, w := range e.Warnings() {
		if !slices.Contains(r.Warnings, e.DefinitionWarning(w)) { // its Warnings say it: once
			a.warn(w)
		}
	}
	if a.json {
		if r.Tier != "Damaged" && r.Tier != "Newer" {
			// The agent's next step (call start_workflow, ask the user to approve): the
			// text leaves it out too. Damaged or newer state's is a person's as well.
			r.Next = ""
		}
		a.hideRecord(r.WorkflowID, &r.Workflow)
		out := statusJSON{Resume: r}
		if !e.InGit() {
			out.ProjectRoot = e.ProjectRoot()
		}
		return a.printJSON(out)
	}
	shared := ""
	if r.L2Line != "" {
		shared = e.SharedMemory()
	}
	def, _ := e.Definition(r.Type)
	writeStatus(a.stdout, r, shared, def != nil && def.IsTerminal(r.Phase) && !r.Finished(), a.inClaudeCode())
	if !e.InGit() {
		fmt.Fprintf(a.stdout, "%s%s %s\n", statusLabel("Project"), clean(e.ProjectRoot()), engine.LaunchRoot(e.ProjectRoot()))
	}
	return nil
}

// statusJSON is cairn status --json: the engine's resume answer and, as the text's Project
// line says it, the directory taken as the project root when no git repository holds it.
type statusJSON struct {
	*engine.Resume
	ProjectRoot string `json:"project_root,omitempty"`
}

// statusLabel is name and its colon, padded to the column where status values start: the
// one after the longest label, "Next phases: " ("Checkpoints: " as long).
func statusLabel(name string) string {
	return fmt.Sprintf("%-*s", len("Next phases: "), name+":")
}

// statusCheckpoints bounds the checkpoint names cairn status shows on its one line: a project
// may keep hundreds.
const statusCheckpoints = 10

// writeStatus renders the read protocol's answer for a person: the state and what a person
// can do about it. The agent's instructions (Resume.Next) stay in the agent's report.
// shared says whose memory's last line may be another's (engine.SharedMemory), "" when none;
// terminal says the workflow is active in a terminal phase of its definition; agent says the
// reader is the agent (a shell Claude Code started), to whom cairn approve is refused.
func writeStatus(w io.Writer, r *engine.Resume, shared string, terminal, agent bool) {
	label := statusLabel
	switch {
	case r.Tier == "Damaged":
		// Only its id can be known (and not always): no context, phase or age to show. The
		// engine's next step is a person's here: restore or repair the files.
		if r.WorkflowID != "" {
			fmt.Fprintf(w, "%s%s (its state cannot be read)\n", label("Workflow"), clean(r.WorkflowID))
		}
		fmt.Fprintln(w, clean(r.Next))
	case r.WorkflowID != "":
		fmt.Fprintf(w, "%s%s (%s)\n", label("Workflow"), clean(r.WorkflowID), clean(r.Type))
		if r.Context != "" { // a migrated seed's record may have none
			fmt.Fprintf(w, "%s%s\n", label("Context"), clean(r.Context))
		}
		phase := clean(r.Phase)
		if r.PhaseStatus != "" {
			phase += " (" + clean(strings.ReplaceAll(r.PhaseStatus, "_", " ")) + ")"
		}
		fmt.Fprintf(w, "%s%s, last change %s\n", label("Phase"), phase, workflow.Ago(time.Duration(r.AgeSeconds)*time.Second))
		if len(r.Completed) > 0 {
			fmt.Fprintf(w, "%s%s\n", label("Completed"), clean(secrets.JoinNames(r.Completed, ", ")))
		}
		if r.Finished() {
			// Ended here or on another clone (a sync pulled its end), not filed yet: no move
			// leads on from it.
			var rec struct {
				Status string `json:"status"`
			}
			_ = json.Unmarshal(r.Workflow, &rec) // the engine read it; only for the word
			how := clean(cmp.Or(rec.Status, "ended"))
			if full, err := store.ParseRecord(r.Workflow); err == nil && engine.ReplacedBy(full) != "" {
				how += ", replaced by " + clean(engine.ReplacedBy(full)) // the workflow that took its place
			}
			fmt.Fprintf(w, "%s%s (the next session start files it in the archive); cairn start begins another workflow\n",
				label("Ended"), how)
		} else if len(r.Allowed) > 0 {
			fmt.Fprintf(w, "%s%s\n", label(strings.ToUpper(workflow.NextPhases[:1])+workflow.NextPhases[1:]), clean(secrets.JoinNames(r.Allowed, " or ")))
		}
		if terminal { // no move leads out of it: only a completion ends it
			fmt.Fprintf(w, "%scomplete it with `cairn complete OUTCOME`: %s is a terminal phase, so no move leads out of it\n", label("Then"), clean(r.Phase))
		}
		if r.Tasks != "" {
			fmt.Fprintf(w, "%s%s\n", label("Tasks"), clean(r.Tasks))
		}
		if len(r.Checkpoints) > 0 {
			// Those saved before this workflow started apart: they may hold another's results.
			ours, before := report.SplitCheckpoints(r.Checkpoints, r.CheckpointsBefore)
			var parts []string
			more := false
			for _, l := range []struct {
				label string
				names []string
			}{{"", ours}, {"saved before this workflow started: ", before}} {
				if len(l.names) == 0 {
					continue
				}
				shown := l.names[:min(len(l.names), statusCheckpoints)]
				part := l.label + clean(secrets.JoinNames(shown, ", "))
				if n := len(l.names) - len(shown); n > 0 {
					part, more = part+fmt.Sprintf(" +%d more", n), true
				}
				parts = append(parts, part)
			}
			list := strings.Join(parts, "; ")
			if more {
				list += " (cairn checkpoint list)"
			}
			fmt.Fprintf(w, "%s%s\n", label("Checkpoint"+workflow.Plural(len(r.Checkpoints))), list)
		}
		for _, ap := range r.Approvals {
			fmt.Fprintf(w, "%s%s\n", label("Approved"), clean(secrets.Joined("", ap)))
		}
		if r.AwaitingApproval != "" {
			step := "; approve it with `cairn approve [NOTE]`"
			if agent { // as the move's refusal (workflow.ApprovalError) says it there
				step = ": a person runs `cairn approve [NOTE]` in the project, " + workflow.OwnTerminal
			}
			fmt.Fprintf(w, "%s%s waits for a person's approval%s\n", label("Approval"), clean(r.AwaitingApproval), step)
		}
	case r.Tier == "Newer":
		fmt.Fprintln(w, "A workflow written by a newer Cairn; this one cannot read it and left it as it is.")
	case r.Ended != "":
		fmt.Fprintf(w, "No active workflow; last: %s\n", clean(r.Ended))
	case r.L2Line != "" && shared != "":
		noun := engine.SharedNoun(shared)
		fmt.Fprintf(w, "No active workflow in this %s; %s shares its memory, so memory's last line may be another %s's: %s\n", noun, engine.SharedMemoryWho(shared), noun, clean(r.L2Line))
	case r.L2Line != "":
		fmt.Fprintf(w, "No active workflow; its state is missing. Memory's last line: %s\n", clean(r.L2Line))
		fmt.Fprintln(w, "If that work goes on, start it again: `cairn start TYPE CONTEXT`")
	default:
		fmt.Fprintln(w, "No active workflow.")
	}
	// A workflow may hold hundreds of open tasks or blocking violations: status lists the
	// first few of each, as the agent's report does, and cairn show lists them all.
	shortList(w, "Open tasks", len(r.OpenTasks), func(i int) string { return r.OpenTasks[i] })
	shortList(w, "Blocking violations", len(r.Blocking), func(i int) string {
		v := r.Blocking[i]
		return fmt.Sprintf("%s %s: %s", v.Code, v.Severity, v.Details)
	})
	list(w, "Warnings", len(r.Warnings), func(i int) string { return shellSteps(r.Warnings[i], agent) })
	list(w, "Notices", len(r.Notices), func(i int) string { return shellSteps(r.Notices[i], agent) })
}

// maxListed is how many open tasks, and how many blocking violations, status lists.
const maxListed = 10

// shortList is list with at most maxListed items, and a line that counts the rest.
func shortList(w io.Writer, title string, n int, item func(int) string) {
	list(w, title, min(n, maxListed), item)
	if more := n - maxListed; more > 0 {
		fmt.Fprintf(w, "  +%d more (cairn show)\n", more)
	}
}

// list prints a titled bullet list when it has items. An item may join strings stored and
// scanned one by one: one whose join has a secret's shape is not printed.
func list(w io.Writer, title string, n int, item func(int) string) {
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "%s:\n", title)
	for i := range n {
		fmt.Fprintf(w, "  - %s\n", clean(secrets.Joined("", item(i))))
	}
}
