package mirror_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote/mirror"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/workflow"
)

func open(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestSynced: a sync's result is recorded without losing what enable wrote, and not at all when
// the settings moved to another remote meanwhile.
func TestSynced(t *testing.T) {
	st := open(t)
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.FixedZone("x", 3600))
	if err := mirror.Save(st, mirror.Settings{Enabled: true, Remote: "origin", Layout: "refs/cairn/wf/"}); err != nil {
		t.Fatal(err)
	}
	if err := mirror.Synced(st, "origin", "wf-1", 3, at); err != nil {
		t.Fatal(err)
	}
	got, err := mirror.Load(st)
	if err != nil {
		t.Fatal(err)
	}
	want := mirror.Settings{Enabled: true, Remote: "origin", Layout: "refs/cairn/wf/", LastSync: at.UTC(), Workflow: "wf-1", Mirrored: 3}
	if got != want {
		t.Errorf("after Synced: %+v, want %+v", got, want)
	}
	if err := mirror.Synced(st, "upstream", "wf-1", 9, at.Add(time.Hour)); err == nil || !strings.Contains(err.Error(), "not recorded") {
		t.Errorf("a sync against a remote no longer configured was recorded (err %v)", err)
	}
	if again, _ := mirror.Load(st); again != want {
		t.Errorf("a refused record changed the settings: %+v", again)
	}
}

// TestNewerCairnsSettingsAreKept: members a newer Cairn wrote in remote.json that this one has
// no field for survive each sync's record of its result and an enable again: they were
// dropped, and the newer Cairn lost what it kept there.
func TestNewerCairnsSettingsAreKept(t *testing.T) {
	st := open(t)
	if err := mirror.Save(st, mirror.Settings{Enabled: true, Remote: "origin"}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(st.Dir(), mirror.Doc+".json")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	const newer = `"newer":{"kept":true}`
	// A secret's shape is no Cairn's: kept, it had every sync's record refused.
	token := "ghp_" + strings.Repeat("a1B2c3", 6)
	data = append(append(bytes.TrimSuffix(bytes.TrimSpace(data), []byte("}")), ","+newer+`,"url":"`+token+`"`...), '}')
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := mirror.Synced(st, "origin", "wf-1", 3, time.Now()); err != nil {
		t.Fatal(err)
	}
	if data, err = os.ReadFile(file); err != nil || bytes.Contains(data, []byte(token)) {
		t.Fatalf("remote.json after a sync's record: %s %v; want the secret-shaped member left out", data, err)
	}
	if _, err := mirror.Enable(st, "origin", "", ""); err != nil {
		t.Fatal(err)
	}
	if data, err = os.ReadFile(file); err != nil || !bytes.Contains(data, []byte(newer)) || !bytes.Contains(data, []byte(`"remote_revision":3`)) {
		t.Fatalf("remote.json after a sync's record and an enable: %s %v; want %s kept", data, err, newer)
	}
}

func TestShared(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	on := mirror.Settings{Enabled: true, Remote: "origin", LastSync: now.Add(-time.Minute), Workflow: "wf-1", Mirrored: 3}
	for _, tc := range []struct {
		name     string
		s        mirror.Settings
		id       string
		rev      int64
		off      bool
		unpushed int64
	}{
		{"off", mirror.Settings{Remote: "origin"}, "wf-1", 4, true, 0},
		{"behind", on, "wf-1", 5, false, 2},
		{"up to date", on, "wf-1", 3, false, 0},
		{"pulled past the record", on, "wf-1", 2, false, 0},
		{"another workflow", on, "wf-2", 4, false, 4},
		{"no workflow", on, "", 0, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mirror.Shared(tc.s, tc.id, tc.rev, now)
			if tc.off {
				if got != nil {
					t.Fatalf("sharing off, yet %+v", got)
				}
				return
			}
			if got == nil || got.Remote != "origin" || got.Age != time.Minute || got.Never || got.Unpushed != tc.unpushed {
				t.Errorf("Shared = %+v, want origin, a minute ago, %d unpushed", got, tc.unpushed)
			}
		})
	}
}

