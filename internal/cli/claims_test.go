//go:build unix

package cli_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote/gittest"
)

// machine is one clone of the shared project with its own state directory, as one machine
// of a team would have, driven through the real cairn binary.
type machine struct {
	t   *testing.T
	dir string
	env []string
}

// newMachine makes a clone whose origin is url, with extra environment (the claims clock
// skew, the lease).
func newMachine(t *testing.T, url string, extra ...string) *machine {
	t.Helper()
	dir, env := project(t)
	m := &machine{t: t, dir: dir, env: append(env, extra...)}
	m.git("init", "-q")
	m.git("remote", "add", "origin", url)
	return m
}

func (m *machine) git(args ...string) {
	m.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = m.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		m.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// cairn runs cairn and returns its exit code, stdout and stderr.
func (m *machine) cairn(args ...string) (int, string, string) {
	m.t.Helper()
	cmd := cairnCmd(m.t, m.dir, m.env, args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		m.t.Fatalf("cairn %s: %v", strings.Join(args, " "), err)
	}
	return code, out.String(), errb.String()
}

// must runs cairn and fails the test unless it exits 0.
func (m *machine) must(args ...string) string {
	m.t.Helper()
	code, out, errb := m.cairn(args...)
	if code != 0 {
		m.t.Fatalf("cairn %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errb)
	}
	return out
}

// owner is this clone's claims identity, from its state directory.
func (m *machine) owner() string {
	m.t.Helper()
	data, err := os.ReadFile(filepath.Join(m.dir, ".claude", "cairn", "claims.json"))
	if err != nil {
		m.t.Fatal(err)
	}
	var s struct{ Owner string }
	if err := json.Unmarshal(data, &s); err != nil || s.Owner == "" {
		m.t.Fatalf("claims.json holds no owner: %v %s", err, data)
	}
	return s.Owner
}

// taskStatus is a task's status in this clone's active workflow ("" when it has none).
func (m *machine) taskStatus(id string) string {
	m.t.Helper()
	var w struct {
		Workflow struct {
			Tasks []struct{ ID, Status string }
		}
	}
	if err := json.Unmarshal([]byte(m.must("status", "--json")), &w); err != nil {
		m.t.Fatal(err)
	}
	for _, t := range w.Workflow.Tasks {
		if t.ID == id {
			return t.Status
		}
	}
	return ""
}

// team makes n clones sharing workflow wf-1 through url, every one synced.
func team(t *testing.T, url string, n int, extra func(i int) []string) []*machine {
	t.Helper()
	ms := make([]*machine, n)
	for i := range ms {
		var e []string
		if extra != nil {
			e = extra(i)
		}
		ms[i] = newMachine(t, url, e...)
		ms[i].must("remote", "enable", "--yes")
		if i == 0 {
			ms[i].must("start", "apex", "claims", "--id", "wf-1")
		}
		ms[i].must("sync")
	}
	return ms
}

// bareRepo makes an empty bare repository base/shared.git and returns base.
func bareRepo(t *testing.T) string {
	t.Helper()
	base := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", "--bare", filepath.Join(base, "shared.git")).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	return base
}

// sharedRepo is an empty bare repository, reachable over file:// and over git daemon.
func sharedRepo(t *testing.T) (file, daemon string) {
	t.Helper()
	base := bareRepo(t)
	return "file://" + base + "/shared.git", "git://" + gittest.Daemon(t, base) + "/shared.git"
}

// TestClaimRaceBinaries: clones run `cairn task tK running` at the same moment, through real
// git over file:// and git daemon: each task ends with exactly one owner, the others are
// refused with the owner named and the task left as it was in their clone.
func TestClaimRaceBinaries(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"file", "daemon"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// A repository each: a workflow wf-1 started again on one another run shared is
			// another workflow, which a sync refuses.
			url, daemon := sharedRepo(t)
			if name == "daemon" {
				url = daemon
			}
			ms := team(t, url, 3, nil)
			rounds := 4
			if os.Getenv("CAIRN_REMOTE_FULL") != "" {
				rounds = 50
			}
			for k := range rounds {
				task := fmt.Sprintf("%s-t%d", name, k)
				type res struct {
					code      int
					out, errb string
				}
				results := make([]res, len(ms))
				var wg sync.WaitGroup
				for i, m := range ms {
					wg.Go(func() {
						c, o, e := m.cairn("task", task, "running")
						results[i] = res{c, o, e}
					})
				}
				wg.Wait()
				won := -1
				for i, r := range results {
					if r.code == 0 {
						if won >= 0 {
							t.Fatalf("%s: clones %d and %d both set it running:\n%+v", task, won, i, results)
						}
						won = i
					}
				}
				if won < 0 {
					t.Fatalf("%s: no clone got it: %+v", task, results)
				}
				winner := ms[won].owner()
				held := regexp.MustCompile(`^cairn task: task ` + task + ` is held by ` + regexp.QuoteMeta(winner) +
					` \(claimed just now\) on another machine, free to take over in \d+m if not renewed: nothing was changed; pick another task\n$`)
				for i, r := range results {
					if i == won {
						continue
					}
					if r.code != 1 || !held.MatchString(r.errb) {
						t.Fatalf("%s: loser %d: exit %d, stderr %q; want the winner %s named", task, i, r.code, r.errb, winner)
					}
					if s := ms[i].taskStatus(task); s != "" {
						t.Fatalf("%s: the refused clone %d has the task as %q; it should not have it", task, i, s)
					}
				}
				if s := ms[won].taskStatus(task); s != "running" {
					t.Fatalf("%s: the winner has it %q", task, s)
				}
				// The same machine asking again keeps it, and can finish it.
				ms[won].must("task", task, "running")
				ms[won].must("task", task, "done")
			}
			owners := map[string]int{}
			for i, m := range ms {
				owners[m.owner()] = i
			}
			if len(owners) != len(ms) {
				t.Fatalf("clones share an owner identity: %v", owners)
			}
		})
	}
}

