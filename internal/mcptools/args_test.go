package mcptools_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/vars"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestBadArguments sends every class of bad input to the tools. Each must come back as an
// isError tool result naming what was wrong and what would be right, with no engine write.
func TestBadArguments(t *testing.T) {
	opts, st := fakeOptions(t)
	_, c := startServer(t, opts)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"x"}`)

	big := `{"name":"n","data":{"blob":"` + strings.Repeat("a", 1<<20) + `"}}`
	deep := strings.Repeat(`{"a":`, 70) + `1` + strings.Repeat(`}`, 70)
	ghToken := "ghp_" + strings.Repeat("A1b2C3d4E5", 4)[:36]
	awsKey := "AKIA" + "IOSFODNN7EXAMPLE"

	cases := []struct {
		name, tool, args string
		want             []string
	}{
		// wrong types
		{"bool-as-string", "start_workflow", `{"type":"apex","context":"x","replace":"yes"}`, []string{`"replace" must be a boolean (true or false), not a string`}},
		{"string-as-number", "transition", `{"to":5}`, []string{`"to" must be a string`, "not a number"}},
		{"array-as-string", "transition", `{"to":"plan","outputs":"a.md"}`, []string{`"outputs" must be an array of strings`}},
		{"array-item-type", "transition", `{"to":"plan","outputs":["a.md",3]}`, []string{`"outputs[1]" must be a string, not a number`}},
		{"object-as-string", "transition", `{"to":"plan","checkpoint":"{\"a\":1}"}`, []string{`"checkpoint" must be a JSON object`, "not JSON text inside a string"}},
		{"data-as-string", "save_checkpoint", `{"name":"n","data":"plan v1"}`, []string{`"data" must be a JSON object or array`}},
		{"data-as-scalar-text", "save_checkpoint", `{"name":"n","data":"3"}`, []string{`"data" must be a JSON object or array`}},
		{"data-as-bad-text", "save_checkpoint", `{"name":"n","data":"[1,"}`, []string{`"data" must be a JSON object or array`}},
		{"data-text-duplicate-key", "save_checkpoint", `{"name":"n","data":"{\"a\":1,\"a\":2}"}`, []string{`"data" must be a JSON object or array`}},
		{"secret-in-data-text", "save_checkpoint", `{"name":"n","data":"[\"` + ghToken + `\"]"}`, []string{"secret found", "$.data"}},
		{"data-as-number", "save_checkpoint", `{"name":"n","data":3}`, []string{`"data" must be a JSON object or array, not a number`}},
		{"var-number", "set_vars", `{"vars":{"WF_N":3}}`, []string{`"vars.WF_N" must be a string, not a number`, `"3"`}},
		{"vars-array", "set_vars", `{"vars":["A=1"]}`, []string{`"vars" must be an object of names to string values`}},
		{"violations-object", "set_enforcement", `{"violations":{"code":"V1"}}`, []string{`"violations" must be an array`}},
		{"violation-field-type", "set_enforcement", `{"violations":[{"code":"V1","severity":"HIGH","details":7}]}`, []string{`"violations[0].details" must be a string`}},
		{"args-array", "resume_check", `[1,2]`, []string{"must be a JSON object of named arguments", "not an array"}},
		{"args-string", "get_vars", `"keys"`, []string{"must be a JSON object", "not a string"}},
		// missing
		{"missing-required", "transition", `{}`, []string{`missing required argument "to"`}},
		{"missing-two", "start_workflow", `{}`, []string{`missing required argument "type"`, `missing required argument "context"`}},
		{"null-required", "complete_workflow", `{"outcome":null}`, []string{`missing required argument "outcome"`}},
		// Said with what to send: such a field's description is only its limit or its use.
		{"missing-data", "save_checkpoint", `{"name":"n"}`, []string{`missing required argument "data": a JSON object or array.`}},
		{"missing-entry", "append_log", `{"name":"decisions"}`, []string{`missing required argument "entry": a JSON object.`}},
		{"missing-violations", "set_enforcement", `{}`, []string{`missing required argument "violations": an array of {"code", "severity", "details"} objects.`}},
		{"empty-required", "complete_workflow", `{"outcome":""}`, []string{`"outcome" is empty`}},
		// A description goes on after the colon in lower case: it read "is empty: Such as plan-v1."
		{"empty-name", "save_checkpoint", `{"name":"","data":{}}`, []string{`argument "name" is empty: such as plan-v1.`}},
		{"missing-name", "save_checkpoint", `{"data":{}}`, []string{`missing required argument "name": such as plan-v1.`}},
		{"violation-missing-severity", "set_enforcement", `{"violations":[{"code":"V1","details":"d"}]}`, []string{`"violations[0].severity" is missing`}},
		// unknown
		{"unknown-field", "transition", `{"to":"plan","phase":"plan"}`, []string{`an unknown argument "phase"`, "{to, from?, checkpoint?, outputs?, note?}"}},
		// Named, so that the model sees which key it misspelt; one that is no argument name
		// (it may be text pasted in the wrong place) is counted, not repeated.
		{"misspelt-unnamed", "get_vars", `{"names":["PLAN_PATH"]}`, []string{`an unknown argument "names" (get_vars takes {keys?})`}},
		{"unknown-not-a-name", "get_vars", `{"my notes: x":1}`, []string{`an unknown argument (get_vars takes {keys?})`}},
		{"unknown-named-and-not", "get_vars", `{"names":1,"my notes: x":1}`, []string{`2 unknown arguments, "names" and 1 more (get_vars takes {keys?})`}},
		{"misspelt-field", "start_workflow", `{"type":"apex","context":"x","workflowId":"a"}`, []string{`did you mean "workflow_id"`}},
		// Two neighbouring letters swapped, the commonest slip, is a near miss too.
		{"transposed-field", "get_vars", `{"kyes":["PLAN_PATH"]}`, []string{`an unknown argument: did you mean "keys"? (get_vars takes {keys?})`}},
		{"transposed-field-case", "start_workflow", `{"type":"apex","context":"x","Workflwo_ID":"a"}`, []string{`did you mean "workflow_id"`}},
		{"unknown-on-no-arg-tool", "resume_check", `{"verbose":true}`, []string{`an unknown argument`, "no arguments"}},
		{"two-unknown", "initiative", `{"action":"get","verbose":1,"zz_unknown":2}`, []string{`(nothing was changed): 2 unknown arguments, "verbose" and "zz_unknown" (initiative takes {action, title?, status?, milestone?, note?})`}},
		{"violation-unknown-field", "set_enforcement", `{"violations":[{"code":"V1","severity":"HIGH","details":"d","file":"x"}]}`, []string{`an unknown field`}},
		// A ttl in another duration form is told its equivalent in the accepted one.
		{"ttl-other-form", "start_workflow", `{"type":"apex","context":"x","ttl":"1d12h"}`, []string{`argument "ttl" is not a duration such as 24h, 90m or 7d; write 36h, the same in that form`}},
		// Seconds are no unit: the refusal says so (it said only "not a duration such as 24h").
		{"ttl-seconds", "start_workflow", `{"type":"apex","context":"x","ttl":"1s"}`, []string{`argument "ttl" is not a duration such as 24h, 90m or 7d: a ttl is whole minutes, at least 1m`}},
		{"ttl-no-duration", "start_workflow", `{"type":"apex","context":"x","ttl":"soon"}`, []string{`argument "ttl" is not a duration such as 24h, 90m or 7d`}},
		// enums
		{"task-status", "update_task", `{"id":"t1","status":"finished"}`, []string{`"status" is not one of pending, running, done, failed`}},
		{"severity", "set_enforcement", `{"violations":[{"code":"V1","severity":"urgent","details":"d"}]}`, []string{"is not one of CRITICAL, HIGH, MEDIUM, LOW, INFO"}},
		{"initiative-action", "initiative", `{"action":"delete"}`, []string{"is not one of get, create, set_status, add_milestone, update_milestone"}},
		// oversized
		{"oversized-payload", "save_checkpoint", big, []string{"more than the limit", "keep large content in a file"}},
		{"long-context", "start_workflow", `{"type":"apex","context":"` + strings.Repeat("c", 301) + `"}`, []string{`"context" is 301 characters, more than the limit of 300`}},
		{"too-deep", "save_checkpoint", `{"name":"n","data":` + deep + `}`, []string{"nested deeper than"}},
		// load_checkpoint's phase is bounded as transition's phases are, though its schema
		// leaves the bound out (the tool definitions' budget)
		{"long-phase", "load_checkpoint", `{"phase":"` + strings.Repeat("p", 65) + `"}`, []string{`"phase" is 65 characters, more than the limit of 64`}},
		{"too-many-outputs", "transition", `{"to":"plan","outputs":[` + strings.TrimSuffix(strings.Repeat(`"a",`, 101), ",") + `]}`, []string{"101 items, more than the limit of 100"}},
		// malformed JSON the transport lets through
		{"duplicate-key", "transition", `{"to":"plan","to":"review"}`, []string{"duplicate", "each argument named once"}},
		// path tricks
		{"dotdot-name", "save_checkpoint", `{"name":"../../etc/passwd","data":{}}`, []string{`"name" is not 1 to 64 lowercase letters, digits`, "no '..'"}},
		{"slash-name", "load_checkpoint", `{"name":"a/b"}`, []string{`is not 1 to 64 lowercase letters, digits`}},
		{"backslash-name", "append_log", `{"name":"..\\x","entry":{}}`, []string{`is not 1 to 64 lowercase letters, digits`}},
		{"dot-name", "load_checkpoint", `{"name":".hidden"}`, []string{"starting with a letter or digit"}},
		{"absolute-name", "save_checkpoint", `{"name":"/tmp/x","data":{}}`, []string{"is not 1 to 64 lowercase letters"}},
		{"glob-slash", "list_checkpoints", `{"pattern":"../*"}`, []string{"no '/'"}},
		{"glob-unclosed-set", "list_checkpoints", `{"pattern":"plan-[0-9"}`, []string{`argument "pattern" is not a valid glob`, "'*'", "such as implement-*"}},
		{"glob-empty-set", "list_checkpoints", `{"pattern":"plan-[]"}`, []string{`argument "pattern" is not a valid glob`}},
		{"nul-in-output", "transition", `{"to":"plan","outputs":["a.md\u0000.png"]}`, []string{"control character U+0000"}},
		{"newline-in-note", "update_task", `{"id":"t1","status":"done","note":"a\nb"}`, []string{"must be one line"}},
		{"bad-var-name", "set_vars", `{"vars":{"A-B":"1"}}`, []string{"a name that is not a workflow variable name"}},
		// The first word's allowed values are named, so the next try can be right.
		{"one-word-var-name", "set_vars", `{"vars":{"LIMIT":"1"}}`, []string{"a name that is not a workflow variable name", strings.Join(vars.Words, ", ")}},
		{"code-running-var-name", "set_vars", `{"vars":{"GOFLAGS":"-toolexec=x"}}`, []string{"a name that is not a workflow variable name"}},
		{"bad-phase", "transition", `{"to":"../plan"}`, []string{"a phase name"}},
		{"bad-workflow-id", "start_workflow", `{"type":"apex","context":"x","workflow_id":"../x"}`, []string{`"workflow_id"`}},
		{"bad-ttl", "start_workflow", `{"type":"apex","context":"x","ttl":"forever"}`, []string{"a duration such as 24h"}},
		// secrets
		{"secret-in-data", "save_checkpoint", `{"name":"n","data":{"token":"` + ghToken + `"}}`, []string{"secret found", "$.data.token"}},
		{"secret-in-var", "set_vars", `{"vars":{"WF_AWS":"` + awsKey + `"}}`, []string{"secret found", "$.vars.WF_AWS"}},
		{"secret-as-unknown-argument", "get_vars", `{"` + ghToken + `":1}`, []string{"secret found"}},
		{"secret-in-note", "transition", `{"to":"plan","note":"use ` + ghToken + `"}`, []string{"secret found", "$.note"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st.mu.Lock()
			rev := st.wf.Revision
			st.mu.Unlock()
			readOnly := st.onlySnapshots()

			res := mustFail(t, c, tc.tool, tc.args, tc.want...)
			got := text(res)
			if !strings.Contains(got, "nothing was changed") {
				t.Errorf("error %q does not say that nothing was changed", clip(got))
			}
			for _, bad := range []string{ghToken, awsKey, "../../etc/passwd", `"finished"`, "A-B", "GOFLAGS", "workflowId", "../plan", "forever"} {
				if strings.Contains(got, bad) {
					t.Errorf("error repeats the secret: %q", got)
				}
			}
			readOnly(t)
			st.mu.Lock()
			defer st.mu.Unlock()
			if st.wf.Revision != rev {
				t.Errorf("revision moved %d -> %d", rev, st.wf.Revision)
			}
		})
	}
}

// A checkpoint's data given as JSON text in a string is saved as the JSON value it holds:
// Claude Code parses a string holding an object into the object for this argument's type
// (object or array) but leaves one holding an array a string (the end-to-end
// TestToyArgumentsRewrittenBySchema), and a string is never a value this argument takes.
func TestCheckpointDataAsText(t *testing.T) {
	opts, st := fakeOptions(t)
	_, c := startServer(t, opts)
	for name, arg := range map[string]string{
		"files": `"[\"upload.go\", \"retry.go\"]"`,
		"plan":  `" {\"steps\":[1,2]}\n"`,
	} {
		mustOK(t, c, "save_checkpoint", `{"name":"`+name+`","data":`+arg+`}`)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for name, want := range map[string]string{"files": `["upload.go", "retry.go"]`, "plan": `{"steps":[1,2]}`} {
		if got := string(st.checkpoints[name]); got != want {
			t.Errorf("checkpoint %s saved as %q, want %q", name, got, want)
		}
	}
}

// TestErrorTextIsSafe checks that no error steers the agent toward a destructive step.
func TestErrorTextIsSafe(t *testing.T) {
	opts, _ := fakeOptions(t)
	_, c := startServer(t, opts)
	calls := [][2]string{
		{"transition", `{"to":"review"}`},
		{"complete_workflow", `{"outcome":"x"}`},
		{"load_checkpoint", `{"name":"missing"}`},
		{"save_checkpoint", `{"name":"../x","data":{}}`},
		{"start_workflow", `{"type":"nope","context":"x"}`},
	}
	for _, cl := range calls {
		res := callRaw(t, c, cl[0], cl[1])
		low := strings.ToLower(text(res))
		for _, bad := range []string{"delete", "rm ", "rm -", "reset", "remove the", "force"} {
			if strings.Contains(low, bad) {
				t.Errorf("%s error steers toward %q: %s", cl[0], bad, text(res))
			}
		}
	}
}

func TestOversizedArgumentsAreOneProblem(t *testing.T) {
	opts, _ := fakeOptions(t)
	_, c := startServer(t, opts)
	// Many unknown fields: the report stays short.
	var b strings.Builder
	b.WriteString(`{`)
	for i := range 50 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"f%d":1`, i)
	}
	b.WriteString(`}`)
	res := mustFail(t, c, "resume_check", b.String(), `50 unknown arguments, "f0", "f1", "f10" and 47 more (resume_check takes no arguments: send {})`)
	if n := strings.Count(text(res), "\n- "); n > 6 {
		t.Errorf("report lists %d problems; want at most 6", n)
	}
	// Said once, with the count, not the same line once per argument.
	if n := strings.Count(text(res), "unknown argument"); n != 1 {
		t.Errorf("report says unknown arguments %d times:\n%s", n, text(res))
	}
}

