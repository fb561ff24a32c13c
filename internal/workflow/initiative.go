package workflow

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/textsafe"
)

// InitiativeStatus is the life-cycle state of an initiative (a long-lived goal with
// milestones, seed 001).
type InitiativeStatus string

// Initiative statuses.
const (
	InitiativeCreated    InitiativeStatus = "created"
	InitiativeInProgress InitiativeStatus = "in_progress"
	InitiativeBlocked    InitiativeStatus = "blocked"
	InitiativeCompleted  InitiativeStatus = "completed"
	InitiativeArchived   InitiativeStatus = "archived"
)

// initiativeMoves is seed 001's status machine, the statuses an initiative in s may go to:
// created → in_progress ⇄ blocked, in_progress → completed → archived. A switch, not a map:
// every hook links this package.
func initiativeMoves(s InitiativeStatus) []InitiativeStatus {
	switch s {
	case InitiativeCreated, InitiativeBlocked:
		return []InitiativeStatus{InitiativeInProgress}
	case InitiativeInProgress:
		return []InitiativeStatus{InitiativeBlocked, InitiativeCompleted}
	case InitiativeCompleted:
		return []InitiativeStatus{InitiativeArchived}
	}
	return nil
}

// Valid reports whether s is a known initiative status.
func (s InitiativeStatus) Valid() bool {
	return slices.Contains([]InitiativeStatus{InitiativeCreated, InitiativeInProgress, InitiativeBlocked, InitiativeCompleted, InitiativeArchived}, s)
}

// MilestoneStatus is the state of one milestone.
type MilestoneStatus string

// Milestone statuses.
const (
	MilestonePending    MilestoneStatus = "pending"
	MilestoneInProgress MilestoneStatus = "in_progress"
	MilestoneCompleted  MilestoneStatus = "completed"
)

// Milestone is one step of an initiative, with its task progress.
type Milestone struct {
	ID          string                     `json:"id"`
	Title       string                     `json:"title,omitempty"`
	Status      MilestoneStatus            `json:"status"`
	TasksDone   int                        `json:"tasks_done"`
	TasksTotal  int                        `json:"tasks_total,omitempty"`
	StartedAt   time.Time                  `json:"started_at,omitzero"`
	CompletedAt time.Time                  `json:"completed_at,omitzero"`
	Extra       map[string]json.RawMessage `json:"-"`
}

// Initiative is initiative.json: the long-lived goal, its milestones and progress.
type Initiative struct {
	Version          string           `json:"version"`
	ID               string           `json:"id"`
	Title            string           `json:"title,omitempty"`
	Status           InitiativeStatus `json:"status"`
	Milestones       []Milestone      `json:"milestones"`
	CurrentMilestone string           `json:"current_milestone,omitempty"`
	// Progress is the percentage done (0-100), derived from milestones and their tasks.
	Progress    int                        `json:"progress"`
	CreatedAt   time.Time                  `json:"created_at,omitzero"`
	LastUpdated time.Time                  `json:"updated_at,omitzero"`
	Extra       map[string]json.RawMessage `json:"-"`
}

type (
	milestoneJSON  Milestone
	initiativeJSON Initiative
)

func (m Milestone) MarshalJSON() ([]byte, error) { return EncodeKnown(milestoneJSON(m), m.Extra) }

func (m *Milestone) UnmarshalJSON(b []byte) error {
	return DecodeKnown(b, (*milestoneJSON)(m), &m.Extra)
}

func (in Initiative) MarshalJSON() ([]byte, error) {
	if in.Milestones == nil {
		in.Milestones = []Milestone{}
	}
	return EncodeKnown(initiativeJSON(in), in.Extra)
}

func (in *Initiative) UnmarshalJSON(b []byte) error {
	if err := DecodeKnown(b, (*initiativeJSON)(in), &in.Extra); err != nil {
		return err
	}
	// Seed 001's initiative.json keeps its time as lastUpdated, the key its sync compares:
	// without it the seed's file would be taken as never updated, and lose every sync.
	var seed time.Time
	if raw, ok := in.Extra[seedLastUpdated]; ok && in.LastUpdated.IsZero() && json.Unmarshal(raw, &seed) == nil {
		in.LastUpdated = seed
		delete(in.Extra, seedLastUpdated) // written from now on as updated_at
		if len(in.Extra) == 0 {
			in.Extra = nil
		}
	}
	return nil
}

// seedLastUpdated is the key of seed 001's initiative.json time.
const seedLastUpdated = "lastUpdated"

// Clone returns a deep copy.
func (in *Initiative) Clone() *Initiative { return deepCopy(in) }

// InitiativeTransitionError refuses a status change the machine does not allow, with the
// reason.
type InitiativeTransitionError struct {
	ID     string
	From   InitiativeStatus
	To     InitiativeStatus
	Reason string
}

func (e *InitiativeTransitionError) Error() string {
	return fmt.Sprintf("initiative %s cannot go from %s to %s: %s; nothing was changed", e.ID, e.From, said(string(e.To)), e.Reason)
}