// TestClaimOfflineThenSync: a clone that cannot reach the remote sets a task running
// (unconfirmed, said so); another clone claims it meanwhile; the first one's next sync says
// who holds it and sets it back through the state machine before anything is pushed, and the
// workflow then agrees with the holder's.
func TestClaimOfflineThenSync(t *testing.T) {
	t.Parallel()
	file, _ := sharedRepo(t)
	ms := team(t, file, 2, nil)
	a, b := ms[0], ms[1]
	a.git("remote", "set-url", "origin", file+".gone")
	code, _, errb := a.cairn("task", "t1", "running")
	if code != 0 || !strings.Contains(errb, "warning: task t1 is not yet claimed on origin (it could not be reached): run cairn sync, which claims it or says which machine holds it") {
		t.Fatalf("offline claim: exit %d, stderr %q", code, errb)
	}
	if s := a.taskStatus("t1"); s != "running" {
		t.Fatalf("offline, t1 is %q here; the local update must go ahead", s)
	}
	b.must("task", "t1", "running")
	b.must("sync")
	a.git("remote", "set-url", "origin", file)
	out := a.must("sync")
	want := regexp.MustCompile(`(?m)^task t1 was set running here offline, but ` + regexp.QuoteMeta(b.owner()) +
		` \(claimed just now\) holds it: it went back to pending here$`)
	if !want.MatchString(out) {
		t.Fatalf("sync after the offline claim said:\n%s", out)
	}
	// The holder's revision won; nothing of a's went over it.
	if s := a.taskStatus("t1"); s != "running" {
		t.Fatalf("after the sync t1 is %q here, want the holder's running", s)
	}
	b.must("sync")
	if s := b.taskStatus("t1"); s != "running" {
		t.Fatalf("the holder's t1 is %q after the other clone synced", s)
	}
	// a cannot finish a task another machine holds.
	code, _, errb = a.cairn("task", "t1", "done")
	if code != 1 || !strings.Contains(errb, "task t1 is held by "+b.owner()) || !strings.Contains(errb, "nothing was changed") {
		t.Fatalf("done on a task held elsewhere: exit %d, stderr %q", code, errb)
	}
	// An offline claim nobody contests is confirmed by the next sync.
	a.git("remote", "set-url", "origin", file+".gone")
	a.must("task", "t2", "running")
	a.git("remote", "set-url", "origin", file)
	if out := a.must("sync"); strings.Contains(out, "t2") {
		t.Fatalf("an uncontested claim was reported: %s", out)
	}
	code, _, errb = b.cairn("task", "t2", "running")
	if code != 1 || !strings.Contains(errb, "task t2 is held by "+a.owner()) {
		t.Fatalf("after a confirmed offline claim, the other clone: exit %d, stderr %q", code, errb)
	}
}

