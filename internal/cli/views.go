package cli

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote/remotesync"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// listShown is how many archives `cairn list` prints without --all: the table stays short
// and its cost flat however many archives the project keeps.
const listShown = 20

func runList(a *app, _ []string, e *engine.Engine) error {
	n := listShown
	if a.json || a.opt.all {
		n = 0
	}
	all, more, notices, err := e.ListRecentNotices(n)
	a.warn(notices...) // on stderr, in both forms: the list is stdout's
	if err != nil && (!engine.IsNewerState(err) || len(all) == 0) {
		return err
	}
	if err != nil {
		// A row from a newer Cairn is listed as such (as a damaged one is), and the listing
		// stands: said on stderr, exit 0, as cairn status says it.
		a.warn(err.Error())
	}
	for i := range all {
		all[i].Context = secrets.Shown(all[i].Context) // stored text may be older than a rule
	}
	if a.json {
		return a.printJSON(orEmpty(all))
	}
	if len(all) == 0 {
		fmt.Fprintln(a.stdout, "No workflows on record.")
		return nil
	}
	var table bytes.Buffer
	tw := newTable(&table)
	fmt.Fprintln(tw, "ID\tTYPE\tPHASE\tSTATUS\tUPDATED\tCONTEXT")
	for _, s := range all {
		// An archived workflow's status is why it was archived: completed, replaced, expired...
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", clean(s.WorkflowID), clean(s.Type), clean(s.Phase),
			clean(s.Status), stamp(s.UpdatedAt), secrets.Clip(clean(s.Context), 60))
	}
	if more {
		fmt.Fprintf(tw, "(older archives not shown: cairn list --all)\n")
	}
	return writeTable(a.stdout, tw, &table)
}

func newTable(b *bytes.Buffer) *tabwriter.Writer { return tabwriter.NewWriter(b, 0, 4, 2, ' ', 0) }

// writeTable flushes tw into its buffer b and writes b to w, each line ending at its last
// value: a row whose last column is empty (a record without a context, an event without a
// change) gets no padding after the column before it.
func writeTable(w io.Writer, tw *tabwriter.Writer, b *bytes.Buffer) error {
	if err := tw.Flush(); err != nil {
		return err
	}
	for line := range strings.Lines(b.String()) {
		if _, err := io.WriteString(w, strings.TrimRight(line, " \n")+"\n"); err != nil {
			return err
		}
	}
	return nil
}

// recordHidden says why the record of workflow id, data, is not printed as JSON: it holds text
// of a secret's shape, which a write refuses, but the record may be older than the rule that
// finds it, or written by hand. nil when it holds none.
func recordHidden(id string, data []byte) error {
	if f := secrets.ScanJSON(data); f != nil {
		return fmt.Errorf("the record of %s is not printed as JSON: it holds text of a secret's shape (%s at %s), stored before Cairn refused such text or written by hand; cairn show prints it without that text",
			clean(id), f.Rule, f.Path)
	}
	return nil
}

// hideRecord leaves out of a --json answer the record *w of workflow id when it holds text of
// a secret's shape (recordHidden), and says why on stderr.
func (a *app) hideRecord(id string, w *json.RawMessage) {
	if err := recordHidden(id, *w); *w != nil && err != nil {
		a.warn(err.Error())
		*w = nil
	}
}

// workflowID is show's and history's [ID], by default the active workflow's id.
func (a *app) workflowID(pos []string, e *engine.Engine) (string, error) {
	if len(pos) > 0 {
		return pos[0], nil
	}
	s, err := e.Snapshot()
	if err != nil {
		return "", err
	}
	if s.WorkflowID == "" {
		if list, _, err := e.ListRecent(1); err == nil && len(list) == 0 {
			if err := a.notInProject(); err != nil {
				return "", err
			}
			return "", errors.New("no workflow on record yet: cairn start TYPE CONTEXT begins one")
		}
		return "", errors.New("no active workflow; give a workflow id (cairn list shows them)")
	}
	return s.WorkflowID, nil
}