// TestUnconfirmed: the claims set running offline (the claims document package claimsync
// writes) are counted for the workflow they are about only, and only with sharing on; an
// unreadable claims document counts none rather than failing the report.
func TestUnconfirmed(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	claims := `{"owner":"sam@laptop#3fa2c1","workflow_id":"wf-1","pending":{"t1":"2026-11-23T09:00:00Z","t2":"2026-11-23T09:30:00Z"},"line":{"head":4}}`
	for _, tc := range []struct {
		name    string
		enabled bool
		claims  string // "" : no claims document
		id      string
		want    int
	}{
		{"two pending", true, claims, "wf-1", 2},
		{"about another workflow", true, claims, "wf-2", 0},
		{"no workflow", true, claims, "", 0},
		{"none pending", true, `{"owner":"x","workflow_id":"wf-1","line":{"head":4}}`, "wf-1", 0},
		{"no claims document", true, "", "wf-1", 0},
		{"unreadable", true, `{"workflow_id":"wf-1","pending":["t1"]}`, "wf-1", 0},
		{"sharing off", false, claims, "wf-1", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := open(t)
			if err := mirror.Save(st, mirror.Settings{Enabled: tc.enabled, Remote: "origin", Workflow: "wf-1", Mirrored: 3, LastSync: now}); err != nil {
				t.Fatal(err)
			}
			if tc.claims != "" {
				if err := st.Write(mirror.ClaimsDoc, []byte(tc.claims)); err != nil {
					t.Fatal(err)
				}
			}
			s, err := mirror.Load(st)
			if err != nil {
				t.Fatal(err)
			}
			got := mirror.Shared(s, tc.id, 3, now)
			if !tc.enabled {
				if got != nil {
					t.Fatalf("sharing off, yet %+v", got)
				}
				return
			}
			if got == nil || got.Unconfirmed != tc.want {
				t.Errorf("Shared = %+v, want %d claims not confirmed", got, tc.want)
			}
		})
	}
}