func initiativeMoveError(id string, from, to InitiativeStatus) error {
	next := initiativeMoves(from)
	if slices.Contains(next, to) {
		return nil
	}
	e := &InitiativeTransitionError{ID: id, From: from, To: to}
	switch {
	case from == InitiativeArchived:
		e.Reason = "archived is terminal; create a new initiative to continue the work"
	case !to.Valid():
		e.Reason = "unknown status: use created, in_progress, blocked, completed or archived"
	case from == InitiativeCompleted && to == InitiativeInProgress:
		e.Reason = "a completed initiative is not reopened; create a new initiative for further work"
	default:
		names := make([]string, 0, len(next))
		for _, s := range next {
			names = append(names, string(s))
		}
		e.Reason = "allowed next: " + strings.Join(names, ", ")
	}
	return e
}

// InitiativeChange is what an initiative operation returns.
type InitiativeChange struct {
	Initiative *Initiative
	Changed    bool
	// SyncStatusFile is true when seed 001's sync table says WORKFLOW-STATUS.yaml must be
	// updated too (milestone started or completed, status change); false for task progress.
	SyncStatusFile bool
}

// MilestoneSpec names a milestone of a new initiative.
type MilestoneSpec struct{ ID, Title string }

// NewInitiative creates an initiative in status created with its milestones pending.
func NewInitiative(id, title string, milestones []MilestoneSpec, now time.Time) (*Initiative, error) {
	if err := ValidID(id); err != nil {
		return nil, fmt.Errorf("creating initiative: %w", err)
	}
	now = now.UTC()
	in := &Initiative{Version: SchemaVersion, ID: id, Title: textsafe.OneLine(title), Status: InitiativeCreated,
		Milestones: []Milestone{}, CreatedAt: now, LastUpdated: now}
	for _, m := range milestones {
		ch, err := AddMilestone(in, m, now)
		if err == nil && !ch.Changed {
			err = fmt.Errorf("milestone %s is listed twice", strings.TrimSpace(m.ID))
		}
		if err != nil {
			return nil, fmt.Errorf("creating initiative %s: %w", id, err)
		}
		in = ch.Initiative
	}
	return in, nil
}

// SetInitiativeStatus moves the initiative along its status machine; the same status changes
// nothing. Completed → in_progress and anything out of archived are refused with the reason.
func SetInitiativeStatus(in *Initiative, to InitiativeStatus, now time.Time) (InitiativeChange, error) {
	if in == nil {
		return InitiativeChange{}, errors.New("no initiative: create one first")
	}
	if in.Status == to {
		return InitiativeChange{Initiative: in.Clone()}, nil
	}
	if err := initiativeMoveError(in.ID, in.Status, to); err != nil {
		return InitiativeChange{}, err
	}
	n := in.Clone()
	n.Status = to
	return changed(n, now), nil
}

// requireWorkable refuses milestone work unless the initiative is created or in progress;
// work on a created initiative starts it.
func (in *Initiative) requireWorkable(what string) error {
	switch in.Status {
	case InitiativeCreated, InitiativeInProgress:
		return nil
	case InitiativeBlocked:
		return fmt.Errorf("initiative %s is blocked; %s was not recorded: set it back to in_progress first", in.ID, what)
	default:
		return fmt.Errorf("initiative %s is %s; %s was not recorded: create a new initiative for further work", in.ID, in.Status, what)
	}
}

// workableMilestone is the index of milestone id in an initiative that may still change;
// what names the change refused otherwise.
func workableMilestone(in *Initiative, id, what string) (int, error) {
	if in == nil {
		return 0, errors.New("no initiative: create one first")
	}
	if err := in.requireWorkable(what); err != nil {
		return 0, err
	}
	i := slices.IndexFunc(in.Milestones, func(m Milestone) bool { return m.ID == id })
	if i < 0 {
		ids := make([]string, len(in.Milestones))
		for j, m := range in.Milestones {
			ids[j] = m.ID
		}
		return -1, fmt.Errorf("initiative %s has no milestone %s (it has: %s)", in.ID, Quote(id), strings.Join(ids, ", "))
	}
	return i, nil
}

// StartMilestone marks a milestone in progress and makes it current; starting a milestone of
// a created initiative moves it to in_progress.
func StartMilestone(in *Initiative, id string, now time.Time) (InitiativeChange, error) {
	i, err := workableMilestone(in, id, "starting milestone "+id)
	if err != nil {
		return InitiativeChange{}, err
	}
	switch in.Milestones[i].Status {
	case MilestoneInProgress:
		return InitiativeChange{Initiative: in.Clone()}, nil
	case MilestoneCompleted:
		return InitiativeChange{}, fmt.Errorf("milestone %s of initiative %s is already completed; nothing was changed", id, in.ID)
	}
	n := in.Clone()
	now = now.UTC()
	n.Milestones[i].Status = MilestoneInProgress
	n.Milestones[i].StartedAt = now
	n.CurrentMilestone = id
	if n.Status == InitiativeCreated {
		n.Status = InitiativeInProgress
	}
	return changed(n, now), nil
}

