package migrate

import (
	"cmp"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/workflow"
)

// common maps the fields every format may carry under the record's own names or the seeds'
// spellings of them. Format-specific fields are taken first, so common sees only the rest.
func (c *conv) common() {
	r := &c.rec
	c.field(c.setID, "workflow_id", "workflowId")
	c.field(setIf(&r.Context, asString), "context")
	c.field(setIf(&r.Scope, asString), "scope")
	c.field(setIf(&r.Outcome, asString), "outcome")
	c.field(setIf(&r.CreatedAt, c.time), "created_at", "createdAt", "started_at", "startedAt")
	c.field(setIf(&r.UpdatedAt, c.time), "updated_at", "updatedAt", "last_updated", "lastUpdated")
	c.field(setIf(&r.CompletedAt, c.time), "completed_at", "completedAt")
	c.field(setIf(&r.TTL, normTTL), "ttl")
	c.field(setIf(&r.Status, word(normStatus)), "status")
	c.field(setIf(&r.PhaseStatus, word(normPhaseStatus)), "phase_status", "phaseStatus")
	c.field(func(v any) bool {
		b, ok := asBool(v)
		if ok {
			r.InterruptionSafe = &b
		}
		return ok
	}, "interruption_safe", "interruptionSafe")
	c.field(func(v any) bool {
		list, clean := asStrings(v)
		r.Artifacts = append(r.Artifacts, list...)
		return clean
	}, "artifacts")
	c.field(c.setVars, "vars")
	c.field(c.setEnforcement, "enforcement")
	c.field(c.addApprovals, "approvals")
	c.field(c.addHistory, "history")
	c.field(func(v any) bool {
		tasks, clean := c.parseTasks(v)
		r.Tasks = append(r.Tasks, tasks...)
		return clean
	}, "tasks")
	c.field(c.setOwner, "owner")
}

// field takes all of keys and hands the value of the first one present to set, which reports
// whether the value found a place in the record; when not, the original is kept under legacy,
// as are the other keys present.
func (c *conv) field(set func(v any) bool, keys ...string) {
	key, val := "", any(nil)
	for _, k := range keys {
		if v, ok := c.take(k); ok && key != "" {
			c.keep(k, v)
		} else if ok {
			key, val = k, v
		}
	}
	if key != "" && !set(val) {
		c.keep(key, val)
	}
}

// setIf is a setter for field: *dst gets what conv makes of the value, when it can.
func setIf[T any](dst *T, conv func(any) (T, bool)) func(any) bool {
	return func(v any) bool {
		x, ok := conv(v)
		if ok {
			*dst = x
		}
		return ok
	}
}

// word turns a status normaliser into a converter for setIf: a string it knows.
func word[T ~string](norm func(string) T) func(any) (T, bool) {
	return func(v any) (T, bool) {
		s, _ := v.(string)
		t := norm(s)
		return t, t != ""
	}
}

// setID carries an old workflow id, made safe as a file name; a change beyond lower-casing is
// recorded under legacy.renamed, and an id with nothing usable left is kept under legacy (the
// record then gets a derived one).
func (c *conv) setID(v any) bool {
	s, ok := asText(v)
	if !ok {
		return false
	}
	id := sanitizeID(s)
	if id == "" {
		return false
	}
	if id != strings.ToLower(s) {
		c.renamed[s] = id
	}
	c.rec.WorkflowID = id
	return true
}

func normStatus(s string) workflow.Status           { return workflow.Status(statusWords(s)[0]) }
func normPhaseStatus(s string) workflow.PhaseStatus { return workflow.PhaseStatus(statusWords(s)[1]) }
func normTaskStatus(s string) workflow.TaskStatus   { return workflow.TaskStatus(statusWords(s)[2]) }

// statusWords reads an old status word as a workflow, a phase and a task status, "" where
// that status has no word for it: the seeds spell the stages the three share (waiting,
// running, finished, failed) alike, so one table serves them.
func statusWords(s string) [3]string {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "active", "in_progress", "in-progress", "running", "started":
		return [3]string{"active", "in_progress", "running"}
	case "completed", "complete", "done", "success", "succeeded":
		return [3]string{"completed", "complete", "done"}
	case "finished":
		return [3]string{"completed", "", ""}
	case "passed":
		return [3]string{"", "complete", "done"}
	case "pending", "not_started", "todo", "waiting":
		return [3]string{"", "pending", "pending"}
	case "queued":
		return [3]string{"", "", "pending"}
	case "failed", "error", "errored", "failure":
		return [3]string{"", "failed", "failed"}
	case "blocked":
		return [3]string{"", "blocked", ""}
	case "expired":
		return [3]string{"expired", "", ""}
	case "archived":
		return [3]string{"archived", "", ""}
	}
	return [3]string{}
}

