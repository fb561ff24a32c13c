package migrate

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/workflow"
)

// Extra is what Convert needs beyond the document itself.
type Extra struct {
	// Name is the document's file name (a path is fine; only its last element is used). Seed
	// 004 takes its workflow type from it when the document has no "workflow" field
	// ("release-state.json" is type "release"); every format records it as legacy.source.
	Name string
	// Execution is seed 002's memory/state/execution.json, if there is one; its tasks become
	// the record's tasks. Only Seed002 accepts it.
	Execution []byte
	// Phases, when set, returns a workflow type's phases in order (from its definition, user
	// definitions included) and false for a type with no definition. Convert uses it only to
	// pick the current phase when the old document names none. nil: the built-in definitions'
	// phases as this package knows them (apex, debug, brainstorm, dotagent, coordinate).
	Phases func(typ string) ([]string, bool)
	// TTL, when set, returns a workflow type's TTL from its definition, user definitions
	// included, and false for a type with no definition. Convert uses it only when the old
	// document names no ttl (or none it can read). nil: workflow.DefaultTTL, the built-in
	// definitions' TTL.
	TTL func(typ string) (string, bool)
}

// Result is what Migrate did.
type Result struct {
	// From is the format the document was in.
	From Format
	// Record is the schema-2.0 record to store: the input itself when From is Current, nil
	// when From is Empty.
	Record *workflow.Record
	// Backup is the name to keep the original under (BackupName(extra.Name, From)); empty
	// when nothing was migrated.
	Backup string
}

// Migrate detects data's format and converts it. A current record comes back as it is, and
// "{}" as a nil Record with From Empty; a newer, unknown or malformed document is an error
// (matching ErrNewer, ErrUnknownFormat or ErrMalformed) and nothing is converted.
func Migrate(data []byte, extra Extra, now time.Time) (Result, error) {
	f, err := Detect(data)
	if err != nil || f == Empty {
		return Result{From: f}, err
	}
	rec, err := Convert(f, data, extra, now) // a Current record comes back as it is
	if err != nil {
		return Result{From: f}, err
	}
	return Result{From: f, Record: rec, Backup: BackupName(extra.Name, f)}, nil
}

// BackupName is the name to keep an original of format f under: "<name>.v<old>.json.bak"
// with a trailing ".json" of name dropped first, e.g. "workflow-state.json" (seed 001) ->
// "workflow-state.v1.json.bak", "apex-state.json" (seed 004) -> "apex-state.v1.json.bak",
// "coordinate.json" (seed 003) -> "coordinate.v2.json.bak". A directory in name is kept. It is
// "" for formats that are not migrated. The caller must not overwrite an existing backup.
func BackupName(name string, f Format) string {
	dir, base := filepath.Split(name)
	base = strings.TrimSuffix(base, ".json")
	if !f.NeedsMigration() || base == "" {
		return ""
	}
	// <old> is the old format's own version where it has one (schema 1.x and seed 004's
	// version 1 are "1", seed 003's checkpoint schema "2.0" is "2"), and "1" for seeds 001
	// and 002, which have no version field and are the first version of their files.
	label := "1"
	if f == Seed003 {
		label = "2"
	}
	return dir + base + ".v" + label + ".json.bak"
}

// Convert turns data, in format f (as Detect said), into a schema-2.0 record. now is the
// migration time (legacy.migrated_at, and the fallback when the document has no time at all).
// It refuses data that is not in format f, Newer and Unknown documents, and Empty (ErrEmpty);
// a Current record is returned unchanged. The result passes a strict JSON check and the
// record's field and type check, or Convert returns an error.
func Convert(f Format, data []byte, extra Extra, now time.Time) (*workflow.Record, error) {
	got, obj, err := detect(data)
	if err != nil {
		return nil, err
	}
	if got != f {
		return nil, fmt.Errorf("the document is %s, not %s; nothing was converted", got.describe(), f.describe())
	}
	switch f {
	case Current:
		return parseRecord(data)
	case Empty:
		return nil, ErrEmpty
	}
	if len(extra.Execution) > 0 && f != Seed002 {
		return nil, fmt.Errorf("an execution.json was given with %s; only seed 002 has one, nothing was converted", f.describe())
	}
	c := &conv{
		f:       f,
		phases:  extra.Phases,
		ttl:     extra.TTL,
		in:      obj,
		data:    data,
		now:     now.UTC(),
		lost:    map[string]any{},
		renamed: map[string]string{},
		legacy:  map[string]any{},
		noTime:  map[int]bool{},
		ph:      map[string]*workflow.Phase{},
		vars:    map[string]string{},
	}
	if extra.Name != "" {
		c.source = filepath.Base(extra.Name)
	}
	if v, ok := c.take("version"); ok {
		c.legacy["version"] = v
	}
	switch f {
	case Schema1:
		c.schema1()
	case Seed001:
		c.seed001()
	case Seed002:
		err = c.seed002(extra.Execution)
	case Seed003:
		c.seed003()
	case Seed004:
		err = c.seed004()
	}
	var out *workflow.Record
	if err == nil {
		out, err = c.finish()
	}
	if err != nil {
		return nil, fmt.Errorf("migrating %s: %w", f.describe(), err)
	}
	return out, nil
}

