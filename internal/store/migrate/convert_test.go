package migrate

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func readFixture(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func decodeMap(t testing.TB, data []byte) map[string]any {
	t.Helper()
	m, err := decodeObject(data)
	if err != nil {
		t.Fatalf("output is not a strict JSON object: %v", err)
	}
	return m
}

// Every migrated record is current (so migrating is done once), and converting is
// deterministic: the same input and clock give the same bytes.
func TestConvertIsCurrentAndDeterministic(t *testing.T) {
	for _, c := range goldenCases(t) {
		t.Run(c.name, func(t *testing.T) {
			out, err := convert(c.format, c.data, c.extra, testNow)
			if err != nil {
				return // the golden file pins the error
			}
			if f, err := Detect(out); f != Current || err != nil {
				t.Errorf("Detect(migrated) = %v, %v; want current", f, err)
			}
			again, err := convert(c.format, c.data, c.extra, testNow)
			if err != nil || !bytes.Equal(out, again) {
				t.Errorf("second conversion differs (err %v)", err)
			}
			later, err := convert(c.format, c.data, c.extra, testNow.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			a, b := decodeMap(t, out), decodeMap(t, later)
			if a["workflow_id"] != b["workflow_id"] && hasTime(c.data) {
				t.Errorf("workflow_id depends on the migration clock: %v vs %v", a["workflow_id"], b["workflow_id"])
			}
			if got := b["legacy"].(map[string]any)["migrated_at"]; got != "2026-11-22T19:00:00Z" {
				t.Errorf("legacy.migrated_at = %v", got)
			}
		})
	}
}

func hasTime(data []byte) bool {
	return bytes.Contains(data, []byte("_at")) || bytes.Contains(data, []byte("At")) || bytes.Contains(data, []byte("lastUpdated"))
}

// mapped lists, per format, the top-level fields the record has a place for. Every other field
// of the original, and any mapped one whose value could not be used, must be under
// legacy.fields (or, for schema 1, stay a top-level field): nothing is lost.
var mapped = map[Format][]string{
	Seed001: {"type", "phase", "lastUpdated", "startedAt", "ttl", "context", "enforcement", "status", "completedAt", "completedPhases", "phaseHistory", "approvals", "outcome", "scope", "artifacts"},
	Seed002: {"workflow_id", "started_at", "last_updated", "current_phase", "phase_status", "completed_phases", "user_checkpoints", "interruption_safe"},
	Seed003: {"version", "workflow_id", "state", "scope", "topic_path", "phases", "created_at", "updated_at"},
	Seed004: {"workflow", "version", "created_at", "updated_at", "current_stage", "stages", "artifacts", "notes"},
	Schema1: {"version", "workflow_id", "type", "context", "state", "phase", "phase_status", "status", "phases", "history", "vars", "ttl", "created_at", "updated_at", "revision", "completed_phases"},
}

func TestNothingLost(t *testing.T) {
	for _, c := range goldenCases(t) {
		t.Run(c.name, func(t *testing.T) {
			out, err := convert(c.format, c.data, c.extra, testNow)
			if err != nil {
				return
			}
			in := decodeMap(t, c.data)
			rec := decodeMap(t, out)
			legacy := rec["legacy"].(map[string]any)
			if legacy["from"] != c.format.String() {
				t.Errorf("legacy.from = %v, want %v", legacy["from"], c.format)
			}
			fields, _ := legacy["fields"].(map[string]any)
			for k, v := range in {
				if _, kept := fields[k]; kept {
					if !jsonEqual(t, fields[k], v) {
						t.Errorf("legacy.fields.%s = %v, want the original %v", k, fields[k], v)
					}
					continue
				}
				if c.format == Schema1 {
					if top, ok := rec[k]; ok && !slices.Contains(mapped[Schema1], k) {
						if !jsonEqual(t, top, v) {
							t.Errorf("unknown field %s changed: %v, want %v", k, top, v)
						}
						continue
					}
				}
				if !slices.Contains(mapped[c.format], k) {
					t.Errorf("field %q = %v is neither mapped nor kept under legacy.fields", k, v)
				}
			}
			if c.extra.Execution != nil {
				exec := decodeMap(t, c.extra.Execution)
				_, whole := legacy["execution"]
				for k := range exec {
					if k != "tasks" && !whole {
						t.Errorf("execution.json field %q was dropped", k)
					}
				}
			}
		})
	}
}

func jsonEqual(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		t.Fatalf("marshal: %v %v", err1, err2)
	}
	return bytes.Equal(ja, jb)
}

func TestConvertRefusals(t *testing.T) {
	seed001 := readFixture(t, "testdata/seed001/apex-implement.json")
	seed002 := readFixture(t, "testdata/seed002/implementation.json")
	tests := []struct {
		name  string
		f     Format
		data  string
		extra Extra
		is    error  // nil: any error
		msg   string // a substring the error must contain
	}{
		{name: "empty", f: Empty, data: `{}`, is: ErrEmpty},
		{name: "foreign", f: Unknown, data: `{"name":"x"}`, is: ErrUnknownFormat},
		{name: "foreign as seed001", f: Seed001, data: `{"name":"x"}`, is: ErrUnknownFormat},
		{name: "malformed", f: Seed001, data: `{"type":"APEX",`, is: ErrMalformed},
		{name: "seed001 said seed002", f: Seed002, data: string(seed001), msg: "the document is seed 001 state (.claude/workflow-state.json), not seed 002 state"},
		{name: "seed002 said current", f: Current, data: string(seed002), msg: "not a schema 2.x Cairn record"},
		{name: "execution with seed001", f: Seed001, data: string(seed001), extra: Extra{Execution: []byte(`{"tasks":[]}`)}, msg: "only seed 002 has one"},
		{name: "execution not an object", f: Seed002, data: string(seed002), extra: Extra{Execution: []byte(`[1,2]`)}, is: ErrUnknownFormat, msg: "reading execution.json"},
		{name: "execution duplicate key", f: Seed002, data: string(seed002), extra: Extra{Execution: []byte(`{"tasks":[],"tasks":[]}`)}, is: ErrMalformed},
		{name: "seed001 empty type", f: Seed001, data: `{"type":"","phase":"plan"}`, msg: "names no workflow type"},
		{name: "seed001 punctuation type", f: Seed001, data: `{"type":"???","phase":"plan"}`, msg: "names no workflow type"},
		{name: "seed004 no name anywhere", f: Seed004, data: `{"version":1,"stages":[{"id":"a","status":"done"}]}`, msg: "no file name to take it from"},
		{name: "seed004 no stages and no state", f: Seed004, data: `{"workflow":"release","version":1,"current_stage":null}`, msg: "names no current phase"},
		{name: "deep unmapped field", f: Seed001, data: `{"type":"APEX","phase":"plan","x":` + strings.Repeat("[", 62) + strings.Repeat("]", 62) + `}`,
			is: ErrLimit, msg: "would break a document limit: nested deeper than 64"},
		// U+2028 is 3 bytes as it comes and 6 once encoding/json escapes it: under 1 MiB in,
		// over it out.
		{name: "record over 1 MiB", f: Seed001, data: `{"type":"APEX","phase":"plan","x":"` + strings.Repeat("\u2028", 300000) + `"}`,
			is: ErrLimit, msg: "would break a document limit: 1800"},
		{name: "schema1 type not a string", f: Schema1, data: `{"version":"1.0","type":7,"state":"plan"}`, msg: "names no workflow type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := convert(tc.f, []byte(tc.data), tc.extra, testNow)
			if err == nil || out != nil {
				t.Fatalf("Convert = %q, %v; want an error and no output", out, err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v does not match %v", err, tc.is)
			}
			// The original of a record over a limit is strict JSON.
			if errors.Is(err, ErrLimit) && errors.Is(err, ErrMalformed) {
				t.Errorf("error %v says the original is not strict JSON", err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not say %q", err, tc.msg)
			}
			checkSafeMessage(t, err)
		})
	}
}

func TestConvertCurrentUnchanged(t *testing.T) {
	data := []byte(`{"version":"2.0","workflow_id":"apex-1","type":"apex","state":"plan","x_unknown":[1,2]}`)
	out, err := convert(Current, data, Extra{}, testNow)
	want, _ := parseRecord(data)
	if err != nil || !bytes.Equal(out, encoded(want)) || !bytes.Contains(out, []byte(`"x_unknown":[1,2]`)) {
		t.Fatalf("Convert(Current) = %q, %v; want the input read as it is", out, err)
	}
}

func TestMigrate(t *testing.T) {
	seed001 := readFixture(t, "testdata/seed001/apex-implement.json")
	seed002 := readFixture(t, "testdata/seed002/implementation.json")
	exec := readFixture(t, "testdata/seed002/implementation.execution.json")
	seed004 := readFixture(t, "testdata/seed004/release-state.json")
	current := []byte(`{"version":"2.0","workflow_id":"apex-1","type":"apex","state":"plan"}`)
	tests := []struct {
		name       string
		data       []byte
		extra      Extra
		from       Format
		backup     string
		same       bool // the record is the input itself
		noRecord   bool
		wantTasks  int
		wantTypeIs string
	}{
		{name: "seed001", data: seed001, extra: Extra{Name: ".claude/workflow-state.json"}, from: Seed001, backup: ".claude/workflow-state.v1.json.bak", wantTypeIs: "apex"},
		{name: "seed002 with execution", data: seed002, extra: Extra{Name: "phase.json", Execution: exec}, from: Seed002, backup: "phase.v1.json.bak", wantTasks: 3, wantTypeIs: "dotagent"},
		{name: "seed004", data: seed004, extra: Extra{Name: ".workflow-state/release-state.json"}, from: Seed004, backup: ".workflow-state/release-state.v1.json.bak", wantTypeIs: "release"},
		{name: "current", data: current, extra: Extra{Name: "workflow-state.json"}, from: Current, same: true},
		{name: "empty", data: []byte("{}\n"), extra: Extra{Name: "workflow-state.json"}, from: Empty, noRecord: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Migrate(tc.data, tc.extra, testNow)
			if err != nil {
				t.Fatal(err)
			}
			if res.From != tc.from || res.Backup != tc.backup {
				t.Errorf("Migrate = from %v backup %q; want %v %q", res.From, res.Backup, tc.from, tc.backup)
			}
			switch {
			case tc.noRecord:
				if res.Record != nil {
					t.Errorf("Record = %s, want nil", encoded(res.Record))
				}
			case tc.same:
				if want, _ := parseRecord(tc.data); !bytes.Equal(encoded(res.Record), encoded(want)) {
					t.Errorf("Record changed a current record")
				}
			default:
				rec := decodeMap(t, encoded(res.Record))
				if rec["type"] != tc.wantTypeIs {
					t.Errorf("type = %v, want %v", rec["type"], tc.wantTypeIs)
				}
				if tasks, _ := rec["tasks"].([]any); len(tasks) != tc.wantTasks {
					t.Errorf("%d tasks, want %d", len(tasks), tc.wantTasks)
				}
			}
		})
	}
	if _, err := Migrate([]byte(`{"name":"x"}`), Extra{}, testNow); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("Migrate(foreign) error = %v, want ErrUnknownFormat", err)
	}
}