func (c *conv) setVars(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	clean := true
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if s, ok := m[k].(string); ok {
			if c.rec.Vars == nil {
				c.rec.Vars = map[string]string{}
			}
			c.rec.Vars[k] = s
		} else {
			clean = false
		}
	}
	return clean
}

// setEnforcement carries seed 001's enforcement field. A missing "blocking" is worked out as
// seed 001 defines it: true when any violation is CRITICAL or HIGH.
func (c *conv) setEnforcement(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	e := c.entry(m)
	en := &workflow.Enforcement{Violations: []workflow.Violation{}}
	clean := true
	if list, ok := m["violations"].([]any); ok {
		e.used["violations"] = true
		for _, item := range list {
			vm, ok := item.(map[string]any)
			if !ok {
				clean = false
				continue
			}
			var vi workflow.Violation
			ve := c.entry(vm)
			ve.str(&vi.Code, "code")
			ve.str((*string)(&vi.Severity), "severity")
			ve.str(&vi.Details, "details")
			clean = ve.allUsed(false) && clean
			en.Violations = append(en.Violations, vi)
			en.Blocking = en.Blocking || workflow.Severity(strings.ToUpper(string(vi.Severity))).Blocks()
		}
	}
	if b, ok := asBool(m["blocking"]); ok {
		en.Blocking, e.used["blocking"] = b, true // as written, whatever the violations say
	}
	e.str(&en.Summary, "summary")
	c.rec.Enforcement = en
	return e.allUsed(false) && clean
}

// entry is one object of an old format being read, and which of its members found a place.
type entry struct {
	c    *conv
	m    map[string]any
	used map[string]bool
}

func (c *conv) entry(m map[string]any) entry { return entry{c, m, map[string]bool{}} }

// str sets *dst from the first of keys present when it is a string, which then counts as used.
func (e entry) str(dst *string, keys ...string) bool {
	k, v, _ := firstOf(e.m, keys...)
	s, ok := v.(string)
	if ok {
		*dst, e.used[k] = s, true
	}
	return ok
}

// time sets *dst from the first of keys present, which counts as used even when it is not a
// time; it reports false only then.
func (e entry) time(dst *time.Time, keys ...string) bool {
	k, v, ok := firstOf(e.m, keys...)
	if !ok {
		return true
	}
	e.used[k] = true
	t, ok := e.c.time(v)
	if ok {
		*dst = t
	}
	return ok
}

// allUsed reports whether every member found a place (null members aside, with skipNull).
func (e entry) allUsed(skipNull bool) bool {
	for k, v := range e.m {
		if !e.used[k] && (v != nil || !skipNull) {
			return false
		}
	}
	return true
}

// firstOf returns the first of keys present in m (not null), and the key.
func firstOf(m map[string]any, keys ...string) (string, any, bool) {
	for _, k := range keys {
		if v, ok := m[k]; ok && v != nil {
			return k, v, true
		}
	}
	return "", nil, false
}

var (
	phaseNameKeys   = []string{"phase", "name", "id", "stage"}
	completedAtKeys = []string{"completed_at", "completedAt", "at", "timestamp"}
	outputKeys      = []string{"output", "outputs", "output_file", "report", "reports"}
)

// addCompleted is completedPhases for a field: entries count as completed with or without a time.
func (c *conv) addCompleted(v any) bool { return c.completedPhases(v, false) }

