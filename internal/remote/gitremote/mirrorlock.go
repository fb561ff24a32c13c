package gitremote

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
)

// mirrorLock is the file, in the clone's git directory (a linked worktree's main one, which
// holds the refs), whose lock each Cairn process of the clone holds while its git writes the
// mirror refs: cairn-mcp's background syncs and tool calls, cairn sync and cairn task in a
// terminal, in any worktree. Without it two fetches of the same refs collide on git's own ref
// locks, and the one that loses fails ("cannot lock ref ... File exists"). A flock: a Cairn
// that is killed holds it no longer.
const mirrorLock = ".lock-cairn-mirror"

// refLockWait is how long git waits for a ref's lock file that another git holds
// (core.filesRefLockTimeout, 100 ms by default): a git of the user's, or one whose Cairn was
// killed and that runs on, holds it for a moment. A lock file that outlasts the wait while
// this clone's Cairn processes are held off was left by a git that was killed (leftLock).
var refLockWait = 5 * time.Second

// gitDir is the git directory holding the clone's refs, asked of git once per Backend.
func (b *Backend) gitDir(ctx context.Context) (string, error) {
	if b.commonDir == "" {
		out, err := b.output(ctx, nil, "rev-parse", "--git-common-dir")
		if err != nil {
			return "", err
		}
		b.commonDir = strings.TrimSpace(out)
		if !filepath.IsAbs(b.commonDir) {
			b.commonDir = filepath.Join(b.cfg.Dir, b.commonDir)
		}
	}
	return b.commonDir, nil
}

// lockMirror takes mirrorLock, waiting while another Cairn process of this clone holds it, at
// most until ctx ends or for the Timeout of one git command. It returns the unlock.
func (b *Backend) lockMirror(ctx context.Context) (func(), error) {
	dir, err := b.gitDir(ctx)
	if err != nil {
		return nil, err
	}
	d, err := durable.OpenDir(dir)
	if err != nil {
		return nil, err
	}
	wait := b.cfg.Timeout
	if end, ok := ctx.Deadline(); ok {
		wait = durable.WaitBefore(wait, end)
	}
	type locked struct {
		unlock func() error
		err    error
	}
	got := make(chan locked, 1)
	go func() {
		unlock, err := d.Lock(mirrorLock, wait)
		got <- locked{unlock, err}
	}()
	release := func(l locked) {
		if l.unlock != nil {
			_ = l.unlock()
		}
		d.Close()
	}
	select {
	case l := <-got:
		if l.err != nil {
			release(l)
			return nil, fmt.Errorf("another Cairn process of this clone is syncing with its remote: %w", l.err)
		}
		return func() { release(l) }, nil
	case <-ctx.Done():
		go func() { release(<-got) }() // cairn-mcp stopping does not wait for the lock
		return nil, ctx.Err()
	}
}

// withMirror runs fn holding mirrorLock.
func (b *Backend) withMirror(ctx context.Context, fn func() error) error {
	unlock, err := b.lockMirror(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	return fn()
}

// leftLocks are the lock files of this Backend's mirror refs that gits that were killed left
// (a sync cancelled as cairn-mcp stopped), when a fetch that started at start failed on one of
// them (ge: a ref's "File exists"): those there since before it started, which outlasted
// git's wait for them (refLockWait). Called holding mirrorLock, so no git of Cairn's holds
// them; nil when the one git named is another ref's, or may be held yet.
func (b *Backend) leftLocks(ge *GitError, start time.Time) []string {
	_, rest, ok := strings.Cut(ge.Stderr, "Unable to create '")
	named, _, found := strings.Cut(rest, lockExists)
	if !ok || !found || b.commonDir == "" {
		return nil
	}
	// git may name the directory by another path than the one asked for (a symbolic link).
	mine, merr := filepath.EvalSymlinks(filepath.Join(b.commonDir, filepath.FromSlash(b.mirror)))
	in, ierr := filepath.EvalSymlinks(filepath.Dir(named))
	if merr != nil || ierr != nil || in != mine {
		return nil
	}
	ents, err := os.ReadDir(mine)
	if err != nil {
		return nil
	}
	var left []string
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() || !strings.HasSuffix(e.Name(), ".lock") {
			continue
		}
		if at := fi.ModTime(); at.Before(start) && time.Since(at) >= refLockWait {
			left = append(left, filepath.Join(mine, e.Name()))
		}
	}
	if !slices.Contains(left, filepath.Join(mine, filepath.Base(named)+".lock")) {
		return nil // the one git waited for is not old enough: it may be held yet
	}
	return left
}
