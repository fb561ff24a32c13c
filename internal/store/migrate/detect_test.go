package migrate

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/cairn-dev/cairn/internal/strictjson"
)

func TestDetect(t *testing.T) {
	deep := strings.Repeat("[", 65) + strings.Repeat("]", 65)
	huge := `{"type":"APEX","phase":"plan","context":"` + strings.Repeat("x", strictjson.MaxSize) + `"}`
	tests := []struct {
		name    string
		in      string
		want    Format
		wantErr error  // nil when Detect must succeed
		msg     string // a substring the error must contain
	}{
		{name: "empty object", in: `{}`, want: Empty},
		{name: "empty object with space", in: " \n{ }\n", want: Empty},
		{name: "current 2.0", in: `{"version":"2.0","workflow_id":"apex-1","type":"apex","state":"plan"}`, want: Current},
		{name: "current 2.1", in: `{"version":"2.1","type":"apex","state":"plan","command":"kept as unknown"}`, want: Current},
		{name: "current 2 as string", in: `{"version":"2","type":"apex","state":"plan"}`, want: Current},
		{name: "newer 3.0", in: `{"version":"3.0","workflow_id":"apex-1","type":"apex"}`, want: Newer, wantErr: ErrNewer, msg: `version "3.0" was written by a newer Cairn`},
		{name: "newer number 3", in: `{"version":3,"type":"apex","state":"plan"}`, want: Newer, wantErr: ErrNewer, msg: "version 3 was written by a newer Cairn"},
		{name: "newer 10.2", in: `{"version":"10.2","status":"active","state":"plan"}`, want: Newer, wantErr: ErrNewer, msg: `"10.2"`},
		{name: "newer v4", in: `{"version":"v4","type":"apex","revision":3}`, want: Newer, wantErr: ErrNewer, msg: `"v4"`},
		{name: "newer with renamed fields", in: `{"version":"3.0","workflow_id":"x","kind":"apex"}`, want: Newer, wantErr: ErrNewer},
		{name: "newer, version only", in: `{"version":"3.0"}`, want: Newer, wantErr: ErrNewer, msg: `version "3.0" was written by a newer Cairn`},
		{name: "newer, version and revision", in: `{"version":"3.0","revision":2}`, want: Newer, wantErr: ErrNewer},
		{name: "package.json is foreign", in: `{"name":"shop","version":"3.2.1","dependencies":{}}`, want: Unknown, wantErr: ErrForeign, msg: `version "3.2.1", newer than this Cairn reads); it holds no workflow record`},
		// One field a record also has (a package.json's "type": "module") does not make a
		// newer Cairn's record: it takes a workflow_id or two of a record's fields.
		{name: "package.json with a type is foreign", in: `{"name":"shop","version":"3.2.1","type":"module","main":"index.js"}`, want: Unknown, wantErr: ErrForeign, msg: "newer than this Cairn reads"},
		{name: "version 4 with a status is foreign", in: `{"version":4,"status":"ok","items":[]}`, want: Unknown, wantErr: ErrForeign, msg: "version 4, newer than this Cairn reads"},
		{name: "seed001 apex", in: `{"type":"APEX","phase":"implement","lastUpdated":"2026-02-11T14:00:00Z","ttl":"24h","context":"x"}`, want: Seed001},
		{name: "seed001 lastUpdated only", in: `{"type":"DEBUG","lastUpdated":"2026-02-11T14:00:00Z"}`, want: Seed001},
		{name: "seed001 completed", in: `{"type":"ONESHOT","phase":"implement","status":"completed","completedAt":"2026-02-11T14:00:00Z"}`, want: Seed001},
		{name: "seed002 phase.json", in: `{"workflow_id":"w","started_at":"2026-02-11T08:00:00Z","current_phase":"REQUIREMENTS","phase_status":"pending","completed_phases":[],"user_checkpoints":[],"interruption_safe":true}`, want: Seed002},
		{name: "seed002 completed_phases only", in: `{"completed_phases":[]}`, want: Seed002},
		{name: "seed003 checkpoint", in: `{"version":"2.0","workflow_id":"u","command":"coordinate","state":"research","phases":{}}`, want: Seed003},
		{name: "seed003 topic_path only", in: `{"version":"2.0","topic_path":"/t","phases":{}}`, want: Seed003},
		{name: "seed003 reports", in: `{"version":"2.0","phases":{"research":{"reports":[]}}}`, want: Seed003},
		{name: "seed003 state only", in: `{"version":"2.0","state":"research"}`, want: Seed003},
		{name: "seed003 without version", in: `{"command":"implement","state":"planning"}`, want: Seed003},
		{name: "seed004 version 1", in: `{"workflow":"release","version":1,"current_stage":"tag","stages":[]}`, want: Seed004},
		{name: "seed004 version 1.0", in: `{"workflow":"release","version":1.0,"stages":[]}`, want: Seed004},
		{name: "seed004 version string", in: `{"workflow":"release","version":"1","stages":[]}`, want: Seed004},
		{name: "seed004 no version", in: `{"workflow":"release","current_stage":"tag"}`, want: Seed004},
		{name: "seed004 no workflow", in: `{"version":1,"stages":[{"id":"a","status":"done"}]}`, want: Seed004},
		{name: "seed004 version 2", in: `{"workflow":"release","version":2,"stages":[]}`, want: Unknown, wantErr: ErrUnknownFormat, msg: "version 2; Cairn migrates its version 1 only"},
		{name: "seed004 version 7", in: `{"workflow":"release","version":7,"stages":[]}`, want: Unknown, wantErr: ErrUnknownFormat},
		{name: "schema1", in: `{"version":"1.0","type":"apex","state":"plan"}`, want: Schema1},
		{name: "schema1 1.x", in: `{"version":"1.x","type":"apex","phase":"plan"}`, want: Schema1},
		{name: "schema1 number", in: `{"version":1,"command":"coordinate","current_phase":"research"}`, want: Schema1},
		{name: "schema1 without type", in: `{"version":"1.0","state":"plan"}`, want: Unknown, wantErr: ErrForeign, msg: "not the fields of a schema 1 record"},
		{name: "version 0.9", in: `{"version":"0.9","type":"apex","state":"plan"}`, want: Unknown, wantErr: ErrUnknownFormat, msg: "older than any format"},
		{name: "version 2 as number", in: `{"version":2,"type":"apex","state":"plan"}`, want: Unknown, wantErr: ErrUnknownFormat, msg: `writes the string "2.0"`},
		{name: "version 2.0 nothing else", in: `{"version":"2.0","foo":1}`, want: Unknown, wantErr: ErrForeign},
		{name: "version boolean", in: `{"version":true,"type":"apex"}`, want: Unknown, wantErr: ErrForeign, msg: "a JSON boolean is not a version number"},
		{name: "version empty", in: `{"version":"","type":"apex"}`, want: Unknown, wantErr: ErrForeign},
		{name: "version word", in: `{"version":"beta","type":"apex"}`, want: Unknown, wantErr: ErrForeign, msg: `"beta"`},
		{name: "version negative", in: `{"version":-1,"type":"apex"}`, want: Unknown, wantErr: ErrForeign},
		{name: "foreign object", in: `{"name":"x","dependencies":{}}`, want: Unknown, wantErr: ErrForeign, msg: "no version and not the fields of any known format"},
		{name: "only unfamiliar fields", in: `{"wf":"x","rev":3}`, want: Unknown, wantErr: ErrForeign},
		{name: "foreign with version 1", in: `{"name":"x","version":"1.0.0","type":"module"}`, want: Unknown, wantErr: ErrForeign},
		{name: "type and current_phase", in: `{"type":"APEX","current_phase":"PLAN"}`, want: Unknown, wantErr: ErrUnknownFormat},
		{name: "ambiguous seed002 and seed003", in: `{"command":"coordinate","state":"research","current_phase":"REQUIREMENTS"}`, want: Unknown, wantErr: ErrUnknownFormat, msg: "fields of both"},
		{name: "ambiguous seed002 and seed004", in: `{"current_phase":"A","stages":[]}`, want: Unknown, wantErr: ErrUnknownFormat, msg: "fields of both"},
		{name: "array", in: `[{"type":"APEX"}]`, want: Unknown, wantErr: ErrUnknownFormat, msg: "JSON array, not an object"},
		{name: "null", in: `null`, want: Unknown, wantErr: ErrUnknownFormat, msg: "JSON null"},
		{name: "string", in: `"APEX"`, want: Unknown, wantErr: ErrUnknownFormat},
		{name: "duplicate key", in: `{"type":"APEX","type":"DEBUG","phase":"plan"}`, want: Unknown, wantErr: ErrMalformed, msg: "duplicate key (a 4-byte key already in this object) at byte 15"},
		{name: "duplicate key nested", in: `{"type":"APEX","phase":"plan","enforcement":{"violations":[{"code":"a","code":"b"}]}}`, want: Unknown, wantErr: ErrMalformed, msg: "duplicate key (a 4-byte key already in this object) at byte 71"},
		{name: "duplicate key escaped", in: `{"type":"APEX","phase":"plan","\u0074ype":"X"}`, want: Unknown, wantErr: ErrMalformed, msg: "duplicate key (a 4-byte key already in this object) at byte 30"},
		{name: "same key in sibling objects", in: `{"type":"APEX","phase":"plan","approvals":[{"phase":"a"},{"phase":"b"}]}`, want: Seed001},
		{name: "byte order mark", in: "\ufeff{\"type\":\"APEX\",\"phase\":\"plan\"}", want: Unknown, wantErr: ErrMalformed, msg: "starts with a byte order mark (BOM), which JSON does not allow"},
		// PowerShell's Out-File and Notepad's "Unicode" write UTF-16, with or without a BOM.
		{name: "utf-16le with bom", in: "\xff\xfe{\x00}\x00", want: Unknown, wantErr: ErrMalformed, msg: "UTF-16 text, not UTF-8: save it as UTF-8"},
		{name: "utf-16be with bom", in: "\xfe\xff\x00{\x00}", want: Unknown, wantErr: ErrMalformed, msg: "UTF-16 text"},
		{name: "utf-16le without bom", in: "{\x00\"\x00t\x00\"\x00:\x001\x00}\x00", want: Unknown, wantErr: ErrMalformed, msg: "UTF-16 text"},
		{name: "invalid utf-8", in: "{\"type\":\"APEX\",\"phase\":\"pl\xffan\"}", want: Unknown, wantErr: ErrMalformed, msg: "invalid UTF-8"},
		{name: "truncated", in: `{"type":"APEX","phase":`, want: Unknown, wantErr: ErrMalformed},
		{name: "truncated inside array", in: `{"type":"APEX","completedPhases":["a"`, want: Unknown, wantErr: ErrMalformed, msg: "truncated"},
		{name: "two values", in: `{} {}`, want: Unknown, wantErr: ErrMalformed, msg: "more than one JSON value"},
		{name: "trailing garbage", in: `{"type":"APEX"} x`, want: Unknown, wantErr: ErrMalformed},
		{name: "empty input", in: ``, want: Unknown, wantErr: ErrMalformed, msg: "empty document"},
		{name: "only space", in: " \n\t", want: Unknown, wantErr: ErrMalformed, msg: "empty document"},
		{name: "nested too deep", in: deep, want: Unknown, wantErr: ErrMalformed, msg: "nested deeper than 64"},
		{name: "over 1 MiB", in: huge, want: Unknown, wantErr: ErrMalformed, msg: "over the 1 MiB limit"},
		{name: "not JSON", in: `type=APEX`, want: Unknown, wantErr: ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Detect([]byte(tc.in))
			if got != tc.want {
				t.Errorf("Detect = %v, want %v (err %v)", got, tc.want, err)
			}
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v does not match %v", err, tc.wantErr)
			}
			// A foreign document is an unknown format too; a record gone wrong is not foreign.
			// One with a newer version may be a newer Cairn's that moved its fields: its text
			// says the version is newer and never that no newer Cairn wrote it, which the
			// store's and doctor's words beside it ("or a newer Cairn's") would contradict.
			if fe, ok := errors.AsType[*ForeignError](err); ok && fe.Newer != strings.Contains(tc.msg, "newer than this Cairn reads") {
				t.Errorf("error %v: Newer %v", err, fe.Newer)
			}
			if strings.Contains(err.Error(), "not a newer Cairn") {
				t.Errorf("error %q says it is not a newer Cairn's, which Cairn cannot know", err)
			}
			if foreign := errors.Is(err, ErrForeign); foreign != (tc.wantErr == ErrForeign) || (foreign && !errors.Is(err, ErrUnknownFormat)) {
				t.Errorf("error %v: foreign %v, unknown format %v", err, foreign, errors.Is(err, ErrUnknownFormat))
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not say %q", err, tc.msg)
			}
			checkSafeMessage(t, err)
		})
	}
}

