package workflow

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// Unknown JSON members are kept in an Extra map so that a record written by a newer Cairn (or
// edited by hand) survives a read-modify-write by this one. Every type with an Extra map
// marshals through a method-less twin (type recordJSON Record) with these two helpers: adding a
// field to a type is adding it to the struct, nothing else. They are exported for the other
// documents Cairn reads, modifies and writes back (the engine's last-ending.json).

// unknown is the members a type has no field for, by name.
type unknown = map[string]json.RawMessage

// DecodeKnown decodes data into a fresh J (a method-less twin of the caller's type) with
// encoding/json and, on success only, stores it in dst and the members J has no field for in
// extra (the caller's Extra).
func DecodeKnown[J any](data []byte, dst *J, extra *unknown) error {
	// Most values have no unknown member: a decoder that refuses them reads such a value in
	// one pass, where collecting the members as well is a second one at every level of
	// nesting (Stop and SessionStart decode the record on every run).
	var v J
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if dec.Decode(&v) == nil && len(bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n")) == 0 {
		*dst, *extra = v, nil
		return nil
	}
	v = *new(J)
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	var all unknown
	if err := json.Unmarshal(data, &all); err != nil {
		return err
	}
	// encoding/json matches field names case-insensitively, so "Workflow_ID" was decoded into
	// workflow_id: keeping it as unknown too would write the value twice. Each RawMessage is a
	// copy (its UnmarshalJSON copies), sharing nothing with data.
	known := knownFields(reflect.TypeFor[J]())
	maps.DeleteFunc(all, func(k string, _ json.RawMessage) bool { return isKnown(known, k) })
	if len(all) == 0 {
		all = nil
	}
	*dst, *extra = v, all
	return nil
}

// EncodeKnown marshals v (a method-less twin) and appends the extra members v has no field
// for, in sorted order, after its own.
func EncodeKnown(v any, extra unknown) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil || len(extra) == 0 {
		return b, err
	}
	known := knownFields(reflect.TypeOf(v))
	keys := slices.DeleteFunc(slices.Sorted(maps.Keys(extra)), func(k string) bool { return isKnown(known, k) })
	if len(keys) == 0 {
		return b, nil
	}
	var buf bytes.Buffer
	buf.Write(b[:len(b)-1]) // drop the closing brace
	for i, k := range keys {
		if !json.Valid(extra[k]) {
			return nil, fmt.Errorf("encoding unknown field %q: not valid JSON", k)
		}
		if i > 0 || len(b) > 2 { // b is not "{}"
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(extra[k])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

var knownCache sync.Map // reflect.Type -> map[string]bool

// knownFields returns the JSON names of t's fields (t a struct type), those of an embedded
// struct's too, which encoding/json writes as its own.
func knownFields(t reflect.Type) map[string]bool {
	if v, ok := knownCache.Load(t); ok {
		return v.(map[string]bool)
	}
	m := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			maps.Copy(m, knownFields(f.Type))
			continue
		}
		m[cmp.Or(name, f.Name)] = true
	}
	knownCache.Store(t, m)
	return m
}

func isKnown(known map[string]bool, k string) bool {
	if known[k] {
		return true
	}
	for name := range known {
		if strings.EqualFold(name, k) {
			return true
		}
	}
	return false
}
