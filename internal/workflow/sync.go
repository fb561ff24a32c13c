package workflow

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/textsafe"
)

// StatusFileName is the human-facing initiative status file of seed 001.
const StatusFileName = "WORKFLOW-STATUS.yaml"

// InitiativeFileName is the initiative's L1 file.
const InitiativeFileName = "initiative.json"

// StaleGap is how far apart the two sources' lastUpdated may be before the user is warned.
const StaleGap = 5 * time.Minute

// StatusDoc is WORKFLOW-STATUS.yaml: the initiative as people read it. Keys it does not know
// are kept in Extra and written back. Package yamldoc reads and writes it.
type StatusDoc struct {
	Initiative       string            `yaml:"initiative"`
	Title            string            `yaml:"title,omitempty"`
	Status           InitiativeStatus  `yaml:"status"`
	CurrentMilestone string            `yaml:"currentMilestone,omitempty"`
	Progress         int               `yaml:"progress"`
	Milestones       []StatusMilestone `yaml:"milestones,omitempty"`
	LastUpdated      string            `yaml:"lastUpdated"`
	Extra            map[string]any    `yaml:",inline"`
}

// StatusMilestone is one milestone in WORKFLOW-STATUS.yaml.
type StatusMilestone struct {
	ID     string          `yaml:"id"`
	Title  string          `yaml:"title,omitempty"`
	Status MilestoneStatus `yaml:"status"`
}

// StatusDocFrom renders the initiative as WORKFLOW-STATUS.yaml content (extra keys of a
// previous document are carried over when prev is not nil).
func StatusDocFrom(in *Initiative, prev *StatusDoc) StatusDoc {
	d := StatusDoc{Initiative: in.ID, Title: in.Title, Status: in.Status, CurrentMilestone: in.CurrentMilestone,
		Progress: in.Progress, LastUpdated: in.LastUpdated.UTC().Format(time.RFC3339)}
	for _, m := range in.Milestones {
		d.Milestones = append(d.Milestones, StatusMilestone{ID: m.ID, Title: m.Title, Status: m.Status})
	}
	if prev != nil && len(prev.Extra) > 0 {
		d.Extra = maps.Clone(prev.Extra)
	}
	return d
}

// Updated parses lastUpdated.
func (d *StatusDoc) Updated() (time.Time, error) {
	t, err := time.Parse(time.RFC3339, d.LastUpdated)
	if err != nil {
		return time.Time{}, fmt.Errorf("reading %s: lastUpdated %s is not an RFC 3339 time", StatusFileName, Quote(d.LastUpdated))
	}
	return t.UTC(), nil
}

// Check reports what in the document none of the initiative's operations could have written,
// so that it is never applied: lastUpdated must be an RFC 3339 time; each milestone needs an
// id of one line, not given twice, and a status of pending, in_progress or completed (none
// reads as pending); currentMilestone, when set, must be one of their ids. An id with
// control or invisible characters is for CheckIDs, which knows the initiative.
func (d *StatusDoc) Check() error {
	if _, err := d.Updated(); err != nil {
		return err
	}
	seen := make(map[string]int, len(d.Milestones))
	for i, m := range d.Milestones {
		var reason string
		switch id := strings.TrimSpace(m.ID); {
		case id == "":
			reason = fmt.Sprintf("milestones item %d has no id", i+1)
		case strings.ContainsAny(id, "\r\n"):
			reason = fmt.Sprintf("milestones item %d: the id is not one line", i+1)
		case seen[id] > 0:
			reason = fmt.Sprintf("milestones items %d and %d both have id %s", seen[id], i+1, Quote(id))
		case m.Status != "" && m.Status != MilestonePending && m.Status != MilestoneInProgress && m.Status != MilestoneCompleted:
			reason = fmt.Sprintf("milestones item %d (id %s): status %s is not one of pending, in_progress, completed", i+1, Quote(id), Quote(string(m.Status)))
		default:
			seen[id] = i + 1
			continue
		}
		return fmt.Errorf("reading %s: %s", StatusFileName, reason)
	}
	if c := strings.TrimSpace(d.CurrentMilestone); c != "" && seen[c] == 0 {
		return fmt.Errorf("reading %s: currentMilestone %s is not the id of a milestone", StatusFileName, Quote(c))
	}
	return nil
}

