package migrate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cairn-dev/cairn/internal/strictjson"
)

// strictCheck is strictjson.Check, the store's own gate, so a migrated record is one the store
// accepts: exactly one JSON value of at most 1 MiB, nested at most 64 deep, in valid UTF-8,
// with no duplicate key in any object. The error says what is wrong in migration's words.
func strictCheck(data []byte) error {
	je, ok := errors.AsType[*strictjson.Error](strictjson.Check(data)) // Check's only error type
	if !ok {
		return nil
	}
	why := je.Error()
	switch {
	case je.Kind == strictjson.TooLarge:
		why = fmt.Sprintf("%d bytes, over the 1 MiB limit", len(data))
	case bytes.HasPrefix(data, []byte("\ufeff")):
		// Windows editors write one; strict JSON has no place for it, and byte 0's 'ï' says
		// nothing of that.
		why = "it starts with a byte order mark (BOM), which JSON does not allow: save it as UTF-8 without one"
	case utf16Text(data):
		why = "it is UTF-16 text, not UTF-8: save it as UTF-8 (without a byte order mark)"
	case je.Kind == strictjson.InvalidUTF8:
		why = "invalid UTF-8"
	case je.Kind == strictjson.Trailing:
		why = "more than one JSON value"
	case je.Kind == strictjson.Empty:
		why = "empty document"
	case je.Kind == strictjson.TooDeep:
		why = fmt.Sprintf("nested deeper than %d", strictjson.MaxDepth)
	case je.Kind == strictjson.DuplicateKey:
		why = fmt.Sprintf("%s at byte %d", je.Reason, je.Offset)
	case strings.HasPrefix(je.Reason, "unexpected end of input"), je.Reason == "unterminated string":
		why = "unexpected end of input (truncated?)"
	}
	return fmt.Errorf("%w: %s", ErrMalformed, why)
}

// decodeObject checks data and decodes it as a JSON object, with numbers kept as
// json.Number so a number that ends up under "legacy" is written back digit for digit.
func decodeObject(data []byte) (map[string]any, error) {
	if err := strictCheck(data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, unknown("the document is a JSON %s, not an object", jsonKind(v))
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

// utf16Text reports whether data looks like UTF-16 (what Windows calls "Unicode" text): a
// UTF-16 byte order mark, or ASCII with every other byte zero, as "{" and '"' are.
func utf16Text(data []byte) bool {
	if len(data) < 4 {
		return false
	}
	if (data[0] == 0xff && data[1] == 0xfe) || (data[0] == 0xfe && data[1] == 0xff) {
		return true
	}
	le := data[0] != 0 && data[1] == 0 && data[2] != 0 && data[3] == 0
	be := data[0] == 0 && data[1] != 0 && data[2] == 0 && data[3] != 0
	return le || be
}