func TestBackupName(t *testing.T) {
	tests := []struct {
		name string
		f    Format
		want string
	}{
		{"workflow-state.json", Seed001, "workflow-state.v1.json.bak"},
		{"workflow-state.json", Schema1, "workflow-state.v1.json.bak"},
		{"memory/state/phase.json", Seed002, "memory/state/phase.v1.json.bak"},
		{"coordinate.json", Seed003, "coordinate.v2.json.bak"},
		{"apex-state.json", Seed004, "apex-state.v1.json.bak"},
		{".workflow-state/apex-state.json", Seed004, ".workflow-state/apex-state.v1.json.bak"},
		{"state", Seed001, "state.v1.json.bak"},
		{"workflow-state.json", Current, ""},
		{"workflow-state.json", Empty, ""},
		{"workflow-state.json", Newer, ""},
		{"workflow-state.json", Unknown, ""},
		{"", Seed001, ""},
		{".json", Seed001, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name+"/"+tc.f.String(), func(t *testing.T) {
			if got := BackupName(tc.name, tc.f); got != tc.want {
				t.Errorf("BackupName(%q, %v) = %q, want %q", tc.name, tc.f, got, tc.want)
			}
		})
	}
}

// The clock is written back in UTC whatever zone it was passed in.
func TestConvertClockInUTC(t *testing.T) {
	zone := time.FixedZone("UTC+5", 5*3600)
	out, err := convert(Seed001, []byte(`{"type":"ONESHOT","phase":"implement"}`), Extra{}, testNow.In(zone))
	if err != nil {
		t.Fatal(err)
	}
	rec := decodeMap(t, out)
	for _, k := range []string{"created_at", "updated_at"} {
		if rec[k] != "2026-11-22T18:00:00Z" {
			t.Errorf("%s = %v", k, rec[k])
		}
	}
	if _, ok := rec["legacy"].(map[string]any)["source"]; ok {
		t.Errorf("legacy.source set without a name")
	}
}

