package cli

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/memory"
	"github.com/cairn-dev/cairn/internal/store"
)

// A memory lock file a Cairn process holds stays: with it gone, the next writer would lock a
// new file while the holder still writes under the old one. Once released, it is removed.
func TestRemoveMemoryLockLeavesAHeldLock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d, err := durable.OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	unlock, err := d.Lock(memory.LockFile, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, memory.LockFile)
	removeMemoryLock(dir)
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the held lock file: %v; want it left", err)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	removeMemoryLock(dir)
	if _, err := os.Stat(lock); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the released lock file: %v; want it removed", err)
	}
}

// A session's Stop that read the memory mark and was putting Cairn's lines back from it while
// cairn uninstall --yes ran wrote them back after uninstall had removed them and said
// "Removed.": Cairn's line stayed in MEMORY.md for good, its mark gone. Uninstall takes the
// mark out first, under the lock the restore holds: while it is held it removes nothing in
// auto-memory and says why; once the restore is done, the same command removes everything.
func TestUninstallWaitsForARestoreUnderWay(t *testing.T) {
	base := t.TempDir()
	root, mem, home := filepath.Join(base, "project"), filepath.Join(base, "memory"), filepath.Join(base, "home")
	for _, d := range []string{filepath.Join(root, ".git"), mem, home} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"HOME": home, "CLAUDE_PROJECT_DIR": root, "CAIRN_MEMORY_DIR": mem}
	run := func(args ...string) (int, string) {
		var out bytes.Buffer
		code := Main(args, strings.NewReader(""), &out, &out, func(k string) string { return env[k] })
		return code, out.String()
	}
	for _, args := range [][]string{{"start", "apex", "uninstall race"}, {"transition", "plan"}} {
		if code, out := run(args...); code != 0 {
			t.Fatalf("cairn %v: exit %d: %s", args, code, out)
		}
	}
	stateDir := filepath.Join(root, ".claude", "cairn")
	defer func(w time.Duration) { markLockWait = w }(markLockWait)
	markLockWait = 50 * time.Millisecond

	st, err := store.Open(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var code int
	var out string
	_, _, err = st.UpdateOwn(l2MarkDoc, func(cur []byte) ([]byte, error) {
		// The Stop, holding the mark's lock, read the mark; uninstall runs meanwhile.
		code, out = run("uninstall", "--yes")
		var d struct {
			IndexHex string `json:"index_hex"`
			TopicHex string `json:"topic_hex"`
		}
		if err := json.Unmarshal(cur, &d); err != nil {
			t.Fatalf("mark %q: %v", cur, err)
		}
		index, _ := hex.DecodeString(d.IndexHex)
		topic, _ := hex.DecodeString(d.TopicHex)
		_, err := memory.New(memory.Location{Dir: mem}, memory.Options{}).Restore(memory.Mark{Index: string(index), Topic: string(topic)}, time.Now(), nil)
		return nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	index, _ := os.ReadFile(filepath.Join(mem, memory.IndexFile))
	if code == 0 && bytes.Contains(index, []byte(memory.TopicFile)) {
		t.Fatalf("cairn uninstall --yes said:\n%s\nyet after the restore under way MEMORY.md holds Cairn's line:\n%s", out, index)
	}
	if code == 0 || !strings.Contains(out, "a Cairn session is restoring its auto-memory lines") {
		t.Errorf("cairn uninstall --yes while the mark's lock is held: exit %d:\n%s\nwant a failure that says why", code, out)
	}
	if code, out := run("uninstall", "--yes"); code != 0 {
		t.Fatalf("cairn uninstall --yes once the restore is done: exit %d: %s", code, out)
	}
	index, _ = os.ReadFile(filepath.Join(mem, memory.IndexFile))
	if bytes.Contains(index, []byte(memory.TopicFile)) {
		t.Errorf("MEMORY.md after uninstall:\n%s", index)
	}
	if _, err := os.Stat(filepath.Join(stateDir, l2MarkFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the mark after uninstall: %v; want it removed", err)
	}
}
