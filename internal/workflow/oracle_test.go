package workflow_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/workflow"
)

// The oracle: the record types as they were decoded before the one-pass decoder, by
// encoding/json into a method-less twin and a second decode into a map for the unknown
// members. It is the definition of what the one-pass decoder must give, so it is frozen here
// (decodeWithExtra copied) rather than shared with the package, which may change.

type (
	oRecord struct {
		Version          string                     `json:"version"`
		WorkflowID       string                     `json:"workflow_id"`
		Type             string                     `json:"type"`
		Context          string                     `json:"context"`
		Scope            string                     `json:"scope,omitempty"`
		State            string                     `json:"state"`
		PhaseStatus      workflow.PhaseStatus       `json:"phase_status"`
		Status           workflow.Status            `json:"status"`
		Phases           map[string]oPhase          `json:"phases,omitempty"`
		History          []oHistoryEntry            `json:"history,omitempty"`
		Tasks            []oTask                    `json:"tasks,omitempty"`
		Approvals        []oApproval                `json:"approvals,omitempty"`
		Artifacts        []string                   `json:"artifacts,omitempty"`
		Vars             map[string]string          `json:"vars,omitempty"`
		Enforcement      *oEnforcement              `json:"enforcement,omitempty"`
		TTL              string                     `json:"ttl,omitempty"`
		CreatedAt        time.Time                  `json:"created_at,omitzero"`
		UpdatedAt        time.Time                  `json:"updated_at,omitzero"`
		ChangedAt        time.Time                  `json:"changed_at,omitzero"`
		CompletedAt      time.Time                  `json:"completed_at,omitzero"`
		Outcome          string                     `json:"outcome,omitempty"`
		Owner            *oOwner                    `json:"owner,omitempty"`
		InterruptionSafe *bool                      `json:"interruption_safe,omitempty"`
		Revision         int64                      `json:"revision"`
		Extra            map[string]json.RawMessage `json:"-"`
	}
	oPhase struct {
		Completed   bool                       `json:"completed"`
		CompletedAt time.Time                  `json:"completed_at,omitzero"`
		Outputs     []string                   `json:"outputs,omitempty"`
		Metadata    map[string]json.RawMessage `json:"metadata,omitempty"`
		Extra       map[string]json.RawMessage `json:"-"`
	}
	oHistoryEntry struct {
		From       string                     `json:"from"`
		To         string                     `json:"to"`
		At         time.Time                  `json:"at,omitzero"`
		SessionID  string                     `json:"session_id,omitempty"`
		Note       string                     `json:"note,omitempty"`
		Checkpoint string                     `json:"checkpoint,omitempty"`
		Extra      map[string]json.RawMessage `json:"-"`
	}
	oTask struct {
		ID          string                     `json:"id"`
		Phase       string                     `json:"phase,omitempty"`
		Status      workflow.TaskStatus        `json:"status"`
		Attempts    int                        `json:"attempts"`
		Output      string                     `json:"output,omitempty"`
		Note        string                     `json:"note"`
		StartedAt   time.Time                  `json:"started_at,omitzero"`
		CompletedAt time.Time                  `json:"completed_at,omitzero"`
		UpdatedAt   time.Time                  `json:"updated_at,omitzero"`
		Extra       map[string]json.RawMessage `json:"-"`
	}
	oApproval struct {
		Phase       string                     `json:"phase"`
		RequestedAt time.Time                  `json:"requested_at,omitzero"`
		ApprovedAt  time.Time                  `json:"approved_at,omitzero"`
		Source      string                     `json:"source,omitempty"`
		Note        string                     `json:"note,omitempty"`
		Extra       map[string]json.RawMessage `json:"-"`
	}
	oOwner struct {
		SessionID string                     `json:"session_id"`
		PID       int                        `json:"pid,omitempty"`
		Heartbeat time.Time                  `json:"heartbeat,omitzero"`
		Extra     map[string]json.RawMessage `json:"-"`
	}
	oEnforcement struct {
		Violations []oViolation               `json:"violations"`
		Blocking   bool                       `json:"blocking"`
		Summary    string                     `json:"summary,omitempty"`
		Extra      map[string]json.RawMessage `json:"-"`
	}
	oViolation struct {
		Code     string                     `json:"code"`
		Severity workflow.Severity          `json:"severity"`
		Details  string                     `json:"details,omitempty"`
		Extra    map[string]json.RawMessage `json:"-"`
	}
)

type (
	oRecordJSON       oRecord
	oPhaseJSON        oPhase
	oHistoryEntryJSON oHistoryEntry
	oTaskJSON         oTask
	oApprovalJSON     oApproval
	oOwnerJSON        oOwner
	oEnforcementJSON  oEnforcement
	oViolationJSON    oViolation
)

func (r *oRecord) UnmarshalJSON(b []byte) error {
	var v oRecordJSON
	extra, err := oracleDecodeWithExtra(b, &v)
	if err != nil {
		return err
	}
	v.Extra = extra
	*r = oRecord(v)
	return nil
}