// A schema 1 record's unknown fields stay top-level, as in a 2.0 record, and its revision
// carries over so the store's revisions never go back.
func TestSchema1KeepsUnknownFieldsAndRevision(t *testing.T) {
	out, err := convert(Schema1, readFixture(t, "testdata/schema1/record.json"), Extra{}, testNow)
	if err != nil {
		t.Fatal(err)
	}
	rec := decodeMap(t, out)
	if rec["revision"] != json.Number("4") {
		t.Errorf("revision = %v, want 4", rec["revision"])
	}
	if x, ok := rec["x_editor"].(map[string]any); !ok || x["cursor"] != json.Number("12") {
		t.Errorf("x_editor = %v, want it unchanged", rec["x_editor"])
	}
}

// Extra.Phases lets the caller's definitions (user ones included) pick the current phase
// when the old document names none; without it only the built-in phases are known.
func TestConvertPhasesFromDefinitions(t *testing.T) {
	defs := func(typ string) ([]string, bool) {
		switch typ {
		case "release":
			return []string{"freeze", "tag", "announce"}, true
		case "oneshot":
			return []string{"implement"}, true
		case "odd":
			return []string{"Not.A.Name"}, true
		}
		return nil, false
	}
	tests := []struct {
		name   string
		f      Format
		data   string
		phases func(string) ([]string, bool)
		state  string // "" means an error
	}{
		{"user definition", Seed004, `{"workflow":"release","version":1,"stages":[]}`, defs, "freeze"},
		{"user definition, first not done", Seed001, `{"type":"ONESHOT","lastUpdated":"2026-02-11T14:00:00Z"}`, defs, "implement"},
		{"completed takes the last", Seed004, `{"workflow":"release","version":1,"stages":[],"status":"completed"}`, defs, "announce"},
		{"no such definition", Seed001, `{"type":"APEX","lastUpdated":"2026-02-11T14:00:00Z"}`, defs, ""},
		{"bad phase name", Seed001, `{"type":"odd","lastUpdated":"2026-02-11T14:00:00Z"}`, defs, ""},
		{"built-in without Phases", Seed001, `{"type":"APEX","lastUpdated":"2026-02-11T14:00:00Z"}`, nil, "analyze"},
		{"built-in brainstorm", Seed001, `{"type":"BRAINSTORM","lastUpdated":"2026-02-11T14:00:00Z","completedPhases":["explore"]}`, nil, "brainstorm"},
		{"all built-in phases done", Seed002, `{"completed_phases":["REQUIREMENTS","ARCHITECTURE","IMPLEMENTATION","VERIFICATION","REFLECTION"]}`, nil, "reflection"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := convert(tc.f, []byte(tc.data), Extra{Phases: tc.phases}, testNow)
			if tc.state == "" {
				if err == nil || !strings.Contains(err.Error(), "names no current phase") {
					t.Fatalf("Convert = %s, %v; want a no-current-phase error", out, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := decodeMap(t, out)["state"]; got != tc.state {
				t.Errorf("state = %v, want %s", got, tc.state)
			}
		})
	}
}

// Two keys of a completed-phases map that name one phase ("Plan" and "plan") are merged, which
// keeps only the later time: the original map stays under legacy.fields, as a list that names
// a phase twice does.
func TestCompletedMapNamingAPhaseTwiceIsKept(t *testing.T) {
	for _, field := range []string{"completedPhases", "phaseHistory"} {
		in := `{"type":"APEX","phase":"implement","lastUpdated":"2026-02-11T14:00:00Z","` + field +
			`":{"Plan":"2026-02-11T09:00:00Z","plan":"2026-02-11T10:00:00Z"}}`
		out, err := convert(Seed001, []byte(in), Extra{Name: "workflow-state.json"}, testNow)
		if err != nil {
			t.Fatal(err)
		}
		fields, _ := decodeMap(t, out)["legacy"].(map[string]any)["fields"].(map[string]any)
		if !jsonEqual(t, fields[field], decodeMap(t, []byte(in))[field]) {
			t.Errorf("%s naming plan twice: legacy.fields.%s = %v, want the original\n%s", field, field, fields[field], out)
		}
	}
}

// A document that names no ttl (or none it can read) takes its type's TTL from Extra.TTL, as a
// start of that type would; one it names is kept, and a definition's TTL the record cannot
// hold, or a type with no definition, leaves the default.
func TestConvertTakesTheDefinitionsTTL(t *testing.T) {
	defs := func(typ string) (string, bool) {
		switch typ {
		case "release":
			return "72h", true
		case "odd":
			return "1.5h", true
		}
		return "", false
	}
	for _, tc := range []struct{ doc, want string }{
		{`{"type":"release","phase":"draft","lastUpdated":"2026-01-01T00:00:00Z"}`, "72h"},
		{`{"type":"release","phase":"draft","ttl":"7d","lastUpdated":"2026-01-01T00:00:00Z"}`, "7d"},
		{`{"type":"release","phase":"draft","ttl":"30s","lastUpdated":"2026-01-01T00:00:00Z"}`, "72h"},
		{`{"type":"odd","phase":"draft","lastUpdated":"2026-01-01T00:00:00Z"}`, "24h"},
		{`{"type":"other","phase":"draft","lastUpdated":"2026-01-01T00:00:00Z"}`, "24h"},
	} {
		r, err := Convert(Seed001, []byte(tc.doc), Extra{TTL: defs}, testNow)
		if err != nil {
			t.Fatalf("%s: %v", tc.doc, err)
		}
		if r.TTL != tc.want {
			t.Errorf("%s: ttl %q, want %q", tc.doc, r.TTL, tc.want)
		}
	}
}
