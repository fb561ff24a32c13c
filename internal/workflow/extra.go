package workflow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// Unknown JSON fields are kept in an Extra map so that a record written by a newer Cairn (or
// edited by hand) survives a read-modify-write by this one. These helpers do the merging for
// every struct that carries one, and the splitting for those not decoded in one pass by
// decode.go (the initiative's types, read off the hooks' start-up path).

var knownCache sync.Map // reflect.Type -> map[string]bool

// knownFields returns the JSON names of t's fields (t a struct type).
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
		if name == "" {
			name = f.Name
		}
		m[name] = true
	}
	knownCache.Store(t, m)
	return m
}

// decodeWithExtra unmarshals data into v (a pointer to a struct without custom methods) and
// returns the object members that v has no field for.
func decodeWithExtra(data []byte, v any) (map[string]json.RawMessage, error) {
	if err := json.Unmarshal(data, v); err != nil {
		return nil, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, err
	}
	known := knownFields(reflect.TypeOf(v).Elem())
	var extra map[string]json.RawMessage
	for k, raw := range all {
		// encoding/json matches field names case-insensitively, so "Workflow_ID" was decoded
		// into workflow_id: keeping it as unknown too would write the value twice.
		if known[k] || foldedKnown(known, k) {
			continue
		}
		if extra == nil {
			extra = map[string]json.RawMessage{}
		}
		extra[k] = append(json.RawMessage(nil), raw...)
	}
	return extra, nil
}

func foldedKnown(known map[string]bool, k string) bool {
	for name := range known {
		if strings.EqualFold(name, k) {
			return true
		}
	}
	return false
}

// encodeWithExtra marshals v (a struct without custom methods) and appends the extra members
// that v has no field for, in sorted order, after its own.
func encodeWithExtra(v any, extra map[string]json.RawMessage) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(extra) == 0 {
		return b, nil
	}
	known := knownFields(reflect.TypeOf(v))
	keys := make([]string, 0, len(extra))
	for k := range extra {
		if !known[k] && !foldedKnown(known, k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return b, nil
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	buf.Write(b[:len(b)-1]) // drop the closing brace
	first := len(b) == 2    // "{}"
	for _, k := range keys {
		if !json.Valid(extra[k]) {
			return nil, fmt.Errorf("encoding unknown field %q: not valid JSON", k)
		}
		if !first {
			buf.WriteByte(',')
		}
		first = false
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(extra[k])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func cloneRaw(m map[string]json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		return nil
	}
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		out[k] = append(json.RawMessage(nil), v...)
	}
	return out
}
