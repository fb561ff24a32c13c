package memory

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// oracleParseSettings is readSettings' parsing as it was before it read with a jsonx.Reader:
// json.Unmarshal into a map[string]json.RawMessage, then into each value. It is the
// definition of what parseSettings must give, so it is frozen here.
func oracleParseSettings(p string, data []byte) (settingsSource, bool) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return settingsSource{}, false
	}
	s := settingsSource{path: p}
	if raw, ok := doc["autoMemoryDirectory"]; ok && string(raw) != "null" {
		var d string
		if json.Unmarshal(raw, &d) == nil {
			s.dir = &d
		}
	}
	if raw, ok := doc["autoMemoryEnabled"]; ok && string(raw) != "null" {
		var e bool
		if json.Unmarshal(raw, &e) == nil {
			s.enabled = &e
		}
	}
	return s, true
}

func showSettings(s settingsSource, ok bool) string {
	out := fmt.Sprintf("ok=%v path=%q", ok, s.path)
	if s.dir != nil {
		out += fmt.Sprintf(" dir=%q", *s.dir)
	}
	if s.enabled != nil {
		out += fmt.Sprintf(" enabled=%v", *s.enabled)
	}
	return out
}

func checkParseSettings(t *testing.T, data []byte) {
	t.Helper()
	got, want := showSettings(parseSettings("/s.json", data)), showSettings(oracleParseSettings("/s.json", data))
	if got != want {
		t.Errorf("parseSettings(%q) = %s, encoding/json gave %s", data, got, want)
	}
}

// settingsSeeds are settings files as Claude Code writes them and the edges: null, wrong
// types, repeated keys (the last wins), keys that differ in case or are escaped (matched
// exactly after unescaping), escapes and invalid UTF-8 in the path, and files that are not
// one JSON object.
var settingsSeeds = []string{
	`{"permissions":{"allow":["Bash(go test:*)"],"deny":[]},"model":"opus","hooks":{"Stop":[{"hooks":[{"type":"command","command":"x"}]}]}}`,
	`{"autoMemoryEnabled":false}`, `{"autoMemoryEnabled":true,"autoMemoryDirectory":"~/notes/memory"}`,
	`{"autoMemoryDirectory":"/abs/dir","autoMemoryEnabled":null}`, `{"autoMemoryDirectory":null,"autoMemoryEnabled":false}`,
	`{"autoMemoryDirectory":1,"autoMemoryEnabled":"false"}`, `{"autoMemoryDirectory":["/x"],"autoMemoryEnabled":0}`,
	`{"autoMemoryDirectory":{},"autoMemoryEnabled":[]}`, `{"autoMemoryEnabled":true,"autoMemoryEnabled":false}`,
	`{"autoMemoryEnabled":false,"autoMemoryEnabled":"x"}`, `{"autoMemoryEnabled":false,"autoMemoryEnabled":null}`,
	`{"automemoryenabled":false,"AutoMemoryDirectory":"/x"}`, `{"\u0061utoMemoryEnabled":false,"autoMemoryDirectory":"\/a\u00e9\ud800"}`,
	"{\"autoMemoryDirectory\":\"/a\xffb\"}", "{\"autoMemoryDirectory\":\"/a\tb\"}", `{"autoMemoryDirectory":"` + strings.Repeat("d", 5000) + `"}`,
	`{ "autoMemoryEnabled" : false , "x" : [ 1 , { } ] }`, `{}`, `null`, ` null `, `[]`, `"x"`, `1`, `true`, ``, ` `,
	`{"autoMemoryEnabled":false`, `{"autoMemoryEnabled":false} x`, `{"autoMemoryEnabled":false}{}`, `null x`, `{"a":1,}`,
	`{"autoMemoryEnabled":fals}`, "\xef\xbb\xbf{}", `{"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
	`{"x":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `,"autoMemoryEnabled":false}`,
}

func TestParseSettingsMatchesEncodingJSON(t *testing.T) {
	for _, s := range settingsSeeds {
		checkParseSettings(t, []byte(s))
	}
}

func FuzzParseSettings(f *testing.F) {
	for _, s := range settingsSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkParseSettings)
}
