package yamldoc

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cairn-dev/cairn/internal/workflow"
)

// ParseStatusDoc reads WORKFLOW-STATUS.yaml. lastUpdated must be an RFC 3339 time. A file
// that holds no YAML (empty, comments only, a lone null) gives nil and no error: it has
// nothing to keep.
func (Codec) ParseStatusDoc(data []byte) (*workflow.StatusDoc, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("reading %s: %w", workflow.StatusFileName, err)
	}
	if len(root.Content) == 0 || root.Content[0].ShortTag() == "!!null" {
		return nil, nil
	}
	var d workflow.StatusDoc
	if err := root.Decode(&d); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) { // one line per error, as warnings are shown
			return nil, fmt.Errorf("reading %s: %s", workflow.StatusFileName, strings.Join(te.Errors, "; "))
		}
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
