//go:build unix

package store_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/store/storetest"
)

// livePID is the pid of a process of this test that runs until the test ends.
func livePID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

func sessionDoc(pid int) []byte { return []byte(`{"session_id":"s","pid":` + strconv.Itoa(pid) + `}`) }

// age sets a file's (or, with link, a symlink's own) times to d ago.
func age(t *testing.T, file string, d time.Duration, link bool) {
	t.Helper()
	at := time.Now().Add(-d)
	var err error
	if link {
		tv := unix.NsecToTimeval(at.UnixNano())
		err = unix.Lutimes(file, []unix.Timeval{tv, tv})
	} else {
		err = os.Chtimes(file, at, at)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func TestPruneSessions(t *testing.T) {
	s, dir := newStore(t)
	sessions := filepath.Join(dir, "sessions")
	const old, fresh = 2 * time.Hour, 50 * time.Minute
	dead, deadFresh, deadKeep, deadDir, deadLink, deadForeign := storetest.ExitedPID(t), storetest.ExitedPID(t), storetest.ExitedPID(t), storetest.ExitedPID(t), storetest.ExitedPID(t), storetest.ExitedPID(t)
	live, taken := livePID(t), livePID(t)
	name := func(pid int) string { return strconv.Itoa(pid) + ".json" }
	outside := filepath.Join(t.TempDir(), "target.json")
	if err := os.WriteFile(outside, sessionDoc(deadLink), 0o600); err != nil {
		t.Fatal(err)
	}
	age(t, outside, old, false)
	cases := []struct {
		name string
		make func(file string) // nil: a record written by WriteSession
		pid  int               // the record's pid, for WriteSession
		age  time.Duration
		gone bool
		why  string
	}{
		{name: name(dead), pid: dead, age: old, gone: true, why: "its client exited over an hour ago"},
		{name: name(deadFresh), pid: deadFresh, age: fresh, why: "written less than an hour ago"},
		{name: name(os.Getpid()), pid: os.Getpid(), age: old, why: "its client (this test) runs"},
		{name: name(live), pid: live, age: old, why: "its client (sleep) runs"},
		{name: name(deadKeep), pid: deadKeep, age: old, why: "it is the caller's own client's"},
		{name: name(taken), age: old, gone: runtime.GOOS == "linux" || runtime.GOOS == "darwin", why: "its client exited and another process (sleep) took its pid", make: func(f string) {
			if err := os.WriteFile(f, []byte(`{"session_id":"s","pid":`+strconv.Itoa(taken)+`,"client_start":1}`), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: name(deadDir), age: old, why: "a directory", make: func(f string) {
			if err := os.Mkdir(f, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
		{name: name(deadLink), age: old, why: "a symlink", make: func(f string) {
			if err := os.Symlink(outside, f); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "0" + name(deadForeign), age: old, why: "not how a pid is written"},
		{name: "+" + name(deadForeign), age: old, why: "not how a pid is written"},
		{name: name(deadForeign) + ".bak", age: old, why: "not <pid>.json"},
		{name: strconv.Itoa(deadForeign) + ".JSON", age: old, why: "not <pid>.json"},
		{name: strconv.Itoa(deadForeign), age: old, why: "not <pid>.json"},
		{name: "notes.json", age: old, why: "not <pid>.json"},
		{name: "99999999999.json", age: old, why: "not a pid"},
		{name: "0.json", age: old, why: "not a pid"},
		{name: ".tmp-" + name(dead) + "-123456", age: old, gone: true, why: "a temp file older than StaleTempAge"},
		{name: ".tmp-" + name(dead) + "-654321", age: fresh, why: "a temp file younger than StaleTempAge"},
	}
	for _, c := range cases {
		file := filepath.Join(sessions, c.name)
		switch {
		case c.make != nil:
			c.make(file)
		case c.pid != 0:
			if err := s.WriteSession(strconv.Itoa(c.pid), sessionDoc(c.pid)); err != nil {
				t.Fatal(err)
			}
		default:
			if err := os.WriteFile(file, sessionDoc(deadForeign), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		age(t, file, c.age, c.make != nil)
	}
	n, err := s.PruneSessions(deadKeep, 1000)
	if err != nil {
		t.Fatalf("PruneSessions: %v", err)
	}
	want := 0
	for _, c := range cases {
		_, err := os.Lstat(filepath.Join(sessions, c.name))
		switch {
		case c.gone && err == nil:
			t.Errorf("%s was kept, but %s", c.name, c.why)
		case !c.gone && err != nil:
			t.Errorf("%s was removed (%v), but %s", c.name, err, c.why)
		}
		if c.gone && c.name[0] != '.' {
			want++
		}
	}
	if n != want {
		t.Errorf("PruneSessions removed %d records, want %d", n, want)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("the symlink's target: %v", err)
	}
}

// TestPruneSessionsLimit: each call looks at no more than limit names; later calls finish.
func TestPruneSessionsLimit(t *testing.T) {
	s, dir := newStore(t)
	for range 3 {
		pid := storetest.ExitedPID(t)
		if err := s.WriteSession(strconv.Itoa(pid), sessionDoc(pid)); err != nil {
			t.Fatal(err)
		}
		age(t, filepath.Join(dir, "sessions", strconv.Itoa(pid)+".json"), 2*time.Hour, false)
	}
	if n, err := s.PruneSessions(0, 0); n != 0 || err != nil {
		t.Errorf("limit 0 removed %d (%v)", n, err)
	}
	n1, err := s.PruneSessions(0, 2)
	if n1 != 2 || err != nil {
		t.Errorf("limit 2 removed %d (%v), want 2", n1, err)
	}
	if n2, err := s.PruneSessions(0, 2); n2 != 1 || err != nil {
		t.Errorf("the next call removed %d (%v), want the last 1", n2, err)
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "sessions")); len(left) != 0 {
		t.Errorf("left %v", left)
	}
}

// TestPruneSessionsLeftAlone: no sessions/, a sessions/ that is a symlink, and one that cannot
// be written: nothing is removed and nothing fails the caller but the unwritable directory.
func TestPruneSessionsLeftAlone(t *testing.T) {
	s, dir := newStore(t)
	if n, err := s.PruneSessions(0, 1000); n != 0 || err != nil {
		t.Errorf("no sessions/: removed %d (%v)", n, err)
	}
	elsewhere := t.TempDir()
	pid := storetest.ExitedPID(t)
	rec := filepath.Join(elsewhere, strconv.Itoa(pid)+".json")
	if err := os.WriteFile(rec, sessionDoc(pid), 0o600); err != nil {
		t.Fatal(err)
	}
	age(t, rec, 2*time.Hour, false)
	if err := os.Symlink(elsewhere, filepath.Join(dir, "sessions")); err != nil {
		t.Fatal(err)
	}
	if n, err := s.PruneSessions(0, 1000); n != 0 || err != nil {
		t.Errorf("sessions/ a symlink: removed %d (%v)", n, err)
	}
	if _, err := os.Stat(rec); err != nil {
		t.Errorf("a record behind a linked sessions/ was touched: %v", err)
	}

	if os.Geteuid() == 0 {
		t.Skip("root writes read-only directories")
	}
	s2, dir2 := newStore(t)
	if err := s2.WriteSession(strconv.Itoa(pid), sessionDoc(pid)); err != nil {
		t.Fatal(err)
	}
	sessions := filepath.Join(dir2, "sessions")
	age(t, filepath.Join(sessions, strconv.Itoa(pid)+".json"), 2*time.Hour, false)
	if err := os.Chmod(sessions, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(sessions, 0o700)
	if n, err := s2.PruneSessions(0, 1000); n != 0 || err == nil {
		t.Errorf("read-only sessions/: removed %d, error %v; want 0 and an error", n, err)
	}
	if _, err := os.Stat(filepath.Join(sessions, strconv.Itoa(pid)+".json")); err != nil {
		t.Errorf("read-only sessions/ lost its record: %v", err)
	}
}

// takenAfterLook is a state directory where, once PruneSessions has opened the record name to
// read it, a new client that took the record's pid writes its own record there (doc): its
// SessionStart landing between the prune's look and its removal.
type takenAfterLook struct {
	durable.FS
	name string
	doc  []byte
	done bool
}

func (f *takenAfterLook) OpenFile(name string, flag int, perm fs.FileMode) (durable.File, error) {
	file, err := f.FS.OpenFile(name, flag, perm)
	if name == f.name && !f.done && err == nil {
		f.done = true
		if werr := durable.WriteFileNoSync(f.FS, name, f.doc, 0o600); werr != nil {
			panic(werr)
		}
	}
	return file, err
}

// TestPruneSessionsKeepsARecordWrittenSinceItsLook: the record of an exited client whose pid
// another client took is pruned; the record that new client writes between the prune's look
// and its removal is the new client's, and stays. Before, it was removed: the new client's
// MCP server could not learn its session after /clear, and its owner was read as ended.
func TestPruneSessionsKeepsARecordWrittenSinceItsLook(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no process start times here")
	}
	dir := filepath.Join(t.TempDir(), "proj", ".claude", "cairn")
	taken := livePID(t)
	start, ok := store.ProcessStart(taken)
	if !ok {
		t.Skip("no process start time")
	}
	name := "sessions/" + strconv.Itoa(taken) + ".json"
	doc := []byte(`{"session_id":"new","pid":` + strconv.Itoa(taken) + `,"client_start":` + strconv.FormatUint(start, 10) + `}`)
	f := &takenAfterLook{name: name, doc: doc}
	s := mustOpen(t, dir)
	if err := s.WriteSession(strconv.Itoa(taken), []byte(`{"session_id":"old","pid":`+strconv.Itoa(taken)+`,"client_start":1}`)); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, filepath.FromSlash(name))
	age(t, file, 2*time.Hour, false)
	f.FS = openDir(t, dir)
	s = mustOpen(t, dir, store.WithFS(f))
	n, err := s.PruneSessions(0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if !f.done {
		t.Fatal("the prune never read the record")
	}
	got, err := os.ReadFile(file)
	if err != nil || string(got) != string(doc) {
		t.Errorf("after the prune the record is %q (%v), removed %d; want the new client's %s", got, err, n, doc)
	}
}