func runShow(a *app, pos []string, e *engine.Engine) error {
	id, err := a.workflowID(pos, e)
	if err != nil {
		return err
	}
	// --json prints the record itself, which has no room for notices: they go to stderr
	// in both forms.
	data, notices, archived, err := e.ShowNotices(id)
	if err != nil {
		return err
	}
	a.warn(notices...)
	if a.json && json.Valid(data) {
		if err := recordHidden(id, data); err != nil {
			return err
		}
		return a.printJSON(json.RawMessage(data))
	}
	r, err := decodeRecord(id, data)
	if err != nil {
		return err
	}
	if r.Status == workflow.StatusActive || r.Status == workflow.StatusArchived {
		// An archive keeps a record as it was (abandoned, the other copy of a conflict): its
		// status still says active, or archived for one a start replaced; the archive index
		// says what it is now, as cairn list and cairn history say it.
		switch reason := archived.Reason; reason {
		case "":
		case "archived": // no reason given: said once
			r.Status = workflow.Status(reason)
		default:
			r.Status = workflow.Status(reason + ", archived")
		}
	}
	// The phase cairn approve would approve, if any: as it does, the definition that loads
	// now decides (a gate taken out of it since waits for nothing); without one, the request
	// on record.
	waits, defTTL := "", ""
	if r.Status == workflow.StatusActive {
		def, _ := e.Definition(r.Type)
		waits, _ = workflow.Awaiting(def, r)
		if def != nil {
			defTTL = def.TTL
		}
	}
	writeRecord(a.stdout, r, waits, defTTL, e.OwnerExited(r), e.RunningElsewhere(r))
	return nil
}

