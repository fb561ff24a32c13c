package migrate

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzMigrate: Detect and Convert never panic, whatever the bytes and whichever format the
// caller names; a conversion that succeeds is strict JSON with version "2.0" that passes the
// record check and is detected as current; failures are the package's own errors. Migrate of a
// document in an older format gives a record or an error, never neither (the store's
// migrateOwn and olderInMemory count on it).
func FuzzMigrate(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*", "*.json"))
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, []byte(nil), filepath.Base(path))
	}
	exec, err := os.ReadFile(filepath.Join("testdata", "seed002", "messy-id-and-tasks.execution.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(readSeed(f, "seed002/messy-id-and-tasks.json"), exec, "phase.json")
	for _, s := range []string{
		`{}`, `[]`, `null`, `{"version":"3.0","type":"apex"}`, `{"version":"2.0","state":"x"}`,
		`{"type":"APEX","phase":"plan","approvals":{"plan":true},"completedPhases":{"analyze":"2026-02-11"}}`,
		`{"type":"Ω","phase":"plan"}`, `{"workflow":"a","stages":["x","x",{"id":"x"}],"version":1}`,
		`{"completed_phases":[{"phase":"","completed_at":1}],"user_checkpoints":{"A":{"approved":false}}}`,
		`{"version":"1","type":"con","state":"nul","workflow_id":"..","legacy":1,"revision":"9"}`,
	} {
		f.Add([]byte(s), []byte(`{"tasks":{"a":{"id":"b","status":"x"},"b":{}}}`), "x-state.json")
	}
	f.Fuzz(func(t *testing.T, data, execution []byte, name string) {
		got, err := Detect(data)
		if err != nil {
			if got != Unknown && got != Newer {
				t.Fatalf("Detect error with format %v: %v", got, err)
			}
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnknownFormat) && !errors.Is(err, ErrNewer) {
				t.Fatalf("Detect error of no known kind: %v", err)
			}
		}
		if got.NeedsMigration() {
			if res, err := Migrate(data, Extra{Name: name, Execution: execution}, testNow); (res.Record == nil) == (err == nil) {
				t.Fatalf("Migrate of a %v document: record %v, error %v", got, res.Record != nil, err)
			}
		}
		for fm := Unknown; fm <= Seed004; fm++ {
			extra := Extra{Name: name}
			if fm == Seed002 {
				extra.Execution = execution
			}
			out, cerr := convert(fm, data, extra, testNow)
			if cerr != nil {
				if out != nil {
					t.Fatalf("convert(%v) returned output with error %v", fm, cerr)
				}
				continue
			}
			if fm != got {
				t.Fatalf("convert(%v) succeeded on a %v document", fm, got)
			}
			if fm == Current {
				if !bytes.Equal(out, data) {
					t.Fatal("convert(Current) changed the record")
				}
				continue
			}
			if err := checkRecord(out); err != nil {
				t.Fatalf("convert(%v) output fails the record check: %v\n%s", fm, err, out)
			}
			if f2, err := Detect(out); f2 != Current || err != nil {
				t.Fatalf("migrated record detected as %v, %v", f2, err)
			}
		}
	})
}

func readSeed(t testing.TB, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
