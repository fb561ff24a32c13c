package migrate

import (
	"encoding/json"
	"time"

	"github.com/cairn-dev/cairn/internal/workflow"
)

// convert is Convert with the record encoded as the store encodes it, for tests that compare
// or inspect bytes.
func convert(f Format, data []byte, extra Extra, now time.Time) ([]byte, error) {
	r, err := Convert(f, data, extra, now)
	if err != nil {
		return nil, err
	}
	return json.Marshal(r)
}

// encoded is a Result's record encoded, nil for none.
func encoded(r *workflow.Record) []byte {
	if r == nil {
		return nil
	}
	b, _ := json.Marshal(r)
	return b
}

// checkRecord holds an encoded record to the domain's validation, as the store reads it.
func checkRecord(data []byte) error {
	var r workflow.Record
	if err := json.Unmarshal(data, &r); err != nil {
		return err
	}
	return r.Validate()
}