// writeRecord renders a workflow record for a person; waits names the approval phase that
// waits for a person's yes ("" for none); defTTL is the TTL its definition gives workflows
// started now ("" when not to compare: ended, or no definition loads); ownerExited says the
// owner's Claude Code client has exited (Engine.OwnerExited); elsewhere words a running task
// another machine sharing the workflow holds (Engine.RunningElsewhere; nil for none).
func writeRecord(w io.Writer, r *workflow.Record, waits, defTTL string, ownerExited bool, elsewhere func(task string) string) {
	field := func(name, v string) {
		if v != "" && v != "-" {
			fmt.Fprintf(w, "%-13s %s\n", name+":", clean(secrets.Shown(v)))
		}
	}
	field("Workflow", r.WorkflowID)
	field("Type", r.Type)
	field("Context", r.Context)
	field("Scope", r.Scope)
	field("Status", string(r.Status))
	phase := r.State
	if r.PhaseStatus != "" && (r.PhaseStatus != workflow.PhaseInProgress || r.Status == workflow.StatusActive) { // an ended one's is not
		phase += " (" + strings.ReplaceAll(string(r.PhaseStatus), "_", " ") + ")"
	}
	field("Phase", phase)
	field("Created", stamp(r.CreatedAt))
	field("Changed", stamp(r.LastActivity()))   // by an agent or a person; housekeeping aside
	field("Completed at", stamp(r.CompletedAt)) // cairn status's Completed is the phases
	ttl := r.TTL
	if own := cmp.Or(r.TTL, workflow.DefaultTTL); defTTL != "" && defTTL != own { // the record's counts: a definition's is read at a start
		ttl = own + ", fixed at its start (its definition gives new workflows " + defTTL + ")"
	}
	field("TTL", ttl)
	field("Outcome", r.Outcome)
	fmt.Fprintf(w, "%-13s %d\n", "Revision:", r.Revision)
	if o := r.Owner; o != nil {
		var parts []string
		if o.SessionID != "" {
			parts = append(parts, "session "+o.SessionID)
		}
		if o.PID > 0 {
			pid := fmt.Sprintf("pid %d", o.PID)
			if ownerExited { // as cairn status then names no live owner
				pid += " (exited)"
			}
			parts = append(parts, pid)
		}
		if !o.Heartbeat.IsZero() {
			parts = append(parts, "heartbeat "+stamp(o.Heartbeat))
		}
		field("Owner", strings.Join(parts, ", "))
	}
	names := visitOrder(r)
	list(w, "Phases", len(names), func(i int) string {
		p := r.Phases[names[i]]
		s := names[i]
		if p.Completed {
			s += ": completed " + stamp(p.CompletedAt)
		} else {
			s += ": not completed"
		}
		if len(p.Outputs) > 0 {
			s += "; outputs " + strings.Join(p.Outputs, ", ")
		}
		if len(p.Metadata) > 0 {
			keys := slices.Sorted(maps.Keys(p.Metadata))
			for i, k := range keys {
				if k == "checkpoint" { // transition's, which load_checkpoint with phase reads
					keys[i] += fmt.Sprintf(" (%d bytes)", len(p.Metadata[k]))
				}
			}
			s += "; metadata " + strings.Join(keys, ", ")
		}
		return s
	})
	list(w, "Tasks", len(r.Tasks), func(i int) string {
		t := r.Tasks[i]
		// Attempts counts the runs that ended without success, not the runs: "attempts 0"
		// beside a task that ran and is done read as if it never ran.
		s := workflow.TaskID(t.ID) + " " + string(t.Status) // quoted as cairn task says it
		if t.Status == workflow.TaskRunning && elsewhere != nil {
			if far := elsewhere(t.ID); far != "" {
				s = workflow.TaskID(t.ID) + " " + far
			}
		}
		switch {
		case t.Attempts == 1:
			s += " (1 run failed or was cut off)"
		case t.Attempts > 1:
			s += fmt.Sprintf(" (%d runs failed or were cut off)", t.Attempts)
		}
		var rest string
		if t.Output != "" {
			rest = " output " + t.Output
		}
		if t.Note != "" {
			rest += ": " + t.Note
		}
		return secrets.Joined(s, rest)
	})
	keys := slices.Sorted(maps.Keys(r.Vars))
	// A name and a value, each clean, may make a secret together: the name is still said.
	list(w, "Vars", len(keys), func(i int) string { return secrets.Joined(keys[i], "="+shownValue(r.Vars[keys[i]])) })
	list(w, "Artifacts", len(r.Artifacts), func(i int) string { return r.Artifacts[i] })
	if r.Enforcement != nil {
		field("Enforcement", r.Enforcement.Summary)
		list(w, "Violations", len(r.Enforcement.Violations), func(i int) string {
			v := r.Enforcement.Violations[i]
			return fmt.Sprintf("%s %s: %s", v.Code, v.Severity, v.Details)
		})
	}
	list(w, "Approvals", len(r.Approvals), func(i int) string {
		a := r.Approvals[i]
		switch {
		case a.ApprovedAt.IsZero() && a.Phase == waits:
			return a.Phase + ": waiting for a person's approval (cairn approve [NOTE])"
		case a.ApprovedAt.IsZero(): // left backwards, or the workflow ended: nothing waits
			return a.Phase + ": not approved"
		}
		s := fmt.Sprintf("%s: approved %s by %s", a.Phase, stamp(a.ApprovedAt), workflow.ApprovedBy(a.Source))
		if a.Note != "" {
			return secrets.Joined(s, ": "+a.Note)
		}
		return s
	})
	list(w, "History", len(r.History), func(i int) string {
		h := r.History[i]
		s := stamp(h.At) + " " + move(h.From, h.To)
		if h.Note != "" {
			return secrets.Joined(s, ": "+h.Note)
		}
		return s
	})
}

// move says a change's phases: from -> to, or the phase alone for a change within it (a
// task, a variable, the replace that archived the workflow).
func move(from, to string) string {
	switch {
	case from == to:
		return to
	case from == "":
		return "-> " + to
	}
	return from + " -> " + to
}

