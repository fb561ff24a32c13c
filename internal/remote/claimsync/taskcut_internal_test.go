package claimsync

import (
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote/claim"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// The claims' messages name a task by its id cut to 64 characters, the remote by its name cut
// to 40 and the workflow by its id cut to 64; a name with no secret's shape (a key glued to
// more text, "sk_live_...-x") cut right after the key's body is one, and no message holds
// such a cut.
func TestTaskCutMakesNoSecret(t *testing.T) {
	for _, tc := range []struct{ name, task, remote, wf string }{
		{"task id", secrettest.GluedKey(t, 64), "origin", "wf-1"},
		{"remote name", "t1", secrettest.GluedKey(t, 40), "wf-1"},
		{"workflow id", "t1", "origin", secrettest.GluedKey(t, 64)},
	} {
		c := &clone{remote: tc.remote, wf: &workflow.Record{WorkflowID: tc.wf}, now: time.Now}
		h := claim.Holder{Owner: "m2"}
		for name, msg := range map[string]string{
			"held":     c.heldError(tc.task, h, time.Minute).Error(),
			"taken":    c.takenError(tc.task, h, true).Error(),
			"now held": c.nowHeld(tc.task, h),
			"released": c.takenAndReleased(tc.task, h),
			"refused":  refusedNote(tc.task, tc.remote),
			"too many": c.tooMany(map[string]claim.Holder{tc.task: h}, 1).Error(),
		} {
			if secrets.ScanString(msg) != nil {
				t.Errorf("%s, %s: %q", tc.name, name, msg)
			}
		}
	}
}
