package engine_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// A turn's end whose task list is as the workflow has it (every file has its subject, as
// Claude Code writes it) changes nothing, and takes no lock to learn that: it waited for the
// workflow's lock every turn, and a process holding it made the turn's end fail its task check.
func TestStopWithTheTaskListAsRecordedTakesNoLock(t *testing.T) {
	t.Parallel()
	const sess = "sess-aaaa-1"
	e := newEnv(t)
	must(e.open("s1").Start(engine.StartRequest{Type: "apex", Context: "c"}))(t)
	en := e.open(sess)
	must(en.RecordClaudeTask(engine.ClaudeTask{SessionID: sess, TaskID: "1", Subject: "write the parser"}, false))(t)
	must(en.RecordClaudeTask(engine.ClaudeTask{SessionID: sess, TaskID: "2", Subject: "finished"}, false))(t)
	must(en.RecordClaudeTask(engine.ClaudeTask{SessionID: sess, TaskID: "2", Subject: "finished"}, true))(t)
	dir := filepath.Join(e.home, ".claude", "tasks", sess)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"1.json": `{"status":"pending","subject":"write the parser"}`,
		"2.json": `{"status":"completed","subject":"finished"}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	holdLock(t, en.StateDir(), ".lock-workflow")
	out, err := e.openWaiting(sess, 4242, 50*time.Millisecond).Stop(engine.StopInput{SessionID: sess})
	if err != nil || out.DroppedErr != nil {
		t.Fatalf("Stop with the task list as recorded, the workflow locked elsewhere: %v, %v", err, out.DroppedErr)
	}
	if out.Followed != (engine.TasksFollowed{}) {
		t.Errorf("followed %+v, want nothing", out.Followed)
	}
}
