package mcptools

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestEmptyStringSchemaAgreesWithDecoder: every string an input schema describes allows "" if
// and only if the decoder accepts it there, so that a model that follows the schema is not
// refused for an empty value (outputs[] and violations[].details allowed "" and refused it).
func TestEmptyStringSchemaAgreesWithDecoder(t *testing.T) {
	// Each case is a call with "" in one place; path leads to that string's schema.
	cases := []struct{ tool, path, args string }{
		{"start_workflow", "type", `{"type":"","context":"c"}`},
		{"start_workflow", "context", `{"type":"apex","context":""}`},
		{"start_workflow", "workflow_id", `{"type":"apex","context":"c","workflow_id":""}`},
		{"start_workflow", "scope", `{"type":"apex","context":"c","scope":""}`},
		{"start_workflow", "ttl", `{"type":"apex","context":"c","ttl":""}`},
		{"transition", "to", `{"to":""}`},
		{"transition", "from", `{"to":"plan","from":""}`},
		{"transition", "outputs/items", `{"to":"plan","outputs":[""]}`},
		{"transition", "note", `{"to":"plan","note":""}`},
		{"complete_workflow", "outcome", `{"outcome":""}`},
		{"update_task", "id", `{"id":"","status":"done"}`},
		{"update_task", "status", `{"id":"t1","status":""}`},
		{"update_task", "output", `{"id":"t1","status":"done","output":""}`},
		{"update_task", "note", `{"id":"t1","status":"done","note":""}`},
		{"set_enforcement", "violations/items/properties/code", `{"violations":[{"code":"","severity":"LOW","details":"d"}]}`},
		{"set_enforcement", "violations/items/properties/severity", `{"violations":[{"code":"V1","severity":"","details":"d"}]}`},
		{"set_enforcement", "violations/items/properties/details", `{"violations":[{"code":"V1","severity":"LOW","details":""}]}`},
		{"save_checkpoint", "name", `{"name":"","data":{}}`},
		{"load_checkpoint", "name", `{"name":""}`},
		{"load_checkpoint", "part", `{"name":"c","part":""}`},
		{"load_checkpoint", "phase", `{"phase":""}`},
		{"list_checkpoints", "pattern", `{"pattern":""}`},
		{"set_vars", "vars/additionalProperties", `{"vars":{"WF_A":""}}`},
		{"set_vars", "vars/propertyNames", `{"vars":{"":"v"}}`},
		{"get_vars", "keys/items", `{"keys":[""]}`},
		{"append_log", "name", `{"name":"","entry":{}}`},
		{"record_learning", "title", `{"title":"","body":"b"}`},
		{"record_learning", "body", `{"title":"t","body":""}`},
		{"record_learning", "type", `{"title":"t","body":"b","type":""}`},
		{"initiative", "action", `{"action":""}`},
		{"initiative", "title", `{"action":"create","title":""}`},
		{"initiative", "status", `{"action":"set_status","status":""}`},
		{"initiative", "milestone", `{"action":"add_milestone","milestone":""}`},
		{"initiative", "note", `{"action":"update_milestone","note":""}`},
	}
	covered := map[string]bool{}
	for _, tc := range cases {
		spec := specs[slices.IndexFunc(specs, func(sp *toolSpec) bool { return sp.name == tc.tool })]
		raw, _ := json.Marshal(spec.tool().InputSchema)
		var node any
		_ = json.Unmarshal(raw, &node)
		node = node.(map[string]any)["properties"]
		for _, step := range strings.Split(tc.path, "/") {
			node = node.(map[string]any)[step]
		}
		covered[tc.tool+"."+strings.Split(tc.path, "/")[0]] = true
		s := node.(map[string]any)
		allows := true
		if n, ok := s["minLength"].(float64); ok && n >= 1 {
			allows = false
		}
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString("") {
			allows = false
		}
		if e, ok := s["enum"].([]any); ok && !slices.Contains(e, any("")) {
			allows = false
		}
		_, err := decodeArgs(spec, json.RawMessage(tc.args))
		if err != nil && strings.HasSuffix(err.Error(), ": ") {
			t.Errorf("%s %s: the refusal breaks off: %q", tc.tool, tc.path, err)
		}
		if accepted := err == nil; accepted != allows {
			t.Errorf("%s %s: the schema allows \"\": %v, the decoder accepts it: %v (%v)", tc.tool, tc.path, allows, accepted, err)
		}
	}
	// Every string argument has a case (objects and booleans hold none of their own).
	for _, sp := range specs {
		for _, f := range sp.fields {
			if f.kind != kBool && f.kind != kObject && f.kind != kJSON && !covered[sp.name+"."+f.name] {
				t.Errorf("%s.%s has no case here: add one", sp.name, f.name)
			}
		}
	}
}
