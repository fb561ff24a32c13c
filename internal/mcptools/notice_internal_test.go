package mcptools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
	"github.com/cairn-dev/cairn/internal/remote/remotesync"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// Notices that queue up between two calls (a sync or two, then another process) are said
// together, each what changed, with one instruction at the end, not one after each.
func TestQueuedNoticesEndWithOneInstruction(t *testing.T) {
	s := &Server{}
	s.addSyncNoticeLocked(nil, "Notice: another machine moved workflow wf-1 (via origin): it is now at phase plan (revision 3)."+callResume)
	s.addSyncNoticeLocked(nil, "Notice: another machine moved workflow wf-1 (via origin): it is now at phase implement (revision 4)."+callResume)
	generic := "Notice: another session changed workflow wf-1 since your last call: it is now at phase review (revision 5, was 2)." + callResume
	got := s.withSyncNotices(engine.Snapshot{WorkflowID: "wf-1", Revision: 5}, true, generic)
	if n := strings.Count(got, callResume); n != 1 || !strings.HasSuffix(got, callResume) ||
		!strings.Contains(got, "(revision 3). Notice: another machine") || !strings.Contains(got, "phase review (revision 5, was 2).") {
		t.Errorf("queued notices: %q", got)
	}
}

// The notice of a lost race says what the sync told of the conflict archive (that retention
// could not remove older archives, what finishing it kept aside): before, the model was told
// where this machine's copy went and nothing else the sync said.
func TestSyncNoticeSaysWhatTheArchiveLeft(t *testing.T) {
	said := "older archives were not removed this time (retention tries again at the next archive): archive/index.jsonl has a damaged line"
	pruned := engine.PrunedLine(store.ArchiveInfo{Pruned: []string{"completed-wf-0-a"}})
	out := remotesync.Outcome{Workflow: "wf-1", Local: 3, Notices: []string{said, pruned},
		Conflict: &remotesync.Conflict{Common: 1, Archive: store.ArchiveInfo{Revision: 2, Dir: "conflict-wf-1-x"}}}
	got := syncMessage("origin", out, engine.Snapshot{WorkflowID: "wf-1", Phase: "plan", Revision: 3})
	if !strings.Contains(got, said[1:]) || !strings.Contains(got, pruned[1:]) || !strings.Contains(got, "archive/conflict-wf-1-x") || !strings.HasSuffix(got, callResume) {
		t.Errorf("syncMessage = %q, want it to say %q and %q", got, said, pruned)
	}
	// each notice is a sentence of its own: none starts lower-case after the full stop before it
	for i := 0; i+2 < len(got); i++ {
		if got[i] == '.' && got[i+1] == ' ' && 'a' <= got[i+2] && got[i+2] <= 'z' {
			t.Errorf("syncMessage = %q: a sentence starts lower-case at %q", got, got[i:min(i+30, len(got))])
		}
	}
}

// A sync that fails because the remote's line is too large to take (store.ErrLineTooLarge)
// fails the same way every time: the notice says so and names the user's step, where before it
// said that the next sync retries.
func TestSyncFailureNoticeLineTooLarge(t *testing.T) {
	s := &Server{turn: make(chan struct{}, 1), opt: Options{Log: log.New(io.Discard, "", 0)}}
	y := &syncer{s: s, ctx: context.Background()}
	y.fail("origin", fmt.Errorf("remotesync: wf-1 changed both here and on origin: %w", store.ErrLineTooLarge))
	got := strings.Join(s.syncNotes, " ")
	if strings.Contains(got, "retries") || !strings.Contains(got, "every sync fails the same way") || !strings.Contains(got, "cairn remote disable") {
		t.Errorf("notice %q, want it to say that every sync fails the same way and the user's step", got)
	}
}