// TestRemoteMustBeAName: cairn remote enable stores the name of one of the project's remotes;
// settings that hold an address or a path instead (planted in a repository's state directory, or
// edited by hand) would make every sync push the workflow there, without anyone enabling it and
// with no credentials needed. They are refused, without repeating the address (it may hold a
// token).
func TestRemoteMustBeAName(t *testing.T) {
	for _, r := range []string{"https://x:tok3n@attacker.example/x.git", "git@attacker.example:x.git",
		"/srv/x.git", "../x.git", `C:\x.git`, "ext::sh -c true", "file:///srv/x.git", ""} {
		st := open(t)
		doc, _ := json.Marshal(mirror.Settings{Enabled: true, Remote: r})
		if err := os.WriteFile(filepath.Join(st.Dir(), "remote.json"), doc, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := mirror.Load(st)
		if err == nil || (r != "" && strings.Contains(err.Error(), r)) || strings.Contains(err.Error(), "tok3n") {
			t.Errorf("Load with remote %q: %v, want an error that does not repeat it", r, err)
		}
	}
	for _, r := range []string{"origin", "my.fork", "team/upstream", "up_2-x"} {
		st := open(t)
		if err := mirror.Save(st, mirror.Settings{Enabled: true, Remote: r}); err != nil {
			t.Fatal(err)
		}
		if s, err := mirror.Load(st); err != nil || s.Remote != r {
			t.Errorf("Load with remote %q: %+v %v", r, s, err)
		}
	}
	st := open(t) // off: not used, so not checked
	if err := mirror.Save(st, mirror.Settings{Remote: "https://example.com/x.git"}); err != nil {
		t.Fatal(err)
	}
	if _, err := mirror.Load(st); err != nil {
		t.Errorf("Load of settings that are off: %v", err)
	}
}

// gitRun runs git in dir, failing the test if it fails.
func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestPlantedSettingsShareNothing: settings that switch sharing on, committed into a repository
// (git add -f past the state directory's .gitignore), do not switch it on in a clone of it:
// only cairn remote enable in that clone does, and that survives a move of the project
// directory. Settings changed behind enable's back (to another of the clone's remotes, or on
// again after a disable, as a pull overwriting the ignored file would) share nothing either.
func TestPlantedSettingsShareNothing(t *testing.T) {
	base := t.TempDir()
	src := filepath.Join(base, "src")
	gitRun(t, base, "init", "-q", src)
	state := filepath.Join(src, ".claude", "cairn")
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, "remote.json"), []byte(`{"enabled":true,"remote":"origin"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRun(t, src, "add", "-f", ".claude/cairn/remote.json")
	gitRun(t, src, "-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-q", "-m", "planted")
	dst := filepath.Join(base, "dst")
	gitRun(t, base, "clone", "-q", src, dst)
	for _, dir := range []string{src, dst} {
		if s, err := loadSettings(t, dir); err == nil && s.Enabled {
			t.Fatalf("planted settings in %s: sharing is on with %q", filepath.Base(dir), s.Remote)
		}
	}
	st, err := store.Open(filepath.Join(dst, ".claude", "cairn"))
	if err != nil {
		t.Fatal(err)
	}
	if err := mirror.Save(st, mirror.Settings{Enabled: true, Remote: "origin"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	moved := filepath.Join(base, "moved")
	if err := os.Rename(dst, moved); err != nil {
		t.Fatal(err)
	}
	if s, err := loadSettings(t, moved); err != nil || !s.Enabled || s.Remote != "origin" {
		t.Fatalf("enabled here, then moved: %+v, %v; want sharing on with origin", s, err)
	}
	file := filepath.Join(moved, ".claude", "cairn", "remote.json")
	for _, doc := range []string{`{"enabled":true,"remote":"upstream"}`, ""} {
		if doc == "" { // disabled, then switched on again behind enable's back
			st, err := store.Open(filepath.Dir(file))
			if err != nil {
				t.Fatal(err)
			}
			if err := mirror.Save(st, mirror.Settings{Remote: "origin"}); err != nil {
				t.Fatal(err)
			}
			st.Close()
			doc = `{"enabled":true,"remote":"origin"}`
		}
		if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		if s, err := loadSettings(t, moved); err == nil && s.Enabled {
			t.Errorf("settings %s written behind enable's back: sharing is on with %q", doc, s.Remote)
		}
	}
}

// TestOlderCairnsSharingCarriesOver: a clone that enabled sharing with a Cairn older than the
// record in its git directory (settings on, refs its syncs fetched under
// refs/cairn-mirror/<remote>/, loose or packed, and no cairn-sharing file) keeps sharing, and
// the record is written for it. A clone of such a repository, refs of another remote only, or
// sharing switched off by this Cairn since, share nothing.
func TestOlderCairnsSharingCarriesOver(t *testing.T) {
	base := t.TempDir()
	gitRun(t, base, "init", "-q", "--bare", "origin.git")
	on := []byte(`{"enabled":true,"remote":"origin","layout":"refs/cairn/wf/","last_sync":"2026-11-20T10:00:00Z"}`)
	// oldClone sets up a repository the way an older Cairn left it: settings on, and what its
	// syncs fetched under mirrorRef.
	oldClone := func(name, mirrorRef string, pack bool) string {
		dir := filepath.Join(base, name)
		gitRun(t, base, "init", "-q", dir)
		gitRun(t, dir, "remote", "add", "origin", filepath.Join(base, "origin.git"))
		gitRun(t, dir, "-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-q", "--allow-empty", "-m", "work")
		gitRun(t, dir, "update-ref", mirrorRef, "HEAD")
		if pack {
			gitRun(t, dir, "pack-refs", "--all", "--prune")
		}
		state := filepath.Join(dir, ".claude", "cairn")
		if err := os.MkdirAll(state, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(state, "remote.json"), on, 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	for _, pack := range []bool{false, true} {
		dir := oldClone(fmt.Sprintf("old-packed-%v", pack), "refs/cairn-mirror/origin/wf-1", pack)
		if pack {
			if _, err := os.Stat(filepath.Join(dir, ".git", "refs", "cairn-mirror", "origin", "wf-1")); err == nil {
				t.Fatal("pack-refs left the ref loose")
			}
		}
		if s, err := loadSettings(t, dir); err != nil || !s.Enabled || s.Remote != "origin" {
			t.Fatalf("enabled by an older Cairn (packed refs %v): %+v, %v; want sharing on with origin", pack, s, err)
		}
		if b, err := os.ReadFile(filepath.Join(dir, ".git", "cairn-sharing")); err != nil || string(b) != "origin .claude/cairn\n" {
			t.Errorf("the enabling was not recorded: %q, %v", b, err)
		}
		if s, err := loadSettings(t, dir); err != nil || !s.Enabled {
			t.Errorf("loaded again: %+v, %v", s, err)
		}
	}

	// A linked worktree of such a clone: its refs are in the main git directory.
	wt := filepath.Join(base, "wt")
	gitRun(t, filepath.Join(base, "old-packed-true"), "worktree", "add", "-q", "--detach", wt)
	if err := os.MkdirAll(filepath.Join(wt, ".claude", "cairn"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt, ".claude", "cairn", "remote.json"), on, 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := loadSettings(t, wt); err != nil || !s.Enabled {
		t.Errorf("a linked worktree enabled by an older Cairn: %+v, %v; want sharing on", s, err)
	}

	other := oldClone("other-remote", "refs/cairn-mirror/upstream/wf-1", false)
	if s, err := loadSettings(t, other); err == nil && s.Enabled {
		t.Errorf("refs fetched from upstream switched sharing with origin on")
	}

	// The older clone's repository, committed settings and all, cloned: git clone copies no
	// refs/cairn-mirror/.
	src := oldClone("src", "refs/cairn-mirror/origin/wf-1", false)
	gitRun(t, src, "add", "-f", ".claude/cairn/remote.json")
	gitRun(t, src, "-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-q", "-m", "planted")
	dst := filepath.Join(base, "dst")
	gitRun(t, base, "clone", "-q", src, dst)
	if s, err := loadSettings(t, dst); err == nil && s.Enabled {
		t.Errorf("a clone of an older Cairn's repository: sharing is on with %q", s.Remote)
	}

	// Switched off with this Cairn, then on again behind enable's back: the refs are still
	// there, but the record says off.
	off := oldClone("off", "refs/cairn-mirror/origin/wf-1", false)
	st, err := store.Open(filepath.Join(off, ".claude", "cairn"))
	if err != nil {
		t.Fatal(err)
	}
	if err := mirror.Save(st, mirror.Settings{Remote: "origin"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if err := os.WriteFile(filepath.Join(off, ".claude", "cairn", "remote.json"), on, 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := loadSettings(t, off); err == nil && s.Enabled {
		t.Errorf("disabled by this Cairn, then switched on behind enable's back: sharing is on")
	}
}

// TestOlderCairnsSharingWithNoMirrorRefs: a clone that enabled sharing with an older Cairn,
// whose syncs never fetched anything back (no refs/cairn-mirror/<remote>/), cannot be told from
// one whose settings were committed or copied, and shares nothing after the upgrade. What Load
// says names that case as well as the planted one (it had asked only whether the settings were
// committed or copied, to someone who had run enable), and one step, the enable it names, is
// all it takes.
func TestOlderCairnsSharingWithNoMirrorRefs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "old")
	gitRun(t, filepath.Dir(dir), "init", "-q", dir)
	state := filepath.Join(dir, ".claude", "cairn")
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	on := `{"enabled":true,"remote":"origin","layout":"refs/cairn/wf/"}`
	if err := os.WriteFile(filepath.Join(state, "remote.json"), []byte(on), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(state)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := mirror.Load(st)
	if err == nil || s.Enabled || !strings.Contains(err.Error(), "older Cairn") || strings.Count(err.Error(), "run cairn remote enable origin") != 1 {
		t.Fatalf("settings of an older Cairn's enable with no mirror refs: %+v, %v; want sharing off, saying an older Cairn's enable is not known here, and to run cairn remote enable origin", s, err)
	}
	if _, err := mirror.Enable(st, "origin", "refs/cairn/wf/", ""); err != nil {
		t.Fatal(err)
	}
	if s, err := mirror.Load(st); err != nil || !s.Enabled {
		t.Errorf("after cairn remote enable origin: %+v, %v; want sharing on", s, err)
	}
}

// TestSharingRecordConcurrentEnables: processes enabling sharing at once for different state
// directories of one repository, some of them through an older Cairn's carry-over in Load,
// lose none of each other's lines in cairn-sharing.
func TestSharingRecordConcurrentEnables(t *testing.T) {
	if repo := os.Getenv("CAIRN_TEST_SHARING_CHILD"); repo != "" {
		sharingChild(t, repo, os.Getenv("CAIRN_TEST_SHARING_ID"))
		return
	}
	repo := t.TempDir()
	gitRun(t, repo, "init", "-q")
	gitRun(t, repo, "-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-q", "--allow-empty", "-m", "work")
	// An older Cairn's mirror ref, so that Load of settings on with no cairn-sharing file
	// carries them over.
	gitRun(t, repo, "update-ref", "refs/cairn-mirror/origin/wf-1", "HEAD")
	const procs, each = 4, 15
	var want []string
	for p := range procs {
		for i := range each {
			want = append(want, fmt.Sprintf("origin p%d/s%d/.claude/cairn", p, i))
		}
	}
	cmds := make([]*exec.Cmd, procs)
	outs := make([]strings.Builder, procs)
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSharingRecordConcurrentEnables$", "-test.count=1")
		cmd.Env = append(os.Environ(), "CAIRN_TEST_SHARING_CHILD="+repo, fmt.Sprintf("CAIRN_TEST_SHARING_ID=%d", p))
		cmd.Stdout, cmd.Stderr = &outs[p], &outs[p]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[p] = cmd
	}
	for p, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", p, err, outs[p].String())
		}
	}
	b, err := os.ReadFile(filepath.Join(repo, ".git", "cairn-sharing"))
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for l := range strings.Lines(string(b)) {
		have[strings.TrimSuffix(l, "\n")] = true
	}
	var lost []string
	for _, l := range want {
		if !have[l] {
			lost = append(lost, l)
		}
	}
	if len(lost) > 0 {
		t.Fatalf("%d of %d lines lost, for example %q", len(lost), len(want), lost[0])
	}
}

// sharingChild enables sharing for its state directories of repo, one after another; the
// first of each process's goes through the carry-over in Load, racing the others' enables.
func sharingChild(t *testing.T, repo, id string) {
	const each = 15
	on := []byte(`{"enabled":true,"remote":"origin"}`)
	for i := range each {
		dir := filepath.Join(repo, "p"+id, fmt.Sprintf("s%d", i), ".claude", "cairn")
		st, err := store.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := os.WriteFile(filepath.Join(dir, "remote.json"), on, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := mirror.Load(st); err != nil {
				// The file existed already: another process enabled first, so no carry-over.
				if err := mirror.Save(st, mirror.Settings{Enabled: true, Remote: "origin"}); err != nil {
					t.Fatal(err)
				}
			}
		} else if err := mirror.Save(st, mirror.Settings{Enabled: true, Remote: "origin"}); err != nil {
			t.Fatal(err)
		}
		st.Close()
	}
}

// TestEnableKeepsASyncRecordedMeanwhile: cairn remote enable run again while syncs record
// their results, in other processes, never puts back what an earlier sync left: the remote's
// revision as recorded never goes back.
func TestEnableKeepsASyncRecordedMeanwhile(t *testing.T) {
	if dir := os.Getenv("CAIRN_TEST_ENABLE_DIR"); dir != "" {
		enableChild(t, dir, os.Getenv("CAIRN_TEST_ENABLE_ROLE"))
		return
	}
	dir := t.TempDir() // in no git work tree: sharing counts as enabled here
	st, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mirror.Enable(st, "origin", "refs/cairn/wf/", ""); err != nil {
		t.Fatal(err)
	}
	st.Close()
	roles := []string{"sync", "enable", "enable", "enable"}
	cmds := make([]*exec.Cmd, len(roles))
	outs := make([]strings.Builder, len(roles))
	for i, role := range roles {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEnableKeepsASyncRecordedMeanwhile$", "-test.count=1")
		cmd.Env = append(os.Environ(), "CAIRN_TEST_ENABLE_DIR="+dir, "CAIRN_TEST_ENABLE_ROLE="+role)
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("%s process: %v\n%s", roles[i], err, outs[i].String())
		}
	}
}

// enableChild records syncs of rising revisions, checking each is still there afterwards
// (role sync), or enables sharing again and again (role enable).
func enableChild(t *testing.T, dir, role string) {
	st, err := store.Open(dir, store.WithLockWait(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := int64(1); i <= 600; i++ {
		if role == "enable" {
			if _, err := mirror.Enable(st, "origin", "refs/cairn/wf/", ""); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := mirror.Synced(st, "origin", "wf-1", i, time.Now()); err != nil {
			t.Fatal(err)
		}
		s, err := mirror.Load(st)
		if err != nil {
			t.Fatal(err)
		}
		if s.Mirrored < i {
			t.Fatalf("sync %d recorded, then the settings say the remote is at %d", i, s.Mirrored)
		}
	}
}

// loadSettings is mirror.Load on the project at dir.
func loadSettings(t *testing.T, dir string) (mirror.Settings, error) {
	t.Helper()
	st, err := store.Open(filepath.Join(dir, ".claude", "cairn"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	return mirror.Load(st)
}

// TestRunsElsewhereAfterAWallClockStep: another machine's claim this clone read a minute ago
// is not reported lapsed by the hooks once the wall clock was set past its lease since, as
// update_task refuses it as held: the claims state's reading of this boot corrects the step.
// Set forward here by shifting what was saved back, as the wall clock read it then.
func TestRunsElsewhereAfterAWallClockStep(t *testing.T) {
	boot, up, ok := mirror.SinceBoot()
	if !ok {
		t.Skip("no clock since boot here")
	}
	st := open(t)
	if err := mirror.Save(st, mirror.Settings{Enabled: true, Remote: "origin"}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	then := now.Add(-time.Minute - time.Hour) // seen a minute ago, the clock set an hour forward since
	doc := map[string]any{"owner": "me", "workflow_id": "wf-1", "line": map[string]any{
		"head": 1, "holders": map[string]any{"t1": map[string]any{"owner": "X", "rev": 1, "lease": int64(time.Hour)}},
		"seen":  map[string]any{"t1": then},
		"clock": map[string]any{"boot": boot, "base": now.Add(-up - time.Hour)},
	}}
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Write(mirror.ClaimsDoc, raw); err != nil {
		t.Fatal(err)
	}
	r := &workflow.Record{WorkflowID: "wf-1", Tasks: []workflow.Task{{ID: "t1", Status: workflow.TaskRunning}}}
	elsewhere := mirror.RunsElsewhere(st, r, time.Hour, now)
	if elsewhere == nil {
		t.Fatal("sharing on, yet RunsElsewhere is nil")
	}
	k, ok := elsewhere("t1")
	if !ok || k.Holder != "X" || k.Lapsed() || k.Left < 58*time.Minute {
		t.Errorf("X's claim seen a minute ago, the clock set an hour forward since: %+v (elsewhere %v), want held by X for about an hour more", k, ok)
	}
}

// TestDisableClearsRefusedSettingsWhole: settings Load refuses (naming an address, planted) are
// cleared by cairn remote disable, the members a newer Cairn would read in them too: they were
// written back unchanged, and one holding an address with its token made disable fail.
func TestDisableClearsRefusedSettingsWhole(t *testing.T) {
	st := open(t)
	file := filepath.Join(st.Dir(), mirror.Doc+".json")
	doc := `{"enabled":true,"remote":"https://x:tok3n@attacker.example/x.git","push_url":"https://x:tok3n@attacker.example/x.git"}`
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := mirror.Disable(st); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(file); err != nil || bytes.Contains(data, []byte("tok3n")) {
		t.Fatalf("remote.json after cairn remote disable of settings Load refuses: %s %v; want them cleared", data, err)
	}
}
