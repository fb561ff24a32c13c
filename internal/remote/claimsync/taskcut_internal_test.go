package claimsync

import (
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote/claim"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// The claims' messages name a task by its id cut to 64 characters; an id with no secret's
// shape (a key glued to more text, "sk_live_...-x") cut right after the key's body is one, and
// no message holds such a cut.
func TestTaskCutMakesNoSecret(t *testing.T) {
	task := secrettest.GluedKey(t, 64)
	c := &clone{remote: "origin", wf: &workflow.Record{}, now: time.Now}
	h := claim.Holder{Owner: "m2"}
	for name, msg := range map[string]string{
		"held":     c.heldError(task, h, time.Minute).Error(),
		"taken":    c.takenError(task, h, true).Error(),
		"now held": c.nowHeld(task, h),
		"released": c.takenAndReleased(task, h),
		"refused":  refusedNote(task, "origin"),
	} {
		if secrets.ScanString(msg) != nil {
			t.Errorf("%s: %q", name, msg)
		}
	}
}