func TestSeverityAndStatusAreNormalised(t *testing.T) {
	opts, st := fakeOptions(t)
	_, c := startServer(t, opts)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"x"}`)
	mustOK(t, c, "set_enforcement", `{"violations":[{"code":"V-TEST-03","severity":"high","details":"tests missing"}]}`)
	mustOK(t, c, "update_task", `{"id":"t1","status":"DONE"}`)
	st.mu.Lock()
	defer st.mu.Unlock()
	if got := st.wf.Violations[0].Severity; got != "HIGH" {
		t.Errorf("severity = %q, want HIGH", got)
	}
	if got := st.wf.Tasks["t1"]; got != "done" {
		t.Errorf("task status = %q, want done", got)
	}
	if !slices.Contains(st.calls, "enforcement") {
		t.Error("set_enforcement did not reach the engine")
	}
}

// TestTaskStatusInClaudeCodesWords: Claude Code's own task list says in_progress and
// completed (TaskUpdate's statuses), and a model used to them sends them to update_task: they
// are taken as running and done, not refused, with the schema's enum left as it is.
func TestTaskStatusInClaudeCodesWords(t *testing.T) {
	opts, st := fakeOptions(t)
	_, c := startServer(t, opts)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"x"}`)
	for sent, want := range map[string]string{"in_progress": "running", "completed": "done", "Completed": "done"} {
		mustOK(t, c, "update_task", `{"id":"t1","status":"`+sent+`"}`)
		st.mu.Lock()
		got := st.wf.Tasks["t1"]
		st.mu.Unlock()
		if got != want {
			t.Errorf("status %q: task status = %q, want %q", sent, got, want)
		}
	}
	mustFail(t, c, "update_task", `{"id":"t1","status":"finished"}`, `argument "status" is not one of pending, running, done, failed`)
}