// conv holds one conversion in progress. Fields are taken out of in as they are used; what
// is left at the end has no place in the record and is kept under legacy.
type conv struct {
	f       Format
	in      map[string]any
	data    []byte
	now     time.Time
	source  string
	rec     workflow.Record
	ph      map[string]*workflow.Phase // the record's phases while they are built
	noTime  map[int]bool               // approvals said to be given without a time
	lost    map[string]any             // original fields not carried over as they were: legacy.fields
	renamed map[string]string          // old name -> new, when more than lower-casing: legacy.renamed
	legacy  map[string]any             // other legacy entries (execution, version)
	extra   map[string]any             // top-level unknown fields kept as they are (schema 1 only)
	times   []time.Time                // every time seen, for a missing created_at or updated_at
	vars    map[string]string
	phases  func(string) ([]string, bool)
	ttl     func(string) (string, bool)
}

// take removes key from the input and returns its value; a null counts as absent.
func (c *conv) take(key string) (any, bool) {
	v := c.in[key]
	delete(c.in, key)
	return v, v != nil
}

// keep records an original field under legacy.fields.
func (c *conv) keep(key string, v any) { c.lost[key] = v }

// time parses a time value and remembers it, for a missing created_at or updated_at.
func (c *conv) time(v any) (time.Time, bool) {
	t, ok := parseTime(v)
	if ok {
		c.times = append(c.times, t)
	}
	return t, ok
}

// nameOf is name for a field's value: a string that leaves a usable name.
func (c *conv) nameOf(v any) (string, bool) {
	s, _ := v.(string)
	n := c.name(s)
	return n, n != ""
}

// name turns an old type or phase name into a Cairn name. A change that lower-casing alone
// does not explain ("Git Commit" -> "git-commit", seed 003's "planning" -> "plan") is recorded
// under legacy.renamed.
func (c *conv) name(raw string) string {
	n := sanitizeName(raw, false)
	if c.rec.Type == "coordinate" {
		n = cmp.Or(coordinateAliases[n], n)
	}
	if n != "" && n != strings.ToLower(raw) {
		c.renamed[raw] = n
	}
	return n
}

func (c *conv) phase(name string) *workflow.Phase {
	if c.ph[name] == nil {
		c.ph[name] = &workflow.Phase{}
	}
	return c.ph[name]
}

// setVar sets a variable made of another field; the first value (never empty) stays.
func (c *conv) setVar(k, v string) {
	if c.vars[k] == "" {
		c.vars[k] = v
	}
}

// coordinateAliases maps seed 003's state names (sm_transition "research" "planning", ...,
// CURRENT_STATE=implementation) onto the coordinate definition's phases; other names stay.
var coordinateAliases = map[string]string{
	"init": "initialize", "initialization": "initialize", "initializing": "initialize",
	"researching": "research", "planning": "plan", "implementation": "implement",
	"implementing": "implement", "testing": "test", "tests": "test", "debugging": "debug",
	"documentation": "document", "documenting": "document", "docs": "document",
	"completed": "complete", "done": "complete",
}

// deriveState picks the current phase of a type whose phases are known when the old document
// names none: the first one not completed, or the last one when the workflow is completed.
func (c *conv) deriveState() bool {
	var phases []string
	if c.phases != nil {
		phases, _ = c.phases(c.rec.Type)
	} else if d, ok := workflow.BuiltinDefinition(c.rec.Type); ok {
		phases = d.Phases // used only to find a current phase the old document does not name
	}
	// A definition with a name the record cannot hold: no guess.
	if len(phases) == 0 || slices.ContainsFunc(phases, func(p string) bool { return workflow.ValidName(p) != nil }) {
		return false
	}
	undone := slices.IndexFunc(phases, func(p string) bool { return c.ph[p] == nil || !c.ph[p].Completed })
	c.rec.State = phases[len(phases)-1]
	switch {
	case c.rec.Status == "completed": // the last phase, whatever the phases say
	case undone >= 0:
		c.rec.State = phases[undone]
	case c.rec.PhaseStatus == "":
		c.rec.PhaseStatus = "complete"
	}
	return true
}

