package mcptools_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/mcptools"
)

// TestLoadCheckpointInParts: Claude Code does not show the agent a tool result over its output
// limit (25,000 tokens by default; 2.1.330 saves it to a file and shows a path instead), so a
// large checkpoint comes back as its size and parts, each readable with the part argument.
func TestLoadCheckpointInParts(t *testing.T) {
	opts, _ := fakeOptions(t)
	_, c := startServer(t, opts)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"x"}`)
	files := make([]string, 300)
	for i := range files {
		files[i] = fmt.Sprintf("file-%03d-%s", i, strings.Repeat("f", 200))
	}
	big, _ := json.Marshal(map[string]any{"files": files, "blob": strings.Repeat("b", 60000), "small": 7, "a/b": "slash"})
	mustOK(t, c, "save_checkpoint", `{"name":"big","data":`+string(big)+`}`)
	mustOK(t, c, "save_checkpoint", `{"name":"little","data":{"k":[1,2]}}`)

	res := mustOK(t, c, "load_checkpoint", `{"name":"big"}`)
	t.Logf("outline:\n%s", text(res))
	if strings.Contains(text(res), " 1 bytes") {
		t.Errorf("the outline says of a part \"1 bytes\": %s", text(res))
	}
	s := structured(t, res)
	raw, _ := json.Marshal(s)
	if len(raw) > 8<<10 || s["data"] != nil {
		t.Fatalf("a %d-byte checkpoint came back whole (%d bytes)", len(big), len(raw))
	}
	if m, _ := s["message"].(string); !strings.Contains(m, "part argument") {
		t.Errorf("the structured content, which is what Claude Code shows the agent, does not say how to read it: %q", m)
	}
	if s["bytes"] != float64(len(big)) {
		t.Errorf("bytes %v, want %d", s["bytes"], len(big))
	}
	for _, want := range []string{`"part":"/files"`, `"part":"/blob"`, `"part":"/a~1b"`, `"kind":"an array"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("the outline %s lacks %s", raw, want)
		}
	}
	if !strings.Contains(text(res), "part argument") || !strings.Contains(text(res), fmt.Sprint(len(big))) {
		t.Errorf("the text does not say how to read it: %s", text(res))
	}

	if got := structured(t, mustOK(t, c, "load_checkpoint", `{"name":"big","part":"/files/3"}`))["data"]; got != files[3] {
		t.Errorf("/files/3 gave %v", got)
	}
	small := mustOK(t, c, "load_checkpoint", `{"name":"big","part":"/small"}`)
	if got := structured(t, small)["data"]; got != float64(7) {
		t.Errorf("/small gave %v", got)
	}
	// A part of one byte is said as one: "(1 bytes)" read wrong.
	if got := text(small); !strings.HasPrefix(got, "Checkpoint big at /small (1 byte):\n7") {
		t.Errorf("/small is said as %q", got)
	}
	if got := structured(t, mustOK(t, c, "load_checkpoint", `{"name":"big","part":"/a~1b"}`))["data"]; got != "slash" {
		t.Errorf("/a~1b gave %v", got)
	}
	// The array is itself too large: its outline gives the item range.
	arr := mustOK(t, c, "load_checkpoint", `{"name":"big","part":"/files"}`)
	t.Logf("array outline: %d characters, first lines:\n%s", len(text(arr)), strings.Join(strings.SplitN(text(arr), "\n", 4)[:3], "\n"))
	if structured(t, arr)["data"] != nil || !strings.Contains(text(arr), "/files/0") || !strings.Contains(text(arr), "/files/299") {
		t.Errorf("/files gave %s", clip(text(arr)))
	}
	if res := mustFail(t, c, "load_checkpoint", `{"name":"big","part":"/blob"}`, "a string of 60002 bytes", filepath.Join(opts.WorkDir, "checkpoints", "big.json")); strings.Contains(text(res), "`cairn") {
		t.Errorf("the model is sent to a command of a person's: %s", text(res))
	}
	mustFail(t, c, "load_checkpoint", `{"name":"big","part":"/nope"}`, "nothing at /nope")
	// An index is written as RFC 6901 writes it: "+3" was read as 3.
	for _, p := range []string{"/files/300", "/files/+3", "/files/03", "/files/-1"} {
		mustFail(t, c, "load_checkpoint", `{"name":"big","part":"`+p+`"}`, "nothing at "+p)
	}
	mustFail(t, c, "load_checkpoint", `{"name":"big","part":"files"}`, `argument "part"`, "such as /files/0")

	// A small checkpoint comes back whole, as before.
	if got, _ := json.Marshal(structured(t, mustOK(t, c, "load_checkpoint", `{"name":"little"}`))["data"]); string(got) != `{"k":[1,2]}` {
		t.Errorf("little gave %s", got)
	}
}

