package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/store"
)

// lockOnceEnded is an engine's FS that, once the active slot's record has ended (archived or
// completed), takes the workflow lock from another handle before the engine's next lock of it,
// as another process taking it between an end's commit and its move to archive/.
type lockOnceEnded struct {
	durable.FS
	t      *testing.T
	dir    string
	unlock func() error
}

func (l *lockOnceEnded) Lock(name string, wait time.Duration) (func() error, error) {
	if name == ".lock-workflow" && l.unlock == nil {
		b, _ := os.ReadFile(filepath.Join(l.dir, store.WorkflowFile))
		if strings.Contains(string(b), `"status":"archived"`) || strings.Contains(string(b), `"status":"completed"`) {
			d := must(durable.OpenDir(l.dir))(l.t)
			unlock := must(d.Lock(name, time.Second))(l.t)
			l.unlock = func() error { unlock(); return d.Close() }
		}
	}
	return l.FS.Lock(name, wait)
}

// An end committed whose move to archive/ then found the workflow locked by another process
// warned "moving it to the archive failed: ... is locked by pid N ...; gave up after 50ms with
// nothing changed; try again once that process has finished; the next session start archives
// it once that is fixed": "nothing changed" when the end had just been committed, and two
// next steps, one of them a fix for a lock that needs none. It says who held the lock, that
// the end is kept, and the one step: the next session start archives it.
func TestEndCommittedButArchiveLockedSaysWhatHappens(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		end  func(en *engine.Engine) (*engine.Result, error)
	}{
		{"archive", func(en *engine.Engine) (*engine.Result, error) { return en.Archive("dropped it") }},
		{"complete", func(en *engine.Engine) (*engine.Result, error) { return en.CompleteByPerson("shipped") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, en := startApex(t)
			var fsys *lockOnceEnded
			en = e.openWith("s1", 4242, func(c *engine.Config) {
				c.LockWait = 50 * time.Millisecond
				c.WrapFS = func(fs durable.FS) durable.FS {
					fsys = &lockOnceEnded{FS: noSync(fs), t: t, dir: en.StateDir()}
					return fsys
				}
			})
			res := must(tc.end(en))(t)
			w := strings.Join(res.Warnings, "\n")
			if !strings.Contains(w, "is locked by pid") {
				t.Fatalf("warnings: %q; want the lock's holder named", res.Warnings)
			}
			if strings.Contains(w, "nothing changed") || strings.Contains(w, "try again") || strings.Contains(w, "once that is fixed") {
				t.Errorf("warnings: %q; the end was committed, and nothing is to be fixed or retried by hand", res.Warnings)
			}
			if !strings.HasSuffix(w, "; the next session start archives it") {
				t.Errorf("warnings: %q; want the next session start as the one step", res.Warnings)
			}
			if fsys.unlock == nil {
				t.Fatal("the lock was never taken")
			}
			fsys.unlock()
			nextStartArchives(t, e, filepath.Join(en.StateDir(), "archive"))
		})
	}
}

// A replacing start whose archive of the workflow it replaces found the lock held after that
// workflow's end was committed said "... is locked by pid N ...; gave up after 50ms with
// nothing changed; try again once that process has finished": the replaced workflow was marked
// archived. It says so, and the same start again, once the lock is free, archives it and starts.
func TestReplaceWhoseArchiveIsLockedSaysTheEndIsKept(t *testing.T) {
	t.Parallel()
	e, en := startApex(t)
	old := en.StateDir()
	var fsys *lockOnceEnded
	en = e.openWith("s1", 4242, func(c *engine.Config) {
		c.LockWait = 50 * time.Millisecond
		c.WrapFS = func(fs durable.FS) durable.FS {
			fsys = &lockOnceEnded{FS: noSync(fs), t: t, dir: old}
			return fsys
		}
	})
	req := engine.StartRequest{Type: "debug", Context: "new work", Replace: true}
	_, err := en.Start(req)
	if err == nil || strings.Contains(err.Error(), "nothing changed") || !strings.Contains(err.Error(), "was marked archived") || !strings.Contains(err.Error(), "is locked by pid") {
		t.Fatalf("start: %v; want the replaced workflow said marked archived, and who holds the lock", err)
	}
	if fsys.unlock == nil {
		t.Fatal("the lock was never taken")
	}
	fsys.unlock()
	res := must(e.open("s1").Start(req))(t)
	if !strings.Contains(res.Message, "started debug workflow") {
		t.Fatalf("the same start again: %+v", res)
	}
	if names, _ := filepath.Glob(filepath.Join(old, "archive", "apex-*")); len(names) != 1 {
		t.Fatalf("archive/ holds %q, want the replaced workflow", names)
	}
}