// 64 levels is the limit, not one below it.
func TestDetectDepthLimit(t *testing.T) {
	inner := strings.Repeat("[", 63) + strings.Repeat("]", 63)
	if _, err := Detect([]byte(`{"type":"APEX","phase":"plan","x":` + inner + `}`)); err != nil {
		t.Fatalf("64 levels refused: %v", err)
	}
	inner = strings.Repeat("[", 64) + strings.Repeat("]", 64)
	if _, err := Detect([]byte(`{"type":"APEX","phase":"plan","x":` + inner + `}`)); !errors.Is(err, ErrMalformed) {
		t.Fatalf("65 levels: got %v, want ErrMalformed", err)
	}
}

func TestNewerError(t *testing.T) {
	data := []byte(`{"version":"3.1","workflow_id":"apex-1","type":"apex","state":"plan"}`)
	_, err := Detect(data)
	var ne *NewerError
	if !errors.As(err, &ne) || ne.Version != `"3.1"` {
		t.Fatalf("Detect error = %#v, want a *NewerError for \"3.1\"", err)
	}
	for _, want := range []string{`"3.1"`, "newer Cairn", "upgrade", "2.x"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// What became of the file is the caller's to say (a seed's notice says it once).
	if strings.Contains(err.Error(), "left") {
		t.Errorf("error %q says what became of the file", err)
	}
	checkSafeMessage(t, err)
	// Converting is refused under any format the caller names: a newer record is never
	// rewritten.
	for f := Unknown; f <= Seed004; f++ {
		out, err := convert(f, data, Extra{Name: "workflow-state.json"}, testNow)
		if out != nil || !errors.Is(err, ErrNewer) {
			t.Errorf("convert(%v) = %q, %v; want nil and ErrNewer", f, out, err)
		}
	}
	res, err := Migrate(data, Extra{Name: "workflow-state.json"}, testNow)
	if !errors.Is(err, ErrNewer) || res.Record != nil || res.Backup != "" || res.From != Newer {
		t.Errorf("Migrate = %+v, %v; want From newer, no record, no backup, ErrNewer", res, err)
	}
}

// checkSafeMessage holds every error to the brief's rule: never steer toward a destructive
// step.
func checkSafeMessage(t *testing.T, err error) {
	t.Helper()
	msg := strings.ToLower(err.Error())
	for _, bad := range []string{"delete", "rm ", "remove", "reset", "overwrite", "failed to"} {
		if strings.Contains(msg, bad) {
			t.Errorf("error %q says %q", err, bad)
		}
	}
}

func TestFormatString(t *testing.T) {
	want := map[Format]string{Unknown: "unknown", Empty: "empty", Current: "current", Newer: "newer",
		Schema1: "schema1", Seed001: "seed001", Seed002: "seed002", Seed003: "seed003", Seed004: "seed004", Format(42): "format(42)"}
	for f, s := range want {
		if f.String() != s {
			t.Errorf("%d.String() = %q, want %q", int(f), f.String(), s)
		}
	}
	for f := Unknown; f <= Seed004; f++ {
		if got, want := f.NeedsMigration(), f >= Schema1; got != want {
			t.Errorf("%v.NeedsMigration() = %v", f, got)
		}
	}
}

// A repeated key may be a secret pasted as a key: the refusal names it by offset, never by text.
func TestDetectRefusalRepeatsNoKey(t *testing.T) {
	for _, sh := range secrettest.Shapes() {
		k, _ := json.Marshal(sh.Text)
		_, err := Detect([]byte(`{"type":"APEX","phase":"plan","x":{` + string(k) + `:1,` + string(k) + `:2}}`))
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "duplicate key") {
			t.Fatalf("%s: %v", sh.Name, err)
		}
		if probe := sh.Core[:min(len(sh.Core), 16)]; strings.Contains(err.Error(), probe) {
			t.Errorf("%s: the error repeats the key: %v", sh.Name, err)
		}
	}
}