func (p *oPhase) UnmarshalJSON(b []byte) error {
	var v oPhaseJSON
	extra, err := oracleDecodeWithExtra(b, &v)
	if err != nil {
		return err
	}
	v.Extra = extra
	*p = oPhase(v)
	return nil
}

func (h *oHistoryEntry) UnmarshalJSON(b []byte) error {
	var v oHistoryEntryJSON
	extra, err := oracleDecodeWithExtra(b, &v)
	if err != nil {
		return err
	}
	v.Extra = extra
	*h = oHistoryEntry(v)
	return nil
}

func (t *oTask) UnmarshalJSON(b []byte) error {
	var v oTaskJSON
	extra, err := oracleDecodeWithExtra(b, &v)
	if err != nil {
		return err
	}
	v.Extra = extra
	*t = oTask(v)
	return nil
}

func (a *oApproval) UnmarshalJSON(b []byte) error {
	var v oApprovalJSON
	extra, err := oracleDecodeWithExtra(b, &v)
	if err != nil {
		return err
	}
	v.Extra = extra
	*a = oApproval(v)
	return nil
}

func (o *oOwner) UnmarshalJSON(b []byte) error {
	var v oOwnerJSON
	extra, err := oracleDecodeWithExtra(b, &v)
	if err != nil {
		return err
	}
	v.Extra = extra
	*o = oOwner(v)
	return nil
}

func (e *oEnforcement) UnmarshalJSON(b []byte) error {
	var v oEnforcementJSON
	extra, err := oracleDecodeWithExtra(b, &v)
	if err != nil {
		return err
	}
	v.Extra = extra
	*e = oEnforcement(v)
	return nil
}

func (v *oViolation) UnmarshalJSON(b []byte) error {
	var w oViolationJSON
	extra, err := oracleDecodeWithExtra(b, &w)
	if err != nil {
		return err
	}
	w.Extra = extra
	*v = oViolation(w)
	return nil
}

// oracleDecodeWithExtra is the package's decodeWithExtra as the record types used it.
func oracleDecodeWithExtra(data []byte, v any) (map[string]json.RawMessage, error) {
	if err := json.Unmarshal(data, v); err != nil {
		return nil, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, err
	}
	known := oracleKnownFields(reflect.TypeOf(v).Elem())
	var extra map[string]json.RawMessage
	for k, raw := range all {
		if known[k] || oracleFoldedKnown(known, k) {
			continue
		}
		if extra == nil {
			extra = map[string]json.RawMessage{}
		}
		extra[k] = append(json.RawMessage(nil), raw...)
	}
	return extra, nil
}

func oracleKnownFields(t reflect.Type) map[string]bool {
	m := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		m[name] = true
	}
	return m
}

func oracleFoldedKnown(known map[string]bool, k string) bool {
	for name := range known {
		if strings.EqualFold(name, k) {
			return true
		}
	}
	return false
}

// convertOracle copies an oracle value into the matching workflow type (dst, addressable),
// field by field by name, keeping nil and empty maps and slices apart. It reports the first
// field that has no counterpart or a different tag, so that the oracle cannot drift from the
// types it stands for.
func convertOracle(dst, src reflect.Value) string {
	if dst.Type() == src.Type() {
		dst.Set(src)
		return ""
	}
	switch dst.Kind() {
	case reflect.Struct:
		if dst.NumField() != src.NumField() {
			return dst.Type().String() + ": field count differs from the oracle's"
		}
		for i := 0; i < dst.NumField(); i++ {
			df := dst.Type().Field(i)
			sf, ok := src.Type().FieldByName(df.Name)
			if !ok || sf.Tag != df.Tag || sf.Index[0] != i {
				return dst.Type().String() + "." + df.Name + ": no oracle field with the same name, tag and position"
			}
			if msg := convertOracle(dst.Field(i), src.Field(i)); msg != "" {
				return msg
			}
		}
	case reflect.Pointer:
		if src.IsNil() {
			dst.SetZero()
			return ""
		}
		dst.Set(reflect.New(dst.Type().Elem()))
		return convertOracle(dst.Elem(), src.Elem())
	case reflect.Slice:
		if src.IsNil() {
			dst.SetZero()
			return ""
		}
		dst.Set(reflect.MakeSlice(dst.Type(), src.Len(), src.Len()))
		for i := 0; i < src.Len(); i++ {
			if msg := convertOracle(dst.Index(i), src.Index(i)); msg != "" {
				return msg
			}
		}
	case reflect.Map:
		if src.IsNil() {
			dst.SetZero()
			return ""
		}
		dst.Set(reflect.MakeMapWithSize(dst.Type(), src.Len()))
		it := src.MapRange()
		for it.Next() {
			v := reflect.New(dst.Type().Elem()).Elem()
			if msg := convertOracle(v, it.Value()); msg != "" {
				return msg
			}
			dst.SetMapIndex(it.Key(), v)
		}
	default:
		return dst.Type().String() + ": no conversion from " + src.Type().String()
	}
	return ""
}
