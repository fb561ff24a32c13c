package workflow

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

//go:embed definitions/*.md
var builtinFiles embed.FS

// BuiltinDefinition returns the built-in definition of a type (any letter case) without
// parsing YAML: builtin_gen.go holds the embedded *.md files already parsed, as Go values, so
// a hook process pays nothing for them. TestBuiltinGenerated keeps the two equal (go test
// ./internal/workflow -run TestBuiltinGenerated -update rewrites it).
func BuiltinDefinition(name string) (*Definition, bool) {
	d := builtinParsed(NormalizeName(name))
	return d, d != nil
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
