package memory

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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
	// Kept is what Cairn's L2 holds now when the topic file was another Cairn's write onto
	// the one marked (extendsTopic): it was kept, not restored, and is the mark to keep.
	Kept Mark
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

// Holds reports whether L2 is as k records, as CurrentMark would read it (k == the mark, no
// error), the check each SessionStart and Stop makes before a restore. Cairn's own index line,
// unchanged, is found by equality (entryIs), so the usual case compiles and runs no regexp:
// about a tenth of SessionStart's instructions. A marked line not of IndexLine's shape is
// looked up as CurrentMark does.
func (m *Memory) Holds(k Mark) bool {
	if m.usable() != nil {
		return false
	}
	topic, err := read(filepath.Join(m.loc.Dir, TopicFile))
	if err != nil || string(topic.data) != k.Topic {
		return false
	}
	index, err := read(filepath.Join(m.loc.Dir, IndexFile))
	if err != nil {
		return false
	}
	// A line of IndexLine's shape for the topic file owns it, so the first line equal to it is
	// the first entry for it unless one that differs comes before (entryIs).
	if strings.HasPrefix(k.Index, IndexLine(TopicTitle, TopicFile, "")) {
		return entryIs(index.data, TopicFile, k.Index)
	}
	return loadedEntry(index.data, TopicFile) == k.Index
}

// HeldMark is what CurrentMark reads when Cairn's own index line, of IndexLine's shape, is
// the loaded entry for the topic file, found as Holds finds it: without the regexp
// CurrentMark's lookup compiles, about a tenth of a hook. ok is false otherwise (CurrentMark
// then says what L2 holds).
func (m *Memory) HeldMark() (k Mark, ok bool) {
	if m.usable() != nil {
		return Mark{}, false
	}
	topic, err := read(filepath.Join(m.loc.Dir, TopicFile))
	if err != nil {
		return Mark{}, false
	}
	index, err := read(filepath.Join(m.loc.Dir, IndexFile))
	if err != nil {
		return Mark{}, false
	}
	own := IndexLine(TopicTitle, TopicFile, "")
	for l := range lines(index.data) {
		if t := strings.TrimPrefix(l.text, bom); !l.code && strings.HasPrefix(t, own) {
			if !entryIs(index.data, TopicFile, t) {
				return Mark{}, false
			}
			return Mark{Index: t, Topic: string(topic.data)}, true
		}
	}
	return Mark{}, false
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
// touches nothing and says Deferred; nor does it over a memory of the user's own at the topic
// file's name, which it leaves as a write does (LeftAlone). A Memory that is off or unusable
// returns its error; a line put back near the top, past which it pushed other lines, a
// *PushedError.
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
		index := want.Index
		if want.Topic != "" {
			err := m.update(TopicFile, func(cur []byte, exists bool) ([]byte, error) {
				out.Topic, out.Kept = false, Mark{}
				if exists && string(cur) == want.Topic {
					return cur, nil
				}
				if othersMemory(cur) {
					// A memory of the user's own took the name since: left as a write leaves it.
					return nil, m.notCairns()
				}
				latest, ok := extendsTopic([]byte(want.Topic), cur)
				if !ok {
					latest, ok = m.anothersTopic(cur)
				}
				if exists && ok {
					out.Kept = Mark{Index: topicEntry(latest), Topic: string(cur)}
					return cur, nil
				}
				if exists && onlyAdded([]byte(want.Topic), cur) {
					// A note the user or the model added, every line of Cairn's kept: nothing of
					// Cairn's to put back, and theirs would go without a word.
					out.Kept = Mark{Index: want.Index, Topic: string(cur)}
					return cur, nil
				}
				out.Topic = true
				if put, ok := withNotes([]byte(want.Topic), cur); exists && ok {
					// Cairn's lines go back, and the notes the same writer added stay.
					out.Kept = Mark{Index: want.Index, Topic: string(put)}
					return put, nil
				}
				return []byte(want.Topic), nil
			})
			if err != nil {
				return err
			}
			if !out.Kept.Empty() {
				index = out.Kept.Index
			}
		}
		if index != "" {
			var err error
			out.Index, err = m.setIndex(index) // unchanged when no place is loaded (a first line of 24 KB)
			return err
		}
		return nil
	})
	return out, err
}

