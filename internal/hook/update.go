package hook

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/cairn-dev/cairn/internal/project"
	"github.com/cairn-dev/cairn/internal/textsafe"
)

// updateNotice is the line telling the user that the plugin running at CLAUDE_PLUGIN_ROOT was
// replaced by another version (project.Superseded: one stat where it was not), or "".
func updateNotice(getenv func(string) string) string {
	installed, running := project.Superseded(getenv, getenv("CLAUDE_PLUGIN_ROOT"))
	if installed == "" {
		return ""
	}
	return fmt.Sprintf("Cairn was updated to version %s; this session still runs %s: restart Claude Code to use it.", installed, running)
}

// withUpdateNotice adds updateNotice's line to a hook's answer out (a JSON object, or nil),
// once per session: where out's own systemMessage leaves no room for both, a later hook says it.
func withUpdateNotice(getenv func(string) string, out []byte) []byte {
	notice := updateNotice(getenv)
	if notice == "" {
		return out
	}
	msg := notice
	fields := map[string]json.RawMessage{}
	if len(out) > 0 && json.Unmarshal(out, &fields) != nil {
		return out
	}
	if old, ok := fields["systemMessage"]; ok {
		var s string
		if json.Unmarshal(old, &s) != nil || textsafe.Units(msg)+1+textsafe.Units(s) > MaxMessage {
			return out
		}
		msg += " " + s
	}
	if saidBefore(getenv, getenv("CLAUDE_CODE_SESSION_ID"), "update\x00"+getenv("CLAUDE_PLUGIN_ROOT")+"\x00"+notice) {
		return out
	}
	fields["systemMessage"] = bytes.TrimSpace(encode(OneLine(msg, MaxMessage)))
	return encode(fields)
}