// TestClaimLeaseClockSkew: the lease decides only when a stale claim may be taken over, by
// each machine's own clock: with the second clone's clock an hour behind, equal or ahead, the
// story is the same. A claim is refused until the second clone has watched it for a lease,
// then taken over; the first holder can then no longer finish the task. Time passes by moving
// both clocks on (CAIRN_CLAIM_CLOCK_SKEW), never by sleeping: the lease is long enough that the
// seconds the commands take cannot decide anything, however loaded the machine.
func TestClaimLeaseClockSkew(t *testing.T) {
	t.Parallel()
	const lease = 2 * time.Hour
	var stories []string
	for _, skew := range []time.Duration{-time.Hour, 0, time.Hour} {
		t.Run(fmt.Sprint(skew), func(t *testing.T) {
			clock := func(i int, passed time.Duration) string {
				return "CAIRN_CLAIM_CLOCK_SKEW=" + (time.Duration(i)*skew + passed).String()
			}
			ms := team(t, "file://"+bareRepo(t)+"/shared.git", 2, func(i int) []string {
				return []string{"CAIRN_CLAIM_LEASE=" + lease.String(), clock(i, 0)}
			})
			a, b := ms[0], ms[1]
			var passed time.Duration
			wait := func(d time.Duration) {
				passed += d
				for i, m := range ms {
					m.env = append(m.env, clock(i, passed)) // the last one set is the one used
				}
			}
			var story []string
			step := func(name string, m *machine, args ...string) {
				code, out, errb := m.cairn(args...)
				if args[0] == "sync" { // its notes, before the workflow's own lines
					errb, _, _ = strings.Cut(out, "\n")
				}
				story = append(story, strings.TrimSpace(fmt.Sprintf("%s: exit %d %s", name, code, strings.TrimSpace(errb))))
			}
			step("A claims", a, "task", "t1", "running")
			step("B claims at once", b, "task", "t1", "running")
			wait(lease * 3 / 4)
			step("B claims before a lease has passed", b, "task", "t1", "running")
			wait(lease / 2)
			step("B claims after watching it a lease", b, "task", "t1", "running")
			step("A syncs", a, "sync")
			step("A finishes it", a, "task", "t1", "done")
			step("A claims it back", a, "task", "t1", "running")
			got := strings.Join(story, "\n")
			got = strings.ReplaceAll(got, a.owner(), "A")
			got = strings.ReplaceAll(got, b.owner(), "B")
			// A claim made by the machine whose clock is ahead was made in the future by the
			// other's clock, and is said so; the story is the same.
			if future := strings.Contains(got, "(claimed in the future: clock skew?)"); future != (skew != 0) {
				t.Errorf("with skew %s, a claim said to be made in the future: %v\n%s", skew, future, got)
			}
			got = strings.ReplaceAll(got, "(claimed in the future: clock skew?)", "(claimed N ago)")
			got = strings.ReplaceAll(got, "(claimed just now)", "(claimed N ago)") // under a minute
			got = regexp.MustCompile(`\d+[smh]( \d+[smh])?`).ReplaceAllString(got, "N")
			stories = append(stories, got)
			refused := "cairn task: task t1 is held by A (claimed N ago) on another machine, free to take over in N if not renewed: nothing was changed; pick another task"
			want := strings.Join([]string{
				"A claims: exit 0",
				"B claims at once: exit 1 " + refused,
				"B claims before a lease has passed: exit 1 " + refused,
				"B claims after watching it a lease: exit 0 cairn: warning: task t1 was taken over from A (claimed N ago) on another machine: its claim went unrenewed for longer than the lease by this machine's clock",
				"A syncs: exit 0 task t1, running here, is now held by B (claimed N ago) on another machine (this machine's claim lapsed or went from origin): cairn checkpoint save NAME JSON keeps the data, then pick another task",
				"A finishes it: exit 1 cairn task: task t1 is held by B (claimed N ago) on another machine: nothing was changed; cairn checkpoint save NAME JSON keeps the data, then pick another task",
				"A claims it back: exit 1 cairn task: task t1 is held by B (claimed N ago) on another machine, free to take over in N if not renewed: nothing was changed; pick another task",
			}, "\n")
			if stories[len(stories)-1] != want {
				t.Fatalf("story with skew %s:\n%s\nwant:\n%s", skew, stories[len(stories)-1], want)
			}
		})
	}
}

