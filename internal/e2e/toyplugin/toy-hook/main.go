// Command toy-hook is the throwaway plugin's SessionStart and Stop hook, used only to prove the
// end-to-end harness. It logs every call (stdin and the Claude Code variables it sees) as one
// JSON line to $TOY_LOG, answers SessionStart with additionalContext naming the source (after
// sleeping $TOY_SESSION_START_SLEEP_MS), and, when $TOY_STOP_BLOCK is 1, blocks a Stop whose
// stop_hook_active is false.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

func main() {
	raw, _ := io.ReadAll(io.LimitReader(os.Stdin, 1<<20))
	var in struct {
		Event          string `json:"hook_event_name"`
		Source         string `json:"source"`
		SessionID      string `json:"session_id"`
		StopHookActive bool   `json:"stop_hook_active"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		fmt.Fprintf(os.Stderr, "toy-hook: stdin is not a hook event: %v\n", err)
	}
	logCall(raw)

	switch in.Event {
	case "SessionStart":
		if ms, err := strconv.Atoi(os.Getenv("TOY_SESSION_START_SLEEP_MS")); err == nil {
			time.Sleep(time.Duration(ms) * time.Millisecond)
		}
		emit(map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName":     "SessionStart",
			"additionalContext": fmt.Sprintf("TOY-CONTEXT source=%s session=%s", in.Source, in.SessionID),
		}})
	case "Stop":
		if os.Getenv("TOY_STOP_BLOCK") == "1" && !in.StopHookActive {
			emit(map[string]any{"decision": "block", "reason": "TOY-STOP-REASON: finish the toy chore first"})
		}
	}
}

func emit(v any) {
	if err := json.NewEncoder(os.Stdout).Encode(v); err != nil {
		fmt.Fprintf(os.Stderr, "toy-hook: writing output: %v\n", err)
	}
}

// logCall appends one line; a single O_APPEND write keeps concurrent hooks' lines whole.
func logCall(stdin []byte) {
	path := os.Getenv("TOY_LOG")
	if path == "" {
		return
	}
	wd, _ := os.Getwd()
	env := map[string]string{}
	for _, k := range []string{"CLAUDE_PROJECT_DIR", "CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA",
		"CLAUDE_CODE_SESSION_ID", "CLAUDE_PID", "CLAUDE_ENV_FILE", "HOME"} {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	var stdinObj any = string(stdin)
	if json.Valid(stdin) {
		stdinObj = json.RawMessage(stdin)
	}
	_, dataErr := os.Stat(os.Getenv("CLAUDE_PLUGIN_DATA"))
	line, _ := json.Marshal(map[string]any{
		"who": "hook", "pid": os.Getpid(), "ppid": os.Getppid(), "cwd": wd, "env": env, "stdin": stdinObj,
		"plugin_data_exists": dataErr == nil,
	})
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "toy-hook: opening log: %v\n", err)
		return
	}
	defer f.Close()
	_, _ = f.Write(append(line, '\n'))
}
