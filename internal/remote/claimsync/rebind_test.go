package claimsync

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/store"
)

// TestRebindRaceKeepsOneIdentity: processes of one copied state directory, some reaching it
// through a symlinked project directory, all read the copied identity and then rebind at once.
// Every one ends with the copy's one new identity, never the original's.
func TestRebindRaceKeepsOneIdentity(t *testing.T) {
	if dir := os.Getenv("CAIRN_TEST_REBIND_DIR"); dir != "" {
		rebindChild(t, dir, os.Getenv("CAIRN_TEST_REBIND_GO"))
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
	start := filepath.Join(base, "go")
	const procs = 6
	cmds := make([]*exec.Cmd, procs)
	outs := make([]strings.Builder, procs)
	for p := range procs {
		dir := cp
		if p%2 == 1 {
			dir = filepath.Join(base, "link", ".claude", "cairn")
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestRebindRaceKeepsOneIdentity$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "CAIRN_TEST_REBIND_DIR="+dir, "CAIRN_TEST_REBIND_GO="+start)
		cmd.Stdout, cmd.Stderr = &outs[p], &outs[p]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[p] = cmd
	}
	// Each child has read the Doc before it creates its ready file; all rebind after go.
	deadline := time.Now().Add(30 * time.Second)
	for {
		ents, _ := os.ReadDir(base)
		ready := 0
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "ready-") {
				ready++
			}
		}
		if ready == procs {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d processes ready", ready, procs)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := os.WriteFile(start, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for p, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", p, err, outs[p].String())
		}
		_, rest, ok := strings.Cut(outs[p].String(), "owner=")
		id, _, _ := strings.Cut(rest, "\n")
		if !ok || id == "" {
			t.Fatalf("process %d said no owner:\n%s", p, outs[p].String())
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

// rebindChild loads the identity as load does, says it is ready, waits for the go file, then
// rebinds and prints the identity it ends with.
func rebindChild(t *testing.T, dir, start string) {
	st, err := store.Open(dir, store.WithLockWait(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cur, _, err := readState(st)
	if err != nil {
		t.Fatal(err)
	}
	ready := filepath.Join(filepath.Dir(start), fmt.Sprintf("ready-%d", os.Getpid()))
	if err := os.WriteFile(ready, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(start); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if cur.Dir != st.Dir() {
		if cur, _, err = rebind(st, cur); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Printf("owner=%s\n", cur.Owner)
}
