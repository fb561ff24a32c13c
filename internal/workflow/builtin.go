package workflow

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

//go:embed definitions/*.md
var builtinFiles embed.FS

// builtinJSON is the built-in definitions already parsed, by name: a hook process decodes
// the one it needs from here instead of parsing YAML. TestBuiltinJSON keeps it equal to what
// the *.md files parse to (go test ./internal/workflow -run TestBuiltinJSON -update
// rewrites it).
//
//go:embed definitions/builtin.json
var builtinJSON []byte

// BuiltinDefinition returns the built-in definition of a type (any letter case), decoded
// from the pre-parsed copy of the embedded *.md files.
func BuiltinDefinition(name string) (*Definition, bool) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(builtinJSON, &all); err != nil {
		return nil, false
	}
	raw, ok := all[NormalizeName(name)]
	if !ok {
		return nil, false
	}
	var d Definition
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, false
	}
	ttl, err := ParseTTL(d.TTL)
	if err != nil || d.Name != NormalizeName(name) || len(d.Phases) == 0 {
		return nil, false
	}
	d.ttl = ttl
	return &d, true
}

// BuiltinFS holds the built-in definitions (apex, debug, brainstorm, dotagent, coordinate) as
// *.md files at its root, in the same format as the user's .claude/workflows/*.md.
func BuiltinFS() fs.FS {
	sub, err := fs.Sub(builtinFiles, "definitions")
	if err != nil {
		panic(err) // the embedded directory is fixed at build time
	}
	return sub
}

// Definitions is a loaded set of workflow definitions, by name.
type Definitions struct {
	byName map[string]*Definition
}

// Lookup finds a definition by name (any letter case).
func (s *Definitions) Lookup(name string) (*Definition, bool) {
	if s == nil {
		return nil, false
	}
	d, ok := s.byName[NormalizeName(name)]
	return d, ok
}

// Get finds a definition by name, or says which ones exist.
func (s *Definitions) Get(name string) (*Definition, error) {
	if d, ok := s.Lookup(name); ok {
		return d, nil
	}
	return nil, fmt.Errorf("unknown workflow type %q: known types are %s", NormalizeName(name), strings.Join(s.Names(), ", "))
}

// Names lists the loaded definitions, sorted.
func (s *Definitions) Names() []string {
	if s == nil {
		return nil
	}
	names := make([]string, 0, len(s.byName))
	for n := range s.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LoadDefinitions loads the built-in definitions (every *.md at the root of builtin; nil for
// none), then the user's files (path -> content, from .claude/workflows/*.md), which add
// definitions or override a built-in one of the same name. A file that cannot be parsed or
// validated is reported (a *DefinitionError with file, line and reason) and skipped: it never
// stops the others from loading, and a broken override leaves the built-in in place. Two user
// files with the same name: the first by path wins and the second is reported.
func LoadDefinitions(builtin fs.FS, user map[string][]byte) (*Definitions, []error) {
	set := &Definitions{byName: map[string]*Definition{}}
	var errs []error
	if builtin != nil {
		files, err := fs.Glob(builtin, "*.md")
		if err != nil {
			errs = append(errs, fmt.Errorf("listing built-in definitions: %w", err))
		}
		for _, f := range files {
			data, err := fs.ReadFile(builtin, f)
			if err != nil {
				errs = append(errs, &DefinitionError{File: "builtin:" + f, Reason: err.Error()})
				continue
			}
			d, err := ParseDefinition("builtin:"+f, data)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			set.byName[d.Name] = d
		}
	}
	paths := make([]string, 0, len(user))
	for p := range user {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	fromUser := map[string]string{}
	for _, p := range paths {
		if path.Ext(p) != ".md" {
			continue
		}
		d, err := ParseDefinition(p, user[p])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if first, dup := fromUser[d.Name]; dup {
			errs = append(errs, &DefinitionError{File: p, Line: 0,
				Reason: fmt.Sprintf("workflow %q is already defined by %s; this file was skipped: rename one of them", d.Name, first)})
			continue
		}
		fromUser[d.Name] = p
		set.byName[d.Name] = d
	}
	return set, errs
}

// Builtins loads only the built-in definitions. They are tested to load cleanly, so an error
// here means a broken build.
func Builtins() (*Definitions, error) {
	set, errs := LoadDefinitions(BuiltinFS(), nil)
	return set, errors.Join(errs...)
}
