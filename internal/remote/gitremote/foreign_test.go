package gitremote_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
)

// TestForeignCommitIsNotRead: a ref under refs/cairn/wf/ that points at a commit Cairn did not
// write is reported, with what to do, rather than read as records; Heads leaves it out and
// still lists the workflow beside it, and Watch sees that one move. A ref whose name is no
// workflow id is no line, and is passed over without a word.
func TestForeignCommitIsNotRead(t *testing.T) {
	ctx := bg(t)
	bare := bareRepo(t)
	work := t.TempDir()
	git(t, work, "init", "-q")
	git(t, work, "-c", "user.name=x", "-c", "user.email=x@example.com", "commit", "-q", "--allow-empty", "-m", "not cairn")
	git(t, work, "push", "-q", "file://"+bare, "HEAD:refs/cairn/wf/wf-x")
	git(t, work, "push", "-q", "file://"+bare, "HEAD:refs/cairn/wf/wf-y")
	git(t, work, "push", "-q", "file://"+bare, "HEAD:refs/cairn/wf/nested/name") // not an id: not a line
	b := clone(t, "file://"+bare, gitremote.Refs)
	if _, err := b.Append(ctx, "wf-ok", 0, remote.Slice([]byte(`{"n":1}`))); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Since(ctx, "wf-x", 0); err == nil || !strings.Contains(err.Error(), "Cairn did not write") {
		t.Errorf("Since on a foreign ref = %v, want an error naming it", err)
	}
	h, err := b.Heads(ctx)
	ue, ok := errors.AsType[*remote.UnreadableError](err)
	if !ok || !slices.Equal(ue.IDs, []string{"wf-x", "wf-y"}) || !strings.Contains(err.Error(), "Cairn did not write") {
		t.Errorf("Heads beside foreign refs: error %v, want one naming wf-x and wf-y", err)
	}
	if l := ue.LeftOut(); ok && (len(l) != 2 || l[1].Reason != remote.NotCairns || l[1].Ref != "refs/cairn/wf/wf-y" ||
		!strings.Contains(l[1].Step, "git fetch origin refs/cairn/wf/wf-y")) {
		t.Errorf("lines left out = %+v, want wf-y as not Cairn's, with its own step", l)
	}
	if !h.Equal(remote.Heads{"wf-ok": 1}) {
		t.Errorf("Heads beside foreign refs = %v, want wf-ok at 1", h)
	}
	other := clone(t, "file://"+bare, gitremote.Refs)
	if _, err := other.Append(ctx, "wf-ok", 1, remote.Slice([]byte(`{"n":2}`))); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if h, err := b.Watch(wctx, remote.Heads{"wf-ok": 1}); err != nil || h["wf-ok"] != 2 {
		t.Errorf("Watch beside foreign refs = %v, %v; want wf-ok at 2", h, err)
	}
}

