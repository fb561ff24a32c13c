package remotesync

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/textsafe"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// EngineReplayer replays lost changes through e, one write per change: every kind the journal
// holds (moves with their approvals, outputs and checkpoints, tasks, variables, artifacts,
// enforcement, phase status, approvals, completion, outputs dropped) is read as the operations
// that made it and asked again of the state machine on the remote's line (engine.Replay). A
// part the remote changed first since the shared revision, or that no longer applies, is left
// out and named in c.Skipped.
func EngineReplayer(e *engine.Engine) Replayer {
	return func(ctx context.Context, c *Conflict) (int, error) {
		if c.Base == nil {
			c.Skipped = append(c.Skipped, "the two copies share no revision: nothing of this machine's was replayed")
			return 0, nil
		}
		base, err := store.ParseRecord(c.Base)
		if err != nil {
			return 0, err
		}
		theirs, err := store.ParseRecord(c.Theirs)
		if err != nil {
			return 0, err
		}
		before, applied := base, 0
		err = c.EachLost(func(l Entry) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			after, err := store.ParseRecord(l.Snapshot)
			if err != nil {
				return err
			}
			res, skipped, err := e.Replay(base, theirs, before, after, workflow.Event(l.Event.Kind))
			if err != nil {
				return err
			}
			c.Skipped = append(c.Skipped, skipped...)
			if res.Changed {
				applied++
			}
			before = after
			return nil
		})
		if errors.Is(err, engine.ErrNoActiveWorkflow) {
			// A replayed completion ended the workflow: what came after it is not replayed.
			c.Skipped = append(c.Skipped, "the workflow ended before this machine's later changes were replayed")
			return applied, nil
		}
		return applied, err
	}
}

// NotReplayed says in one line what of this machine's work the replay left out (the first
// few of Skipped), "" when nothing was.
func (c *Conflict) NotReplayed() string {
	const few = 3
	var parts []string
	for i, s := range c.Skipped {
		if i == few {
			parts = append(parts, fmt.Sprintf("and %d more", len(c.Skipped)-few))
			break
		}
		parts = append(parts, wholeWords(secrets.Line(s, 160)))
	}
	return strings.Join(parts, "; ")
}

// wholeWords is cut, a line cut short (ending in textsafe.Ellipsis), ending at its last whole
// word: a cut inside one left half an id or a date ("apex-20261130T2…") no one can read back.
// A word is whole before a space, so no cut makes of it another (a secret, secrets.Cut).
func wholeWords(cut string) string {
	head, ok := strings.CutSuffix(cut, textsafe.Ellipsis)
	if i := strings.LastIndexByte(head, ' '); ok && i > 0 {
		return head[:i] + " " + textsafe.Ellipsis
	}
	return cut
}
