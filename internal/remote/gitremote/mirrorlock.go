package gitremote

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/project"
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
// this clone's Cairn processes are held off was left by a git that was killed (leftLocks).
var refLockWait = 5 * time.Second

// stoppedLook is how often a wait for mirrorLock looks whether its holder was stopped.
var stoppedLook = time.Second

// mirrorWaiting is called as a sync starts waiting for mirrorLock (a test's hook).
var mirrorWaiting = func() {}

// gitDir is the git directory holding the clone's refs (a linked worktree's main one), found
// once per Backend from the files git keeps, without starting git; Config.Dir when it is in
// no work tree (a bare repository).
func (b *Backend) gitDir() string {
	if b.commonDir == "" {
		b.commonDir = b.cfg.Dir
		if _, gd, ok := project.GitDir(b.cfg.Dir); ok && gd != "" {
			b.commonDir = gd
			if common, ok := project.CommonDir(gd); ok {
				b.commonDir = common
			}
		}
	}
	return b.commonDir
}

// lockMirror takes mirrorLock, waiting while another Cairn process of this clone holds it, at
// most until ctx ends or for the Timeout of one git command. It returns the unlock.
func (b *Backend) lockMirror(ctx context.Context) (func(), error) {
	d, err := durable.OpenDir(b.gitDir())
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
	if unlock, err := d.Lock(mirrorLock, 0); err == nil { // free, as it mostly is
		got <- locked{unlock, nil}
	} else if te, held := errors.AsType[*durable.LockTimeoutError](err); !held || te.Stopped {
		// A holder that is stopped (Ctrl-Z on a cairn sync) holds it until it is resumed:
		// waiting for it would only hold up this sync (and a tool call) for all its time.
		got <- locked{nil, err}
	} else {
		mirrorWaiting()
		go func() {
			// Waited for in spans, each ending in a look at the holder: one stopped while
			// this waits (Ctrl-Z on the cairn sync held) holds the lock until it is resumed.
			start := time.Now()
			for {
				unlock, err := d.Lock(mirrorLock, max(0, min(stoppedLook, wait-time.Since(start))))
				te, held := errors.AsType[*durable.LockTimeoutError](err)
				if !held || te.Stopped || time.Since(start) >= wait || ctx.Err() != nil {
					if held {
						te.Waited = time.Since(start)
					}
					got <- locked{unlock, err}
					return
				}
			}
		}()
	}
	release := func(l locked) {
		if l.unlock != nil {
			_ = l.unlock()
		}
		d.Close()
	}
	take := func(l locked) (func(), error) {
		if te, ok := errors.AsType[*durable.LockTimeoutError](l.err); ok && te.Stopped {
			release(l)
			return nil, fmt.Errorf("a Cairn process of this clone was stopped while it synced with its remote, and holds its copy of the remote's refs: %w", l.err)
		}
		if _, held := errors.AsType[*durable.LockTimeoutError](l.err); held {
			release(l)
			return nil, fmt.Errorf("another Cairn process of this clone is syncing with its remote: %w", l.err)
		}
		if l.err != nil { // no holder: the file itself (a directory or link in its place)
			release(l)
			return nil, fmt.Errorf("taking the sync lock %s: %w", filepath.Join(b.gitDir(), mirrorLock), l.err)
		}
		return func() { release(l) }, nil
	}
	select {
	case l := <-got:
		return take(l)
	case <-ctx.Done():
		select {
		case l := <-got: // taken as the time ran out: the git after it says so
			return take(l)
		default:
		}
		go func() { release(<-got) }() // cairn-mcp stopping does not wait for the lock
		if errors.Is(ctx.Err(), context.Canceled) {
			return nil, fmt.Errorf("interrupted while another Cairn process of this clone was syncing with its remote: %w", ctx.Err())
		}
		return nil, fmt.Errorf("another Cairn process of this clone was syncing with its remote until the time ran out: %w", ctx.Err())
	}
}

// StoppedSync is mirrorLock's refusal while a stopped process holds it (Ctrl-Z on a cairn
// sync), which every sync of this clone meets until it is resumed, else nil: for cairn doctor.
func (b *Backend) StoppedSync() *durable.LockTimeoutError {
	return durable.StoppedHolder(b.gitDir(), mirrorLock)
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
// (a sync cancelled as cairn-mcp stopped, or timed out), as a fetch that starts at start finds
// them: those there since before it, for at least refLockWait (a git holds one for a moment).
// Called holding mirrorLock, so no git of Cairn's holds them.
func (b *Backend) leftLocks(start time.Time) []string {
	dir := filepath.Join(b.gitDir(), filepath.FromSlash(b.mirror))
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var left []string
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".lock") || !e.Type().IsRegular() {
			continue
		}
		if fi, err := e.Info(); err == nil && start.Sub(fi.ModTime()) >= refLockWait {
			left = append(left, filepath.Join(dir, e.Name()))
		}
	}
	return left
}