// A remote renamed or removed in the clone (gitremote.ErrNoRemote), one that pushes to another
// repository than it fetches from (gitremote.ErrSplit), or a host that refuses the push (a hook, whose words
// say why) fails every sync the same way:
// the notice says why and that cairn sync tells the user the step, where before it said that
// the next sync retries.
func TestSyncFailureNoticeRemoteGone(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&gitremote.GitError{Op: "fetch", Err: errors.New("exit status 128"), NoRemote: true}, "no longer a git remote of this clone"},
		{gitremote.ErrSplit, "pushes to another repository than it fetches from"},
		{&gitremote.RefusedError{Ref: "refs/cairn/wf/wf-1", Reason: "[remote rejected] (pre-receive hook declined)", HostSaid: "pushes are frozen until Monday"},
			"refused the push, and said: pushes are frozen until Monday"},
	} {
		s := &Server{turn: make(chan struct{}, 1), opt: Options{Log: log.New(io.Discard, "", 0)}}
		y := &syncer{s: s, ctx: context.Background()}
		y.fail("origin", fmt.Errorf("task claims: %w", c.err))
		got := strings.Join(s.syncNotes, " ")
		if strings.Contains(got, "retries") || !strings.Contains(got, c.want) || !strings.Contains(got, "every sync fails the same way") || !strings.Contains(got, "cairn sync") {
			t.Errorf("notice %q, want it to say %q, that every sync fails the same way, and where the user's step is", got, c.want)
		}
	}
}

// TestSyncFailureNoticeRefLocked: a ref of the clone's copy of the remote's refs locked past
// git's wait (gitremote.ErrLocked) was told as "a lock file that a stopped git left ... every
// sync fails the same way until that file is gone", which steered toward deleting it; a sync
// now clears a lock file a killed git left, so what holds it is a git that runs on (the user's,
// perhaps stopped with Ctrl-Z): the notice says so, that the next sync retries, and a safe step.
func TestSyncFailureNoticeRefLocked(t *testing.T) {
	s := &Server{turn: make(chan struct{}, 1), opt: Options{Log: log.New(io.Discard, "", 0)}}
	y := &syncer{s: s, ctx: context.Background()}
	y.fail("origin", fmt.Errorf("task claims: %w", &gitremote.GitError{Op: "fetch", Err: errors.New("exit status 1"),
		Stderr: "error: cannot lock ref 'refs/cairn-mirror/origin/wf-1': Unable to create '/p/.git/refs/cairn-mirror/origin/wf-1.lock': File exists."}))
	got := strings.Join(s.syncNotes, " ")
	for _, bad := range []string{"gone", "delete", "remove", "left"} {
		if strings.Contains(got, bad) {
			t.Errorf("notice %q says %q: it must not steer toward removing the file", got, bad)
		}
	}
	if !strings.Contains(got, "another git") || !strings.Contains(got, "the next sync retries") || !strings.Contains(got, "resum") {
		t.Errorf("notice %q, want it to say another git holds the lock, that the next sync retries, and the step that frees it", got)
	}
}

// TestSyncFailureNoticeStoppedSync: a background sync beside a cairn sync stopped with Ctrl-Z
// (which holds the clone's mirror lock until it is resumed) was told as "could not sync with
// origin (its log says why) ... the next sync retries", which it does in vain; the notice now
// says a Cairn process is stopped mid-sync, and the step that resumes it.
func TestSyncFailureNoticeStoppedSync(t *testing.T) {
	s := &Server{turn: make(chan struct{}, 1), opt: Options{Log: log.New(io.Discard, "", 0)}}
	y := &syncer{s: s, ctx: context.Background()}
	y.fail("origin", fmt.Errorf("a Cairn process of this clone was stopped while it synced with its remote, and holds its copy of the remote's refs: %w",
		&durable.LockTimeoutError{Path: "/p/.git/.lock-cairn-mirror", Stopped: true, Holder: &durable.Holder{PID: 42, Command: "cairn", Since: time.Unix(0, 0)}}))
	got := strings.Join(s.syncNotes, " ")
	if !strings.Contains(got, "stopped") || !strings.Contains(got, "kill -CONT 42") || strings.Contains(got, "the next sync retries") {
		t.Errorf("notice %q, want it to say a Cairn process is stopped mid-sync and how the user resumes it", got)
	}
}