// TestRemoteEnablePublic: a remote anyone can read (a real HTTP git server on 127.0.0.1 that
// asks no credentials) is refused before anything is pushed, unless --yes; one that asks for
// credentials gets only the general warning.
func TestRemoteEnablePublic(t *testing.T) {
	t.Parallel()
	base := bareRepo(t)
	bare := filepath.Join(base, "shared.git")
	if out, err := exec.Command("git", "--git-dir="+bare, "config", "http.receivepack", "true").CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	refs := func() string {
		out, err := exec.Command("git", "--git-dir="+bare, "for-each-ref").CombinedOutput()
		if err != nil {
			t.Fatalf("%v %s", err, out)
		}
		return string(out)
	}
	open := gittest.HTTP(t, base, "", "")
	m := newMachine(t, open+"/shared.git")
	code, out, errb := m.cairn("remote", "enable")
	if code != 1 || errb != "cairn remote enable: origin can be read without credentials, so anyone could read the workflows cairn sync pushes there (context, phases, tasks, notes, variables): nothing was pushed; if that is fine, run cairn remote enable origin --yes\n" {
		t.Fatalf("enable on a public remote: exit %d\n%s%s", code, out, errb)
	}
	if _, err := os.Lstat(filepath.Join(m.dir, ".claude")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a refused enable left .claude behind: %v", err)
	}
	if r := refs(); r != "" || !strings.Contains(m.must("remote", "status"), "remote sync is off") {
		t.Fatalf("a refused enable pushed or turned sharing on: refs %q", r)
	}
	code, out, errb = m.cairn("remote", "enable", "--yes")
	if code != 0 || !strings.Contains(errb, "warning: origin can be read without credentials: anyone can read the workflows cairn sync pushes there") ||
		!strings.Contains(out, "remote origin enabled") {
		t.Fatalf("enable --yes on a public remote: exit %d\n%s%s", code, out, errb)
	}

	private := gittest.HTTP(t, base, "sam", "s3cret")
	p := newMachine(t, strings.Replace(private, "http://", "http://sam:s3cret@", 1)+"/shared.git")
	code, out, errb = p.cairn("remote", "enable")
	if code != 0 || !strings.Contains(errb, "everyone who can read that remote can read them; if it is public, run cairn remote disable") ||
		strings.Contains(errb, "without credentials") || strings.Contains(out+errb, "s3cret") {
		t.Fatalf("enable on a remote that needs credentials: exit %d\n%s%s", code, out, errb)
	}
}
