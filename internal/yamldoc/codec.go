package yamldoc

import (
	"bytes"
	"fmt"

	"github.com/adrg/frontmatter"
	"gopkg.in/yaml.v3"
)

// Codec gives the engine this package's readers and writers (engine.Config.YAML).
type Codec struct{}

// MilestoneFrontMatter reads the title, name and status that the read protocol's last resort
// wants from the front matter of a documentation/milestones/_active/*.md file (seed 001); a
// file without front matter gives empty strings and no error.
func (Codec) MilestoneFrontMatter(data []byte) (title, name, status string, err error) {
	var m struct {
		Title  string `yaml:"title"`
		Name   string `yaml:"name"`
		Status string `yaml:"status"`
	}
	_, err = frontmatter.Parse(bytes.NewReader(withoutBOM(data)), &m, frontmatter.NewFormat("---", "---", func(b []byte, v any) error {
		if at, reason := lineBreakIn(b); reason != "" {
			return fmt.Errorf("line %d: %s", 1+bytes.Count(b[:at], []byte("\n")), reason)
		}
		var root yaml.Node
		if err := unmarshalOne(b, &root, `write the front matter as one document`); err != nil || root.Kind == 0 {
			return err
		}
		if at, reason := nodeTrouble(&root, 0); at != nil {
			return fmt.Errorf("line %d: %s", at.Line, reason)
		}
		return root.Decode(v)
	}))
	return m.Title, m.Name, m.Status, err
}

// nodeTrouble is, with lineBreakIn, the gate that every YAML text Cairn reads (a definition's
// front matter, a milestone file's, WORKFLOW-STATUS.yaml) passes: lineBreakIn before yaml.v3
// parses the text, nodeTrouble before the parsed nodes are decoded. It finds, in a parsed document n, what yaml.v3 would decode into something other
// than the file shows, or at too great a cost: a mapping too large or with a key given twice
// (mappingTrouble), or a scalar tagged !!binary. It returns the node to blame and why (lines
// shifted by offset); nil when there is none.
func nodeTrouble(n *yaml.Node, offset int) (*yaml.Node, string) {
	if at, reason := mappingTrouble(n, offset); at != nil {
		return at, reason
	}
	if b := binaryScalar(n); b != nil {
		return b, fmt.Sprintf("%q is tagged !!binary, which YAML reads as base64 and decodes into other text: remove the tag and write the text itself", b.Value)
	}
	return nil, ""
}

// maxMappingKeys bounds the keys of any one YAML mapping Cairn decodes: none of its files
// needs more (a definition has at most workflow.MaxPhases phases to key by).
const maxMappingKeys = 1000

// mappingTrouble finds, before yaml.v3 decodes n into Go values, a mapping with more than
// maxMappingKeys keys or with a key given twice, and returns the node to blame and why (lines
// shifted by offset); nil when there is none. yaml.v3 compares every key of a mapping with
// every other and formats an error for each equal pair: one key repeated 3,000 times, 21 KB,
// took seconds and 1.5 GB. A duplicate is reported as yaml.v3 reports its first one. Aliases
// are not followed into (the nodes they name are met where they stand), but an alias used as
// a key is compared as the key it names.
func mappingTrouble(n *yaml.Node, offset int) (*yaml.Node, string) {
	if n.Kind == yaml.MappingNode {
		keys := len(n.Content) / 2
		if keys > maxMappingKeys {
			return n, fmt.Sprintf("a mapping of %d keys, more than the %d allowed", keys, maxMappingKeys)
		}
		if i, j := duplicateKey(n.Content); j > 0 {
			return n.Content[j], fmt.Sprintf("mapping key %#v already defined at line %d", resolveAlias(n.Content[j]).Value, n.Content[i].Line+offset)
		}
	}
	for _, c := range n.Content {
		if at, reason := mappingTrouble(c, offset); at != nil {
			return at, reason
		}
	}
	return nil, ""
}

// pairwiseKeys is the most keys a mapping may have for duplicateKey to compare every pair
// (at most 496 comparisons) rather than build a map: a definition's own mappings (10 keys at
// the top, one per phase under transitions) allocate nothing more when a hook reads one.
const pairwiseKeys = 32

// duplicateKey returns the indexes in content (a mapping's keys and values) of the key that
// yaml.v3 reports first as given twice: the earliest key given again later (i), and the first
// place it is given again (j); j is 0 when no key is. An alias key is the key it names.
func duplicateKey(content []*yaml.Node) (i, j int) {
	if len(content)/2 <= pairwiseKeys {
		for i := 0; i < len(content); i += 2 {
			ki := resolveAlias(content[i])
			for j := i + 2; j < len(content); j += 2 {
				if keyCompared != nil {
					keyCompared()
				}
				if kj := resolveAlias(content[j]); kj.Kind == ki.Kind && kj.Value == ki.Value {
					return i, j
				}
			}
		}
		return 0, 0
	}
	type key struct {
		kind  yaml.Kind
		value string
	}
	first := make(map[key]int, len(content)/2)
	for k := 0; k < len(content); k += 2 {
		if keyCompared != nil {
			keyCompared()
		}
		kk := resolveAlias(content[k])
		f, seen := first[key{kk.Kind, kk.Value}]
		switch {
		case !seen:
			first[key{kk.Kind, kk.Value}] = k
		case j == 0 || f < i: // the first repeat of f is the first met
			i, j = f, k
		}
	}
	return i, j
}

// keyCompared, when set (by tests), is called once for every key the duplicate check compares
// or looks up.
var keyCompared func()

// withoutBOM drops the UTF-8 byte order marks at the start, which editors on Windows write
// (and a converter run twice writes twice): adrg/frontmatter would take one for text before
// the opening "---".
func withoutBOM(data []byte) []byte { return bytes.TrimLeft(data, "\ufeff") }
