package memory

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/cairn-dev/cairn/internal/textsafe"
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
		_, _, err := recordLearning(m, Learning{Title: title, Body: sh.Core})
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

// The index line shows the latest L2 line cut to fit, its quoted context cut first: a token
// glued to more text ("ghp_…-x", which is no secret) cut right after its body is one. MEMORY.md,
// in every session's context, must not hold it; the line then says what Cairn says, its quoted
// parts left out as the topic file's description leaves them.
func TestIndexLineCutMakesNoSecret(t *testing.T) {
	tok := secrettest.GluedToken(t)
	cuts := 0
	for pad := range 80 {
		line := "Active APEX workflow: analyze completed, planning “" + strings.Repeat("w", pad) + " " + tok + " tail”"
		if secrets.ScanString(line) != nil {
			t.Fatalf("pad %d: the line itself is a secret", pad)
		}
		m, dir := newTestMemory(t)
		if err := m.Record(line); err != nil {
			t.Fatalf("pad %d: %v", pad, err)
		}
		index := readFile(t, filepath.Join(dir, IndexFile))
		if secrets.ScanString(index) != nil {
			t.Errorf("pad %d: MEMORY.md holds a secret: %s", pad, index)
		}
		if !strings.Contains(index, "Active APEX workflow: analyze completed, planning “") {
			cuts++
			if want := topicEntry(line); !strings.HasPrefix(index, want) || want != IndexLine(TopicTitle, TopicFile, "Active APEX workflow: analyze completed, planning …") {
				t.Errorf("pad %d: MEMORY.md = %q", pad, index)
			}
		}
	}
	if cuts == 0 {
		t.Error("no cut made a secret: the test tests nothing")
	}
}

// The topic file's description (its front matter, read with the index) says the latest L2
// line without its quoted parts, cut to fit: Cairn's words there (a phase's verb from a
// definition) may hold a token glued to more text ("ghp_…-x", which is no secret), which a cut
// right after its body makes one. The cut ends before that word.
func TestTopicDescriptionCutMakesNoSecret(t *testing.T) {
	tok := secrettest.GluedToken(t)
	made := 0 // lines whose description, cut as it was, had a secret's shape
	for pad := range 80 {
		line := "Active APEX workflow: analyze completed, " + strings.Repeat("w", 50+pad) + " " + tok + " tail “context”"
		if secrets.ScanString(line) != nil {
			t.Fatalf("pad %d: the line itself is a secret", pad)
		}
		if secrets.ScanString(textsafe.Line(topicNow.desc+": "+textsafe.WithoutQuoted(line), maxHookRunes+50)) != nil {
			made++
		}
		m, dir := newTestMemory(t)
		if err := m.Record(line); err != nil {
			t.Fatalf("pad %d: %v", pad, err)
		}
		topic := readFile(t, filepath.Join(dir, TopicFile))
		if f := secrets.ScanString(topic); f != nil {
			t.Errorf("pad %d: %s holds a secret's shape (%s): %s", pad, TopicFile, f.Rule, topic)
		}
		if !strings.Contains(topic, "Cairn workflow position: Active APEX workflow: analyze completed, www") {
			t.Errorf("pad %d: %s does not describe the line: %s", pad, TopicFile, topic)
		}
	}
	if made == 0 {
		t.Error("no cut made a secret: the test tests nothing")
	}
}
