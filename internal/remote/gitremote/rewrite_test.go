package gitremote_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
)

// rewrite force-pushes to bare, as the line of workflow wf-x, one commit of tree
// (refs/line^{tree} for the tip's) with message msg on parents (revisions of that line,
// refs/line~1 for the one before its tip), as someone rewriting the line's history by hand (an
// amend, a rebase, a squash) would.
func rewrite(t *testing.T, bare, tree, msg string, parents ...string) {
	t.Helper()
	work := t.TempDir()
	git(t, work, "init", "-q")
	git(t, work, "fetch", "-q", "file://"+bare, "refs/cairn/wf/wf-x:refs/line")
	pushCommit(t, work, bare, "refs/cairn/wf/wf-x", tree, msg, parents...)
}

// lineOf appends three records to wf-x on a fresh remote through a new clone, and returns the
// remote and the clone.
func lineOf(t *testing.T) (string, *gitremote.Backend) {
	t.Helper()
	bare := bareRepo(t)
	a := clone(t, "file://"+bare, gitremote.Refs)
	if _, err := a.Append(bg(t), "wf-x", 0, remote.Slice([]byte("one"), []byte("two"), []byte("three"))); err != nil {
		t.Fatal(err)
	}
	return bare, a
}

// TestRewrittenLineIsAConflict: the line's last commit is replaced by another of the same
// revision (an amend, force-pushed) after this clone read it. An append after it is a conflict,
// which a caller settles by reading the line again; it was reported as the host refusing the
// ref ("run cairn doctor"), and a claim then as made on a host that refuses claims.
func TestRewrittenLineIsAConflict(t *testing.T) {
	ctx := bg(t)
	bare, a := lineOf(t)
	rewrite(t, bare, "refs/line^{tree}", "cairn wf-x r3\n\namended\n", "refs/line~1")
	_, err := a.Append(ctx, "wf-x", 3, remote.Slice([]byte("four")))
	if !errors.Is(err, remote.ErrConflict) || errors.Is(err, gitremote.ErrRefused) {
		t.Fatalf("append after a line rewritten at the same length = %v; want a conflict", err)
	}
	if _, err := a.Since(ctx, "wf-x", 0); err != nil {
		t.Fatal(err)
	}
	if head, err := a.Append(ctx, "wf-x", 3, remote.Slice([]byte("four"))); err != nil || head != 4 {
		t.Fatalf("append once the rewritten line is read = %d, %v; want r4", head, err)
	}
}

// TestRewrittenLineNamesTheStep: a line rewritten by hand so that it is no longer Cairn's
// (squashed, a revision dropped, a record taken out) cannot be read, and every sync fails on it
// until it is dealt with; the error said only that it was rewritten. It now gives the step a
// line Cairn did not write gets: look at it, keep any work on it, then delete the ref.
func TestRewrittenLineNamesTheStep(t *testing.T) {
	ctx := bg(t)
	const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
	for _, tc := range []struct {
		name, tree string
		parents    []string
	}{
		{"squashed", "refs/line^{tree}", nil},
		{"revision-dropped", "refs/line^{tree}", []string{"refs/line~2"}},
		{"record-taken-out", emptyTree, []string{"refs/line~1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bare, _ := lineOf(t)
			rewrite(t, bare, tc.tree, "cairn wf-x r3\n", tc.parents...)
			_, err := clone(t, "file://"+bare, gitremote.Refs).Since(ctx, "wf-x", 0)
			if err == nil || !strings.Contains(err.Error(), "wf-x") ||
				!strings.Contains(err.Error(), "see what it holds (git fetch origin refs/cairn/wf/wf-x, then git log FETCH_HEAD)") ||
				!strings.Contains(err.Error(), "(git push origin :refs/cairn/wf/wf-x) loses no workflow") {
				t.Errorf("Since on the rewritten line = %v; want it named with its step", err)
			}
		})
	}
}