// completedPhases reads a list of completed phases in any of the forms the seeds use: names
// (["analyze", "plan"]), entries ([{"phase", "completed_at", "output"}]) or a map from phase
// to a time, a boolean or an entry. With needTime (seed 001's phaseHistory) an entry counts as
// completed only when it has a completion time or says "completed": true. Keys an entry has
// beyond these go to the phase's metadata. It reports whether everything found a place.
func (c *conv) completedPhases(v any, needTime bool) bool {
	clean := true
	switch t := v.(type) {
	case []any:
		seen := map[string]bool{}
		for _, item := range t {
			var name string
			ok := false
			switch it := item.(type) {
			case string:
				name, ok = it, c.completeNamed(it, time.Time{}, nil, nil, true)
			case map[string]any:
				_, v, _ := firstOf(it, phaseNameKeys...)
				name, _ = v.(string)
				ok = c.completedEntry("", it, needTime)
			}
			// A phase listed twice is merged (outputs joined, the latest time kept), and the
			// original list kept under legacy since the merge drops one of the times.
			n := sanitizeName(name, false)
			clean = clean && ok && !seen[n]
			seen[n] = true
		}
	case map[string]any:
		seen := map[string]bool{}
		for _, k := range slices.Sorted(maps.Keys(t)) {
			// Two keys naming one phase ("Plan" and "plan") are merged, and the original kept
			// under legacy, as for a list.
			n := c.name(k)
			clean = clean && !seen[n]
			seen[n] = true
			ok := false
			switch it := t[k].(type) {
			case bool:
				if it {
					ok = c.completeNamed(k, time.Time{}, nil, nil, true)
				} else if n != "" {
					c.phase(n)
					ok = true
				}
			case string:
				// A time says when it was completed; a status word whether it was. Neither:
				// no phase is made of it, and the original is kept.
				at, isTime := c.time(it)
				if st := normPhaseStatus(it); isTime || st != "" {
					ok = c.completeNamed(k, at, nil, nil, isTime || st == "complete")
				}
			case map[string]any:
				ok = c.completedEntry(k, it, needTime)
			}
			clean = clean && ok
		}
	default:
		return false
	}
	return clean
}

// completedEntry reads one {"phase", "completed_at", "output", ...} entry; name, when set,
// is the phase's name from an enclosing map.
func (c *conv) completedEntry(name string, m map[string]any, needTime bool) bool {
	e := c.entry(m)
	if name == "" && !e.str(&name, phaseNameKeys...) {
		return false
	}
	var at time.Time
	clean := e.time(&at, completedAtKeys...)
	completed := !needTime || !at.IsZero()
	if b, ok := asBool(m["completed"]); ok {
		completed, e.used["completed"] = b, true
	}
	var outputs []string
	for _, k := range outputKeys {
		if list, ok := asStrings(m[k]); ok {
			outputs = append(outputs, list...)
			e.used[k] = true
		}
	}
	meta := maps.Clone(m)
	maps.DeleteFunc(meta, func(k string, _ any) bool { return e.used[k] })
	return c.completeNamed(name, at, outputs, meta, completed) && clean
}

// completeNamed merges what is known of one phase into the record.
func (c *conv) completeNamed(raw string, at time.Time, outputs []string, meta map[string]any, completed bool) bool {
	n := c.name(raw)
	if n == "" {
		return false
	}
	p := c.phase(n)
	p.Completed = p.Completed || completed
	if at.After(p.CompletedAt) {
		p.CompletedAt = at
	}
	addOutputs(p, outputs...)
	for k, v := range meta {
		setMetadata(p, k, v)
	}
	return true
}

// addOutputs adds the outputs p does not have yet.
func addOutputs(p *workflow.Phase, outputs ...string) {
	for _, o := range outputs {
		if !slices.Contains(p.Outputs, o) {
			p.Outputs = append(p.Outputs, o)
		}
	}
}