// TestSyncFailureNoticeSaysWhyOnce: a failure whose reason the notice gives (a broken journal,
// here) ended with "(its log says why)" after it, sending the model to a log that says no more;
// only a failure told without its reason points at the log.
func TestSyncFailureNoticeSaysWhyOnce(t *testing.T) {
	for _, tc := range []struct {
		err error
		log bool
	}{
		{&remotesync.JournalError{Why: "this machine's journal of wf-1 is damaged at revision 4", Step: "restore it from a backup"}, false},
		{errors.New("exit status 128"), true},
	} {
		s := &Server{turn: make(chan struct{}, 1), opt: Options{Log: log.New(io.Discard, "", 0)}}
		y := &syncer{s: s, ctx: context.Background()}
		if got := y.failNotice("origin", tc.err); strings.Contains(got, "(its log says why)") != tc.log {
			t.Errorf("notice for %v: %q; want the log named: %v", tc.err, got, tc.log)
		}
	}
}

// A notice the sync told is cut to 400 characters: a cut that ends right after a token glued to
// more text (a path such as /home/u/ghp_…-x/) ends before that word, so the model is never shown
// a secret's shape the notice did not hold.
func TestSyncNoticeCutMakesNoSecret(t *testing.T) {
	tok := secrettest.GluedToken(t)
	body := strings.TrimSuffix(tok, "-x")
	pad := strings.Repeat("w", 399-len(body)-1) + " "
	n := pad + tok + "/state/quarantine/workflow.json-x was kept"
	if secrets.ScanString(n) != nil {
		t.Fatal("the notice holds a secret whole: the test needs one that only a cut makes")
	}
	got := syncSaid(remotesync.Outcome{Notices: []string{n}})
	if f := secrets.ScanString(got); f != nil {
		t.Errorf("the notice as told has a secret's shape (%s): %q", f.Rule, got)
	}
	if !strings.Contains(got, pad[:20]) {
		t.Errorf("the notice as told lost its start: %q", got)
	}
}

// The sync's notices name the remote cut to 40 characters, and a name with no secret's shape
// (a key glued to more text, "sk_live_...-x") cut after the key's body is one: no notice holds
// such a cut.
func TestSyncNoticeRemoteCutMakesNoSecret(t *testing.T) {
	name := secrettest.GluedKey(t, 40)
	s := &Server{turn: make(chan struct{}, 1), opt: Options{Log: log.New(io.Discard, "", 0)}}
	y := &syncer{s: s, ctx: context.Background()}
	snap := engine.Snapshot{WorkflowID: "wf-1", Phase: "plan", Revision: 3}
	lost := remotesync.Outcome{Workflow: "wf-1", Local: 3, Conflict: &remotesync.Conflict{Common: 1, Archive: store.ArchiveInfo{Revision: 2, Dir: "conflict-wf-1-x"}}}
	for what, msg := range map[string]string{
		"failed":    y.failNotice(name, errors.New("exit status 128")),
		"moved":     syncMessage(name, remotesync.Outcome{Workflow: "wf-1", Local: 3}, snap),
		"lost race": syncMessage(name, lost, snap),
		"left out":  leftOutNotice(name, []remote.LeftOut{{ID: "x"}}),
	} {
		if secrets.ScanString(msg) != nil {
			t.Errorf("%s: %q", what, msg)
		}
	}
}

