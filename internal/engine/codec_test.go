package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The oracle for codec.go is encoding/json itself on the same types, as the code it replaced
// called it: json.Marshal(v), and json.Unmarshal(data, &v) into a zero v with the error
// ignored by the callers (so what was decoded before a value of the wrong type counts). A
// field added to one of the types without its codec makes these tests fail.

func TestCodecFieldLists(t *testing.T) {
	for _, c := range []struct {
		v     any
		names []string
	}{
		{l2State{}, l2StateFields},
		{fileConfig{}, fileConfigFields},
		{stopState{}, stopStateFields},
	} {
		typ := reflect.TypeOf(c.v)
		var tags []string
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			tags = append(tags, name)
		}
		if !reflect.DeepEqual(tags, c.names) {
			t.Errorf("%s has the JSON fields %q, its decoder reads %q", typ, tags, c.names)
		}
	}
}

// jsonErrorKind sorts an error by whether it let the decode go on: a value of the wrong type
// does, anything else (the input is not JSON) does not.
func jsonErrorKind(err error) string {
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return "none"
	case errors.As(err, &te) || isWrongType(err):
		return "wrong type"
	}
	return "not JSON"
}

func compareDecode[T any](t *testing.T, what string, data []byte, decode func([]byte) (T, error)) {
	t.Helper()
	got, gerr := decode(data)
	var want T
	werr := json.Unmarshal(data, &want)
	if !reflect.DeepEqual(got, want) || jsonErrorKind(gerr) != jsonErrorKind(werr) {
		t.Errorf("%s(%q):\n got %s (error %v)\nwant %s (error %v)", what, data, show(got), gerr, show(want), werr)
	}
}

// show prints pointers' targets (the JSON) and tells nil slices from empty ones (%#v).
func show(v any) string {
	b, _ := json.Marshal(v)
	return fmt.Sprintf("%s %#v", b, v)
}

func checkDecoders(t *testing.T, data []byte) {
	t.Helper()
	compareDecode(t, "decodeL2State", data, decodeL2State)
	compareDecode(t, "decodeConfig", data, decodeConfig)
	compareDecode(t, "decodeStopState", data, decodeStopState)
}

// decoderSeeds are the documents as Cairn writes them and the edges of encoding/json's rules:
// wrong types (which leave a field as it was but let the rest decode), null, repeated keys
// (the last wins; a repeated array reuses the earlier one's elements), keys matched without
// regard to case, escapes and invalid UTF-8, numbers that do not fit, and input that is not
// JSON after members that would have decoded.
var decoderSeeds = []string{
	`{"workflow_id":"apex-20261122T194441Z-d361","revision":3}`,
	`{"workflow_id":"apex-20261122T194441Z-d361","revision":3,"owed":["- 2026-11-22 apex: plan \u003e implement","x"]}`,
	`{"revision":0}`, `{"archive_retention":5,"stop_blocking":false}`, `{"archive_retention":0,"stop_blocking":true}`,
	`{"workflow_id":"apex-1","fingerprint":"0123456789abcdef","at":"2026-11-22T19:44:41Z"}`,
	`null`, ` null `, `{}`, `[]`, `"x"`, `1`, `true`, `[1,{"revision":2}]`,
	// Wrong types, before and after members that decode.
	`{"workflow_id":1,"revision":"2","owed":"x","fingerprint":[],"at":{},"archive_retention":"5","stop_blocking":"yes"}`,
	`{"revision":7,"workflow_id":{"a":[1]},"owed":["a",1,null,{},[],"b",true],"at":"t"}`,
	`{"archive_retention":[],"stop_blocking":{}}`, `{"archive_retention":true,"stop_blocking":0}`,
	`{"archive_retention":1.5,"revision":1.0,"stop_blocking":"true"}`, `{"revision":1e2,"archive_retention":-0}`,
	`{"revision":9223372036854775807,"archive_retention":-9223372036854775808}`,
	`{"revision":9223372036854775808,"archive_retention":9223372036854775808}`, `{"revision":-1}`,
	// null.
	`{"workflow_id":null,"revision":null,"owed":null,"archive_retention":null,"stop_blocking":null,"at":null}`,
	`{"workflow_id":"a","workflow_id":null,"revision":4,"revision":null,"owed":["x"],"owed":null}`,
	`{"archive_retention":3,"archive_retention":null,"stop_blocking":true,"stop_blocking":null}`,
	// Repeated keys.
	`{"workflow_id":"a","workflow_id":"b","revision":1,"revision":2,"fingerprint":"f","fingerprint":"g"}`,
	`{"workflow_id":"a","workflow_id":1,"archive_retention":5,"archive_retention":"x","stop_blocking":true,"stop_blocking":1}`,
	`{"owed":["a","b","c"],"owed":["x"],"owed":["y",null,null]}`, `{"owed":["a","b","c","d","e"],"owed":[],"owed":[null,null,1,null,null,null]}`,
	`{"owed":["a"],"owed":[null,null]}`, `{"owed":["a","b"],"owed":"x"}`, `{"owed":["a","b"],"owed":{}}`,
	// Keys.
	`{"Workflow_ID":"a","REVISION":2,"Owed":["o"],"ARCHIVE_RETENTION":3,"Stop_Blocking":true,"AT":"t","FingerPrint":"f"}`,
	`{"workflow_id":"a","WORKFLOW_ID":"b"}`, `{"WORKFLOW_ID":"b","workflow_id":"a"}`, `{"\u0061t":"esc","\u017ftop_blocking":true,"fingerprin\u212a":"x"}`,
	`{"stop_\u212alocking":true,"archive retention":1,"archive_retention ":2,"workflowid":"x","":1}`,
	// Strings.
	`{"workflow_id":"\u00e9\ud83d\ude00\ud800x\udc00\"\\\/\b\f\n\r\t\u0000","owed":["\u003c\u0026\u003e","\u2028"]}`,
	"{\"workflow_id\":\"a\xffb\xed\xa0\x80c\",\"owed\":[\"\xfe\"],\"\xff\":1}",
	// Not JSON, after members that decode, or inside values of the wrong type.
	`{"workflow_id":"a","revision":2,"owed":["x"]`, `{"workflow_id":"a"} x`, `{"workflow_id":"a"}{}`, `{"revision":2,}`,
	`{"revision":"x","owed":[1,]}`, `{"workflow_id":[1 2]}`, `{"archive_retention":{"a"}}`, `{"stop_blocking":tru}`,
	`{"revision":01}`, `{"at":"\x"}`, "{\"at\":\"a\tb\"}", ``, ` `, "\xef\xbb\xbf{}", `{'a':1}`,
	`{"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `,"revision":3}`,
	`{"x":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `,"revision":3}`,
	// White space everywhere.
	" \n{ \"revision\" :\t1 ,\r\"owed\" : [ \"a\" , null ] , \"x\" : { \"y\" : [ ] } } \n",
}

