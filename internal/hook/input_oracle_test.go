package hook

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// The oracle: Parse as it was before it read with a jsonx.Reader, by json.Unmarshal into a
// map[string]json.RawMessage and then into each field. It is the definition of what Parse
// must give, so it is frozen here; clip, plainWord and maxField are shared, as they are not
// what changed.

func oracleParse(data []byte) (Event, []string) {
	var ev Event
	if len(strings.TrimSpace(string(data))) == 0 {
		return ev, []string{"stdin was empty; going on without the event"}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil || fields == nil {
		why := "null"
		if err != nil {
			why = err.Error()
		}
		return ev, []string{fmt.Sprintf("stdin is not a JSON object (%s); going on without the event", why)}
	}
	ev.Read = true
	var notes []string
	str := func(key string, dst *string) {
		raw, ok := fields[key]
		if !ok || oracleIsNull(raw) {
			return
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			notes = append(notes, fmt.Sprintf("%s is %s, not a string; ignored", key, oracleJSONKind(raw)))
			return
		}
		if len(s) > maxField {
			notes = append(notes, fmt.Sprintf("%s is %d bytes, over %d; ignored", key, len(s), maxField))
			return
		}
		*dst = s
	}
	str("session_id", &ev.SessionID)
	str("transcript_path", &ev.TranscriptPath)
	str("cwd", &ev.CWD)
	str("hook_event_name", &ev.HookEventName)
	str("source", &ev.Source)
	str("permission_mode", &ev.PermissionMode)
	str("prompt_id", &ev.PromptID)
	if raw, ok := fields["stop_hook_active"]; ok && !oracleIsNull(raw) {
		var b bool
		if err := json.Unmarshal(raw, &b); err == nil {
			ev.StopHookActive = b
		} else {
			var s string
			if json.Unmarshal(raw, &s) == nil && (s == "true" || s == "false") {
				ev.StopHookActive = s == "true"
				notes = append(notes, fmt.Sprintf("stop_hook_active is the string %q, not a boolean; read as %s", s, s))
			} else {
				ev.StopHookActive = true
				notes = append(notes, fmt.Sprintf("stop_hook_active is %s, not a boolean; read as true so the hook does not block", oracleJSONKind(raw)))
			}
		}
	}
	if ev.Source != "" && !plainWord(ev.Source) {
		notes = append(notes, "source is not a plain word; ignored (not repeated here)")
		ev.Source = ""
	}
	return ev, notes
}

func oracleIsNull(raw json.RawMessage) bool { return strings.TrimSpace(string(raw)) == "null" }

func oracleJSONKind(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if s == "" {
		return "empty"
	}
	switch s[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// checkParse holds Parse to the oracle: the same event and the same notes, in order.
func checkParse(t *testing.T, data []byte) {
	t.Helper()
	ev, notes := Parse(data)
	wev, wnotes := oracleParse(data)
	if ev != wev || !reflect.DeepEqual(notes, wnotes) {
		t.Errorf("Parse(%q) =\n  %+v %q\nencoding/json gave\n  %+v %q", data, ev, notes, wev, wnotes)
	}
}

// parseSeeds are events at the edges of the rules: real events, wrong types, null, repeated
// and escaped keys (a map keeps the last; keys match exactly), strings with escapes and
// invalid UTF-8, sizes at the field cap, and input that is not one JSON object.
var parseSeeds = []string{
	`{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/p","hook_event_name":"SessionStart","source":"resume","seconds_since_last_response":12}`,
	`{"session_id":"s1","hook_event_name":"Stop","stop_hook_active":true,"last_assistant_message":"done","prompt_id":"p9","permission_mode":"default"}`,
	``, ` `, "\t\n\r", "\u00a0", "\v{}", `hello`, `[1,2]`, `null`, ` null `, `"x"`, `1`, `true`, `{}`, `{ }`,
	`{"session_id":"s1"`, `{"session_id":"s1"} x`, `{"session_id":"s1"}{}`, `{"a":1,}`, `{"a" 1}`, "\xef\xbb\xbf{}",
	`{"session_id":42,"source":["startup"],"cwd":{"a":1},"hook_event_name":true,"transcript_path":"/t","prompt_id":-1.5e3,"permission_mode":false}`,
	`{"session_id":null,"stop_hook_active":null,"cwd":null}`, `{"session_id": null , "cwd" :"x"}`,
	`{"stop_hook_active":"true"}`, `{"stop_hook_active":"false"}`, `{"stop_hook_active":"yes"}`, `{"stop_hook_active":"True"}`,
	`{"stop_hook_active":0}`, `{"stop_hook_active":[]}`, `{"stop_hook_active":{}}`, `{"stop_hook_active":false}`,
	`{"stop_hook_active":"\u0074rue"}`, `{"stop_hook_active":true,"stop_hook_active":"x"}`,
	`{"source":"start up\n; rm"}`, `{"source":"teleport"}`, `{"source":"` + strings.Repeat("a", 33) + `"}`, `{"source":"Startup"}`,
	`{"session_id":"a","session_id":"b"}`, `{"session_id":1,"session_id":"b"}`, `{"session_id":"a","session_id":1}`,
	`{"session_id":"a","session_id":null}`, `{"Session_ID":"a"}`, `{"\u0073ession_id":"esc"}`, `{"session_id\u0000":"x"}`,
	`{"cwd":"\u00e9\ud83d\ude00\ud800x\udc00\"\\\/\b\f\n\r\t\u0000"}`, "{\"cwd\":\"a\xffb\xed\xa0\x80c\"}",
	"{\"session_id\xff\":\"x\",\"\xff\":1}", "{\"cwd\":\"a\tb\"}",
	`{"session_id":"` + strings.Repeat("a", 4096) + `"}`, `{"session_id":"` + strings.Repeat("a", 4097) + `"}`,
	`{"session_id":"` + strings.Repeat("\u00e9", 2048) + `"}`, `{"session_id":"` + strings.Repeat("\u00e9", 2049) + `"}`,
	`{"x":{"y":[1,{"z":null}]},"session_id":"s","source":"clear"}`, `{"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
	`{"x":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `,"session_id":"deep"}`,
}

func TestParseMatchesEncodingJSON(t *testing.T) {
	for _, s := range parseSeeds {
		checkParse(t, []byte(s))
	}
}

func FuzzParseOracle(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkParse)
}