var errNoType = errors.New("it names no workflow type")

// finish fills what the old format did not say, keeps what is left under legacy and checks
// the record: against the store's limits, and with the domain's own validation.
func (c *conv) finish() (*workflow.Record, error) {
	r := &c.rec
	r.Version = workflow.SchemaVersion
	if r.Type == "" {
		return nil, errNoType
	}
	if r.State == "" && !c.deriveState() {
		return nil, fmt.Errorf("it names no current phase, and no definition of %q gives the phases to pick one from", r.Type)
	}
	if r.TTL == "" {
		r.TTL = workflow.DefaultTTL
		if c.ttl != nil {
			// As a start of the type would have it; a ttl the record cannot hold is not taken.
			if ttl, ok := c.ttl(r.Type); ok && ttl != "" {
				if _, err := workflow.ParseTTL(ttl); err == nil {
					r.TTL = ttl
				}
			}
		}
	}
	if r.Status == "" {
		r.Status = workflow.StatusActive
		if !r.CompletedAt.IsZero() {
			r.Status = workflow.StatusCompleted // seed 001 writes completedAt only on completion
		}
	}
	if r.PhaseStatus == "" {
		r.PhaseStatus = workflow.PhaseInProgress
		if r.Status == workflow.StatusCompleted {
			r.PhaseStatus = workflow.PhaseComplete
		}
	}
	// With no time of its own, the original's id cannot come from its creation time: that
	// would be now, and a migration run again after a crash would name another workflow.
	idTime := r.CreatedAt
	if r.CreatedAt.IsZero() {
		r.CreatedAt = c.now
		if len(c.times) > 0 {
			r.CreatedAt = slices.MinFunc(c.times, time.Time.Compare)
			idTime = r.CreatedAt
		}
	}
	if r.UpdatedAt.IsZero() {
		r.UpdatedAt = r.CreatedAt
		if len(c.times) > 0 {
			r.UpdatedAt = slices.MaxFunc(c.times, time.Time.Compare)
		}
	}
	if r.Status == workflow.StatusCompleted && r.CompletedAt.IsZero() {
		r.CompletedAt = r.UpdatedAt
	}
	for i := range r.Approvals {
		if c.noTime[i] {
			r.Approvals[i].ApprovedAt = r.UpdatedAt
		}
	}
	if r.WorkflowID == "" {
		r.WorkflowID = deriveID(r.Type, idTime, c.data)
	}
	if r.Revision < 1 {
		r.Revision = 1
	}
	for name, p := range c.ph {
		if r.Phases == nil {
			r.Phases = map[string]workflow.Phase{}
		}
		r.Phases[name] = *p
	}
	if len(c.vars) > 0 {
		maps.Copy(c.vars, r.Vars) // the old document's own vars win
		r.Vars = c.vars
	}
	if c.extra != nil {
		maps.Copy(c.extra, c.in)
	} else {
		maps.Copy(c.lost, c.in)
	}
	legacy := c.legacy
	legacy["from"] = c.f.String()
	legacy["migrated_at"] = c.now.Format(time.RFC3339Nano)
	if c.source != "" {
		legacy["source"] = c.source
	}
	if len(c.lost) > 0 {
		legacy["fields"] = c.lost
	}
	if len(c.renamed) > 0 {
		legacy["renamed"] = c.renamed
	}
	r.Extra = map[string]json.RawMessage{"legacy": rawJSON(legacy)}
	for k, v := range c.extra {
		r.Extra[k] = rawJSON(v)
	}
	out, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("writing the record: %w", err)
	}
	if err := strictCheck(out); err != nil {
		// Keeping the original's fields under legacy nests them two levels deeper and can
		// push a document near a limit over it. The original is strict JSON all the same.
		return nil, fmt.Errorf("%w: %s", ErrLimit, strings.TrimPrefix(err.Error(), ErrMalformed.Error()+": "))
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("the migrated record fails its own check (a Cairn bug, please report it): %w", err)
	}
	return r, nil
}

// parseRecord reads a current record as the domain type.
func parseRecord(data []byte) (*workflow.Record, error) {
	var r workflow.Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return &r, nil
}
