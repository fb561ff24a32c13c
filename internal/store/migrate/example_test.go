package migrate_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/cairn-dev/cairn/internal/store/migrate"
)

// The store finds seed 001's .claude/workflow-state.json, migrates it, writes the record and
// keeps the original under res.Backup.
func ExampleMigrate() {
	old := []byte(`{"type":"APEX","phase":"implement","lastUpdated":"2026-02-11T14:00:00Z","ttl":"24h","context":"rate limiting"}`)
	now := time.Date(2026, 11, 22, 18, 0, 0, 0, time.UTC)
	res, err := migrate.Migrate(old, migrate.Extra{Name: ".claude/workflow-state.json"}, now)
	if err != nil {
		fmt.Println(err)
		return
	}
	rec := res.Record
	fmt.Println(res.From, res.Backup)
	fmt.Println(rec.Version, rec.Type, rec.State, rec.Status)
	// Output:
	// seed001 .claude/workflow-state.v1.json.bak
	// 2.0 apex implement active
}

// A record from a newer Cairn is refused and must be left as it is.
func ExampleDetect_newer() {
	f, err := migrate.Detect([]byte(`{"version":"3.0","workflow_id":"apex-1","type":"apex","state":"plan"}`))
	var ne *migrate.NewerError
	fmt.Println(f, errors.Is(err, migrate.ErrNewer), errors.As(err, &ne) && ne.Version == `"3.0"`)
	// Output:
	// newer true true
}
