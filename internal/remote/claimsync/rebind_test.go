package claimsync

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/store/storetest"
)

// TestRebindRaceKeepsOneIdentity: processes of one copied state directory, some reaching it
// through a symlinked project directory, all read the copied identity and then rebind at once.
// Every one ends with the copy's one new identity, never the original's.
func TestRebindRaceKeepsOneIdentity(t *testing.T) {
	if dir := os.Getenv("CAIRN_TEST_REBIND_DIR"); dir != "" {
		rebindChild(t, dir)
		return
	}
	base := t.TempDir()
	orig := filepath.Join(base, "orig", ".claude", "cairn")
	cp := filepath.Join(base, "copy", ".claude", "cairn")
	owner := ownerName()
	doc, _ := json.Marshal(state{Owner: owner, Dir: orig})
	for _, d := range []string{orig, cp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, Doc+".json"), doc, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(base, "copy"), filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	const procs = 6
	type child struct {
		cmd    *exec.Cmd
		out    *bufio.Scanner
		stderr strings.Builder
		goPipe io.WriteCloser
	}
	kids := make([]*child, procs)
	// Whatever happens to this test, no child outlives it: a child whose go pipe closes
	// without a word gives up, and one still running at the end is killed.
	t.Cleanup(func() {
		for _, k := range kids {
			if k != nil && k.cmd.ProcessState == nil {
				k.goPipe.Close()
				k.cmd.Process.Kill()
				k.cmd.Wait()
			}
		}
	})
	for p := range procs {
		dir := cp
		if p%2 == 1 {
			dir = filepath.Join(base, "link", ".claude", "cairn")
		}
		k := &child{cmd: exec.Command(os.Args[0], "-test.run=^TestRebindRaceKeepsOneIdentity$", "-test.count=1")}
		k.cmd.Env = append(os.Environ(), "CAIRN_TEST_REBIND_DIR="+dir)
		k.cmd.Stderr = &k.stderr
		var err error
		if k.goPipe, err = k.cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		// Each child has read the Doc before it says ready; all rebind after go.
		k.out = storetest.StartChild(t, k.cmd, fmt.Sprintf("process %d", p), "ready")
		kids[p] = k
	}
	for _, k := range kids {
		k.goPipe.Write([]byte("g"))
		k.goPipe.Close()
	}
	got := map[string]int{}
	for p, k := range kids {
		var lines []string
		for k.out.Scan() {
			lines = append(lines, k.out.Text())
		}
		out := strings.Join(lines, "\n") + "\n" + k.stderr.String()
		if err := k.cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", p, err, out)
		}
		_, rest, ok := strings.Cut(out, "owner=")
		id, _, _ := strings.Cut(rest, "\n")
		if !ok || id == "" {
			t.Fatalf("process %d said no owner:\n%s", p, out)
		}
		got[id]++
	}
	if got[owner] > 0 || len(got) != 1 {
		t.Fatalf("identities used by the copy's processes: %v; want one new one (the original's is %s)", got, owner)
	}
	if s := ownerAt(cp); got[s] != procs {
		t.Errorf("the copy holds %q; its processes used %v", s, got)
	}
}

// rebindChild loads the identity as load does, says it is ready, waits for the parent's go
// (one byte on stdin; without it, the parent is gone and the child gives up), then rebinds and
// prints the identity it ends with.
func rebindChild(t *testing.T, dir string) {
	st, err := store.Open(dir, store.WithLockWait(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cur, _, err := readState(st)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("ready")
	if _, err := io.ReadFull(os.Stdin, make([]byte, 1)); err != nil {
		t.Fatalf("no go from the parent (%v): it has stopped", err)
	}
	if cur.Dir != st.Dir() {
		if cur, _, err = rebind(st, cur); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Printf("owner=%s\n", cur.Owner)
}
