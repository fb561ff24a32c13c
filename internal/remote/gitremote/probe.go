package gitremote

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
)

// FallbackNote is what to tell the user when Probe chose Branches.
const FallbackNote = "the remote refuses refs outside branches and tags, so Cairn keeps each workflow on a branch cairn-state/<id> instead: they show in the host's branch list and may start CI"

// Probe finds the layout the remote accepts: it pushes a throwaway commit to the probe ref
// (probeName) of each layout in turn (Refs first) and deletes it again. cfg.Layout is ignored.
func Probe(ctx context.Context, cfg Config) (Layout, error) {
	var reasons []error
	for _, l := range []Layout{Refs, Branches} {
		cfg.Layout = l
		b, err := New(cfg)
		if err != nil {
			return "", err
		}
		ok, err := b.probe(ctx)
		if _, kept := errors.AsType[*KeptError](err); kept {
			return l, err
		}
		if err != nil {
			return "", err
		}
		if ok == nil {
			return l, nil
		}
		if re, isRe := ok.(*RefusedError); isRe && re.Damaged() {
			return "", ok // every layout is refused alike, for no rule of the host's
		}
		reasons = append(reasons, ok)
	}
	return "", fmt.Errorf("the remote accepts neither refs/cairn/* nor cairn-state/* branches: %w", errors.Join(reasons...))
}

// KeptError is Probe's (with the layout) and ProbeClaims's error when the host took the probe
// ref but refused to delete it (receive.denyDeletes, a hook): Cairn deletes no ref, so the
// layout works there all the same; the ref stays.
type KeptError struct{ Remote, Ref, Why string }

func (e *KeptError) Error() string {
	return fmt.Sprintf("%s refuses to delete refs (%s), so it keeps the probe ref %s, which holds nothing", e.Remote, e.Why, e.Ref)
}

// probe returns nil when the host took and deleted the probe ref, a *RefusedError when it
// refused it, ErrSplit when a fetch does not find it there, a *KeptError when it took it but
// refused its deletion, and an error when git could not reach it.
func (b *Backend) probe(ctx context.Context) (refused, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ref := b.remoteRef(probeName)
	var oid, parent, reason, said string
	for try := range probeTries {
		var err error
		if try == probeTries-1 {
			// Another probe's updates of the ref at the same time, each try: this one takes a
			// name of its own, which nothing else moves (and a host that refuses deletions keeps).
			nonce := make([]byte, 6)
			rand.Read(nonce)
			ref, parent = b.remoteRef(fmt.Sprintf("%s-%x", probeName, nonce)), ""
		}
		if oid, err = b.commit(ctx, probeName, 1, parent, []byte("cairn probe: safe to delete\n")); err != nil {
			return nil, err
		}
		if reason, said, err = b.push(ctx, ref, parent, oid); err != nil {
			return nil, err
		}
		if !strings.Contains(reason, "stale info") && !localLockBusy(said) || try == probeTries-1 {
			break
		}
		// The ref is there, or moved: kept by a host that refuses deletions, or another
		// probe's. The probe builds on it as it is now (a fast-forward, which such hosts take),
		// adding no ref: each try lost is another probe's push landed.
		if parent, err = b.probeTip(ctx, ref); err != nil {
			return nil, err
		}
	}
	if strings.Contains(reason, "stale info") {
		return nil, splitError{b.remoteName(), "what Cairn pushes"} // the lease never matches what a fetch reads
	}
	if damaged(reason) {
		return b.refusedDamaged(ctx, ref, reason), nil
	}
	if reason != "" {
		return &RefusedError{Ref: ref, Reason: reason, HostSaid: said, probe: true}, nil
	}
	// Read back where a fetch reads: a remote that pushes to another repository (a pushurl)
	// takes every push and never shows one.
	listed, lerr := b.output(ctx, nil, "ls-remote", "--", b.cfg.Remote, ref)
	var kept error
	reason, said, err = b.push(ctx, ref, oid, "")
	// Stale: another probe moved the ref on since, so what the read found tells nothing.
	raced := strings.Contains(reason, "stale info")
	if err != nil {
		return nil, fmt.Errorf("the remote took the probe ref %s but did not delete it (%s): it holds nothing, and git push %s :%s deletes it where the host allows", ref, err, b.remoteName(), ref)
	} else if reason != "" && !raced {
		kept = &KeptError{Remote: b.remoteName(), Ref: ref, Why: cmp.Or(said, reason)}
	}
	if ge, ok := errors.AsType[*GitError](lerr); ok {
		ge.Op = "fetch" // the fetch side out of reach, as a fetch's error says it
	}
	if lerr != nil {
		return nil, lerr
	}
	if !raced && !strings.Contains(listed, oid) {
		return nil, splitError{b.remoteName(), "what Cairn pushes"}
	}
	return nil, kept
}

// probeTries is how many pushes a probe makes: on the probe ref while other probes (cairn
// doctors at once) move it, each landing at most twice (its push, its deletion), then on one of
// its own.
const probeTries = 8

// probeName is the probe ref's name in each namespace: one fixed name, which no workflow id
// takes (a Heads never reports it), so that a host that keeps it keeps one, not one per probe.
const probeName = "_probe"

// probeTip is the commit ref holds on the remote, fetched here, or "" when the remote has no
// ref or it moved on before the fetch.
func (b *Backend) probeTip(ctx context.Context, ref string) (string, error) {
	listed, err := b.output(ctx, nil, "ls-remote", "--", b.cfg.Remote, ref)
	oid, _, _ := strings.Cut(listed, "\t")
	if err != nil || oid == "" {
		return "", err
	}
	if err := b.run(ctx, nil, nil, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head",
		"--no-recurse-submodules", "--no-auto-gc", "--no-filter", "--", b.cfg.Remote, ref); err != nil {
		if ge, ok := errors.AsType[*GitError](err); ok && strings.Contains(ge.Stderr, "couldn't find remote ref") {
			return "", nil // deleted meanwhile
		}
		return "", err
	}
	if b.run(ctx, nil, nil, "cat-file", "-e", oid+"^{commit}") != nil {
		return "", nil
	}
	return oid, nil
}

// ProbeClaims checks that the remote takes the claims lines that go with workflows kept in
// layout l (l.Claims()): some hosts take one namespace and refuse the other. It pushes a
// throwaway commit there and deletes it again, and returns nil when the host took it, a
// *RefusedError when it refused it, a *KeptError when it took it but kept it, and another
// error when git could not reach the host. cfg.Layout is ignored.
func ProbeClaims(ctx context.Context, cfg Config, l Layout) error {
	cfg.Layout = l.Claims()
	b, err := New(cfg)
	if err != nil {
		return err
	}
	refused, err := b.probe(ctx)
	if err != nil {
		return err
	}
	return refused
}
