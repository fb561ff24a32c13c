package memory

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/store/storetest"
)

// The race test re-executes this test binary as a second process that plays the model: it
// rewrites MEMORY.md in a loop, half the time by an atomic rename (as Claude Code's Write
// tool does) and half the time in place (truncate and write), keeping or dropping Cairn's
// line, while this process keeps updating Cairn's line. Before each rewrite the other process
// checks that its previous content is still there (Cairn's line aside): a lost update is
// counted and fails it. This process adds a byte to a count file after each update it tries,
// so that the other one can wait for updates rather than for the clock.
const (
	raceChildEnv = "CAIRN_MEMORY_RACE_CHILD"
	raceItersEnv = "CAIRN_MEMORY_RACE_ITERS"
	raceCountEnv = "CAIRN_MEMORY_RACE_COUNT"
	raceFinal    = "# Other writer\n\nfinal content, written last\n"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(raceChildEnv); dir != "" {
		os.Exit(raceChild(dir))
	}
	if dir := os.Getenv(crashChildEnv); dir != "" {
		os.Exit(crashChild(dir))
	}
	storetest.QuietExits()
	os.Exit(m.Run())
}

func raceChild(dir string) int {
	iters, _ := strconv.Atoi(os.Getenv(raceItersEnv))
	path := filepath.Join(dir, IndexFile)
	r := rand.New(rand.NewPCG(uint64(os.Getpid()), 7))
	var expect []byte // our last foreign content; nil before the first write
	lost, transient := 0, 0
	countPath := os.Getenv(raceCountEnv)
	// updates is how many updates Cairn has finished, successful or given up.
	updates := func() int64 {
		fi, err := os.Stat(countPath)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	// awaitUpdates waits until Cairn has finished more than n updates, or exits when the
	// test that started it is gone.
	parent := os.Getppid()
	awaitUpdates := func(n int64) {
		for updates() <= n {
			if os.Getppid() != parent {
				fmt.Fprintln(os.Stderr, "the test process is gone")
				os.Exit(2)
			}
			time.Sleep(time.Millisecond)
		}
	}
	check := func(when string) {
		for try := 0; ; try++ {
			cur, err := os.ReadFile(path)
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: read: %v\n", when, err)
				lost++
				return
			}
			got := stripOwned(cur, TopicFile)
			if expect == nil || bytes.Equal(got, expect) {
				if try > 0 {
					transient++
				}
				return
			}
			// Cairn may be between swapping in an edit built on older content and handing
			// ours back: once the update running when this was read has returned, ours must
			// be there. Only content still gone then is lost, however long that update took.
			if try == 1 {
				fmt.Fprintf(os.Stderr, "%s: lost update: file holds %q, wrote %q\n", when, got, expect)
				lost++
				return
			}
			awaitUpdates(updates())
		}
	}
	// pause holds an in-place write between its truncate and its write, as Node's writeFile
	// can when its event loop is busy, for longer than a writer may be waited for.
	pause := false
	write := func(content []byte, atomic bool) {
		if atomic {
			tmp := filepath.Join(dir, fmt.Sprintf(".model-tmp-%d", r.Int()))
			if err := os.WriteFile(tmp, content, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, err)
				lost++
				return
			}
			if err := os.Rename(tmp, path); err != nil {
				fmt.Fprintln(os.Stderr, err)
				lost++
			}
		} else if err := writeInPlace(path, content, pause); err != nil {
			fmt.Fprintln(os.Stderr, err)
			lost++
		}
		expect = stripOwned(content, TopicFile)
	}
	for k := 1; k <= iters && lost == 0; k++ { // one lost update fails it
		check(fmt.Sprintf("iteration %d", k))
		cur, _ := os.ReadFile(path)
		var b bytes.Buffer
		fmt.Fprintf(&b, "# Other writer\r\n\r\n- [Note](note.md) — iteration %d\r\n", k)
		if k%3 != 0 {
			if line, ok := FindEntry(cur, TopicFile); ok {
				b.WriteString(line + "\r\n") // the model kept Cairn's line as it read it
			}
		}
		fmt.Fprintf(&b, "tail %d without newline", k)
		pause = k%8 == 1
		write(b.Bytes(), k%2 == 0)
		time.Sleep(time.Duration(r.IntN(1500)) * time.Microsecond)
	}
	write([]byte(raceFinal), true)
	awaitUpdates(updates() + 1) // Cairn writes on it meanwhile: an update begun after it ends
	check("final")
	fmt.Fprintf(os.Stderr, "%d lost updates, %d seen briefly overwritten and then restored\n", lost, transient)
	if lost > 0 {
		return 1
	}
	return 0
}

// writeInPlace writes content into path in place, as Node's fs.writeFile does: open with
// truncation, then write; pause holds it 25 ms between the two.
func writeInPlace(path string, content []byte, pause bool) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if pause {
		time.Sleep(25 * time.Millisecond)
	}
	_, err = f.Write(content)
	return errors.Join(err, f.Close())
}

