package engine_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/engine"
)

// A project where many clients ran within the hour (a script running `claude -p` in a loop;
// records of exited clients are pruned after an hour, and only when their pid is free) holds
// more session records than the 64 that were read, in name order: a running client's record
// past them was not seen, so a session resumed there was taken as ended and another session
// took the workflow over without a warning; nor was this client's own record, so the session
// /clear replaced here was another live session. Every record of a running client, and this
// client's own, is read.
func TestManySessionRecordsStillFindTheLiveClient(t *testing.T) {
	t.Parallel()
	const client = 4242
	if strings.HasPrefix(strconv.Itoa(os.Getpid()), "1000") {
		t.Skip("this process's pid sorts among the filler records")
	}
	for _, tc := range []struct {
		name     string
		ownerPID func(t *testing.T) int
		ranIn    int      // the client whose record names the owner's session (0: none)
		records  []string // the sessions this client recorded, in order
		live     bool
	}{
		{"owner client exited, its session resumed in a live client", exitedPID, os.Getpid(), nil, true},
		{"no pid recorded, ran in this client before clear", func(*testing.T) int { return 0 }, 0, []string{"old-session", "new-session"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			must(e.openAs("old-session", tc.ownerPID(t)).Start(engine.StartRequest{Type: "apex", Context: "ownership"}))(t)
			e.clock.Add(30 * time.Second)
			for i := range 80 { // exited clients' records, sorting before the others
				pid := 1000000 + i
				s := fmt.Sprintf("sess-%04d", i)
				must(0, e.openAs(s, pid).RecordSession(engine.Session{SessionID: s, PID: pid}))(t)
			}
			if tc.ranIn > 0 {
				must(0, e.openAs("old-session", tc.ranIn).RecordSession(engine.Session{SessionID: "old-session", PID: tc.ranIn}))(t)
			}
			for _, s := range tc.records {
				must(0, e.openAs(s, client).RecordSession(engine.Session{SessionID: s, PID: client}))(t)
			}
			res := e.openAs("new-session", client).Resume(engine.ResumeOptions{Apply: true})
			if live := strings.Contains(strings.Join(res.Warnings, "\n"), "Another live session"); live != tc.live {
				t.Errorf("taken as live %v, want %v: warnings %q", live, tc.live, res.Warnings)
			}
		})
	}
}