// CheckIDs refuses a milestone id with control or invisible characters (or a line separator)
// unless in, the initiative the document is synced with (nil: none), holds it: taken in, it
// would be a milestone add_milestone refuses, shown as another id. An id in holds was taken
// by an older Cairn, which wrote it into the file itself: refused, the file would be refused
// on every read and never brought up to date again.
func (d *StatusDoc) CheckIDs(in *Initiative) error {
	for i, m := range d.Milestones {
		id := strings.TrimSpace(m.ID)
		if unclearID(id) && (in == nil || !slices.ContainsFunc(in.Milestones, func(x Milestone) bool { return x.ID == id })) {
			return fmt.Errorf("reading %s: milestones item %d: the id holds control or invisible characters, so it would read as another id: write it with letters, digits, spaces and punctuation", StatusFileName, i+1)
		}
	}
	return nil
}

// SyncDecision is the outcome of comparing initiative.json and WORKFLOW-STATUS.yaml on resume.
type SyncDecision struct {
	// Winner names the authoritative source (InitiativeFileName or StatusFileName); empty
	// when neither exists.
	Winner string
	// Initiative is the state to use from now on.
	Initiative *Initiative
	// WriteInitiative is true when initiative.json is stale (or missing) and must be
	// replaced by Initiative.
	WriteInitiative bool
	// WriteStatusDoc is true when WORKFLOW-STATUS.yaml is stale (or missing) and must be
	// replaced by StatusDoc.
	WriteStatusDoc bool
	StatusDoc      StatusDoc
	// Gap is how far apart the two lastUpdated times are.
	Gap time.Duration
	// Warnings: the stale-state warning when Gap > StaleGap, and any part of the newer
	// source that could not be applied.
	Warnings []string
}

// Sync applies seed 001's conflict resolution: the source with the newer lastUpdated wins,
// a gap over five minutes is a warning, and the stale source is to be rewritten from the
// winner. On equal times initiative.json, the primary, wins. in or doc may be nil (missing);
// now is for the "last updated ... ago" text. A status change the newer status file asks for
// that the machine refuses is not applied: it is reported and the file is rewritten.
func Sync(in *Initiative, doc *StatusDoc, now time.Time) (SyncDecision, error) {
	var d SyncDecision
	switch {
	case in == nil && doc == nil:
		return d, nil
	case doc == nil:
		d.Winner, d.Initiative = InitiativeFileName, in.Clone()
		d.renderDoc(nil)
		return d, nil
	}
	if err := doc.CheckIDs(in); err != nil {
		return d, err
	}
	docAt, err := doc.Updated()
	if err != nil {
		return d, err
	}
	// A status file from a clock ahead is used, but initiative.json takes the time it was
	// taken up: with the future time, every later edit of the file would look older and be
	// overwritten. The file is rewritten with that time too.
	takenAt, future := docAt, docAt.After(now.Add(StaleGap))
	if future {
		takenAt = now.UTC().Truncate(time.Second)
	}
	futureWarning := func() {
		if future {
			d.renderDoc(doc)
			d.Warnings = append(d.Warnings, fmt.Sprintf("%s's lastUpdated %s is in the future (a clock ahead?): the file was used, as of now", StatusFileName, docAt.Format(time.RFC3339)))
		}
	}
	if in == nil {
		n, err := initiativeFromDoc(doc, takenAt)
		if err != nil {
			return d, err
		}
		d.Winner, d.Initiative, d.WriteInitiative = StatusFileName, n, true
		futureWarning()
		return d, nil
	}
	inAt := in.LastUpdated.UTC()
	d.Gap = inAt.Sub(docAt).Abs()
	// The seed's protocol is for sources that disagree: task progress alone never reaches
	// the status file (its sync table says NO-OP), so a lag there is not staleness to warn of.
	disagree := !sameDoc(StatusDocFrom(in, doc), *doc, false)
	// An initiative.json from a clock ahead would win over every edit of the status file made
	// at the right time until its time came, and the file be rewritten from it. Cairn writes
	// the status file with initiative.json's time: one with another time was edited since.
	inFuture := !future && inAt.After(now.Add(StaleGap)) && !docAt.Equal(inAt.Truncate(time.Second))
	if inFuture {
		d.Warnings = append(d.Warnings, fmt.Sprintf("%s's updated_at %s is in the future (a clock ahead?): %s, edited since it was written, was used", InitiativeFileName, inAt.Format(time.RFC3339), StatusFileName))
	}
	if !inFuture && !docAt.After(inAt.Truncate(time.Second)) {
		d.Winner, d.Initiative = InitiativeFileName, in.Clone()
		if disagree && d.Gap > StaleGap {
			d.Warnings = append(d.Warnings, staleWarning(StatusFileName, docAt, InitiativeFileName, d.Gap, now))
		}
		// The file holds whole seconds; a difference below that is not staleness.
		if !sameDoc(StatusDocFrom(in, doc), *doc, true) || !docAt.Equal(inAt.Truncate(time.Second)) {
			d.renderDoc(doc)
		}
		return d, nil
	}
	d.Winner = StatusFileName
	if disagree && d.Gap > StaleGap && !inFuture {
		d.Warnings = append(d.Warnings, staleWarning(InitiativeFileName, inAt, StatusFileName, d.Gap, now))
	}
	n := in.Clone()
	if doc.Initiative != "" && doc.Initiative != in.ID {
		return d, fmt.Errorf("%s is for initiative %s but %s is for %s; neither was changed: check which one belongs to this project",
			StatusFileName, doc.Initiative, InitiativeFileName, in.ID)
	}
	if doc.Status != in.Status {
		if err := initiativeMoveError(in.ID, in.Status, doc.Status); err != nil {
			d.Warnings = append(d.Warnings, fmt.Sprintf("%s asks for status %s, not applied: %v", StatusFileName, doc.Status, err))
		} else {
			n.Status = doc.Status
		}
	}
	n.Title = cmp.Or(textsafe.OneLine(doc.Title), n.Title)
	merged := make([]Milestone, 0, len(doc.Milestones))
	// Each is matched by id in one look-up, not a search of the list: that took work in the
	// square of their number.
	known := make(map[string]int, len(in.Milestones))
	for i, m := range slices.Backward(in.Milestones) {
		known[m.ID] = i // the first of an id, as a search finds it
	}
	for _, sm := range doc.Milestones {
		id := strings.TrimSpace(sm.ID)      // as Check and the operations read it
		title := textsafe.OneLine(sm.Title) // as add_milestone takes it
		m := Milestone{ID: id, Title: title, Status: sm.Status}
		if milestoneCompared != nil {
			milestoneCompared()
		}
		if i, ok := known[id]; ok {
			old := n.Milestones[i] // n is in's copy: its Extra is its own
			old.Title = cmp.Or(title, old.Title)
			old.Status = sm.Status
			m = old
		}
		m.Status = cmp.Or(m.Status, MilestonePending)
		merged = append(merged, m)
	}
	n.Milestones = merged
	n.CurrentMilestone = strings.TrimSpace(doc.CurrentMilestone)
	n.LastUpdated = takenAt
	n.Progress = n.progress()
	d.Initiative, d.WriteInitiative = n, true
	if n.Status != doc.Status {
		d.renderDoc(doc)
	}
	futureWarning()
	return d, nil
}

