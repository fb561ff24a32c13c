package yamldoc

import (
	"bytes"
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/cairn-dev/cairn/internal/workflow"
)

// ParseStatusDoc reads WORKFLOW-STATUS.yaml. lastUpdated must be an RFC 3339 time.
func (Codec) ParseStatusDoc(data []byte) (*workflow.StatusDoc, error) {
	var d workflow.StatusDoc
	if err := yaml.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("reading %s: %w", workflow.StatusFileName, err)
	}
	if _, err := d.Updated(); err != nil {
		return nil, err
	}
	return &d, nil
}

// MarshalStatusDoc writes the document as YAML.
func (Codec) MarshalStatusDoc(d workflow.StatusDoc) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("# Initiative status, kept in sync with .claude/cairn/initiative.json by Cairn.\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(d); err != nil {
		return nil, fmt.Errorf("writing %s: %w", workflow.StatusFileName, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("writing %s: %w", workflow.StatusFileName, err)
	}
	return buf.Bytes(), nil
}
