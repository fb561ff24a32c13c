package workflow

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

var update = flag.Bool("update", false, "rewrite definitions/builtin.json from definitions/*.md")

// definitions/builtin.json is what the hooks read instead of parsing YAML: it must be exactly
// what the built-in *.md files parse to.
func TestBuiltinJSON(t *testing.T) {
	defs, err := Builtins()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*Definition{}
	for _, n := range defs.Names() {
		d, _ := defs.Lookup(n)
		byName[n] = d
	}
	want, err := json.MarshalIndent(byName, "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	file := filepath.Join("definitions", "builtin.json")
	if *update {
		if err := os.WriteFile(file, want, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Skipf("rewrote %s; the test binary embeds the old copy, so run the test again", file)
	}
	if !bytes.Equal(builtinJSON, want) {
		t.Fatalf("%s is out of date with definitions/*.md: run go test ./internal/workflow -run TestBuiltinJSON -update", file)
	}
	for _, n := range defs.Names() {
		for _, name := range []string{n, " " + n + " ", string(bytes.ToUpper([]byte(n)))} {
			got, ok := BuiltinDefinition(name)
			if !ok {
				t.Fatalf("BuiltinDefinition(%q) found nothing", name)
			}
			if !reflect.DeepEqual(got, byName[n]) {
				t.Errorf("BuiltinDefinition(%q) = %+v, parsing %s gives %+v", name, got, byName[n].Source, byName[n])
			}
		}
	}
	for _, name := range []string{"", "nope", "../apex", "apex.md"} {
		if d, ok := BuiltinDefinition(name); ok {
			t.Errorf("BuiltinDefinition(%q) = %v, want none", name, d.Name)
		}
	}
}
