package memory

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
)

// A learning's description joins its title and the first line of its body ("title: body"):
// a secret's name as the title and its value as the body are each clean, and the file
// written must not hold them joined.
func TestLearningRefusesASecretSplitOverTitleAndBody(t *testing.T) {
	tried := 0
	for _, sh := range secrettest.Shapes() {
		ctx, ok := strings.CutSuffix(sh.Text, sh.Core)
		title := strings.TrimRight(ctx, `=: "'`)
		if !ok || title == "" || secrets.ScanString(title) != nil || secrets.ScanString(sh.Core) != nil ||
			secrets.ScanString(title+": "+sh.Core) == nil {
			continue
		}
		tried++
		m, dir := newTestMemory(t)
		_, _, err := m.RecordLearning(Learning{Title: title, Body: sh.Core})
		if f := (*secrets.Finding)(nil); !errors.As(err, &f) {
			t.Errorf("%s: title %q, body its value: err = %v, want a *secrets.Finding", sh.Name, title, err)
		}
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if b, _ := os.ReadFile(p); err == nil && !d.IsDir() && strings.Contains(string(b), sh.Core) {
				t.Errorf("%s: %s holds the secret", sh.Name, filepath.Base(p))
			}
			return nil
		})
	}
	if tried == 0 {
		t.Fatal("no secret shape splits into a clean name and a clean value")
	}
	t.Logf("%d shapes split over title and body", tried)
}