// TestRefNoFileCanHoldIsLeftOut: a ref under refs/cairn/wf/ whose name this machine's file
// system cannot hold (here one too long for a file name, which a host keeps in packed refs;
// a Windows device name is another) failed every fetch into the mirror, so no workflow synced
// at all. Its name is no workflow id: it is left out, and the workflows beside it sync, twins
// that differ only in case included, as this file system tells case apart.
func TestRefNoFileCanHoldIsLeftOut(t *testing.T) {
	ctx := bg(t)
	bare := bareRepo(t)
	url := "file://" + bare
	if _, err := clone(t, url, gitremote.Refs).Append(ctx, "wf-ok", 0, remote.Slice([]byte(`{"n":1}`))); err != nil {
		t.Fatal(err)
	}
	oid := git(t, bare, "rev-parse", "refs/cairn/wf/wf-ok")
	forge(t, bare, "refs/cairn/wf/WF-OK", `{"n":1}`, "cairn WF-OK r1\n")
	// Packed, as git can (a loose ref of that name could not be created here either); the
	// name sorts after the others, as packed-refs must.
	git(t, bare, "pack-refs", "--all")
	f, err := os.OpenFile(filepath.Join(bare, "packed-refs"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(oid + " refs/cairn/wf/x" + strings.Repeat("y", 300) + "\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"", "x"} { // Heads, and Since on an id the long name extends
		t.Run("since-"+id, func(t *testing.T) {
			b := clone(t, url, gitremote.Refs)
			if id != "" {
				if recs, err := b.Since(ctx, id, 0); err != nil || len(recs) != 0 {
					t.Fatalf("Since(%s) = %d records, %v; want none", id, len(recs), err)
				}
			}
			for range 2 {
				if h, err := b.Heads(ctx); err != nil || !h.Equal(remote.Heads{"wf-ok": 1, "WF-OK": 1}) {
					t.Fatalf("Heads beside a ref no file can hold = %v, %v; want wf-ok and WF-OK at 1", h, err)
				}
				if recs, err := b.Since(ctx, "wf-ok", 0); err != nil || len(recs) != 1 {
					t.Fatalf("Since(wf-ok) = %d records, %v", len(recs), err)
				}
			}
		})
	}
}

// TestRefToAMissingObjectIsLeftOut: a ref on a damaged remote that points at an object the
// remote does not have made the remote refuse every fetch, so no workflow synced, and the
// error named an object id rather than the ref. The ref is left out and named, with the step.
func TestRefToAMissingObjectIsLeftOut(t *testing.T) {
	ctx := bg(t)
	bare := bareRepo(t)
	url := "file://" + bare
	for _, id := range []string{"wf-ok", "wf-bad"} {
		if _, err := clone(t, url, gitremote.Refs).Append(ctx, id, 0, remote.Slice([]byte(`{"n":1}`))); err != nil {
			t.Fatal(err)
		}
	}
	b := clone(t, url, gitremote.Refs)
	if _, err := b.Heads(ctx); err != nil { // a clone that mirrored wf-bad before the damage
		t.Fatal(err)
	}
	for _, id := range []string{"wf-bad", "wf-bad2"} {
		if err := os.WriteFile(filepath.Join(bare, "refs", "cairn", "wf", id), []byte("1234567890123456789012345678901234567890\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		b    *gitremote.Backend
	}{{"new clone", clone(t, url, gitremote.Refs)}, {"old clone", b}} {
		for range 2 {
			h, err := c.b.Heads(ctx)
			ue, ok := errors.AsType[*remote.UnreadableError](err)
			if !ok || !slices.Equal(ue.IDs, []string{"wf-bad", "wf-bad2"}) || !strings.Contains(err.Error(), "git push origin :refs/cairn/wf/wf-bad)") {
				t.Fatalf("%s: Heads beside refs to missing objects: error %v, want one naming wf-bad and wf-bad2, with the step", c.name, err)
			}
			if l := ue.LeftOut(); len(l) != 2 || l[1].Reason != remote.Damaged || l[1].Ref != "refs/cairn/wf/wf-bad2" ||
				!strings.Contains(l[1].Step, "git push origin :refs/cairn/wf/wf-bad2)") {
				t.Fatalf("%s: lines left out = %+v, want wf-bad2 as damaged, with its own step", c.name, l)
			}
			if !h.Equal(remote.Heads{"wf-ok": 1}) {
				t.Fatalf("%s: Heads beside refs to missing objects = %v, want wf-ok at 1", c.name, h)
			}
			if recs, err := c.b.Since(ctx, "wf-ok", 0); err != nil || len(recs) != 1 {
				t.Fatalf("%s: Since(wf-ok) = %d records, %v", c.name, len(recs), err)
			}
			if _, err := c.b.Since(ctx, "wf-bad2", 0); err == nil || !strings.Contains(err.Error(), "wf-bad2") {
				t.Fatalf("%s: Since(wf-bad2) = %v, want an error naming it", c.name, err)
			}
		}
	}
}

// TestTagThatReadsAsCairnsIsNotALine: a ref under refs/cairn/wf/ that points at an annotated
// tag whose message reads as a record commit's subject ("cairn wf-tag r2") is no line of
// Cairn's: Heads leaves it out as one Cairn did not write, as Since already refuses it, rather
// than listing it at r2 for an idle sync to take and fail on, or an append to fail on with
// git's words.
func TestTagThatReadsAsCairnsIsNotALine(t *testing.T) {
	ctx := bg(t)
	bare := bareRepo(t)
	url := "file://" + bare
	if _, err := clone(t, url, gitremote.Refs).Append(ctx, "wf-ok", 0, remote.Slice([]byte(`{"n":1}`), []byte(`{"n":2}`))); err != nil {
		t.Fatal(err)
	}
	tip := git(t, bare, "rev-parse", "refs/cairn/wf/wf-ok")
	git(t, bare, "-c", "user.name=x", "-c", "user.email=x@example.com", "tag", "-a", "-m", "cairn wf-tag r2", "t1", tip)
	git(t, bare, "update-ref", "refs/cairn/wf/wf-tag", git(t, bare, "rev-parse", "t1"))
	b := clone(t, url, gitremote.Refs)
	h, err := b.Heads(ctx)
	ue, ok := errors.AsType[*remote.UnreadableError](err)
	if !ok || !slices.Equal(ue.IDs, []string{"wf-tag"}) || !h.Equal(remote.Heads{"wf-ok": 2}) {
		t.Fatalf("Heads beside a tag = %v, %v; want wf-ok at 2 and wf-tag left out", h, err)
	}
	if _, err := b.Append(ctx, "wf-tag", 2, remote.Slice([]byte(`{"n":3}`))); err == nil || !strings.Contains(err.Error(), "Cairn did not write") {
		t.Fatalf("Append on the tag = %v; want it refused as not Cairn's", err)
	}
}

// TestRefToABlobOrTreeIsSaidAsOne: a ref under refs/cairn/wf/ that points at a blob or a tree
// is said to, with a step that shows it (git show FETCH_HEAD): it was said to point at a commit
// Cairn did not write, with git log FETCH_HEAD to see it, which shows nothing of a blob.
func TestRefToABlobOrTreeIsSaidAsOne(t *testing.T) {
	ctx := bg(t)
	bare := bareRepo(t)
	blob := gitIn(t, bare, "not cairn\n", "hash-object", "-w", "--stdin")
	git(t, bare, "update-ref", "refs/cairn/wf/wf-blob", blob)
	git(t, bare, "update-ref", "refs/cairn/wf/wf-tree", gitIn(t, bare, "100644 blob "+blob+"\tf\n", "mktree"))
	b := clone(t, "file://"+bare, gitremote.Refs)
	for _, kind := range []string{"blob", "tree"} {
		id := "wf-" + kind
		want := "the remote's ref for workflow " + id + ", refs/cairn/wf/" + id + ", points at a " + kind + ", which Cairn did not write: see what it holds (git fetch origin refs/cairn/wf/" + id + ", then git show FETCH_HEAD)"
		if _, err := b.Since(ctx, id, 0); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Since on a ref to a %s = %v; want it to start %q", kind, err, want)
		}
	}
	_, err := b.Heads(ctx)
	ue, ok := errors.AsType[*remote.UnreadableError](err)
	if l := ue.LeftOut(); !ok || len(l) != 2 || !strings.Contains(l[1].Step, "git show FETCH_HEAD") || strings.Contains(l[1].Step, "git log") {
		t.Errorf("Heads beside refs to a blob and a tree: %v, lines left out %+v; want each with git show FETCH_HEAD", err, l)
	}
}