// CompleteMilestone marks a milestone completed and makes the next unfinished one current.
func CompleteMilestone(in *Initiative, id string, now time.Time) (InitiativeChange, error) {
	i, err := workableMilestone(in, id, "completing milestone "+id)
	if err != nil {
		return InitiativeChange{}, err
	}
	if in.Milestones[i].Status == MilestoneCompleted {
		return InitiativeChange{Initiative: in.Clone()}, nil
	}
	n := in.Clone()
	now = now.UTC()
	m := &n.Milestones[i]
	m.Status = MilestoneCompleted
	m.CompletedAt = now
	if m.StartedAt.IsZero() {
		m.StartedAt = now
	}
	if m.TasksTotal > 0 {
		m.TasksDone = m.TasksTotal
	}
	n.CurrentMilestone = ""
	if j := slices.IndexFunc(n.Milestones, func(x Milestone) bool { return x.Status != MilestoneCompleted }); j >= 0 {
		n.CurrentMilestone = n.Milestones[j].ID
	}
	if n.Status == InitiativeCreated {
		n.Status = InitiativeInProgress
	}
	return changed(n, now), nil
}

// changed stamps n, a changed copy, with now and its progress: a change the status file
// follows.
func changed(n *Initiative, now time.Time) InitiativeChange {
	n.LastUpdated = now.UTC()
	n.Progress = n.progress()
	return InitiativeChange{Initiative: n, Changed: true, SyncStatusFile: true}
}

// progress is the percentage done: each milestone counts equally, a milestone in progress by
// its share of tasks done.
func (in *Initiative) progress() int {
	if len(in.Milestones) == 0 {
		if in.Status == InitiativeCompleted || in.Status == InitiativeArchived {
			return 100
		}
		return 0
	}
	var sum float64
	for _, m := range in.Milestones {
		switch {
		case m.Status == MilestoneCompleted:
			sum++
		case m.TasksTotal > 0:
			sum += float64(min(m.TasksDone, m.TasksTotal)) / float64(m.TasksTotal)
		}
	}
	return int(sum * 100 / float64(len(in.Milestones)))
}

// Milestones are bounded where add_milestone adds them, with the tool's own limits on their
// ids and titles: initiative.json holds at most 1 MiB and every change rewrites it whole.
// Milestones a person writes into WORKFLOW-STATUS.yaml are taken in as they are.
// EditTakenIn ends a step that has the agent edit WORKFLOW-STATUS.yaml: the newer of it and
// initiative.json wins (Sync), so an edit that keeps the file's lastUpdated is written over.
const EditTakenIn = "then set its lastUpdated to the current time (RFC 3339), so that the next initiative call takes the edit in rather than writing over it"

const (
	maxMilestones     = 100
	maxMilestoneID    = 200 // characters
	maxMilestoneTitle = 500 // characters
)

// AddMilestone appends a pending milestone; the first one becomes current. A milestone id
// already present changes nothing.
func AddMilestone(in *Initiative, m MilestoneSpec, now time.Time) (InitiativeChange, error) {
	if in == nil {
		return InitiativeChange{}, errors.New("no initiative: create one first")
	}
	id := strings.TrimSpace(m.ID)
	if id == "" || strings.ContainsAny(id, "\r\n") {
		return InitiativeChange{}, fmt.Errorf("milestone id %s is not one non-empty line", Quote(m.ID))
	}
	if unclearID(id) {
		return InitiativeChange{}, errors.New("the milestone id holds control or invisible characters, so it would read as another id: write it with letters, digits, spaces and punctuation")
	}
	if err := in.requireWorkable("adding milestone " + id); err != nil {
		return InitiativeChange{}, err
	}
	if slices.ContainsFunc(in.Milestones, func(x Milestone) bool { return x.ID == id }) {
		return InitiativeChange{Initiative: in.Clone()}, nil
	}
	title := textsafe.OneLine(m.Title)
	if n := utf8.RuneCountInString(id); n > maxMilestoneID {
		return InitiativeChange{}, fmt.Errorf("milestone not added, nothing was changed: its id is %d characters, the most is %d; use a short id and put the rest in its title", n, maxMilestoneID)
	}
	if n := utf8.RuneCountInString(title); n > maxMilestoneTitle {
		return InitiativeChange{}, fmt.Errorf("milestone %s not added, nothing was changed: its title is %d characters, the most is %d; keep it to a line and the details in a file", Quote(id), n, maxMilestoneTitle)
	}
	if len(in.Milestones) >= maxMilestones {
		return InitiativeChange{}, fmt.Errorf("milestone %s not added, nothing was changed: an initiative keeps at most %d milestones and this one has %d; remove milestones no longer needed from %s, %s",
			Quote(id), maxMilestones, len(in.Milestones), StatusFileName, EditTakenIn)
	}
	n := in.Clone()
	n.Milestones = append(n.Milestones, Milestone{ID: id, Title: title, Status: MilestonePending})
	n.CurrentMilestone = cmp.Or(n.CurrentMilestone, id)
	return changed(n, now), nil
}
