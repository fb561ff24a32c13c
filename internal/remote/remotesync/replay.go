package remotesync

import (
	"context"
	"encoding/json"

	"github.com/cairn-dev/cairn/internal/engine"
)

// EngineReplayer replays lost transitions through e: each is asked again as a conditional
// move ("to TO, only from FROM"), so the state machine applies it only where it still makes
// sense on the remote's line. Other kinds of change are not replayed yet: their journal event
// does not carry the change itself, and they stay in the conflict archive.
func EngineReplayer(e *engine.Engine) Replayer {
	return func(ctx context.Context, lost []Entry) (int, error) {
		applied := 0
		for _, l := range lost {
			if l.Event.Kind != "transition" {
				continue
			}
			var d struct {
				From string `json:"from"`
				To   string `json:"to"`
				Note string `json:"note"`
			}
			if json.Unmarshal([]byte(l.Event.Detail), &d) != nil || d.From == "" || d.To == "" {
				continue
			}
			res, err := e.Transition(engine.TransitionRequest{From: d.From, To: d.To, Note: d.Note})
			if err != nil {
				continue // refused by the state machine: archived only
			}
			if res.Changed {
				applied++
			}
		}
		return applied, nil
	}
}