func runHistory(a *app, pos []string, e *engine.Engine) error {
	id, err := a.workflowID(pos, e)
	if err != nil {
		return err
	}
	evs, notices, archived, err := e.HistoryNotices(id)
	if err != nil {
		return err
	}
	a.warn(notices...) // on stderr, in both forms: the events are stdout's
	if a.json {
		return a.printJSON(evs)
	}
	if len(evs) == 0 {
		fmt.Fprintf(a.stdout, "Workflow %s has no journal entries.\n", clean(id))
		return nil
	}
	var table bytes.Buffer
	tw := newTable(&table)
	fmt.Fprintln(tw, "TIME\tREV\tEVENT\tBY\tCHANGE")
	for _, ev := range evs {
		kind, change := ev.Kind, ""
		if from, remote, ok := pulled(ev); ok { // the remote's move, by whom it was made there
			ev, change = remote, "from "+from+": "+remote.Kind+" "
		}
		var d struct{ From, To, Subject, Note string }
		_ = json.Unmarshal(ev.Detail, &d)
		by := ev.Actor
		if ev.Session != "" {
			by = strings.TrimSpace(by + " " + ev.Session)
		}
		by = cmp.Or(by, "-")
		change += move(d.From, d.To)
		if d.Subject != "" {
			change += "  " + d.Subject
		}
		change = strings.TrimSpace(change)
		if d.Note != "" {
			change = strings.TrimSpace(secrets.Joined(change, "  "+fmt.Sprintf("%q", d.Note)))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", stamp(ev.At), ev.Revision, clean(kind), clean(by), clean(change))
	}
	if err := writeTable(a.stdout, tw, &table); err != nil {
		return err
	}
	// The archive itself, and a one-word reason (its status), are in the archive index, not
	// in the journal.
	if status, dir := archived.Reason, archived.Dir; dir != "" {
		as := ""
		if status != "archived" {
			as = " (" + clean(status) + ")"
		}
		fmt.Fprintf(a.stdout, "Archived%s: archive/%s\n", as, clean(dir))
	}
	return nil
}

// pulled reads a history entry that is a revision a sync took from a remote: the remote's
// name, and the entry as the remote had it (its event, detail, actor and session), which the
// sync's own entry holds only as text ("from origin: transition {...}"); ok is false for any
// other entry.
func pulled(ev engine.Event) (from string, remote engine.Event, ok bool) {
	var text string
	if ev.Kind != engine.SyncEvent || json.Unmarshal(ev.Detail, &text) != nil {
		return "", ev, false
	}
	from, r, ok := remotesync.PulledEvent(store.Event{Kind: ev.Kind, Detail: text})
	if !ok {
		return "", ev, false
	}
	var who struct {
		Actor   string
		Session string `json:"session_id"`
	}
	_ = json.Unmarshal([]byte(r.Detail), &who)
	ev.Kind, ev.Detail, ev.Actor, ev.Session = r.Kind, json.RawMessage(r.Detail), who.Actor, who.Session
	return from, ev, true
}

// visitOrder lists r's phases in the order the work went through them: completed ones by when
// they were completed, then the others (the current phase) by their first move in the
// history, then by name.
func visitOrder(r *workflow.Record) []string {
	first := map[string]int{} // 1 + the index of the first move from or to the phase
	for i, h := range slices.Backward(r.History) {
		first[h.From], first[h.To] = i+1, i+1
	}
	rank := func(p string) int { return cmp.Or(first[p], len(r.History)+1) }
	return slices.SortedFunc(maps.Keys(r.Phases), func(a, b string) int {
		pa, pb := r.Phases[a], r.Phases[b]
		switch {
		case pa.Completed != pb.Completed:
			if pa.Completed {
				return -1
			}
			return 1
		case pa.Completed && !pa.CompletedAt.Equal(pb.CompletedAt):
			return pa.CompletedAt.Compare(pb.CompletedAt)
		case rank(a) != rank(b):
			return rank(a) - rank(b)
		}
		return strings.Compare(a, b)
	})
}
