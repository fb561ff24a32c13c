package migrate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// record is the schema-2.0 workflow record of the brief, field for field and in its order.
// It exists only to write the migrated record; internal/workflow owns the type the rest of
// Cairn uses.
type record struct {
	Version          string            `json:"version"`
	WorkflowID       string            `json:"workflow_id"`
	Type             string            `json:"type"`
	Context          string            `json:"context,omitempty"`
	Scope            string            `json:"scope,omitempty"`
	State            string            `json:"state"`
	PhaseStatus      string            `json:"phase_status"`
	Status           string            `json:"status"`
	Phases           map[string]*phase `json:"phases"`
	History          []history         `json:"history"`
	Tasks            []task            `json:"tasks"`
	Approvals        []approval        `json:"approvals"`
	Artifacts        []string          `json:"artifacts"`
	Vars             map[string]string `json:"vars,omitempty"`
	Enforcement      *enforcement      `json:"enforcement,omitempty"`
	TTL              string            `json:"ttl"`
	CreatedAt        string            `json:"created_at"`
	UpdatedAt        string            `json:"updated_at"`
	CompletedAt      string            `json:"completed_at,omitempty"`
	Outcome          string            `json:"outcome,omitempty"`
	Owner            *owner            `json:"owner,omitempty"`
	InterruptionSafe *bool             `json:"interruption_safe,omitempty"`
	Revision         int               `json:"revision"`
}

type phase struct {
	Completed   bool           `json:"completed"`
	CompletedAt string         `json:"completed_at,omitempty"`
	Outputs     []string       `json:"outputs,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

type history struct {
	From      string `json:"from"`
	To        string `json:"to"`
	At        string `json:"at"`
	SessionID string `json:"session_id,omitempty"`
	Note      string `json:"note,omitempty"`
}

type task struct {
	ID          string `json:"id"`
	Status      string `json:"status"`
	Attempts    int    `json:"attempts"`
	Output      string `json:"output,omitempty"`
	Note        string `json:"note,omitempty"`
	StartedAt   string `json:"started_at,omitempty"`
	CompletedAt string `json:"completed_at,omitempty"`
	UpdatedAt   string `json:"updated_at,omitempty"`
}

type approval struct {
	Phase       string `json:"phase"`
	RequestedAt string `json:"requested_at,omitempty"`
	ApprovedAt  string `json:"approved_at,omitempty"`
	// approvedNoTime: the old format said "approved" without saying when; finish dates it
	// updated_at, the latest moment it is known to have been approved by.
	approvedNoTime bool
}

type enforcement struct {
	Violations []violation `json:"violations"`
	Blocking   bool        `json:"blocking"`
	Summary    string      `json:"summary,omitempty"`
}

type violation struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Details  string `json:"details,omitempty"`
}

type owner struct {
	SessionID string `json:"session_id,omitempty"`
	PID       int    `json:"pid,omitempty"`
	Heartbeat string `json:"heartbeat,omitempty"`
}

// marshalRecord writes r and then the extra top-level fields (sorted by name), indented, with
// HTML characters left as they are so paths read naturally.
func marshalRecord(r *record, extra map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	compact := bytes.TrimRight(buf.Bytes(), "\n")
	if len(extra) > 0 {
		keys := make([]string, 0, len(extra))
		for k := range extra {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		compact = compact[:len(compact)-1] // the closing brace
		for _, k := range keys {
			var kv bytes.Buffer
			e := json.NewEncoder(&kv)
			e.SetEscapeHTML(false)
			if err := e.Encode(k); err != nil {
				return nil, err
			}
			if err := e.Encode(extra[k]); err != nil {
				return nil, err
			}
			parts := bytes.SplitN(kv.Bytes(), []byte("\n"), 2)
			compact = append(compact, ',')
			compact = append(compact, parts[0]...)
			compact = append(compact, ':')
			compact = append(compact, bytes.TrimRight(parts[1], "\n")...)
		}
		compact = append(compact, '}')
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// deriveID makes a workflow id for formats that have none, in the shape workflow.NewID gives
// new workflows: the type, the creation time and four hex digits, e.g.
// "apex-20261122T173000Z-3f9a". The digits come from the original's hash rather than a random
// source, so the same input always gets the same id. typ is already a valid name.
func deriveID(typ, created string, data []byte) string {
	t, err := time.Parse(time.RFC3339Nano, created)
	if err != nil {
		t = time.Time{}
	}
	sum := sha256.Sum256(data)
	prefix := typ
	if len(prefix) > 42 { // 42 + len("-20261122T173000Z-3f9a") = 64, the longest id
		prefix = prefix[:42]
	}
	return fmt.Sprintf("%s-%s-%s", prefix, t.UTC().Format("20060102T150405Z"), hex.EncodeToString(sum[:2]))
}
