package gitremote_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
	"github.com/cairn-dev/cairn/internal/remote/remotetest"
)

// hostile makes a bare repository whose pre-receive hook allows only the refs allow matches
// (a shell case pattern), as hosts that refuse custom refs do.
func hostile(t *testing.T, allow string) string {
	t.Helper()
	bare := bareRepo(t)
	hook := "#!/bin/sh\nwhile read old new ref; do case \"$ref\" in " + allow +
		") ;; *) echo \"refusing $ref\" >&2; exit 1;; esac; done\n"
	if err := os.WriteFile(filepath.Join(bare, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	return bare
}

func TestProbe(t *testing.T) {
	ctx := bg(t)
	for _, tc := range []struct {
		name  string
		allow string
		want  gitremote.Layout // "" when the probe must fail
	}{
		{"accepts-custom-refs", "*", gitremote.Refs},
		{"branches-only", "refs/heads/*|refs/tags/*", gitremote.Branches},
		{"tags-only", "refs/tags/*", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bare := hostile(t, tc.allow)
			dir := t.TempDir()
			git(t, dir, "init", "-q")
			got, err := gitremote.Probe(ctx, gitremote.Config{Dir: dir, Remote: "file://" + bare})
			if tc.want == "" {
				if err == nil || !errors.Is(err, gitremote.ErrRefused) {
					t.Fatalf("Probe = %q, %v; want a refusal", got, err)
				}
			} else if err != nil || got != tc.want {
				t.Fatalf("Probe = %q, %v; want %q", got, err, tc.want)
			}
			// The probe leaves nothing behind.
			if refs := git(t, bare, "for-each-ref"); refs != "" {
				t.Fatalf("probe refs left on the remote:\n%s", refs)
			}
		})
	}
}

// TestRefusedRefWritesNothing: on a host that refuses refs/cairn/*, an append is a refusal
// (not a conflict, not an unknown outcome), and the Branches layout Probe picks works there.
func TestRefusedRefWritesNothing(t *testing.T) {
	ctx := bg(t)
	url := "file://" + hostile(t, "refs/heads/*")
	b := clone(t, url, gitremote.Refs)
	_, err := b.Append(ctx, "wf-1", 0, remote.Slice([]byte("x")))
	var re *gitremote.RefusedError
	if !errors.As(err, &re) || errors.Is(err, remote.ErrConflict) {
		t.Fatalf("Append on a host refusing refs/cairn = %v, want a *RefusedError", err)
	}
	remotetest.MustHeads(t, ctx, b, remote.Heads{})
	br := clone(t, url, gitremote.Branches)
	remotetest.MustAppend(t, ctx, br, "wf-1", 0, "x", "y")
	remotetest.MustLine(t, ctx, clone(t, url, gitremote.Branches), "wf-1", "x", "y")
}

// TestProbeClaims: the claims namespace is probed on its own, for each workflow layout, and a
// host that refuses only it is told apart from one that takes it; nothing is left behind.
func TestProbeClaims(t *testing.T) {
	ctx := bg(t)
	for _, tc := range []struct {
		name    string
		allow   string
		layout  gitremote.Layout
		refused bool
	}{
		{"refs-all", "*", gitremote.Refs, false},
		{"refs-no-claims", "refs/cairn/wf/*", gitremote.Refs, true},
		{"branches-all", "refs/heads/*", gitremote.Branches, false},
		{"branches-no-claims", "refs/heads/cairn-state/*", gitremote.Branches, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bare := hostile(t, tc.allow)
			dir := t.TempDir()
			git(t, dir, "init", "-q")
			cfg := gitremote.Config{Dir: dir, Remote: "file://" + bare}
			if got, err := gitremote.Probe(ctx, cfg); err != nil || got != tc.layout {
				t.Fatalf("Probe = %q, %v; want %q", got, err, tc.layout)
			}
			err := gitremote.ProbeClaims(ctx, cfg, tc.layout)
			if tc.refused != errors.Is(err, gitremote.ErrRefused) || !tc.refused && err != nil {
				t.Fatalf("ProbeClaims = %v; refused want %v", err, tc.refused)
			}
			if refs := git(t, bare, "for-each-ref"); refs != "" {
				t.Fatalf("probe refs left on the remote:\n%s", refs)
			}
		})
	}
	// Out of reach: an error that is not a refusal.
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	err := gitremote.ProbeClaims(ctx, gitremote.Config{Dir: dir, Remote: "file://" + filepath.Join(dir, "gone.git")}, gitremote.Refs)
	if err == nil || errors.Is(err, gitremote.ErrRefused) {
		t.Fatalf("ProbeClaims on a missing remote = %v, want an error that is not a refusal", err)
	}
}