func (d *SyncDecision) renderDoc(prev *StatusDoc) {
	d.WriteStatusDoc, d.StatusDoc = true, StatusDocFrom(d.Initiative, prev)
}

// milestoneCompared, when set (by tests), is called once for every milestone Sync compares or
// looks up.
var milestoneCompared func()

func staleWarning(stale string, staleAt time.Time, winner string, gap time.Duration, now time.Time) string {
	if staleAt.IsZero() { // written by hand or by a tool without the time: no age to give
		return fmt.Sprintf("Initiative state may be stale — %s gives no time it was last updated; %s gives one and was used", stale, winner)
	}
	// Ago: the stale one may be ahead of this clock too (both from a machine ahead).
	return fmt.Sprintf("Initiative state may be stale — last updated %s (%s); %s is newer by %s and was used",
		Ago(now.Sub(staleAt)), stale, winner, Age(gap))
}

func initiativeFromDoc(doc *StatusDoc, at time.Time) (*Initiative, error) {
	if err := ValidID(doc.Initiative); err != nil {
		return nil, fmt.Errorf("reading %s: initiative: %w", StatusFileName, err)
	}
	if !doc.Status.Valid() {
		return nil, fmt.Errorf("reading %s: status %s is not an initiative status", StatusFileName, Quote(string(doc.Status)))
	}
	n := &Initiative{Version: SchemaVersion, ID: doc.Initiative, Title: textsafe.OneLine(doc.Title), Status: doc.Status,
		Milestones: []Milestone{}, CurrentMilestone: strings.TrimSpace(doc.CurrentMilestone), LastUpdated: at}
	for _, sm := range doc.Milestones {
		n.Milestones = append(n.Milestones, Milestone{ID: strings.TrimSpace(sm.ID), Title: textsafe.OneLine(sm.Title), Status: cmp.Or(sm.Status, MilestonePending)})
	}
	n.Progress = n.progress()
	return n, nil
}

// sameDoc compares the documents' content (never lastUpdated), progress only when asked.
func sameDoc(a, b StatusDoc, withProgress bool) bool {
	return a.Initiative == b.Initiative && a.Title == b.Title && a.Status == b.Status &&
		a.CurrentMilestone == b.CurrentMilestone && (!withProgress || a.Progress == b.Progress) &&
		slices.Equal(a.Milestones, b.Milestones)
}
