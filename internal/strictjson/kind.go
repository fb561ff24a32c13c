package strictjson

import "bytes"

// KindOf names the kind of the JSON value raw holds, with its article ("an object", "a
// string", "null", ...), for error messages; "nothing" for no value. raw is not checked.
func KindOf(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
