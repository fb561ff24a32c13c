package memory

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Claude Code's background memory writers (the extraction after turns, and the opt-in
// consolidation that rewrites MEMORY.md) may drop or rewrite Cairn's index line or its topic
// file. Cairn keeps a Mark of what it last wrote and puts it back (Restore), never while a
// consolidation holds its lock, and never touching another line.

// ConsolidateLock is the file Claude Code's memory consolidation holds in the memory
// directory while it runs: its content is the holder's pid, its mtime when it was taken.
const ConsolidateLock = ".consolidate-lock"

// ConsolidateLockTTL is how long Claude Code itself honours that lock (2.1.330: one hour):
// an older one, or one whose holder has exited, is stale.
const ConsolidateLockTTL = time.Hour

// Mark is what Cairn's own L2 held right after Cairn last wrote it.
type Mark struct {
	Index string // Cairn's entry line in MEMORY.md, without its line end
	Topic string // the topic file's whole content
}

// Empty reports whether the mark records nothing.
func (k Mark) Empty() bool { return k.Index == "" && k.Topic == "" }

// Restored says what Restore did.
type Restored struct {
	Index, Topic bool // put back
	// Deferred is true when a fresh consolidation lock made Restore leave both files alone.
	Deferred bool
}

// CurrentMark reads Cairn's index line and topic file as they are now: the mark to keep
// right after a write of ours.
func (m *Memory) CurrentMark() (Mark, error) {
	if err := m.usable(); err != nil {
		return Mark{}, err
	}
	// A file that does not exist reads as no data: no topic, no entry.
	topic, err := read(filepath.Join(m.loc.Dir, TopicFile))
	if err != nil {
		return Mark{}, unavailable("reading "+TopicFile, err)
	}
	index, err := read(filepath.Join(m.loc.Dir, IndexFile))
	if err != nil {
		return Mark{}, unavailable("reading "+IndexFile, err)
	}
	// An entry Claude Code does not load is marked as none, so that a restore moves it up.
	return Mark{Index: loadedEntry(index.data, TopicFile), Topic: string(topic.data)}, nil
}

// ConsolidationHeld reports whether Claude Code's memory consolidation holds its lock in
// dir at now, as Claude Code decides it: the lock file is younger than ConsolidateLockTTL and
// names a live process. alive may be nil (a pid then counts as alive).
func ConsolidationHeld(dir string, now time.Time, alive func(pid int) bool) bool {
	p := filepath.Join(dir, ConsolidateLock)
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if age := now.Sub(fi.ModTime()); age >= ConsolidateLockTTL || age < -time.Minute {
		return false
	}
	data, err := readLimited(p)
	if err != nil {
		return true // unreadable but fresh: assume held, restoring can wait
	}
	first, _, _ := strings.Cut(string(data), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pid <= 0 {
		return false // Claude Code writes an empty lock when it rolls back: not held
	}
	return alive == nil || alive(pid)
}

// Restore puts back what want records wherever it differs: Cairn's index line in MEMORY.md
// (rewritten in place, or added where SetEntry adds a missing one; every other line kept byte
// for byte, in its order) and the topic file. While a consolidation holds its lock it
// touches nothing and says Deferred. A Memory that is off or unusable returns its error.
func (m *Memory) Restore(want Mark, now time.Time, alive func(pid int) bool) (Restored, error) {
	var out Restored
	if want.Empty() {
		return out, nil
	}
	if err := m.usable(); err != nil {
		return out, err
	}
	if ConsolidationHeld(m.loc.Dir, now, alive) {
		out.Deferred = true
		return out, nil
	}
	if !m.drifted(want) {
		return out, nil
	}
	err := m.locked(func() error {
		// Checked again under our lock: a consolidation may have started meanwhile.
		if ConsolidationHeld(m.loc.Dir, now, alive) {
			out.Deferred = true
			return nil
		}
		if want.Topic != "" {
			err := m.update(TopicFile, func(cur []byte, exists bool) ([]byte, error) {
				if exists && string(cur) == want.Topic {
					return cur, nil
				}
				out.Topic = true
				return []byte(want.Topic), nil
			})
			if err != nil {
				return err
			}
		}
		if want.Index != "" {
			return m.update(IndexFile, func(cur []byte, _ bool) ([]byte, error) {
				if entryIs(cur, TopicFile, want.Index) {
					return cur, nil
				}
				next := SetEntry(cur, TopicFile, want.Index)
				out.Index = !bytes.Equal(next, cur) // equal when no place is loaded (a first line of 24 KB)
				return next, nil
			})
		}
		return nil
	})
	return out, err
}

// drifted is the cheap check, without our lock, that either file differs from want.
func (m *Memory) drifted(want Mark) bool {
	if want.Topic != "" {
		data, err := readLimited(filepath.Join(m.loc.Dir, TopicFile))
		if errors.Is(err, fs.ErrNotExist) || err == nil && string(data) != want.Topic {
			return true
		}
	}
	if want.Index != "" {
		data, err := readLimited(filepath.Join(m.loc.Dir, IndexFile))
		if errors.Is(err, fs.ErrNotExist) || err == nil && !entryIs(data, TopicFile, want.Index) {
			return true
		}
	}
	return false
}
