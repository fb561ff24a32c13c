package mcptools

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/cairn-dev/cairn/internal/durable"
)

// watcher follows the state directory and the user's workflow definitions. It watches
// directories, never files: the store replaces files by renaming a temp file over them, which
// on Linux shows only as a CREATE in the directory, and a watch on the old file would go quiet.
type watcher struct {
	s            *Server
	fs           *fsnotify.Watcher
	stateDir     string
	sessionsDir  string
	sessionFile  string // sessions/<ppid>.json: the only session file that concerns us
	workflowsDir string
	claudeDir    string // parent of workflowsDir, to see it appear
	debounce     time.Duration

	watched map[string]bool // only the loop goroutine touches it after start
	// linked holds, by directory, the files that definitions in workflowsDir are symlinks to:
	// an edit there sends no event to workflowsDir. Only the loop goroutine touches it after
	// start.
	linked map[string]map[string]bool
	// lookout holds the parents watched only while a directory above is missing. Only the
	// loop goroutine touches it after start.
	lookout map[string]bool
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

type change uint8

const (
	changeSession change = 1 << iota
	changeDefinitions
)

func newWatcher(s *Server, stateDir, workflowsDir string, debounce time.Duration) (*watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := fw.Add(stateDir); err != nil {
		fw.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{
		s:            s,
		fs:           fw,
		stateDir:     stateDir,
		sessionsDir:  filepath.Join(stateDir, "sessions"),
		sessionFile:  strconv.Itoa(s.opt.PPID) + ".json",
		workflowsDir: workflowsDir,
		debounce:     debounce,
		watched:      map[string]bool{stateDir: true},
		lookout:      map[string]bool{},
		ctx:          ctx,
		cancel:       cancel,
	}
	if workflowsDir != "" {
		w.claudeDir = filepath.Dir(workflowsDir)
	}
	w.addMissing() // what exists now is read when the engine opens
	w.followLinks()
	w.wg.Go(w.loop)
	return w, nil
}

// addMissing adds the directories that did not exist when we last looked. A directory that
// only now appears may have been filled before the watch took hold, so it counts as changed.
// While one is missing its parent is watched (one directory, not its tree), to see it come
// back: .claude deleted and made again (git clean -fdx) under a state directory kept elsewhere.
func (w *watcher) addMissing() change {
	var c change
	lookout := map[string]bool{}
	for _, d := range []struct {
		dir string
		c   change
	}{{w.sessionsDir, changeSession}, {w.claudeDir, 0}, {w.workflowsDir, changeDefinitions}} {
		if d.dir == "" || w.watched[d.dir] {
			continue
		}
		if err := w.fs.Add(d.dir); err != nil {
			lookout[filepath.Dir(d.dir)] = true
			continue
		}
		w.watched[d.dir] = true
		c |= d.c
	}
	for dir := range w.lookout {
		if !lookout[dir] && w.linked[dir] == nil {
			w.forget(dir)
		}
	}
	for dir := range lookout {
		if !w.watched[dir] && w.fs.Add(dir) == nil {
			w.watched[dir] = true
			w.lookout[dir] = true
		}
	}
	return c
}

// followLinks watches the directories of the files that the definitions in workflowsDir are
// symlinks to, and notes those files, so that an edit of one reloads the definitions.
func (w *watcher) followLinks() {
	w.linked = map[string]map[string]bool{}
	if w.workflowsDir == "" {
		return
	}
	entries, _ := durable.ReadDirPath(w.workflowsDir)
	for _, ent := range entries {
		if ent.Type()&fs.ModeSymlink == 0 || !strings.HasSuffix(ent.Name(), ".md") {
			continue
		}
		link := filepath.Join(w.workflowsDir, ent.Name())
		target, err := filepath.EvalSymlinks(link)
		if err != nil {
			w.lookOutForTarget(link)
			continue
		}
		dir := filepath.Dir(target)
		if !w.watched[dir] {
			if w.fs.Add(dir) != nil {
				continue
			}
			w.watched[dir] = true
		}
		w.noteLinked(dir, filepath.Base(target))
	}
}

func (w *watcher) noteLinked(dir, name string) {
	if w.linked[dir] == nil {
		w.linked[dir] = map[string]bool{}
	}
	w.linked[dir][name] = true
}

// lookOutForTarget watches, for a definition that is a symlink to a file that is missing, the
// nearest directory on the way to it that exists, and notes the one missing below it there:
// its directory removed and made again (a checkout of a branch without it, and back) is then
// followed again.
func (w *watcher) lookOutForTarget(link string) {
	to, err := os.Readlink(link)
	if err != nil {
		return
	}
	if !filepath.IsAbs(to) {
		to = filepath.Join(filepath.Dir(link), to)
	}
	for missing, dir := to, filepath.Dir(to); dir != missing; missing, dir = dir, filepath.Dir(dir) {
		if w.watched[dir] || w.fs.Add(dir) == nil {
			w.watched[dir] = true
			w.noteLinked(dir, filepath.Base(missing))
			return
		}
	}
}

// forget drops the watch of a watched directory removed or renamed away (a checkout of a
// branch without it), so that addMissing or followLinks watch it again once it is back. It
// reports whether dir was watched.
func (w *watcher) forget(dir string) bool {
	if !w.watched[dir] {
		return false
	}
	delete(w.watched, dir)
	delete(w.lookout, dir)
	_ = w.fs.Remove(dir) // already gone with the directory, or renamed: not ours to follow
	return true
}

func (w *watcher) classify(ev fsnotify.Event) change {
	name := filepath.Clean(ev.Name)
	dir := filepath.Dir(name)
	if w.linked[dir][filepath.Base(name)] {
		return changeDefinitions
	}
	// A cleaned name and its directory are never "", so an unset workflowsDir matches nothing.
	switch {
	case name == w.sessionsDir, dir == w.sessionsDir && filepath.Base(name) == w.sessionFile:
		return changeSession
	case name == w.workflowsDir, dir == w.workflowsDir && filepath.Ext(name) == ".md":
		return changeDefinitions
	}
	return 0
}

func (w *watcher) loop() {
	var pending change
	timer := time.NewTimer(w.debounce)
	timer.Stop() // started by the first change; a stopped timer never fires late (Go 1.23)
	defer timer.Stop()
	for {
		select {
		case <-w.ctx.Done():
			return
		case ev, ok := <-w.fs.Events:
			if !ok {
				return
			}
			// A watched directory removed, renamed away or replaced (another renamed onto it:
			// no event reaches its old watch) is watched again at once, or looked out for from
			// its parent: it may be back before any other event.
			gone := ev.Has(fsnotify.Remove|fsnotify.Rename|fsnotify.Create) && w.forget(filepath.Clean(ev.Name))
			c := w.classify(ev)
			if gone && w.linked[filepath.Clean(ev.Name)] != nil {
				c |= changeDefinitions // the files the definitions link to went with it
			}
			if gone || ev.Has(fsnotify.Create) {
				c |= w.addMissing()
			}
			if c == 0 {
				continue
			}
			pending |= c
			// Debounce: a burst of events (temp file, rename, a second writer) is read once.
			timer.Reset(w.debounce)
		case err, ok := <-w.fs.Errors:
			if !ok {
				return
			}
			w.s.opt.Log.Printf("watching %s: %v", w.stateDir, err)
		case <-timer.C:
			c := pending
			pending = 0
			if c&changeSession != 0 {
				w.s.sessionChanged(w.ctx)
			}
			if c&changeDefinitions != 0 {
				w.followLinks() // a link made, changed or removed
				w.s.definitionsChanged(w.ctx)
			}
		}
	}
}

// close stops the watcher and waits for its goroutine; a reload waiting for its turn gives up.
func (w *watcher) close() {
	w.cancel()
	w.fs.Close()
	w.wg.Wait()
}
