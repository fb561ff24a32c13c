package store

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// An archive's summary cuts a context an older Cairn stored longer than a start takes
// (workflow.MaxContextRunes) to that length, for archive.json, its index line and the
// listings; a cut right after the body of a key glued to more text ("sk_live_...-x", no secret)
// is one. The cut ends before that word.
func TestArchiveContextCutMakesNoSecret(t *testing.T) {
	pad := "fix " + strings.Repeat("w", 100) + " "
	ctx := pad + secrettest.GluedKey(t, workflow.MaxContextRunes-len(pad)) + " " + strings.Repeat("t", 100)
	record, _ := json.Marshal(map[string]string{"type": "apex", "state": "plan", "context": ctx})
	var a ArchiveInfo
	a.summarize(record)
	if secrets.ScanString(a.Context) != nil || !strings.HasPrefix(a.Context, pad[:len(pad)-1]) {
		t.Fatalf("context %q", a.Context)
	}
}