// startModel starts the other process on dir and returns a channel that yields its exit, and
// a function to call after each update of Cairn's (successful or not), which the other
// process waits for.
func startModel(t *testing.T, dir string, iters int) (<-chan error, *bytes.Buffer, func()) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	countPath := filepath.Join(t.TempDir(), "updates")
	count, err := os.OpenFile(countPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { count.Close() })
	updated := func() {
		if _, err := count.Write([]byte{'.'}); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), raceChildEnv+"="+dir, raceItersEnv+"="+strconv.Itoa(iters), raceCountEnv+"="+countPath)
	stderr := new(bytes.Buffer)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() }) // it waits for updates a failed test will not make
	return done, stderr, updated
}

func TestRaceWithModelProcess(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, IndexFile), []byte("# start\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	iters := 400
	if testing.Short() {
		iters = 150
	}
	done, stderr, updated := startModel(t, dir, iters)

	m := New(Location{Dir: dir}, Options{})
	var ok, failed int
	var childErr error
	last := ""
	for i := 0; ; i++ {
		last = fmt.Sprintf("Active APEX workflow: step%d completed, implementing the race", i)
		if err := m.Record(last); err != nil {
			if !IsUnavailable(err) {
				t.Fatalf("Record: %v", err)
			}
			failed++
		} else {
			ok++
		}
		updated()
		if exited(done, &childErr) {
			break
		}
		if i > 100000 {
			t.Fatal("the other process never finished")
		}
	}
	if childErr != nil {
		t.Fatalf("the other process saw lost updates: %v\n%s", childErr, stderr.String())
	}
	// After the other process is done, Cairn writes once more, as the next Stop hook would.
	if err := m.Record(last + " done"); err != nil {
		t.Fatal(err)
	}
	final := readFile(t, filepath.Join(dir, IndexFile))
	if got := string(stripOwned([]byte(final), TopicFile)); got != raceFinal {
		t.Errorf("the other process's last content is gone: file without Cairn's line is %q", got)
	}
	if n, _ := countOwned([]byte(final), TopicFile); n != 1 {
		t.Errorf("%d Cairn lines in %q", n, final)
	}
	if line, _ := FindEntry([]byte(final), TopicFile); !strings.HasSuffix(line, "the race done") {
		t.Errorf("Cairn's line = %q, want the latest summary", line)
	}
	if ok == 0 {
		t.Errorf("no Cairn update succeeded (%d gave up)", failed)
	}
	t.Logf("%d Cairn updates, %d gave up under contention, %d model writes; the other process said: %s", ok, failed, iters+1, strings.TrimSpace(stderr.String()))
	noTempLeft(t, dir)
}

// exited reports whether the child has finished, storing its error.
func exited(done <-chan error, err *error) bool {
	select {
	case *err = <-done:
		return true
	default:
		return false
	}
}

