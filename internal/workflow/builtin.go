package workflow

import (
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

//go:generate go test ../yamldoc -run ^TestBuiltinGenerated$ -update

// BuiltinDefinition returns the built-in definition of a type (any letter case). The built-ins
// are compiled in: builtin_gen.go holds definitions/*.md already parsed, as Go values, so no
// process parses YAML for them. go test ./internal/yamldoc -run TestBuiltinGenerated checks
// that the two agree; go generate ./internal/workflow rewrites builtin_gen.go.
func BuiltinDefinition(name string) (*Definition, bool) {
	d := builtinParsed(NormalizeName(name))
	return d, d != nil
}

// BuiltinNames lists the built-in definitions (apex, brainstorm, coordinate, debug,
// dotagent), sorted.
func BuiltinNames() []string { return append([]string(nil), builtinNames...) }

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
	return nil, fmt.Errorf("unknown workflow type: known types are %s", strings.Join(s.Names(), ", ")) // the refused name is not repeated
}

// Names lists the loaded definitions, sorted.
func (s *Definitions) Names() []string {
	if s == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(s.byName))
}

// DefinitionFile is the name of the user file that defines type name (normalized) when two
// define it: the status line reads that file alone, so the full load must pick it too.
func DefinitionFile(name string) string { return name + ".md" }

// LoadDefinitions loads the built-in definitions, then the user's files (path -> content,
// from .claude/workflows/*.md) read with parse, which add definitions or override a built-in
// one of the same name. A file that cannot be parsed or validated is reported (a
// *DefinitionError with file, line and reason) and skipped: it never stops the others from
// loading, and a broken override leaves the built-in in place. Two user files with the same
// name: the one named after it (DefinitionFile) wins, else the first by path, and the other is
// reported. With parse nil every user file is reported as not read (ErrNoParser) and the
// built-ins stand.
func LoadDefinitions(user map[string][]byte, parse ParseFunc) (*Definitions, []error) {
	set := &Definitions{byName: make(map[string]*Definition, len(builtinNames)+len(user))}
	var errs []error
	for _, n := range builtinNames {
		set.byName[n] = builtinParsed(n)
	}
	fromUser := map[string]string{}
	for _, p := range slices.Sorted(maps.Keys(user)) {
		if path.Ext(p) != ".md" {
			continue
		}
		if parse == nil {
			errs = append(errs, &DefinitionError{File: p, Reason: ErrNoParser.Error() + "; the built-in definitions are used (run `cairn doctor` to check the file)"})
			continue
		}
		d, err := parse(p, user[p])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if first, dup := fromUser[d.Name]; dup {
			kept, skipped := first, p
			if NormalizeName(filepath.Base(p)) == DefinitionFile(d.Name) {
				kept, skipped = p, first
				set.byName[d.Name] = d
				fromUser[d.Name] = p
			}
			errs = append(errs, &DefinitionError{File: skipped, Line: 0,
				Reason: fmt.Sprintf("workflow %q is already defined by %s; this file was skipped: rename one of them", d.Name, kept)})
			continue
		}
		fromUser[d.Name] = p
		set.byName[d.Name] = d
	}
	return set, errs
}
