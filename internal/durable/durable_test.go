package durable_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/durable/durabletest"
)

func mustDir(t *testing.T) (*durable.Dir, string) {
	t.Helper()
	dir := t.TempDir()
	d, err := durable.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, dir
}

func TestWriteFileRoundTripAndMode(t *testing.T) {
	d, dir := mustDir(t)
	for _, content := range []string{"one", "", strings.Repeat("x", 100000)} {
		if err := durable.WriteFile(d, "doc.json", []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := durable.ReadFile(d, "doc.json", 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != content {
			t.Fatalf("read %d bytes, want %d", len(got), len(content))
		}
	}
	fi, err := os.Stat(filepath.Join(dir, "doc.json"))
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	names, _ := d.ReadDirNames(".")
	if len(names) != 1 {
		t.Errorf("left behind %v, want only doc.json", names)
	}
}

func TestWriteFileAtomicPath(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.md")
	if err := durable.WriteFileAtomic(p, []byte("a"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := durable.WriteFileAtomic(p, []byte("b"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "b" {
		t.Fatalf("got %q", b)
	}
}

func TestOpenDirRefusesSymlink(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "state")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("symlinks not available:", err)
	}
	_, err := durable.OpenDir(link)
	if !errors.Is(err, durable.ErrSymlinkDir) {
		t.Fatalf("got %v, want ErrSymlinkDir", err)
	}
	f := filepath.Join(real, "file")
	os.WriteFile(f, nil, 0o600)
	if _, err := durable.OpenDir(f); err == nil {
		t.Fatal("opened a regular file as a directory")
	}
}

// TestOpenDirSeenRefusesADirectorySwappedSinceTheLook: the caller's own look stands for
// OpenDir's, so a directory renamed into its place since then is refused as OpenDir refuses
// one swapped during its own.
func TestOpenDirSeenRefusesADirectorySwappedSinceTheLook(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	seen, err := os.Lstat(dir)
	if err != nil {
		t.Fatal(err)
	}
	d, err := durable.OpenDirSeen(dir, seen)
	if err != nil {
		t.Fatalf("the directory looked at: %v", err)
	}
	d.Close()
	other := filepath.Join(base, "other")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, dir+".new"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir, filepath.Join(base, "old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir+".new", dir); err != nil {
		t.Fatal(err)
	}
	if d, err := durable.OpenDirSeen(dir, seen); err == nil {
		d.Close()
		t.Fatal("opened another directory than the one looked at")
	}
}

func TestReadFileRefusesPlantedFiles(t *testing.T) {
	d, dir := mustDir(t)
	os.WriteFile(filepath.Join(dir, "target"), []byte(`{"a":1}`), 0o600)
	os.WriteFile(filepath.Join(dir, "big"), bytes.Repeat([]byte("a"), 2000), 0o600)
	os.Mkdir(filepath.Join(dir, "adir"), 0o700)
	type plant struct {
		name  string
		setup func() error
		want  error
	}
	plants := []plant{
		{"symlink", func() error { return os.Symlink("target", filepath.Join(dir, "symlink")) }, durable.ErrNotRegular},
		{"outside-symlink", func() error { return os.Symlink("/etc/passwd", filepath.Join(dir, "outside-symlink")) }, durable.ErrNotRegular},
		{"hardlink", func() error { return os.Link(filepath.Join(dir, "target"), filepath.Join(dir, "hardlink")) }, durable.ErrHardLinked},
		{"fifo", func() error { return mkfifo(filepath.Join(dir, "fifo")) }, durable.ErrNotRegular},
		{"adir", func() error { return nil }, durable.ErrNotRegular},
		{"big", func() error { return nil }, durable.ErrTooLarge},
		{"missing", func() error { return nil }, fs.ErrNotExist},
	}
	for _, p := range plants {
		t.Run(p.name, func(t *testing.T) {
			if err := p.setup(); err != nil {
				t.Skip("cannot plant on this system:", err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := durable.ReadFile(d, p.name, 1000)
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, p.want) {
					t.Fatalf("got %v, want %v", err, p.want)
				}
				if p.name != "missing" && !strings.Contains(err.Error(), p.name) {
					t.Errorf("error %q does not name the file", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("read hung")
			}
		})
	}
	// Appending to a planted file is refused too, and the target is untouched.
	for _, name := range []string{"symlink", "hardlink", "fifo"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err != nil {
			continue
		}
		if _, err := durable.AppendLine(d, name, []byte("x"), true); err == nil {
			t.Errorf("append to %s succeeded", name)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "target")); string(b) != `{"a":1}` {
		t.Errorf("target changed to %q", b)
	}
}

func TestAppendLineRepairsTornTail(t *testing.T) {
	d, dir := mustDir(t)
	p := filepath.Join(dir, "log.jsonl")
	os.WriteFile(p, []byte("{\"a\":1}\n{\"b\":"), 0o600)
	res, err := durable.AppendLine(d, "log.jsonl", []byte(`{"c":3}`), true)
	if err != nil {
		t.Fatal(err)
	}
	if res.Repaired != 5 || res.Offset != 8 {
		t.Errorf("repaired %d offset %d, want 5 and 8", res.Repaired, res.Offset)
	}
	if b, _ := os.ReadFile(p); string(b) != "{\"a\":1}\n{\"c\":3}\n" {
		t.Fatalf("got %q", b)
	}
	// A torn tail with no newline at all, longer than one read chunk.
	os.WriteFile(p, bytes.Repeat([]byte("z"), 200<<10), 0o600)
	res, err = durable.AppendLine(d, "log.jsonl", []byte(`1`), false)
	if err != nil || res.Repaired != 200<<10 {
		t.Fatalf("repaired %d, err %v", res.Repaired, err)
	}
	if b, _ := os.ReadFile(p); string(b) != "1\n" {
		t.Fatalf("got %q", b)
	}
	if _, err := durable.AppendLine(d, "log.jsonl", []byte("a\nb"), false); err == nil {
		t.Fatal("appended a line holding a newline")
	}
}

func TestLockTimeoutNamesHolder(t *testing.T) {
	d, _ := mustDir(t)
	unlock, err := d.Lock(".lock-x", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Lock(".lock-x", 30*time.Millisecond)
	var te *durable.LockTimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("got %v, want a LockTimeoutError", err)
	}
	if te.Holder == nil || te.Holder.PID != os.Getpid() {
		t.Fatalf("holder %+v, want pid %d", te.Holder, os.Getpid())
	}
	if !strings.Contains(err.Error(), ".lock-x") || !strings.Contains(err.Error(), "pid") {
		t.Errorf("message %q does not say which file and who", err)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	unlock2, err := d.Lock(".lock-x", 0)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	unlock2()
}

// TestFaultyWriteFileOldOrNew fails every operation of a replace in turn, once and
// persistently, and checks the file always holds the complete old or new content.
func TestFaultyWriteFileOldOrNew(t *testing.T) {
	oldC, newC := []byte("old content"), []byte("new content, longer")
	run := func(k int, persistent bool) (*durabletest.Faulty, []byte, error) {
		d, _ := mustDir(t)
		if err := durable.WriteFile(d, "f", oldC, 0o600); err != nil {
			t.Fatal(err)
		}
		ff := &durabletest.Faulty{FS: d, FailAt: k, Persistent: persistent}
		err := durable.WriteFile(ff, "f", newC, 0o600)
		got, rerr := durable.ReadFile(d, "f", 1<<20)
		if rerr != nil {
			t.Fatalf("k=%d: read: %v", k, rerr)
		}
		return ff, got, err
	}
	clean, _, err := run(0, false)
	if err != nil {
		t.Fatal(err)
	}
	n := clean.Ops()
	if n < 6 {
		t.Fatalf("only %d operations counted", n)
	}
	for _, persistent := range []bool{false, true} {
		for k := 1; k <= n; k++ {
			ff, got, err := run(k, persistent)
			if ff.Injected() == 0 {
				t.Fatalf("k=%d: no fault injected", k)
			}
			switch {
			case bytes.Equal(got, newC):
				// A failure after the rename (the dir sync) may still report an error.
			case bytes.Equal(got, oldC):
				if err == nil {
					t.Fatalf("k=%d persistent=%v: old content but no error\n%s", k, persistent, strings.Join(ff.Trace(), "\n"))
				}
			default:
				t.Fatalf("k=%d: torn content %q", k, got)
			}
		}
	}
}

func TestMkdirAll(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a", "b", "c")
	if err := durable.MkdirAll(p, 0o700); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
		t.Fatal(err)
	}
	if err := durable.MkdirAll(p, 0o700); err != nil {
		t.Fatal(err)
	}
}

// TestLockExcludesWithinAProcess: each Lock opens its own descriptor, so goroutines of one
// process exclude each other as separate processes do.
func TestLockExcludesWithinAProcess(t *testing.T) {
	d, _ := mustDir(t)
	if err := durable.WriteFile(d, "n", []byte("0"), 0o600); err != nil {
		t.Fatal(err)
	}
	const workers, each = 4, 25
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		go func() {
			for i := 0; i < each; i++ {
				unlock, err := d.Lock(".lock-n", 10*time.Second)
				if err != nil {
					errs <- err
					return
				}
				b, _ := durable.ReadFile(d, "n", 100)
				var n int
				fmt.Sscan(string(b), &n)
				err = durable.WriteFile(d, "n", []byte(fmt.Sprint(n+1)), 0o600)
				unlock()
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for w := 0; w < workers; w++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := durable.ReadFile(d, "n", 100); string(b) != fmt.Sprint(workers*each) {
		t.Fatalf("counter %s, want %d", b, workers*each)
	}
}

// WriteFileNoSync is atomic (a failure at any step leaves the old content) but issues no
// fsync: the trace of its operations holds none.
func TestWriteFileNoSyncIsAtomicWithoutSyncs(t *testing.T) {
	d, dir := mustDir(t)
	if err := durable.WriteFile(d, "s.json", []byte(`{"old":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for k := 1; ; k++ {
		f := &durabletest.Faulty{FS: d, FailAt: k}
		err := durable.WriteFileNoSync(f, "s.json", []byte(`{"new":2}`), 0o600)
		got, rerr := os.ReadFile(filepath.Join(dir, "s.json"))
		if rerr != nil || (string(got) != `{"old":1}` && string(got) != `{"new":2}`) {
			t.Fatalf("k=%d: file is %q (%v)", k, got, rerr)
		}
		for _, op := range f.Trace() {
			if strings.Contains(op, "sync") {
				t.Fatalf("k=%d: WriteFileNoSync synced: %v", k, f.Trace())
			}
		}
		if err == nil {
			if string(got) != `{"new":2}` {
				t.Fatalf("k=%d: success but content %q", k, got)
			}
			break
		}
		if err := durable.WriteFile(d, "s.json", []byte(`{"old":1}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMkdirAllRefusesWhatIsNoDirectory: a name taken by something that is not a directory (a
// dangling link, which Stat does not see, so that the Mkdir finds it there) is an error, as
// an existing file is, not a directory made.
func TestMkdirAllRefusesWhatIsNoDirectory(t *testing.T) {
	base := t.TempDir()
	p := filepath.Join(base, "memory")
	if err := os.Symlink(filepath.Join(base, "gone"), p); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := durable.MkdirAll(p, 0o700); err == nil {
		t.Fatal("MkdirAll over a dangling link succeeded, and nothing is a directory there")
	}
	if _, err := os.Lstat(filepath.Join(base, "gone")); err == nil {
		t.Fatal("MkdirAll made the dangling link's target")
	}
}

// TestLockTimeoutOfAStoppedHolder: a lock held by a stopped process is not waited for (it
// holds it until it is resumed), and the error said "gave up after 0s", a wait that was not
// one; it now says the holder holds it until it is resumed, and nothing changed.
func TestLockTimeoutOfAStoppedHolder(t *testing.T) {
	for _, waited := range []time.Duration{0, 3 * time.Second} {
		te := &durable.LockTimeoutError{Path: "/s/.lock-x", Waited: waited, Stopped: true,
			Holder: &durable.Holder{PID: 42, Command: "cairn", Since: time.Unix(0, 0)}}
		msg := te.Error()
		if strings.Contains(msg, "gave up") || !strings.Contains(msg, "(cairn, stopped)") ||
			!strings.Contains(msg, "holds it until it is resumed; nothing changed; resume it (fg in its shell, or kill -CONT 42), then try again") {
			t.Errorf("waited %s: %q", waited, msg)
		}
	}
}

// TestLockTimeoutSaysTheWaitRounded: a wait of 3 s that gave up was said as "gave up after
// 3.001s", a timer's overshoot no one asked for; a person reads a wait of a second or more
// to a tenth of a second, and a shorter one to the millisecond it was.
func TestLockTimeoutSaysTheWaitRounded(t *testing.T) {
	for _, tc := range []struct {
		waited time.Duration
		said   string
	}{
		{3*time.Second + time.Millisecond, "gave up after 3s "},
		{3*time.Second + 449*time.Millisecond, "gave up after 3.4s "},
		{1500 * time.Millisecond, "gave up after 1.5s "},
		{61*time.Second + 20*time.Millisecond, "gave up after 1m1s "},
		{87*time.Millisecond + 300*time.Microsecond, "gave up after 87ms "},
		{0, "gave up after 0s "},
	} {
		te := &durable.LockTimeoutError{Path: "/s/.lock-x", Waited: tc.waited}
		if msg := te.Error(); !strings.Contains(msg, tc.said) {
			t.Errorf("waited %s: %q, want %q", tc.waited, msg, tc.said)
		}
	}
}