// onlyAdded tells whether topic, the topic file as it is now, holds every line of want, the one
// marked, in its order (line ends aside): a writer added to it, and dropped or changed nothing.
func onlyAdded(want, topic []byte) bool {
	have := textLines(topic)
	for _, l := range textLines(want) {
		i := slices.IndexFunc(have, func(h line) bool { return h.text == l.text })
		if i < 0 {
			return false
		}
		have = have[i+1:]
	}
	return true
}

// withNotes is want, the topic file marked, with the notes of cur, the file as it is now, in
// place of its own (readTopic's): what a restore writes so as to put back Cairn's lines and
// drop no note a writer added or kept. ok is false when cur's notes are want's (want is then
// what to write).
func withNotes(want, cur []byte) ([]byte, bool) {
	entries, _, had := readTopic(want)
	_, _, notes := readTopic(cur)
	if slices.Equal(had.Above, notes.Above) && slices.Equal(had.Below, notes.Below) {
		return nil, false
	}
	place, words := topicPlace(want), topicNow
	if bytes.Equal(renderTopicIn(entries, place, topicBefore, had), want) {
		words = topicBefore
	}
	return renderTopicIn(entries, place, words, notes), true
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

// extendsTopic tells whether topic, the topic file as it is now, is another Cairn's write onto
// want, the one marked: a project Claude Code gives the same memory directory (another
// worktree of the repository, or a path it names alike) adds its lines there too. It is so
// when topic is in Cairn's own rendering and holds want's lines in their order, but for the
// oldest that MaxTopicLines dropped, and more. latest is its latest line, which the index line
// shows. A background memory writer's rewrite is not Cairn's rendering, and a dropped file
// holds no line. The other Cairn's state may be elsewhere: its rendering names that place.
func extendsTopic(want, topic []byte) (latest string, ok bool) {
	theirs, ok := rendered(topic)
	if !ok {
		return "", false
	}
	ours := parseTopic(want)
	for k := range len(ours) + 1 {
		if k > 0 && len(theirs) < MaxTopicLines {
			break // nothing was dropped to make room
		}
		if rest := ours[k:]; len(rest) < len(theirs) && inOrder(rest, theirs) {
			return theirs[len(theirs)-1].Text, true
		}
	}
	return "", false
}

// inOrder tells whether every entry of sub is in of, in the same order.
func inOrder(sub, of []Entry) bool {
	for _, e := range of {
		if len(sub) > 0 && e.Text == sub[0].Text && e.At.Equal(sub[0].At) {
			sub = sub[1:]
		}
	}
	return len(sub) == 0
}

// anothersTopic tells whether topic, the topic file as it is now, is another project's Cairn's
// write that holds none of what was marked (it wrote the file anew after it was dropped):
// Cairn's own rendering, naming another project's state directory (Last.Another). latest is
// its latest line.
func (m *Memory) anothersTopic(topic []byte) (latest string, ok bool) {
	theirs, ok := rendered(topic)
	if !ok || !m.anothers(topicPlace(topic)) {
		return "", false
	}
	return theirs[len(theirs)-1].Text, true
}

// rendered is the lines of topic when it is in Cairn's own rendering, in its words or the
// Cairn before's, and holds any.
func rendered(topic []byte) ([]Entry, bool) {
	lines, _, notes := readTopic(topic)
	if len(lines) == 0 {
		return nil, false
	}
	place := topicPlace(topic)
	return lines, bytes.Equal(renderTopicIn(lines, place, topicNow, notes), topic) || bytes.Equal(renderTopicIn(lines, place, topicBefore, notes), topic)
}
