package workflow

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/jsonx"
)

// TestDecodeFieldLists holds each type's list of JSON names to its struct tags (a field added
// to a type must be added to its list and its decoder), and checks that every name in a list
// reaches a case of its decoder's switch.
func TestDecodeFieldLists(t *testing.T) {
	for _, c := range []struct {
		typ   reflect.Type
		names []string
		read  func(d *jsonx.Reader) error
	}{
		{reflect.TypeFor[Record](), recordFields, func(d *jsonx.Reader) error { var v Record; return readRecord(d, &v) }},
		{reflect.TypeFor[Phase](), phaseFields, func(d *jsonx.Reader) error { var v Phase; return readPhase(d, &v) }},
		{reflect.TypeFor[HistoryEntry](), historyEntryFields, func(d *jsonx.Reader) error { var v HistoryEntry; return readHistoryEntry(d, &v) }},
		{reflect.TypeFor[Task](), taskFields, func(d *jsonx.Reader) error { var v Task; return readTask(d, &v) }},
		{reflect.TypeFor[Approval](), approvalFields, func(d *jsonx.Reader) error { var v Approval; return readApproval(d, &v) }},
		{reflect.TypeFor[Owner](), ownerFields, func(d *jsonx.Reader) error { var v Owner; return readOwner(d, &v) }},
		{reflect.TypeFor[Enforcement](), enforcementFields, func(d *jsonx.Reader) error { var v Enforcement; return readEnforcement(d, &v) }},
		{reflect.TypeFor[Violation](), violationFields, func(d *jsonx.Reader) error { var v Violation; return readViolation(d, &v) }},
	} {
		var tags []string
		for f := range c.typ.Fields() {
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			tags = append(tags, name)
		}
		if !slices.Equal(tags, c.names) {
			t.Errorf("%s: the decoder's field list is %q, the struct tags say %q", c.typ, c.names, tags)
		}
		// null reaches the field's case and changes nothing, whatever the field's type.
		doc := `{"` + strings.Join(c.names, `":null,"`) + `":null}`
		if err := c.read(jsonx.NewReader([]byte(doc))); err != nil {
			t.Errorf("%s: %v", c.typ, err)
		}
	}
}