// A notice the sync told that is over 400 characters (ids of 100, an archive named after one)
// is cut in the middle, where the ids are: its step, at the end, is told whole. Cut at the end,
// the take-back's notice lost "ask the user to list them with cairn history DIR", the one thing
// for the model to do.
func TestSyncNoticeCutKeepsTheStep(t *testing.T) {
	wf := strings.Repeat("a", 96) + "-end"
	dir := wf + "-20261130T142100Z"
	step := remotesync.AskHistory + dir + " and make again what is still wanted"
	n := fmt.Sprintf("workflow %s expired here at r5, but another machine changed it after r3, so it was taken back from origin and is active again; this machine's expired copy stays in archive/%s with the changes it made after r3, which were not replayed: %s", wf, dir, step)
	got := syncSaid(remotesync.Outcome{Notices: []string{n}})
	if l := len([]rune(got)); l > 402 || !strings.Contains(got, step) || !strings.HasPrefix(got, " Workflow "+wf[:20]) || !strings.Contains(got, "taken back") {
		t.Errorf("the notice as told (%d runes) = %q\nwant at most 400 runes, its start (the id shortened) and its step %q whole", l, got, step)
	}
	if short := "workflow wf-1 was not shared: the remote's line is at r3"; syncSaid(remotesync.Outcome{Notices: []string{short}}) != " "+sentence(short) {
		t.Errorf("a short notice was changed: %q", syncSaid(remotesync.Outcome{Notices: []string{short}}))
	}
}

// A sync that pulled another machine's end of the workflow says it ended, not only the phase
// it is at, which read as a workflow still to go on with.
func TestSyncNoticeSaysTheWorkflowEnded(t *testing.T) {
	snap := engine.Snapshot{WorkflowID: "wf-1", Phase: "review", Revision: 7}
	got := syncMessage("origin", remotesync.Outcome{Workflow: "wf-1", Local: 7, Pulled: 1, Ended: workflow.StatusCompleted}, snap)
	if !strings.Contains(got, "it was completed on another machine") || strings.Contains(got, "now at phase") || !strings.HasSuffix(got, callResume) {
		t.Errorf("syncMessage of a pulled end = %q; want it to say the workflow was completed, then the step", got)
	}
	lost := remotesync.Outcome{Workflow: "wf-1", Local: 7, Pulled: 2, Ended: workflow.StatusCompleted,
		Conflict: &remotesync.Conflict{Common: 5, Archive: store.ArchiveInfo{Revision: 6, Dir: "conflict-wf-1-x"}}}
	if got := syncMessage("origin", lost, snap); !strings.Contains(got, "it was completed on another machine, at phase review (revision 7)") || !strings.Contains(got, "archive/conflict-wf-1-x") {
		t.Errorf("syncMessage of a lost race to an ended line = %q; want it to say the workflow was completed, and where this copy went", got)
	}
	if got := syncMessage("origin", remotesync.Outcome{Workflow: "wf-1", Local: 7, Pulled: 1}, snap); !strings.Contains(got, "now at phase review") {
		t.Errorf("syncMessage of a pulled move = %q; want the phase it is now at", got)
	}
}

// TestSyncFailureNoticeClaimsLineUnreadable: a claims line on the host Cairn cannot read (a
// commit it did not write at refs/cairn/claims/<id>), which stops the sync while a task set
// running here waits to be claimed, was told as "its line of the workflow is not one Cairn can
// read": the user, asked to act on the remote, would look at the workflow's ref, which is fine.
func TestSyncFailureNoticeClaimsLineUnreadable(t *testing.T) {
	s := &Server{turn: make(chan struct{}, 1), opt: Options{Log: log.New(io.Discard, "", 0)}}
	y := &syncer{s: s, ctx: context.Background()}
	y.fail("origin", claimsFailed{remote.Unreadable(errors.New("the remote's ref for workflow wf-1, refs/cairn/claims/wf-1, points at a commit Cairn did not write"))})
	got := strings.Join(s.syncNotes, " ")
	if !strings.Contains(got, "its line of the task claims is not one Cairn can read") || !strings.Contains(got, "cairn sync tells them why") {
		t.Errorf("notice %q, want it to name the task claims' line and where the user's step is", got)
	}
}
