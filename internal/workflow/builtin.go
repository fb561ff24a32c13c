package workflow

import (
	"cmp"
	"errors"
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
	// unloaded holds, by type, the user files that define it and did not load.
	unloaded map[string][]string
	// skipped holds the user files that are documentation, not definitions (ErrNotDefinition).
	skipped []string
}

// Skipped lists the user files skipped as documentation (ErrNotDefinition), by path.
func (s *Definitions) Skipped() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.skipped)
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

// chosenOver reports whether user file p is the definition of type name rather than user file
// other ("" for the built-in one): the file named after the type (DefinitionFile), then one
// named so in another letter case, first; among equals the first by path.
func chosenOver(p, other, name string) bool {
	rank := func(f string) int {
		switch base := filepath.Base(f); {
		case f == "":
			return -1
		case base == DefinitionFile(name):
			return 2
		case NormalizeName(base) == DefinitionFile(name):
			return 1
		}
		return 0
	}
	if rp, ro := rank(p), rank(other); rp != ro {
		return rp > ro
	}
	return p < other
}

// NotLoaded records that user file p, which defines type name (the name its front matter
// declares, else the one its file name gives), did not load: it was not read, or not parsed.
func (s *Definitions) NotLoaded(p, name string) {
	if s.unloaded == nil {
		s.unloaded = map[string][]string{}
	}
	s.unloaded[name] = append(s.unloaded[name], p)
}

// Broken names the user file that would be type name's definition, were it not broken: one
// that did not load (NotLoaded) and would be chosen over the definition that did, the built-in
// one or another user file. "" when there is none. A workflow of the type may have run under
// that file, with other phases and gates, so no other definition stands for it.
func (s *Definitions) Broken(name string) string {
	if s == nil {
		return ""
	}
	name = NormalizeName(name)
	loaded := ""
	if d, ok := s.byName[name]; ok && !strings.HasPrefix(d.Source, "builtin:") {
		loaded = d.Source
	}
	for _, p := range s.unloaded[name] {
		if chosenOver(p, loaded, name) {
			return p
		}
	}
	return ""
}

// LoadDefinitions loads the built-in definitions, then the user's files (path -> content,
// from .claude/workflows/*.md) read with parse, which add definitions or override a built-in
// one of the same name. A file that cannot be parsed or validated is reported (a
// *DefinitionError with file, line and reason), skipped and recorded (NotLoaded): it never
// stops the others from loading. Two user files with the same name: the one named after it
// (DefinitionFile) wins, else the first by path, and the other is reported. With parse nil
// every user file is reported as not read (ErrNoParser) and the built-ins stand.
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
			set.NotLoaded(p, FileType(p))
			continue
		}
		d, err := parse(p, user[p])
		if errors.Is(err, ErrNotDefinition) {
			set.skipped = append(set.skipped, p)
			continue
		}
		if err != nil {
			errs = append(errs, err)
			name := ""
			if de, ok := errors.AsType[*DefinitionError](err); ok {
				name = de.Name
			}
			set.NotLoaded(p, cmp.Or(name, FileType(p)))
			continue
		}
		if first, dup := fromUser[d.Name]; dup {
			kept, skipped, skippedDef := first, p, d
			if chosenOver(p, first, d.Name) {
				skippedDef = set.byName[d.Name]
				kept, skipped = p, first
				set.byName[d.Name] = d
				fromUser[d.Name] = p
			}
			keptAt := ShownPath(kept)
			if l := set.byName[d.Name].NameLine; l > 0 {
				keptAt = fmt.Sprintf("%s:%d", keptAt, l)
			}
			errs = append(errs, &DefinitionError{File: skipped, Line: skippedDef.NameLine,
				Reason: fmt.Sprintf("workflow %q is already defined by %s; this file was skipped: give one of them another name (its name line, or its file name when it has none)", d.Name, keptAt)})
			continue
		}
		fromUser[d.Name] = p
		set.byName[d.Name] = d
	}
	return set, errs
}

// FileType is the type a definition file's name gives (its base name, lowercased, without
// ".md"): its type when its front matter names none. The base is the OS's own: on Unix a
// backslash is a letter of the name, and `old\apex.md` names no apex.
func FileType(file string) string {
	return NormalizeName(strings.TrimSuffix(filepath.Base(file), ".md"))
}
