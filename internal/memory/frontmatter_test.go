package memory

import (
	"bytes"
	"testing"

	"github.com/adrg/frontmatter"
	"gopkg.in/yaml.v3"
)

// The tests read headers with the libraries the package no longer links: test files are not
// linked into the hook binaries, so they may use yaml.v3 and adrg/frontmatter.

// yamlMatter is how this package read memory files before: adrg/frontmatter's "---" format
// with yaml.v3.
var yamlMatter = frontmatter.NewFormat("---", "---", yaml.Unmarshal)

// oldParse is the reading this package did before: on any error (no front matter, no closing
// line, YAML that does not decode into frontMatter) the body was the whole file.
func oldParse(data []byte) (frontMatter, []byte, error) {
	var fm frontMatter
	data = bytes.TrimPrefix(data, []byte(bom))
	rest, err := frontmatter.Parse(bytes.NewReader(data), &fm, yamlMatter)
	if err != nil {
		return frontMatter{}, data, err
	}
	return fm, rest, nil
}

// parseMemoryFile reads a memory file Cairn wrote: the header that splitMemoryFile finds,
// decoded by yaml.v3, and the body. It fails the test unless adrg/frontmatter with yaml.v3
// reads the same header and body.
func parseMemoryFile(t testing.TB, data []byte) (frontMatter, []byte) {
	t.Helper()
	head, body, ok := splitMemoryFile(data)
	if !ok {
		t.Fatalf("no front matter in %q", data)
	}
	var fm frontMatter
	if err := yaml.Unmarshal(head, &fm); err != nil {
		t.Fatalf("yaml.v3 cannot read the header: %v\n%s", err, data)
	}
	old, oldBody, err := oldParse(data)
	if err != nil || old != fm || !bytes.Equal(oldBody, body) {
		t.Fatalf("adrg/frontmatter reads %+v %q (err %v), the split %+v %q", old, oldBody, err, fm, body)
	}
	return fm, body
}