// TestEveryToolRefusesBadArguments walks every tool's published schema: for each tool, an
// unknown argument, a non-object, each argument with a value of the wrong JSON type, and each
// required argument left out. Every one must be an isError result that names the argument,
// with no engine call.
func TestEveryToolRefusesBadArguments(t *testing.T) {
	opts, st := fakeOptions(t)
	_, c := startServer(t, opts)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"x"}`)
	list, err := c.ListTools(testCtx(t), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	// wrong holds a value of another JSON type for each type the schemas use.
	wrong := map[string]string{"string": `12345`, "boolean": `"true"`, "array": `{"a":1}`, "object": `"{}"`}
	good := func(name string, p map[string]any) string {
		switch typ, _ := p["type"].(string); typ {
		case "boolean":
			return `true`
		case "array":
			if name == "violations" {
				return `[]`
			}
			return `["A"]`
		case "object":
			if name == "vars" {
				return `{"WF_A":"1"}`
			}
			return `{"k":1}`
		case "":
			return `{"k":1}` // data: object or array
		}
		if enum, ok := p["enum"].([]any); ok {
			return fmt.Sprintf("%q", enum[0])
		}
		return `"a1"`
	}
	for _, tool := range list.Tools {
		props := tool.InputSchema.Properties
		base := map[string]string{}
		for _, name := range tool.InputSchema.Required {
			base[name] = good(name, props[name].(map[string]any))
		}
		args := func(m map[string]string) string {
			var parts []string
			for k, v := range m {
				parts = append(parts, fmt.Sprintf("%q:%s", k, v))
			}
			slices.Sort(parts)
			return "{" + strings.Join(parts, ",") + "}"
		}
		with := func(k, v string) map[string]string {
			m := maps.Clone(base)
			if v == "" {
				delete(m, k)
			} else {
				m[k] = v
			}
			return m
		}
		type tc struct {
			name, args string
			want       []string
		}
		cases := []tc{
			{"unknown", args(with("zz_unknown", `1`)), []string{`an unknown argument`}},
			{"not-an-object", `["x"]`, []string{"must be a JSON object"}},
		}
		for name, p := range props {
			typ, _ := p.(map[string]any)["type"].(string)
			if w, ok := wrong[typ]; ok {
				cases = append(cases, tc{"wrong-type-" + name, args(with(name, w)), []string{fmt.Sprintf("%q must be", name)}})
			}
		}
		for _, name := range tool.InputSchema.Required {
			want := []string{fmt.Sprintf("missing required argument %q", name)}
			if enum, ok := props[name].(map[string]any)["enum"].([]any); ok {
				values := make([]string, len(enum))
				for i, v := range enum {
					values[i] = fmt.Sprint(v)
				}
				want = append(want, "one of "+strings.Join(values, ", ")) // what it takes
			}
			cases = append(cases, tc{"missing-" + name, args(with(name, "")), want})
		}
		for _, cs := range cases {
			t.Run(tool.Name+"/"+cs.name, func(t *testing.T) {
				readOnly := st.onlySnapshots()
				res := mustFail(t, c, tool.Name, cs.args, append(cs.want, "nothing was changed")...)
				for line := range strings.Lines(text(res)) {
					if strings.HasSuffix(strings.TrimRight(line, "\n"), ": ") {
						t.Errorf("a line of the refusal says nothing after its colon: %q", line)
					}
				}
				readOnly(t)
			})
		}
	}
}

// TestBadJSONInsideAnArgument: a key twice in one object, or nesting too deep, inside one
// argument's value (a checkpoint's data, a log entry) was refused as if an argument were
// named twice ("send one JSON object with each argument named once"), a step that changes
// nothing, naming no argument, and with the arguments' depth limit rather than the value's.
// The refusal names the argument and what to change in it; an argument named twice is still
// refused as that.
func TestBadJSONInsideAnArgument(t *testing.T) {
	_, c := realServer(t)
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, tc := range []struct {
		name, tool, args string
		want             []string
	}{
		{"key twice in data", "save_checkpoint", `{"name":"n","data":{"a":1,"a":2}}`, []string{`argument "data"`, "duplicate key", "each key once"}},
		{"key twice deep in an entry", "append_log", `{"name":"l","entry":{"a":{"b":1,"b":2}}}`, []string{`argument "entry"`, "duplicate key", "each key once"}},
		{"key twice in a checkpoint", "transition", `{"to":"plan","checkpoint":{"a":1,"a":1}}`, []string{`argument "checkpoint"`, "duplicate key"}},
		{"data too deep", "save_checkpoint", `{"name":"n","data":` + deep(70) + `}`, []string{`argument "data"`, "nested deeper than 64 levels"}},
		{"argument named twice", "transition", `{"to":"plan","to":"review"}`, []string{"duplicate", "each argument named once"}},
		{"too deep in an unknown argument", "transition", `{"to":"plan","zz":` + deep(70) + `}`, []string{"an unknown argument"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := text(mustFail(t, c, tc.tool, tc.args, append(tc.want, "nothing was changed")...))
			if tc.name != "argument named twice" && strings.Contains(got, "each argument named once") {
				t.Errorf("the refusal steers to naming each argument once, which each already is: %q", got)
			}
		})
	}
}

// TestWindowsDeviceNamesRefusedAsArguments: a name the schema's pattern lets through but that
// Windows reserves for a device (con, nul, com1, with any extension) was refused by the store
// in its own words, naming neither the tool nor the argument and saying nothing was changed;
// a workflow id was refused with no step at all. Each is refused as the argument it is.
func TestWindowsDeviceNamesRefusedAsArguments(t *testing.T) {
	_, c := realServer(t)
	for _, tc := range []struct{ tool, args, arg string }{
		{"start_workflow", `{"type":"apex","context":"x","workflow_id":"con"}`, "workflow_id"},
		{"start_workflow", `{"type":"apex","context":"x","workflow_id":"cON.v2"}`, "workflow_id"},
		{"save_checkpoint", `{"name":"nul","data":{}}`, "name"},
		{"load_checkpoint", `{"name":"com1.json"}`, "name"},
		{"append_log", `{"name":"aux","entry":{}}`, "name"},
	} {
		t.Run(tc.tool+" "+tc.args, func(t *testing.T) {
			mustFail(t, c, tc.tool, tc.args, tc.tool+" was not run (nothing was changed)", fmt.Sprintf("argument %q", tc.arg), "reserved device name on Windows", "choose another")
		})
	}
	mustOK(t, c, "save_checkpoint", `{"name":"console","data":{}}`) // only the device name itself
}

// TestNameRuleIsSaidOnce: the rule for a checkpoint's or a log's name read one way in a tool's
// refusal and another in the store's (a person's cairn checkpoint save): two wordings of one
// rule, one of them longer than it needs to be. Both say the store's.
func TestNameRuleIsSaidOnce(t *testing.T) {
	_, rule, _ := strings.Cut((&store.NameError{Reason: "x"}).Error(), "(a name is ")
	rule = strings.TrimSuffix(rule, ")")
	opts, _ := fakeOptions(t)
	_, c := startServer(t, opts)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"x"}`)
	mustFail(t, c, "save_checkpoint", `{"name":"Plan","data":{}}`, "is not "+rule)
}