// TestLoadCheckpointNamesEveryMember: of an object too large to return at once, the outline is
// the only place the model learns its members' names, which part needs: each one it leaves out
// cannot be read (an array's items it leaves out are still named by their range).
func TestLoadCheckpointNamesEveryMember(t *testing.T) {
	opts, _ := fakeOptions(t)
	_, c := startServer(t, opts)
	// all: the members' names fit in one result, so the outline names every one; else it
	// names as many as fit and says how the others are read.
	for _, tc := range []struct {
		members, value int
		all            bool
	}{{201, 200, true}, {300, 200, true}, {600, 100, true}, {6000, 0, false}} {
		m := map[string]string{}
		for i := range tc.members {
			m[fmt.Sprintf("src/pkg%04d/file.go", i)] = strings.Repeat("s", tc.value)
		}
		doc, _ := json.Marshal(m)
		name := fmt.Sprintf("files-%d", tc.members)
		mustOK(t, c, "save_checkpoint", `{"name":"`+name+`","data":`+string(doc)+`}`)
		res := mustOK(t, c, "load_checkpoint", `{"name":"`+name+`"}`)
		raw, _ := json.Marshal(structured(t, res))
		if len(raw) > mcptools.MaxLoadBytes {
			t.Errorf("%d members: the outline is %d bytes, more than one result carries", tc.members, len(raw))
		}
		named := 0
		for i := range tc.members {
			if strings.Contains(string(raw), fmt.Sprintf(`"/src~1pkg%04d~1file.go"`, i)) {
				named++
			}
		}
		msg, _ := structured(t, res)["message"].(string)
		switch {
		case named == tc.members:
		case tc.all || named < 500:
			t.Errorf("%d members: the outline names %d, so no part reads the others: %s", tc.members, named, clip(string(raw)))
		case !strings.Contains(msg, fmt.Sprintf("%d more", tc.members-named)) || !strings.Contains(msg, filepath.Join(opts.WorkDir, "checkpoints", name+".json")) || strings.Contains(msg, "`cairn"):
			t.Errorf("%d members, %d named: the message does not say how to read the others: %s", tc.members, named, msg)
		}
	}
}

// TestLoadCheckpointOfAnyJSONValue: `cairn checkpoint save` keeps any JSON value, such as a
// path saved as a string, and load_checkpoint returns what it keeps: refusing a string or a
// number hid the checkpoint from the model with no step to read it.
func TestLoadCheckpointOfAnyJSONValue(t *testing.T) {
	opts, st := fakeOptions(t)
	_, c := startServer(t, opts)
	for name, v := range map[string]string{"path": `"docs/plan.md"`, "count": `7`, "done": `true`, "none": `null`} {
		st.mu.Lock()
		st.checkpoints[name] = json.RawMessage(v)
		st.mu.Unlock()
		res := mustOK(t, c, "load_checkpoint", `{"name":"`+name+`"}`)
		if got, _ := json.Marshal(structured(t, res)["data"]); string(got) != v {
			t.Errorf("%s: data %s, want %s", name, got, v)
		}
		if !strings.Contains(text(res), v) {
			t.Errorf("%s: the text does not hold %s: %s", name, v, text(res))
		}
	}
	st.mu.Lock()
	st.checkpoints["long"] = json.RawMessage(`"` + strings.Repeat("x", mcptools.MaxLoadBytes) + `"`)
	st.mu.Unlock()
	mustFail(t, c, "load_checkpoint", `{"name":"long"}`, filepath.Join(opts.WorkDir, "checkpoints", "long.json"))
	mustFail(t, c, "load_checkpoint", `{"name":"path","part":"/a"}`, "nothing at /a")
}

// TestLoadCheckpointOutlineAfterWhitespace: a checkpoint saved from a file or heredoc may
// begin with white space (`cairn checkpoint save` keeps it as given); when too large to return
// at once it is outlined like any other, not refused as a value that cannot be.
func TestLoadCheckpointOutlineAfterWhitespace(t *testing.T) {
	opts, st := fakeOptions(t)
	_, c := startServer(t, opts)
	items := make([]string, 300)
	for i := range items {
		items[i] = strings.Repeat("i", 200)
	}
	arr, _ := json.Marshal(items)
	obj, _ := json.Marshal(map[string]any{"items": items, "n": 1})
	for name, v := range map[string]string{"array": " \n\t" + string(arr), "object": "  " + string(obj) + "\n"} {
		st.mu.Lock()
		st.checkpoints[name] = json.RawMessage(v)
		st.mu.Unlock()
		res := mustOK(t, c, "load_checkpoint", `{"name":"`+name+`"}`)
		if parts, _ := structured(t, res)["parts"].([]any); len(parts) == 0 {
			t.Errorf("%s: no outline: %s", name, clip(text(res)))
		}
	}
	if res := mustOK(t, c, "load_checkpoint", `{"name":"array"}`); !strings.Contains(text(res), "array of 300 items, /0 to /299") {
		t.Errorf("the array's outline does not give its range: %s", clip(text(res)))
	}
}

// TestLoadPhaseCheckpointTooLargeSaysHow: a phase checkpoint's part too large for one result
// named the file it is kept in, but not that the Bash tool reads it in pieces, as a named
// checkpoint's refusal does: the model then read the whole file at once, too large again.
func TestLoadPhaseCheckpointTooLargeSaysHow(t *testing.T) {
	p, c := realServer(t)
	mustOK(t, c, "start_workflow", `{"type":"apex","context":"large phase checkpoint"}`)
	mustOK(t, c, "transition", `{"to":"plan","checkpoint":{"blob":"`+strings.Repeat("b", 60000)+`"}}`)
	mustOK(t, c, "save_checkpoint", `{"name":"big","data":{"blob":"`+strings.Repeat("b", 60000)+`"}}`)
	named := text(mustFail(t, c, "load_checkpoint", `{"name":"big","part":"/blob"}`, "a string of 60002 bytes"))
	phase := text(mustFail(t, c, "load_checkpoint", `{"phase":"analyze","part":"/blob"}`, "a string of 60002 bytes",
		"metadata.checkpoint of phase analyze", filepath.Join(p.state, "workflow-state.json")))
	const how = "which your Bash tool can read in pieces"
	if !strings.Contains(named, how) || !strings.Contains(phase, how) {
		t.Errorf("a part too large for one result does not say how to read the file:\nnamed: %s\nphase: %s", named, phase)
	}
}