// TestProbeOnAHostThatKeepsRefs: a host that takes pushes but refuses deletions
// (receive.denyDeletes, a hook) keeps the probe ref: Cairn deletes no ref, so the layout works
// there; Probe returns it with a *KeptError naming the ref and the host's reason, not git's
// "<nil>" in place of an error there was none of.
func TestProbeOnAHostThatKeepsRefs(t *testing.T) {
	bare := bareRepo(t)
	refusesDeletions(t, bare)
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	got, err := gitremote.Probe(bg(t), gitremote.Config{Dir: dir, Remote: "file://" + bare})
	ke, kept := errors.AsType[*gitremote.KeptError](err)
	if got != gitremote.Refs || !kept || !strings.Contains(err.Error(), "deletion prohibited") || strings.Contains(err.Error(), "<nil>") {
		t.Fatalf("Probe on a host that refuses deletions = %q, %v; want refs and the host's words, and no <nil>", got, err)
	}
	if refs := git(t, bare, "for-each-ref", "--format=%(refname)"); refs != ke.Ref {
		t.Fatalf("the host keeps %q, the error names %s", refs, ke.Ref)
	}
	// Probing again (as each cairn doctor does) reuses the kept refs rather than leaving more.
	for range 3 {
		if _, err := gitremote.Probe(bg(t), gitremote.Config{Dir: dir, Remote: "file://" + bare}); !errors.As(err, &ke) {
			t.Fatalf("Probe again = %v; want the kept ref", err)
		}
		if err := gitremote.ProbeClaims(bg(t), gitremote.Config{Dir: dir, Remote: "file://" + bare}, gitremote.Refs); !errors.As(err, &ke) {
			t.Fatalf("ProbeClaims = %v; want the kept ref", err)
		}
	}
	if refs := strings.Fields(git(t, bare, "for-each-ref", "--format=%(refname)")); len(refs) != 2 {
		t.Fatalf("after three more probes the host keeps %d refs, want 2 (one per namespace): %q", len(refs), refs)
	}
}

// refusesDeletions makes the bare repository refuse every deletion, as a hook does
// (receive.denyDeletes refuses only branches').
func refusesDeletions(t *testing.T, bare string) {
	t.Helper()
	hook := "#!/bin/sh\nwhile read old new ref; do case \"$new\" in 0000000000000000000000000000000000000000) echo \"deletion prohibited\" >&2; exit 1;; esac; done\n"
	if err := os.WriteFile(filepath.Join(bare, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentProbes: probes run at once (cairn doctors) share the one probe ref; none takes
// another's push for a remote that pushes elsewhere, none is refused, and none leaves a ref of
// its own on a host that refuses deletions.
func TestConcurrentProbes(t *testing.T) {
	for _, keeps := range []bool{false, true} {
		bare := bareRepo(t)
		if keeps {
			refusesDeletions(t, bare)
			git(t, bare, "config", "receive.denyNonFastForwards", "true")
		}
		errs := make(chan error, 4)
		for range cap(errs) {
			go func() {
				dir := t.TempDir()
				git(t, dir, "init", "-q")
				got, err := gitremote.Probe(bg(t), gitremote.Config{Dir: dir, Remote: "file://" + bare})
				if _, kept := errors.AsType[*gitremote.KeptError](err); kept && keeps {
					err = nil
				}
				if err == nil && got != gitremote.Refs {
					err = errors.New("layout " + string(got))
				}
				errs <- err
			}()
		}
		for range cap(errs) {
			if err := <-errs; err != nil {
				t.Errorf("keeps=%v: concurrent Probe: %v", keeps, err)
			}
		}
		// A probe that lost the race to the shared ref builds on it again, taking no ref of its
		// own, which a host that refuses deletions would keep.
		if refs := strings.Fields(git(t, bare, "for-each-ref", "--format=%(refname)")); keeps && (len(refs) != 1 || refs[0] != "refs/cairn/wf/_probe") || !keeps && len(refs) > 0 {
			t.Errorf("keeps=%v: the host holds %q", keeps, refs)
		}
	}
}