// addPhases reads a phases object keyed by phase name, as schema 1.x and seed 003 write it
// ({"research": {"completed": true, "reports": [...], "metadata": {}}, "planning":
// {"completed": false, "plan_path": null}}). reports become outputs; a plan_path becomes an
// output and the PLAN_PATH variable (seed 003 persists it under that name); any other key
// goes to the phase's metadata.
func (c *conv) addPhases(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	clean := true
	seen := map[string]bool{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		// Two keys naming one phase ("plan" and seed 003's "planning") are merged, and the
		// original kept under legacy since the merge can drop a value.
		n := c.name(k)
		clean = clean && !seen[n] && n != ""
		seen[n] = true
		if n == "" {
			continue
		}
		switch e := m[k].(type) {
		case bool:
			c.phase(n).Completed = c.phase(n).Completed || e
		case map[string]any:
			p := c.phase(n)
			for _, ek := range slices.Sorted(maps.Keys(e)) {
				val := e[ek]
				switch ek {
				case "completed":
					if b, ok := asBool(val); ok {
						p.Completed = p.Completed || b
						continue
					}
				case "completed_at", "completedAt":
					if ts, ok := c.time(val); ok {
						p.CompletedAt = ts
						continue
					}
				case "outputs", "reports", "output":
					if list, ok := asStrings(val); ok {
						addOutputs(p, list...)
						continue
					}
				case "plan_path":
					if s, ok := val.(string); ok && s != "" {
						addOutputs(p, s)
						c.setVar("PLAN_PATH", s)
						continue
					}
				case "metadata":
					if mm, ok := val.(map[string]any); ok {
						for mk, mv := range mm {
							setMetadata(p, mk, mv)
						}
						continue
					}
				}
				setMetadata(p, ek, val)
			}
		default:
			clean = false
		}
	}
	return clean
}

// addApprovals reads approvals as a list of entries ({"phase", "approved_at", "requested_at",
// "approved"}) or phase names, or as a map from phase to a time, a boolean or an entry. An
// approval with no time is dated updated_at, the latest moment it is known to hold by, and the
// original is kept under legacy.
func (c *conv) addApprovals(v any) bool {
	clean := true
	switch t := v.(type) {
	case []any:
		for _, item := range t {
			if m, ok := item.(map[string]any); ok {
				clean = c.approvalEntry("", m) && clean
				continue
			}
			clean = false // a name alone has no time
			if s, ok := item.(string); ok {
				if n := c.name(s); n != "" {
					c.approve(workflow.Approval{Phase: n}, true)
				}
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(t)) {
			n := c.name(k)
			if n == "" {
				clean = false
				continue
			}
			switch it := t[k].(type) {
			case bool:
				clean = clean && !it // true: approved, but with no time
				c.approve(workflow.Approval{Phase: n}, it)
			case string:
				ts, ok := c.time(it)
				if !ok {
					clean = false
					continue
				}
				c.approve(workflow.Approval{Phase: n, ApprovedAt: ts}, false)
			case map[string]any:
				clean = c.approvalEntry(k, it) && clean
			default:
				clean = false
			}
		}
	default:
		clean = false
	}
	return clean
}

func (c *conv) approvalEntry(name string, m map[string]any) bool {
	e := c.entry(m)
	if name == "" && !e.str(&name, "phase", "name", "stage") {
		return false
	}
	n := c.name(name)
	if n == "" {
		return false
	}
	a := workflow.Approval{Phase: n}
	clean := e.time(&a.ApprovedAt, "approved_at", "approvedAt", "at", "timestamp")
	clean = e.time(&a.RequestedAt, "requested_at", "requestedAt") && clean
	noTime := false
	if v, ok := m["approved"]; ok {
		e.used["approved"] = true
		b, ok := asBool(v)
		switch {
		case !ok:
			clean = false
		case b && a.ApprovedAt.IsZero():
			noTime, clean = true, false
		case !b:
			// "approved": false wins over a stray time: it was only requested.
			if !a.ApprovedAt.IsZero() {
				a.ApprovedAt, clean = time.Time{}, false
			}
		}
	}
	c.approve(a, noTime)
	return e.allUsed(false) && clean
}

// approve adds an approval. noTime marks one the old format gave without a time: finish
// dates it updated_at, the latest moment it is known to have been approved by.
func (c *conv) approve(a workflow.Approval, noTime bool) {
	c.noTime[len(c.rec.Approvals)] = noTime
	c.rec.Approvals = append(c.rec.Approvals, a)
}

// setMetadata keeps an original value in a phase's metadata.
func setMetadata(p *workflow.Phase, k string, v any) {
	if p.Metadata == nil {
		p.Metadata = map[string]json.RawMessage{}
	}
	p.Metadata[k] = rawJSON(v)
}

// addHistory reads transitions ({"from", "to", "at", "session_id", "note"}); an entry
// without a target phase or a time is left out, and the original kept under legacy.
func (c *conv) addHistory(v any) bool {
	list, ok := v.([]any)
	if !ok {
		return false
	}
	clean := true
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			clean = false
			continue
		}
		e := c.entry(m)
		var h workflow.HistoryEntry
		var from, to string
		if e.str(&from, "from") && from != "" {
			if h.From = c.name(from); h.From == "" {
				clean = false
			}
		}
		if e.str(&to, "to") {
			h.To = c.name(to)
		}
		e.time(&h.At, "at", "timestamp")
		e.str(&h.SessionID, "session_id", "sessionId")
		e.str(&h.Note, "note", "reason")
		complete := h.To != "" && !h.At.IsZero()
		clean = clean && complete && e.allUsed(false)
		if complete {
			c.rec.History = append(c.rec.History, h)
		}
	}
	return clean
}

