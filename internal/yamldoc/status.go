package yamldoc

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cairn-dev/cairn/internal/workflow"
)

// ParseStatusDoc reads WORKFLOW-STATUS.yaml and checks it (workflow.StatusDoc.Check). A file
// that holds no YAML (empty, comments only, a lone null) gives nil and no error: it has
// nothing to keep.
func (Codec) ParseStatusDoc(data []byte) (*workflow.StatusDoc, error) {
	if at, reason := lineBreakIn(data); reason != "" {
		return nil, fmt.Errorf("reading %s: line %d: %s", workflow.StatusFileName, 1+bytes.Count(data[:at], []byte("\n")), reason)
	}
	var root yaml.Node
	if err := unmarshalOne(data, &root, "keep one document in the file"); err != nil {
		if yamlErrLine(err.Error(), 0) == 0 { // yaml.v3's reader names no line for bytes it cannot read
			if at, reason := unreadable(data); reason != "" {
				return nil, fmt.Errorf("reading %s: line %d: %s", workflow.StatusFileName, 1+bytes.Count(data[:at], []byte("\n")), reason)
			}
		}
		return nil, fmt.Errorf("reading %s: %w", workflow.StatusFileName, err)
	}
	if len(root.Content) == 0 || root.Content[0].ShortTag() == "!!null" {
		return nil, nil
	}
	if at, reason := nodeTrouble(&root, 0); at != nil {
		return nil, fmt.Errorf("reading %s: line %d: %s", workflow.StatusFileName, at.Line, reason)
	}
	// A value that uses an alias is written back expanded (below), so aliases may not repeat
	// values beyond the file's own size: without them a document has fewer than 2 nodes a
	// byte. yaml.v3's own limit let an 11 KB file through that was written back as 3 MB.
	if alias := aliasOverflow(root.Content[0], 2*len(data)+16); alias != nil {
		return nil, fmt.Errorf("reading %s: line %d: aliases (*%s) repeat its values beyond the file's own size: write the lists out instead", workflow.StatusFileName, alias.Line, alias.Value)
	}
	var d workflow.StatusDoc
	if err := root.Decode(&d); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) && len(te.Errors) > 0 { // the first, on one line, as warnings are shown
			return nil, fmt.Errorf("reading %s: %s", workflow.StatusFileName, te.Errors[0])
		}
		return nil, fmt.Errorf("reading %s: %w", workflow.StatusFileName, err)
	}
	// Keys Cairn does not know keep their YAML nodes, and are written back as they were
	// written: decoded into Go values, 1.10 came back as 1.1, 0644 as 420, a date as a
	// timestamp. A value that uses an alias keeps its decoded value: the anchor it names may
	// belong to a key that is not written back.
	if m := root.Content[0]; m.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if _, ok := d.Extra[m.Content[i].Value]; ok && !hasAlias(m.Content[i+1]) {
				d.Extra[m.Content[i].Value] = m.Content[i+1]
			}
		}
	}
	if err := d.Check(); err != nil {
		return nil, err
	}
	return &d, nil
}

// MarshalStatusDoc writes the document as YAML.
func (Codec) MarshalStatusDoc(d workflow.StatusDoc) ([]byte, error) {
	out, err := encodeStatusDoc(d)
	if err != nil || !bytes.ContainsAny(out, "\u2028\u2029") {
		return out, err
	}
	// yaml.v3 writes LS and PS as they are (in single quotes, or in a block scalar), and
	// ParseStatusDoc refuses them there: write every string that holds one double-quoted,
	// where yaml.v3 escapes them.
	var n yaml.Node
	if err := n.Encode(d); err != nil {
		return nil, fmt.Errorf("writing %s: %w", workflow.StatusFileName, err)
	}
	quoteLineBreaks(&n)
	return encodeStatusDoc(&n)
}

func encodeStatusDoc(v any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("# Initiative status, kept in sync with .claude/cairn/initiative.json by Cairn.\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("writing %s: %w", workflow.StatusFileName, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("writing %s: %w", workflow.StatusFileName, err)
	}
	return buf.Bytes(), nil
}

// quoteLineBreaks makes every scalar under n that holds LS or PS double-quoted.
func quoteLineBreaks(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && strings.ContainsAny(n.Value, "\u2028\u2029") {
		n.Style = n.Style&yaml.TaggedStyle | yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		quoteLineBreaks(c)
	}
}

func hasAlias(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode {
		return true
	}
	return slices.ContainsFunc(n.Content, hasAlias)
}