func TestDecodersMatchEncodingJSON(t *testing.T) {
	for _, s := range decoderSeeds {
		checkDecoders(t, []byte(s))
	}
}

func FuzzDecoders(f *testing.F) {
	for _, s := range decoderSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkDecoders)
}

func compareEncode[T any](t *testing.T, what string, v T, encode func(T) ([]byte, error)) {
	t.Helper()
	got, gerr := encode(v)
	want, werr := json.Marshal(v)
	if (gerr == nil) != (werr == nil) || !bytes.Equal(got, want) {
		t.Errorf("%s(%+v):\n got %s (error %v)\nwant %s (error %v)", what, v, got, gerr, want, werr)
	}
}

func checkEncoders(t *testing.T, s1, s2 string, n int64, at time.Time, owed []string) {
	t.Helper()
	compareEncode(t, "encodeSession", Session{SessionID: s1, Source: s2, PID: int(n), StartedAt: at, Heartbeat: at.Add(time.Duration(n))}, encodeSession)
	noErr := func(f func(l2State) []byte) func(l2State) ([]byte, error) {
		return func(s l2State) ([]byte, error) { return f(s), nil }
	}
	compareEncode(t, "encodeL2State", l2State{WorkflowID: s1, Revision: n, Owed: owed}, noErr(encodeL2State))
	compareEncode(t, "encodeStopState", stopState{WorkflowID: s1, Fingerprint: s2, At: at.String()},
		func(s stopState) ([]byte, error) { return encodeStopState(s), nil })
}

// encoderSeeds are strings json.Marshal escapes (HTML included: these documents were written
// by json.Marshal, not by an Encoder without HTML escaping) or replaces (invalid UTF-8).
var encoderSeeds = []string{"", "bench-session", "startup", `"q" \ /`, "<b> & </b>", "\x00\x1f\x7f\b\f\n\r\t", "\u2028\u2029",
	"é 𝔸 😀", "\xff\xc3", "- 2026-11-22 apex: plan > implement (\"retries\")"}

func TestEncodersMatchEncodingJSON(t *testing.T) {
	times := []time.Time{
		time.Date(2026, 11, 22, 19, 44, 41, 593046543, time.UTC),
		time.Date(2026, 11, 22, 19, 44, 41, 0, time.FixedZone("", 5*3600+30*60)),
		time.Date(2026, 11, 22, 19, 44, 41, 100, time.FixedZone("X", -3600)),
		{}, time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC), // no RFC 3339 form: both refuse
		time.Now(), // with a monotonic reading, which MarshalJSON leaves out
	}
	owed := [][]string{nil, {}, {""}, {"a", "<b>"}, encoderSeeds}
	for i, s := range encoderSeeds {
		for j, at := range times {
			checkEncoders(t, s, encoderSeeds[(i+j)%len(encoderSeeds)], int64(i*j-3), at, owed[(i+j)%len(owed)])
		}
	}
	for _, n := range []int64{0, -1, 1 << 62, -1 << 63, 1<<63 - 1} {
		checkEncoders(t, "s", "", n, times[0], nil)
	}
}

func FuzzEncoders(f *testing.F) {
	for i, s := range encoderSeeds {
		f.Add(s, encoderSeeds[(i+1)%len(encoderSeeds)], int64(i), int64(1795379392+i), int64(i*1000), i*1800, s, uint8(i%4))
	}
	f.Fuzz(func(t *testing.T, s1, s2 string, n, sec, nsec int64, offset int, o string, owedLen uint8) {
		at := time.Unix(sec, nsec).In(time.FixedZone("", offset%(48*3600)))
		var owed []string
		if owedLen%4 > 0 {
			owed = make([]string, owedLen%4-1)
			for i := range owed {
				owed[i] = o[:len(o)*i/len(owed)]
			}
		}
		checkEncoders(t, s1, s2, n, at, owed)
	})
}
