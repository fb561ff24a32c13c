package migrate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// The limits match jsonx.Check's, so a migrated record is one the store accepts.
const (
	maxSize  = 1 << 20
	maxDepth = 64
)

// strictCheck accepts exactly one JSON value of at most maxSize bytes, nested at most maxDepth
// deep, in valid UTF-8, with no duplicate key in any object. encoding/json alone would replace
// bad UTF-8, let the last duplicate win and nest 10,000 deep.
func strictCheck(data []byte) error {
	if len(data) > maxSize {
		return fmt.Errorf("%w: %d bytes, over the 1 MiB limit", ErrMalformed, len(data))
	}
	if !utf8.Valid(data) {
		return fmt.Errorf("%w: invalid UTF-8", ErrMalformed)
	}
	type frame struct {
		object    bool
		expectKey bool
		keys      map[string]struct{}
	}
	var stack []*frame
	values := 0
	afterValue := func() {
		if len(stack) == 0 {
			values++
			return
		}
		if top := stack[len(stack)-1]; top.object {
			top.expectKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			if len(stack) > 0 {
				return fmt.Errorf("%w: unexpected end of input (truncated?)", ErrMalformed)
			}
			break
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		if values > 0 {
			return fmt.Errorf("%w: more than one JSON value", ErrMalformed)
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if len(stack) >= maxDepth {
					return fmt.Errorf("%w: nested deeper than %d", ErrMalformed, maxDepth)
				}
				if len(stack) > 0 {
					stack[len(stack)-1].expectKey = false
				}
				f := &frame{object: t == '{', expectKey: t == '{'}
				if f.object {
					f.keys = map[string]struct{}{}
				}
				stack = append(stack, f)
			default:
				stack = stack[:len(stack)-1]
				afterValue()
			}
		case string:
			if len(stack) > 0 {
				if top := stack[len(stack)-1]; top.object && top.expectKey {
					if _, dup := top.keys[t]; dup {
						return fmt.Errorf("%w: duplicate key %q", ErrMalformed, t)
					}
					top.keys[t] = struct{}{}
					top.expectKey = false
					continue
				}
			}
			afterValue()
		default:
			afterValue()
		}
	}
	if values == 0 {
		return fmt.Errorf("%w: empty document", ErrMalformed)
	}
	return nil
}

// decodeStrict checks data and decodes it with numbers kept as json.Number, so a number that
// ends up under "legacy" is written back digit for digit.
func decodeStrict(data []byte) (any, error) {
	if err := strictCheck(data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return v, nil
}

// decodeObject is decodeStrict for documents that must be a JSON object.
func decodeObject(data []byte) (map[string]any, error) {
	v, err := decodeStrict(data)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w (the document is a JSON %s, not an object); Cairn leaves it as it is", ErrUnknownFormat, jsonKind(v))
	}
	return obj, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