// parseTasks reads tasks as a list of entries or a map from id to entry, the shapes seed 002's
// execution.json uses. Status is mapped onto pending|running|done|failed; one that maps to
// none of them becomes pending (so the task runs again) with a note saying what it was.
func (c *conv) parseTasks(v any) ([]workflow.Task, bool) {
	var ids []string // a map's keys, "" for a list's entries
	var items []any
	switch t := v.(type) {
	case []any:
		ids, items = make([]string, len(t)), t
	case map[string]any:
		ids = slices.Sorted(maps.Keys(t))
		for _, k := range ids {
			items = append(items, t[k])
		}
	default:
		return nil, false
	}
	var tasks []workflow.Task
	clean := true
	seen := map[string]bool{}
	for i, item := range items {
		m, ok := item.(map[string]any)
		if !ok {
			clean = false
			continue
		}
		t, ok := c.parseTask(ids[i], m, len(tasks))
		clean = clean && ok
		base := t.ID
		for n := 2; seen[t.ID]; n++ {
			t.ID = base + "-" + strconv.Itoa(n)
			clean = false
		}
		seen[t.ID] = true
		tasks = append(tasks, t)
	}
	return tasks, clean
}

func (c *conv) parseTask(id string, m map[string]any, index int) (workflow.Task, bool) {
	e := c.entry(m)
	clean := true
	var t workflow.Task
	if k, v, ok := firstOf(m, "id", "task_id", "taskId"); ok {
		if s, ok := asText(v); ok && strings.TrimSpace(s) != "" {
			e.used[k] = true
			if id != "" && s != id {
				clean = false // the map key and the entry disagree: the entry wins, both kept
			}
			id = s
		}
	}
	t.ID = strings.TrimSpace(id)
	if t.ID == "" {
		t.ID = "t" + strconv.Itoa(index+1)
		clean = false
	}
	t.Status = "pending"
	if k, v, ok := firstOf(m, "status", "state"); ok {
		e.used[k] = true
		s, _ := v.(string)
		if st := normTaskStatus(s); st != "" {
			t.Status = st
		} else {
			clean = false
			t.Note = "status was " + strconv.Quote(s) + " before migration"
		}
	}
	if k, v, ok := firstOf(m, "attempts", "attempt", "retries"); ok {
		if n, ok := asCount(v); ok {
			t.Attempts, e.used[k] = n, true
		}
	}
	if k, v, ok := firstOf(m, "output", "output_file", "output_path", "outputs"); ok {
		if list, ok := asStrings(v); ok && len(list) == 1 {
			t.Output, e.used[k] = list[0], true
		}
	}
	var note string
	if e.str(&note, "note", "notes", "error", "last_error") && t.Note != "" {
		note += "; " + t.Note // the status note (above) goes after the original's own
	}
	t.Note = cmp.Or(note, t.Note)
	clean = e.time(&t.StartedAt, "started_at", "startedAt") && clean
	clean = e.time(&t.CompletedAt, "completed_at", "completedAt", "finished_at") && clean
	clean = e.time(&t.UpdatedAt, "updated_at", "updatedAt") && clean
	return t, e.allUsed(true) && clean
}

func (c *conv) setOwner(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	e := c.entry(m)
	var o workflow.Owner
	e.str(&o.SessionID, "session_id")
	if n, ok := asCount(m["pid"]); ok {
		o.PID, e.used["pid"] = n, true
	}
	if t, ok := parseTime(m["heartbeat"]); ok {
		o.Heartbeat, e.used["heartbeat"] = t, true
	}
	c.rec.Owner = &o
	return e.allUsed(false)
}
