package store

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/jsonx"
	"github.com/cairn-dev/cairn/internal/store/migrate"
)

// oracleReadMeta is readMeta as it was before it read with a jsonx.Reader: jsonx.Object and
// three json.Unmarshal calls. It is the definition of what readMeta must give, so it is
// frozen here.
func oracleReadMeta(doc []byte) (meta, error) {
	m, err := jsonx.Object(doc)
	if err != nil {
		return meta{}, err
	}
	var out meta
	verr := json.Unmarshal(m["version"], &out.version)
	ierr := json.Unmarshal(m["workflow_id"], &out.id)
	rerr := json.Unmarshal(m["revision"], &out.rev)
	if verr == nil && strings.HasPrefix(out.version, "2.") && ierr == nil && ValidWorkflowID(out.id) == nil && rerr == nil && out.rev >= 1 {
		return out, nil
	}
	f, err := migrate.Detect(doc)
	switch {
	case err != nil:
		return meta{}, err
	case f.NeedsMigration():
		return meta{}, errNeedsMigration{f}
	case ierr != nil || ValidWorkflowID(out.id) != nil:
		return meta{}, errors.New(`"workflow_id" is missing or not a valid id`)
	default:
		return meta{}, errors.New(`"revision" is missing or not a whole number of at least 1`)
	}
}

// checkReadMeta holds readMeta to the oracle: the same meta, and errors of the same type
// with the same text (the text ends up in a quarantine notice).
func checkReadMeta(t *testing.T, doc []byte) {
	t.Helper()
	got, gerr := readMeta(doc)
	want, werr := oracleReadMeta(doc)
	if got != want || (gerr == nil) != (werr == nil) ||
		gerr != nil && (gerr.Error() != werr.Error() || reflect.TypeOf(gerr) != reflect.TypeOf(werr)) {
		t.Errorf("readMeta(%q) = %+v, %v (%T); the oracle gives %+v, %v (%T)", doc, got, gerr, gerr, want, werr, werr)
	}
}

const metaID = `"apex-20261122T194441Z-d361"`

// metaSeeds are records at the edges of the three members' rules: wrong types, null, absent,
// escaped, numbers that are not whole or do not fit, keys that differ only in case (matched
// exactly), other formats (to migrate, too new, unknown) and documents the strict check
// refuses.
var metaSeeds = []string{
	`{"version":"2.0","workflow_id":` + metaID + `,"revision":3}`,
	`{"revision":1,"workflow_id":` + metaID + `,"version":"2.9","x":[1,{"y":null}]}`,
	`{"version":"2","workflow_id":` + metaID + `,"revision":3}`, `{"version":"3.0","workflow_id":` + metaID + `,"revision":3}`,
	`{"version":"1.0","workflow_id":` + metaID + `,"revision":3}`, `{"version":2.0,"workflow_id":` + metaID + `,"revision":3}`,
	`{"version":null,"workflow_id":` + metaID + `,"revision":3}`, `{"workflow_id":` + metaID + `,"revision":3}`,
	`{"version":"\u0032.0","workflow_id":"apex-20261122T194441Z-d36\u0031","revision":3}`,
	`{"\u0076ersion":"2.0","workflow_id":` + metaID + `,"revision":3}`, `{"Version":"2.0","workflow_id":` + metaID + `,"revision":3}`,
	`{"version":"2.0","workflow_id":null,"revision":3}`, `{"version":"2.0","workflow_id":7,"revision":3}`,
	`{"version":"2.0","workflow_id":"bad id","revision":3}`, `{"version":"2.0","workflow_id":"","revision":3}`,
	`{"version":"2.0","revision":3}`, `{"version":"2.0","workflow_id":` + metaID + `}`,
	`{"version":"2.0","workflow_id":` + metaID + `,"revision":null}`, `{"version":"2.0","workflow_id":` + metaID + `,"revision":0}`,
	`{"version":"2.0","workflow_id":` + metaID + `,"revision":-1}`, `{"version":"2.0","workflow_id":` + metaID + `,"revision":1.0}`,
	`{"version":"2.0","workflow_id":` + metaID + `,"revision":1e3}`, `{"version":"2.0","workflow_id":` + metaID + `,"revision":"3"}`,
	`{"version":"2.0","workflow_id":` + metaID + `,"revision":9223372036854775807}`,
	`{"version":"2.0","workflow_id":` + metaID + `,"revision":9223372036854775808}`,
	`{"version":"2.0","workflow_id":` + metaID + `,"revision":[3]}`, `{"version":["2.0"],"workflow_id":{},"revision":true}`,
	`{"version":"2.0","version":"2.0","workflow_id":` + metaID + `,"revision":3}`, "{\"version\":\"2.0\xff\",\"workflow_id\":" + metaID + ",\"revision\":3}",
	`[]`, `null`, `"2.0"`, `{}`, ``, `{"version":"2.0"`, `{"version":"2.0"} x`, " \n{ \"version\" : \"2.0\" , \"workflow_id\" : " + metaID + " , \"revision\" : 3 } \n",
	`{"type":"apex","phase":"implement","context":"x","completedPhases":["analyze"],"ttl":"24h","lastUpdated":"2026-11-22T19:44:41Z"}`,
}

func TestReadMetaMatchesOracle(t *testing.T) {
	for _, s := range metaSeeds {
		checkReadMeta(t, []byte(s))
	}
	// The migrator's records: every older format and its schema-2.0 result.
	files, err := filepath.Glob(filepath.Join("migrate", "testdata", "*", "*"))
	if err != nil || len(files) < 10 {
		t.Fatalf("the migrator's test records are missing (%d found, %v)", len(files), err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkReadMeta(t, b)
	}
}

func FuzzReadMeta(f *testing.F) {
	for _, s := range metaSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkReadMeta)
}
