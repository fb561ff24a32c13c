package mcptools

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzDecodeArgs: no input makes the decoder panic, every refusal is an argument report, and
// whatever is accepted holds only the tool's own arguments, with the right Go types.
func FuzzDecodeArgs(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"to":"plan","outputs":["a"],"checkpoint":{"x":1}}`, `{"vars":{"WF_A":"1"}}`,
		`{"violations":[{"code":"V1","severity":"high","details":"d"}]}`, `{"name":"n","data":[1]}`,
		`{"a":1,"a":2}`, `[`, `"x"`, `{"to":"\u0000"}`, `{"keys":["A",1]}`,
	} {
		for i := range specs {
			f.Add(i, []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, i int, raw []byte) {
		if i < 0 {
			i = -i
		}
		spec := specs[i%len(specs)]
		a, err := decodeArgs(spec, json.RawMessage(raw))
		if err != nil {
			var ae *argError
			if !errors.As(err, &ae) || len(ae.problems) == 0 {
				t.Fatalf("refusal %v is not an argument report", err)
			}
			return
		}
		for name, v := range a {
			f := spec.field(name)
			if f == nil {
				t.Fatalf("accepted unknown argument %q", name)
			}
			ok := false
			switch f.kind {
			case kString:
				_, ok = v.(string)
			case kBool:
				_, ok = v.(bool)
			case kStrings:
				_, ok = v.([]string)
			case kObject, kJSON:
				_, ok = v.(json.RawMessage)
			case kStringMap:
				_, ok = v.(map[string]string)
			default:
				ok = v != nil
			}
			if !ok {
				t.Fatalf("argument %q decoded as %T", name, v)
			}
		}
		for _, f := range spec.fields {
			if _, ok := a[f.name]; f.required && !ok {
				t.Fatalf("accepted without required %q", f.name)
			}
		}
	})
}

func (t *toolSpec) field(name string) *field {
	for i := range t.fields {
		if t.fields[i].name == name {
			return &t.fields[i]
		}
	}
	return nil
}