// TestRaceNegativeControl shows the race test can fail: a writer that reads, edits and
// replaces MEMORY.md with a plain atomic rename, without the compare-and-swap, loses the other
// process's edits.
func TestRaceNegativeControl(t *testing.T) {
	// The race is timing-dependent: on a busy machine the model may finish before the naive
	// writer interleaves with it, so the control gets a few tries to lose an update.
	var childErr error
	var stderr *bytes.Buffer
	for try := 0; try < 5; try++ {
		dir := t.TempDir()
		path := filepath.Join(dir, IndexFile)
		if err := os.WriteFile(path, []byte("# start\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		var done <-chan error
		var updated func()
		done, stderr, updated = startModel(t, dir, 30)
		childErr = nil
		for i := 0; !exited(done, &childErr); i++ {
			cur, _ := os.ReadFile(path)
			next := SetEntry(cur, TopicFile, IndexLine(TopicTitle, TopicFile, fmt.Sprintf("naive %d", i)))
			if err := durable.WriteFileAtomic(path, next, 0o644); err != nil {
				t.Fatal(err)
			}
			updated()
		}
		if childErr != nil && strings.Contains(stderr.String(), "lost update") {
			return
		}
	}
	t.Errorf("a writer without compare-and-swap lost nothing in 5 tries (%v): the race test would not catch a lost update\n%s", childErr, stderr.String())
}

// A writer that slips in between the compare and the swap of every attempt makes update give
// up; its last content must then be the file's, not Cairn's edit of an older one (which
// would leave the writer's content only in the temp file the swap displaced it into).
func TestGiveUpPutsTheOtherWritersContentBack(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, IndexFile)
	if err := os.WriteFile(path, []byte("# theirs 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writes := 0
	swapHook = func(p string) {
		if p == path && writes < maxAttempts {
			writes++
			if err := os.WriteFile(path, fmt.Appendf(nil, "# theirs %d\n", writes), 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	defer func() { swapHook = nil }()
	err := New(Location{Dir: dir}, Options{}).Record("Active APEX workflow: plan completed")
	if !IsUnavailable(err) {
		t.Fatalf("Record = %v, want it to give up", err)
	}
	want := fmt.Sprintf("# theirs %d\n", maxAttempts)
	if got := readFile(t, path); got != want {
		t.Errorf("after giving up the file holds %q, want the other writer's last content %q", got, want)
	}
	noTempLeft(t, dir)
}

// An in-place writer (Node's fs.writeFile: open with truncation, then write) that truncates
// MEMORY.md just before Cairn's swap and writes long after, during Cairn's update or after
// it gave up, writes into the file it opened: that must be MEMORY.md again by then, never the
// temp file the swap displaced it into and then removed. The next update adds Cairn's line to
// what the writer wrote.
func TestLateInPlaceWriteIsKept(t *testing.T) {
	t.Run("leases", testLateInPlaceWrite)
	// Where the kernel cannot say who has the file open, the empty file is handed back.
	t.Run("no leases", func(t *testing.T) {
		defer withoutLeases()()
		testLateInPlaceWrite(t)
	})
}

// withoutLeases makes writing unable to tell, as on a system without leases, until the
// function it returns is called.
func withoutLeases() (restore func()) {
	w := writing
	writing = func(string) (bool, bool) { return false, false }
	return func() { writing = w }
}

func testLateInPlaceWrite(t *testing.T) {
	const late = "# theirs, written late\n"
	for _, writeAt := range []int{3, 0} { // the hook call that writes; 0: after Record gave up
		t.Run(fmt.Sprint("write at swap ", writeAt), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, IndexFile)
			if err := os.WriteFile(path, []byte("# theirs\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			var f *os.File
			calls := 0
			finish := func() {
				time.Sleep(25 * time.Millisecond) // longer than any writer was ever waited for
				if _, err := f.WriteString(late); err != nil {
					t.Error(err)
				}
				f.Close()
			}
			swapHook = func(p string) {
				if p != path {
					return
				}
				calls++
				switch calls {
				case 1:
					var err error
					if f, err = os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0); err != nil {
						t.Error(err)
					}
				case writeAt:
					finish()
				}
			}
			defer func() { swapHook = nil }()
			m := New(Location{Dir: dir}, Options{})
			err := m.Record("Active APEX workflow: plan completed")
			if writeAt == 0 {
				if !IsUnavailable(err) {
					t.Fatalf("Record while the writer holds the file = %v, want it to give way", err)
				}
				finish()
				if got := readFile(t, path); got != late {
					t.Fatalf("MEMORY.md = %q, want the late write %q", got, late)
				}
				err = m.Record("Active APEX workflow: plan completed") // the next Stop
			}
			if err != nil {
				t.Fatal(err)
			}
			got := readFile(t, path)
			if !strings.HasPrefix(got, late) || !strings.HasSuffix(got, "plan completed\n") {
				t.Errorf("MEMORY.md = %q, want the late write and Cairn's line", got)
			}
			noTempLeft(t, dir)
		})
	}
}

// A MEMORY.md that is empty because it is (nobody is writing it) gets Cairn's line like a
// missing one, byte for byte.
func TestEmptyIndexGetsCairnsLine(t *testing.T) {
	empty, missing := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, IndexFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{empty, missing} {
		if err := New(Location{Dir: dir}, Options{}).Record("Active APEX workflow: plan completed"); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := readFile(t, filepath.Join(empty, IndexFile)), readFile(t, filepath.Join(missing, IndexFile)); got != want {
		t.Errorf("empty MEMORY.md became %q, want %q as a missing one", got, want)
	}

	// Where the kernel cannot say whether a writer holds it, an empty MEMORY.md is never
	// displaced: Cairn gives way (its line stays owed), and the file stays as it is.
	defer withoutLeases()()
	dir := t.TempDir()
	path := filepath.Join(dir, IndexFile)
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := New(Location{Dir: dir}, Options{}).Record("Active APEX workflow: plan completed"); !IsUnavailable(err) {
		t.Errorf("Record on an empty MEMORY.md without leases = %v, want it to give way", err)
	}
	if got := readFile(t, path); got != "" {
		t.Errorf("MEMORY.md = %q, want it left empty", got)
	}
}

// A writer that renames its content over MEMORY.md between Cairn's swap and the hand-back of
// a busy displaced file wrote last: its content stays (the hand-back is undone), and Cairn's
// edit is redone on it.
func TestHandBackLeavesANewerWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, IndexFile)
	if err := os.WriteFile(path, []byte("# theirs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const newer = "# newer, renamed in\n"
	w := writing
	defer func() { writing = w }()
	done := false
	writing = func(p string) (bool, bool) {
		if done || !strings.HasPrefix(filepath.Base(p), ".tmp-"+IndexFile) {
			return w(p)
		}
		done = true
		tmp := filepath.Join(dir, "model-tmp")
		if err := os.WriteFile(tmp, []byte(newer), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
		return true, true
	}
	if err := New(Location{Dir: dir}, Options{}).Record("Active APEX workflow: plan completed"); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, path); !strings.HasPrefix(got, newer) || !strings.HasSuffix(got, "plan completed\n") {
		t.Errorf("MEMORY.md = %q, want the newer write and Cairn's line", got)
	}
	noTempLeft(t, dir)
}

// noTempLeft fails t when dir holds a temp file of Cairn's: every update, whatever it met,
// removes its own.
func noTempLeft(t *testing.T, dir string) {
	t.Helper()
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".tmp-*")); len(leftovers) > 0 {
		t.Errorf("temp files left behind: %v", leftovers)
	}
}
