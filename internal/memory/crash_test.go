package memory

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/store/storetest"
)

// The crash test re-executes this test binary as a Cairn writer that another writer races:
// the other writer renames its content over MEMORY.md between Cairn's compare and its swap, so
// that the swap displaces it, and the Cairn process is killed with SIGKILL right after the
// swap, while the other writer's content is only in Cairn's temp file.
const (
	crashChildEnv = "CAIRN_MEMORY_CRASH_CHILD"
	crashTheirs   = "# theirs\n\n- [Note](note.md) — written between Cairn's compare and its swap\n"
)

func crashChild(dir string) int {
	path := filepath.Join(dir, IndexFile)
	raced := false
	swapHook = func(p string) {
		if p != path || raced {
			return
		}
		raced = true
		tmp := filepath.Join(dir, "model-tmp")
		if err := os.WriteFile(tmp, []byte(crashTheirs), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if err := os.Rename(tmp, path); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	swappedHook = func(string) {
		if raced {
			fmt.Println("swapped")
			time.Sleep(time.Minute) // killed here
		}
	}
	err := New(Location{Dir: dir}, Options{}).Record("Active APEX workflow: plan completed")
	fmt.Fprintln(os.Stderr, "Record returned without being killed:", err)
	return 3
}

// A Cairn writer killed between an exchange that displaced another writer's content and the
// redo of its edit on it loses nothing: the next Cairn write finds the displaced content in the
// temp file and puts it back, with Cairn's line added to it.
func TestKillDashNineAfterADisplacingSwap(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no atomic exchange here: a swap displaces nothing")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, IndexFile)
	if err := os.WriteFile(path, []byte("# start\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	storetest.StartChild(t, cmd, "the writer racing to the window", "swapped")
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if got := readFile(t, path); strings.Contains(got, "# theirs") {
		t.Fatalf("MEMORY.md already holds the other writer's content after the kill: %q", got)
	}

	// The next Cairn write, as the next Stop hook makes it.
	if err := New(Location{Dir: dir}, Options{}).Record("Active APEX workflow: implement completed"); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, path)
	if !strings.HasPrefix(got, crashTheirs) || !strings.HasSuffix(got, "implement completed\n") {
		t.Errorf("MEMORY.md = %q, want the other writer's content and Cairn's line", got)
	}
	noTempLeft(t, dir)
}

// A temp file a killed writer left is read by its name's two sums: its own edit, or the
// content that edit was built on, goes at once; what its exchange displaced from another
// writer, when the file has changed since and it cannot go back, is kept however old.
func TestSweepSettlesByContent(t *testing.T) {
	m, dir := newTestMemory(t)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, IndexFile)
	const now, built, theirs = "# written since\n", "# built on\n", "# displaced, theirs\n"
	if err := os.WriteFile(path, []byte(now), 0o644); err != nil {
		t.Fatal(err)
	}
	ours := SetEntry([]byte(built), TopicFile, IndexLine(TopicTitle, TopicFile, "x"))
	name := func(content string) string {
		return strings.Replace(tempPattern(IndexFile, []byte(built), ours), "*", content[2:5], 1)
	}
	old := time.Now().Add(-time.Hour)
	for _, content := range []string{string(ours), built, theirs} {
		p := filepath.Join(dir, name(content))
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Record("x y"); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".tmp-*"))
	if len(left) != 1 || filepath.Base(left[0]) != name(theirs) {
		t.Fatalf("temp files left: %v, want only %s", left, name(theirs))
	}
	if got := readFile(t, left[0]); got != theirs {
		t.Errorf("the kept temp file holds %q, want %q", got, theirs)
	}
	if got := readFile(t, path); !strings.HasPrefix(got, now) {
		t.Errorf("MEMORY.md = %q, want what was written since, kept", got)
	}
}

// A kept temp file stays until a person has copied its lines back into the file it names:
// then doctor counts it settled and the next write removes it, for it holds nothing the file
// does not. Doctor's fix said to delete it by hand.
func TestSweepRemovesMergedTemp(t *testing.T) {
	m, dir := newTestMemory(t)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, IndexFile)
	const theirs = "# Memory\n\n- theirs, displaced\n"
	p := filepath.Join(dir, strings.Replace(tempPattern(IndexFile, []byte("# built on\n"), []byte("# ours\n")), "*", "abc", 1))
	old := time.Now().Add(-time.Hour)
	for _, tc := range []struct {
		name, file string
		merged     bool
	}{
		{"a line missing", "# Memory\n\n- written since\n", false},
		{"merged", "# Memory\n- written since\r\n- theirs, displaced\n", true},
	} {
		if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(theirs), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		kept, settled := KeptTemps(dir, time.Now())
		if tc.merged && (len(kept) != 0 || settled != 1) || !tc.merged && (len(kept) != 1 || settled != 0) {
			t.Errorf("%s: KeptTemps = %v, %d settled", tc.name, kept, settled)
		}
		if err := m.Record("x y"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(p); (err == nil) == tc.merged {
			t.Errorf("%s: after a write the temp file's stat says %v", tc.name, err)
		}
	}
}
