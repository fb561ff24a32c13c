package memory

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A memory of the user's own (the model names memory files after their subject, and "how we
// run Cairn workflows" is cairn-workflow.md) is not Cairn's topic file: a line is not written
// over it, which dropped its prose and took its list items for Cairn's events, nor is a list
// item of it read back as the last position. The step keeps it and its index line: renamed
// together, Cairn's file and line go in beside them.
func TestUsersOwnFileAtTheTopicFilesName(t *testing.T) {
	const (
		mine  = "---\nname: cairn-workflow\ndescription: How this team runs Cairn workflows\nmetadata:\n  type: project\n---\n\nWe always run analyze before plan.\n- Approvals go through Jane\n- Never skip the review phase\n"
		index = "- [How we run Cairn](cairn-workflow.md) — analyze before plan\n"
	)
	m, dir := newTestMemory(t)
	writeTopic(t, dir, mine)
	if err := os.WriteFile(filepath.Join(dir, IndexFile), []byte(index), 0o600); err != nil {
		t.Fatal(err)
	}
	err := m.Record("Active APEX workflow: analyze completed, planning x")
	if !LeftAlone(err) || !IsUnavailable(err) {
		t.Fatalf("Record over the user's own cairn-workflow.md = %v, want it left alone (and the line owed)", err)
	}
	if step := LeftAloneStep(err); !strings.Contains(step, "rename") || !strings.Contains(step, IndexFile) {
		t.Errorf("the step %q does not keep the file and its index line", step)
	}
	if got := readFile(t, filepath.Join(dir, TopicFile)); got != mine {
		t.Errorf("the user's file was rewritten:\n%s", got)
	}
	if got := readFile(t, filepath.Join(dir, IndexFile)); got != index {
		t.Errorf("the user's index line was rewritten: %q", got)
	}
	if last, ok, err := m.LastPosition(); ok {
		t.Errorf("LastPosition read the user's file as Cairn's: %+v, %v", last, err)
	}
}

// What is written over still: a file of list items only (kept, as lines without a time), and
// Cairn's own file edited by hand, which its intro, its data block or a timed line tells.
func TestTopicFilesCairnWritesOver(t *testing.T) {
	for name, topic := range map[string]string{
		"list items only":           "---\nname: cairn-workflow\ndescription: where the work stands\n---\n\n- The team ships OAuth today\n",
		"Cairn's intro and a note":  topicOwnWords + " for this project, oldest first.\n\nA note of mine.\n- 2026-11-22T16:00:00Z Active APEX workflow: plan\n",
		"a data block and a note":   "A note of mine.\n\n```text\nActive APEX workflow: plan\n```\n",
		"timed lines under a title": "# Where we are\n- 2026-11-22T16:00:00Z Active APEX workflow: plan\n",
	} {
		t.Run(name, func(t *testing.T) {
			m, dir := newTestMemory(t)
			writeTopic(t, dir, topic)
			if err := m.Record("Active APEX workflow: analyze completed, planning x"); err != nil {
				t.Fatal(err)
			}
			if last, ok, err := m.LastPosition(); err != nil || !ok || last.Text != "Active APEX workflow: analyze completed, planning x" {
				t.Errorf("LastPosition = %+v, %v, %v; want the line recorded", last, ok, err)
			}
		})
	}
}

// cairn uninstall takes out Cairn's files and lines only: a memory of the user's own at the
// topic file's name, and its index line, stay.
func TestUninstallKeepsUsersOwnFileAtTheTopicFilesName(t *testing.T) {
	const (
		mine  = "---\nname: cairn-workflow\ndescription: How this team runs Cairn workflows\n---\n\nWe always run analyze before plan.\n"
		index = "- [How we run Cairn](cairn-workflow.md) — analyze before plan\n"
	)
	m, dir := newTestMemory(t)
	writeTopic(t, dir, mine)
	if err := os.WriteFile(filepath.Join(dir, IndexFile), []byte(index), 0o600); err != nil {
		t.Fatal(err)
	}
	if fp, err := m.Footprint(); err != nil || !fp.Empty() {
		t.Errorf("Footprint = %+v, %v; want nothing of Cairn's", fp, err)
	}
	if _, err := m.RemoveCairn(nil); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dir, TopicFile)); got != mine {
		t.Errorf("the user's file after uninstall: %q", got)
	}
	if got := readFile(t, filepath.Join(dir, IndexFile)); got != index {
		t.Errorf("MEMORY.md after uninstall = %q, want %q", got, index)
	}
}
