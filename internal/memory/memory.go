// Package memory is Cairn's L2 layer: Claude Code's own auto-memory. It finds the memory
// directory exactly as Claude Code does (Dir), writes the seed's L2 lines into a topic file
// cairn-workflow.md with one index line in MEMORY.md, records learnings as their own memory
// files with their own index lines, and reads the last known position back for the L2-only
// resume tier.
//
// MEMORY.md is shared with the model, which rewrites it with its Write tool at any moment and
// under no lock of ours. Every write here therefore keeps every byte of every line Cairn does
// not own, and never loses a concurrent edit: it reads, computes its edit, compares the file
// again just before replacing it, swaps the new content in atomically (on Linux with an atomic
// exchange that hands back exactly what it displaced, so a write that slipped in, or a file a
// writer still holds open, goes straight back and the edit is redone on it), and retries a
// bounded number of times. A writer killed in between leaves the displaced content in a temp
// file named for its intent, which the next write puts back (sweepTemps).
//
// L2 is never critical: every failure comes back as an *UnavailableError whose text starts
// with the seed's "Auto-memory unavailable — learnings will not persist", and nothing here
// panics or waits long. It is not the L1 store and holds no workflow state of its own.
package memory

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/textsafe"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// UnavailableMessage is the seed's warning when L2 cannot be written.
const UnavailableMessage = "Auto-memory unavailable — learnings will not persist"

// UnavailableError says L2 could not be used; the work goes on without it.
type UnavailableError struct {
	Disabled bool   // auto-memory is switched off (not a fault)
	Reason   string // what is wrong, in words
	Err      error  // the underlying error, if any
}

func (e *UnavailableError) Error() string {
	return UnavailableMessage + ": " + e.Cause()
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// Cause is what failed, without UnavailableMessage, which speaks of learnings: the words for
// a workflow's line that could not be written.
func (e *UnavailableError) Cause() string {
	if e.Err == nil {
		return e.Reason
	}
	return e.Reason + ": " + e.Err.Error()
}

// IsUnavailable reports whether err says L2 is off or unusable (as opposed to refused input).
func IsUnavailable(err error) bool {
	_, ok := errors.AsType[*UnavailableError](err)
	return ok
}

func unavailable(reason string, err error) *UnavailableError {
	return &UnavailableError{Reason: reason, Err: err}
}

// Options tune a Memory. Zero values take the defaults.
type Options struct {
	// LockWait bounds the wait for the lock that serialises Cairn's own writers across
	// processes (dirLock); default 2s.
	LockWait time.Duration
	// LockUntil, when set, ends that wait by then (durable.WaitBefore).
	LockUntil time.Time
	// Now stamps L2 lines; default time.Now.
	Now func() time.Time
	// StateDir is where Cairn's state is, absolute, which the topic file names, so that a
	// project sharing the memory directory tells its lines from this one's (Last.Another);
	// "" names the project's .claude/cairn/, which tells nothing apart.
	StateDir string
}

// Memory reads and writes L2 in one memory directory.
type Memory struct {
	loc     Location
	opt     Options
	place   string            // where the topic file says Cairn's state is (topicPlace)
	openErr *UnavailableError // why Open could not name a directory
}

// New returns a Memory for loc. A disabled or empty location gives a Memory whose writes
// return an *UnavailableError and write nothing.
func New(loc Location, opt Options) *Memory {
	if opt.LockWait <= 0 {
		opt.LockWait = 2 * time.Second
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	place := topicHome
	if opt.StateDir != "" {
		place = textsafe.Line(opt.StateDir, maxPlaceRunes)
	}
	return &Memory{loc: loc, opt: opt, place: place}
}

// Open finds the memory directory for env (see Dir) and returns a Memory for it. The Memory
// is never nil: when the directory cannot be named the error is an *UnavailableError and
// the Memory's operations return it too, so a caller can keep one value and warn once.
func Open(env Env, opt Options) (*Memory, error) {
	loc, err := Dir(env) // Location{} on error
	m := New(loc, opt)
	if err != nil {
		m.openErr = unavailable("the memory directory cannot be found", err)
		return m, m.openErr
	}
	return m, nil
}

// Location is where this Memory reads and writes.
func (m *Memory) Location() Location { return m.loc }

// Limits on the files handled: MEMORY.md is an index Claude Code cuts at 25,000 UTF-16 units, so
// anything far beyond that is left alone rather than rewritten.
const (
	maxFile     = 4 << 20
	maxAttempts = 12
	newFilePerm = 0o600
)

// LockFile is the writer lock's file in the memory directory: empty whenever no Cairn
// process is writing there.
const LockFile = ".cairn-memory.lock"

func (m *Memory) usable() error {
	if m.openErr != nil {
		return m.openErr
	}
	if m.loc.Disabled {
		return &UnavailableError{Disabled: true, Reason: m.loc.Reason}
	}
	if m.loc.Dir == "" {
		return unavailable("no memory directory was found", nil)
	}
	return nil
}

// Record appends one L2 line (a position, completion or expiry line, or any other note) to
// the topic file, keeping the newest MaxTopicLines, and points the Cairn index line in
// MEMORY.md at it. Recording the same text as the latest line changes nothing. The text is
// sanitised to one safe line; text holding a secret is refused with the *secrets.Finding,
// unless only its quoted parts (tool input, scanned when it was stored, which a cut or a join
// can make one of) hold it: the line is then recorded without them.
func (m *Memory) Record(text string) error { return m.RecordAt(text, time.Time{}, nil) }

// RecordAt is Record for the line of a change made at time at, stamped at that time; after
// are the lines written after it in the same settling of owed lines. The history holding the
// line (the same text at the same time) followed by lines of after only means a settling
// killed before noting its lines written wrote it: it is not added again, and MEMORY.md's
// line shows the latest line. The same text as the latest line at another time is another
// change's line (a move back to where the work was before), and is added. A zero at is a line
// of no known change, stamped now and taken for the latest line when it has its text, as
// Record does.
func (m *Memory) RecordAt(text string, at time.Time, after []Entry) error {
	plain, err := m.topicLine(text)
	if err != nil {
		return err
	}
	return m.locked(func() error {
		untimed := at.IsZero()
		if untimed {
			at = m.opt.Now()
		}
		at = at.UTC().Truncate(time.Second)
		latest := plain // update calls the edit again when the file changed under it: the last call counts
		err := m.update(TopicFile, func(cur []byte, exists bool) ([]byte, error) {
			var entries []Entry
			var notes topicNotes
			if exists {
				if othersMemory(cur) {
					return nil, m.notCairns()
				}
				entries, _, notes = readTopic(cur)
			}
			latest = plain
			if n := len(entries); untimed && n > 0 && entries[n-1].Text == plain {
				return cur, nil // already the latest line: nothing owed
			}
			if written(entries, Entry{At: at, Text: plain}, after) {
				latest = entries[len(entries)-1].Text
				return cur, nil
			}
			return renderTopicIn(append(entries, Entry{At: at, Text: plain}), m.place, topicNow, notes), nil
		})
		if err != nil {
			return err
		}
		_, err = m.setIndex(topicEntry(latest))
		return err
	})
}

// PushedError says Cairn's line was written (near the top, where the end of MEMORY.md is not
// loaded) and that pushed N other lines past what Claude Code loads: said by the write that
// did it, once. The line wins (a session without it knows no workflow); the person shortens
// the file.
type PushedError struct{ N int }

func (e *PushedError) Error() string {
	return fmt.Sprintf("Cairn's line in %s now puts %d other line%s past what Claude Code loads (its first %d lines, %d characters): it is for the user to shorten %s",
		IndexFile, e.N, workflow.Plural(e.N), loadedLineCap, loadedUnitsCap, IndexFile)
}

// setIndex makes entry MEMORY.md's line of the topic file, and says whether it changed it;
// a *PushedError, once written, when it pushed other lines past what Claude Code loads.
func (m *Memory) setIndex(entry string) (changed bool, err error) {
	pushed := 0
	err = m.update(IndexFile, func(cur []byte, _ bool) ([]byte, error) {
		next := SetEntry(cur, TopicFile, entry)
		changed, pushed = !bytes.Equal(next, cur), othersLoaded(cur, TopicFile)-othersLoaded(next, TopicFile)
		return next, nil
	})
	if err == nil && pushed > 0 {
		err = &PushedError{N: pushed}
	}
	return changed, err
}

// written tells whether entries hold e followed by lines of after only (RecordAt).
func written(entries []Entry, e Entry, after []Entry) bool {
	var lines []Entry // after as the topic file holds them: a line refused is in none
	for _, a := range after {
		if plain, err := plainLine(a.Text); err == nil {
			lines = append(lines, Entry{At: a.At.UTC().Truncate(time.Second), Text: plain})
		}
	}
	for i := len(entries) - 1; i >= 0; i-- {
		if isLine(entries[i], e) {
			return true
		}
		if !slices.ContainsFunc(lines, func(a Entry) bool { return isLine(entries[i], a) }) {
			return false
		}
	}
	return false
}

// stampSlack is how much later than the time its change committed a move may have stamped
// its line: a settling recovers the line of a move killed before noting it written from the
// journal, whose time is taken before the commit's writes and syncs, the move's own after.
const stampSlack = 10 * time.Second

// isLine tells whether the history line h is e, the line of a change stamped at the time it
// committed: its text, stamped then or up to stampSlack later.
func isLine(h, e Entry) bool {
	return h.Text == e.Text && !h.At.Before(e.At) && h.At.Sub(e.At) <= stampSlack
}

// RecordOlder puts an L2 line known to be older than the latest one (a line owed while a
// newer one was written) into the topic file's history, at the time at: after the lines
// stamped no later, or after a drop in the stamps (a clock set back), but never after the
// latest line, which stays the latest in the topic file and on the index line of MEMORY.md
// (written again only where it is not that). A line already there at that time changes
// nothing. Text is checked as Record checks it.
func (m *Memory) RecordOlder(text string, at time.Time) error {
	plain, err := m.topicLine(text)
	if err != nil {
		return err
	}
	at = at.UTC().Truncate(time.Second)
	return m.locked(func() error {
		latest := "" // update calls the edit again when the file changed under it: the last call counts
		err := m.update(TopicFile, func(cur []byte, _ bool) ([]byte, error) {
			if othersMemory(cur) {
				return nil, m.notCairns()
			}
			entries, _, notes := readTopic(cur)
			latest = ""
			if n := len(entries); n > 0 {
				latest = entries[n-1].Text
			}
			if slices.ContainsFunc(entries, func(e Entry) bool { return isLine(e, Entry{At: at, Text: plain}) }) {
				return cur, nil
			}
			// Back past the lines stamped after it, but not past a drop in the stamps: the clock
			// was set back between those two changes, and a stamp before it says nothing
			// against one after it.
			i := len(entries)
			for i > 0 && entries[i-1].At.After(at) && (i == len(entries) || !entries[i-1].At.After(entries[i].At)) {
				i--
			}
			place := m.place
			if n := len(entries); n > 0 {
				i = min(i, n-1)
				// The latest line stays whose it was, so the file keeps naming its state.
				if p := topicPlace(cur); p != topicHome {
					place = p
				}
			}
			return renderTopicIn(slices.Insert(entries, i, Entry{At: at, Text: plain}), place, topicNow, notes), nil
		})
		if err != nil || latest == "" {
			// No latest line to show: the topic file was emptied, and the index line, whatever
			// it shows, is newer than this line.
			return err
		}
		_, err = m.setIndex(topicEntry(latest))
		return err
	})
}

// notCairns is the error for a memory of another's at the topic file's name (othersMemory):
// left as it is.
func (m *Memory) notCairns() error {
	return unavailable("writing "+TopicFile, fmt.Errorf("%s is a memory that is not Cairn's (none of Cairn's lines are in it); Cairn %w",
		filepath.Join(m.loc.Dir, TopicFile), errForeignLeftAlone))
}

// topicLine is text as a topic file line, plain; an error when it holds a secret (Record),
// has no visible text, or L2 cannot be used.
func (m *Memory) topicLine(text string) (string, error) {
	plain, err := plainLine(text)
	if err != nil {
		return "", err
	}
	if plain == "" {
		return "", errors.New("an L2 line needs visible text")
	}
	return plain, m.usable()
}

// plainLine is text as the topic file holds it, plain: one safe line, capped, without its
// quoted parts when only they hold a secret (Record); the *secrets.Finding when it holds one
// all the same.
func plainLine(text string) (string, error) {
	var found *secrets.Finding
	for _, t := range []string{text, textsafe.WithoutQuoted(text)} {
		plain := unescape(textsafe.Line(t, maxLineRunes))
		// Scanned as given and as written: the cap may cut a token glued to more text.
		if f := cmp.Or(secrets.ScanString(t), secrets.ScanString(plain)); f != nil {
			found = cmp.Or(found, f)
			continue
		}
		return plain, nil
	}
	return "", found
}

// Recorded is what RecordLearning did.
type Recorded struct {
	Name    string // the learning's file name
	Changed bool   // the file or its index line changed (the same learning recorded again changes neither)
	// Replaced says the file held a learning with another body (one of the same title, or
	// another project's in a memory directory projects share), a line of which is now gone (a
	// body that keeps every line it held, more added, replaces nothing); Was is that body,
	// plain, its lines joined with "\n".
	Replaced bool
	Was      string
}

// RecordLearning writes a learning as its own memory file, LearningFile's, and gives it its
// own index line in MEMORY.md. The same title names the same file, so recording it again
// updates it in place, and what it held before is handed back (Recorded.Was); a different
// title never names a file another learning is kept in. Secrets are refused with the
// *secrets.Finding; a bad type or an empty title or body is an input error.
func (m *Memory) RecordLearning(l Learning) (rec Recorded, err error) {
	for _, s := range []string{l.Title, l.Body} {
		if f := secrets.ScanString(s); f != nil {
			return Recorded{}, f
		}
	}
	name := LearningFile(l.Title)
	content, entry, err := learningFiles(l, name)
	if err != nil {
		return Recorded{}, err
	}
	if err := m.usable(); err != nil {
		return Recorded{}, err
	}
	err = m.locked(func() error {
		// A learning the versions before kept under a slug that left part of its title out
		// is still updated where it is, found by its title.
		if legacy := legacyLearningFile(l.Title); legacy != name {
			if _, err := os.Lstat(filepath.Join(m.loc.Dir, name)); errors.Is(err, fs.ErrNotExist) {
				if data, err := readLimited(filepath.Join(m.loc.Dir, legacy)); err == nil && sameLearning(data, l.Title) {
					name = legacy
					if content, entry, err = learningFiles(l, name); err != nil {
						return err
					}
				}
			}
		}
		if err := m.learningRoom(name); err != nil {
			return err
		}
		// MEMORY.md first: a learning written where its index line cannot go would be in no
		// session, and the one it replaced lost without a word.
		idx, err := read(filepath.Join(m.loc.Dir, IndexFile))
		if err != nil {
			return unavailable("reading "+IndexFile, err)
		}
		if next := SetEntry(idx.data, name, entry); !bytes.Equal(next, idx.data) {
			// A line that does not fit at the end goes near the top, and Claude Code's cut
			// then takes the last lines it loaded: the user's own index, out of every session.
			if othersLoaded(next, name) < othersLoaded(idx.data, name) {
				return &LearningsFullError{Crowded: true}
			}
			if err := m.writable(IndexFile, idx); err != nil {
				return err
			}
		}
		// update calls its edit again when the file changed under it: the last call counts.
		_, body, _ := splitMemoryFile(content)
		var fileChanged, indexChanged bool
		if err := m.update(name, func(cur []byte, exists bool) ([]byte, error) {
			fileChanged = !exists || !bytes.Equal(cur, content)
			rec.Replaced, rec.Was = false, ""
			if _, was, _ := splitMemoryFile(cur); exists && !keepsLines(plainBody(body), plainBody(was)) {
				rec.Replaced, rec.Was = true, plainBody(was)
			}
			return content, nil
		}); err != nil {
			return err
		}
		err = m.update(IndexFile, func(cur []byte, exists bool) ([]byte, error) {
			next := SetEntry(cur, name, entry)
			indexChanged = !exists || !bytes.Equal(cur, next)
			return next, nil
		})
		rec.Changed = fileChanged || indexChanged
		if err != nil {
			return err
		}
		// The record of what Cairn wrote, after the file: a write of it that fails leaves the
		// learning unproven or edited to `cairn uninstall`, which then keeps it; the learning
		// itself is recorded, so that is not this call's failure.
		_ = m.noteWritten(name, content)
		return nil
	})
	rec.Name = name
	if err != nil {
		return Recorded{}, err
	}
	return rec, nil
}

// keepsLines reports whether the plain body now holds every non-blank line of was.
func keepsLines(now, was string) bool {
	lines := strings.Split(now, "\n")
	for _, l := range strings.Split(was, "\n") {
		if l != "" && !slices.Contains(lines, l) {
			return false
		}
	}
	return true
}

// plainBody is a memory file's body as its writer gave it: its lines unescaped (textsafe's
// escapes, which renderLearning adds), the blank ones around it trimmed.
func plainBody(body []byte) string {
	var out []string
	for _, l := range textLines(bytes.TrimSpace(body)) {
		out = append(out, unescape(l.text))
	}
	return strings.Join(out, "\n")
}

// MaxLearnings is the most learnings MEMORY.md indexes that RecordLearning adds to. Claude
// Code loads MEMORY.md into every session, its first 200 lines only, and a new index line
// that would sit below them goes near the top: learnings without a bound would push the
// user's own lines out of what is loaded.
const MaxLearnings = 50

// learningFiles returns the content of the learning's file, kept in file name, and its index
// line; an input error or the *secrets.Finding when either holds a secret.
func learningFiles(l Learning, name string) (content []byte, entry string, err error) {
	content, title, first, err := renderLearning(l, name)
	if err != nil {
		return nil, "", err
	}
	entry = learningEntry(title, name, first)
	// What is written is scanned too: the description joins the title and the body's first
	// line ("DB password: ..."), which may make a secret of two clean halves; it is scanned
	// as read, before the file's quoting.
	for _, s := range []string{unescape(title) + ": " + first, string(content), entry} {
		if f := secrets.ScanString(s); f != nil {
			return nil, "", f
		}
	}
	return content, entry, nil
}

// learningRoom refuses a learning kept in file name when MEMORY.md does not index it yet and
// already indexes MaxLearnings learnings. A learning already indexed is updated in place.
func (m *Memory) learningRoom(name string) error {
	data, err := readLimited(filepath.Join(m.loc.Dir, IndexFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return unavailable("reading "+IndexFile, err)
	}
	n := 0
	for l := range lines(data) {
		if strings.Contains(l.text, learningPrefix) && namePrefix(l.target(), learningPrefix) {
			if l.owns(name) {
				return nil
			}
			n++
		}
	}
	if n < MaxLearnings {
		return nil
	}
	return &LearningsFullError{N: n}
}

// LearningsFullError refuses a new learning: MEMORY.md indexes MaxLearnings learnings already
// (learningRoom), or is Crowded: as long as Claude Code loads, so that the learning's index
// line would push lines that are not Cairn's out of what it loads. Nothing was recorded; the
// caller words the step, with its tool's name.
type LearningsFullError struct {
	N       int
	Crowded bool
}

func (e *LearningsFullError) Error() string {
	if e.Crowded {
		return fmt.Sprintf("%s is as long as Claude Code loads (its first %d lines, %d characters): this learning's index line would push the user's own lines out of what every session loads; nothing was recorded", IndexFile, loadedLineCap, loadedUnitsCap)
	}
	return fmt.Sprintf("%s already indexes %d learnings, the most Cairn adds (every session loads it, to its 200th line); nothing was recorded", IndexFile, e.N)
}

// Entries returns the L2 lines of the topic file, newest last; none when it does not exist.
func (m *Memory) Entries() ([]Entry, error) {
	entries, _, _, err := m.entries()
	return entries, err
}

// entries is Entries, whether the lines are in Cairn's order (readTopic), and the topic
// file's content.
func (m *Memory) entries() ([]Entry, bool, []byte, error) {
	if err := m.usable(); err != nil {
		return nil, false, nil, err
	}
	// Read as a write reads it: a symlink or anything but a regular file is left alone.
	topic, err := read(filepath.Join(m.loc.Dir, TopicFile))
	if err != nil {
		return nil, false, nil, unavailable("reading "+TopicFile, err)
	}
	entries, ordered, _ := readTopic(topic.data)
	return entries, ordered, topic.data, nil
}

// Last is the last known position L2 holds.
type Last struct {
	Entry
	Source string // TopicFile, or IndexFile when only the index line was left
	// Another says the topic file names a state directory other than this Memory's as where
	// the full state is: its latest line is another project's, one Claude Code gives the
	// same memory directory (or a CAIRN_MEMORY_DIR they share).
	Another bool
}

// anothers tells whether place, where a topic file says its state is, is another project's
// than this Memory's: both named (not topicHome, which an older Cairn wrote for every
// project) and not one directory, however each is spelled (both are written escaped).
func (m *Memory) anothers(place string) bool {
	return place != topicHome && m.place != topicHome && place != m.place && !durable.SameDir(unescape(place), unescape(m.place))
}

// LastPosition returns the latest L2 line for the L2-only resume tier: the last line of the
// topic file's data block, where Cairn keeps its lines in the order of their changes (a
// line's time, from a clock that may be set wrong, says less); else, in a topic file edited by
// hand, the newest by its time where lines carry one that is not in the future, else the
// last; else the summary on the Cairn index line of MEMORY.md. Hand edits and foreign lines
// are tolerated; ok is false when neither file says anything. A file Cairn leaves as it is (a
// symlink, say) is not read through: the error says so, as a write's does.
func (m *Memory) LastPosition() (Last, bool, error) {
	entries, ordered, topic, err := m.entries()
	if err != nil {
		return Last{}, false, err
	}
	if othersMemory(topic) {
		return Last{}, false, nil // a memory of another's at the name: no position of Cairn's
	}
	if len(entries) > 0 {
		best, now := len(entries)-1, m.opt.Now()
		for i, e := range entries {
			// A time in the future was stamped by a clock set wrong: it outranks no line
			// written after it.
			if !ordered && !e.At.IsZero() && !e.At.After(now) && e.At.After(entries[best].At) {
				best = i
			}
		}
		return Last{Entry: entries[best], Source: TopicFile, Another: m.anothers(topicPlace(topic))}, true, nil
	}
	index, err := read(filepath.Join(m.loc.Dir, IndexFile))
	if err != nil {
		return Last{}, false, unavailable("reading "+IndexFile, err)
	}
	text, ok := FindEntry(index.data, TopicFile)
	if !ok {
		return Last{}, false, nil
	}
	hook := strings.TrimSpace(afterLink(text))
	for _, sep := range []string{"—", "–", "-", ":"} {
		if strings.HasPrefix(hook, sep) {
			hook = strings.TrimSpace(hook[len(sep):])
			break
		}
	}
	hook = unescape(hook)
	if hook == "" {
		return Last{}, false, nil
	}
	return Last{Entry: Entry{Text: hook}, Source: IndexFile}, true, nil
}

// makeDir makes the memory directory: durable.MkdirAll fsyncs each parent it creates into,
// so a power loss cannot lose the directory with MEMORY.md in it. Tests watch it.
var makeDir = durable.MkdirAll

// locked runs fn under Cairn's cross-process writer lock, creating the memory directory
// first.
func (m *Memory) locked(fn func() error) error {
	if err := makeDir(m.loc.Dir, 0o700); err != nil {
		return unavailable("the memory directory "+m.loc.Dir+" cannot be created", err)
	}
	unlock, err := dirLock(m.loc.Dir, durable.WaitBefore(m.opt.LockWait, m.opt.LockUntil))
	if err != nil {
		if left := m.LockLeftAlone(); LeftAlone(left) {
			return left // no write here until the person acts: said as any such file is, with its step
		}
		return unavailable(lockFailure(m.loc.Dir, err), err)
	}
	defer unlock()
	sweepTemps(m.loc.Dir)
	return fn()
}

// lockFailure says why the writer lock was not taken: held by another writer past the wait,
// or not takeable at all (a read-only filesystem, where waiting mends nothing).
func lockFailure(dir string, err error) string {
	if errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission) {
		return "the memory directory " + dir + " is read-only or not writable"
	}
	if _, held := errors.AsType[*durable.LockTimeoutError](err); held {
		return "another Cairn process holds the memory lock"
	}
	return "the memory lock " + filepath.Join(dir, LockFile) + " cannot be taken"
}

// dirLock takes the writer lock: durable's lock on a hidden lock file in the memory
// directory, empty whenever no Cairn process is writing. A symlinked memory directory (a
// moved ~/.claude) is locked where it really is.
func dirLock(dir string, wait time.Duration) (func(), error) {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	d, err := durable.OpenDir(dir)
	if err != nil {
		return nil, err
	}
	unlock, err := d.Lock(LockFile, wait)
	if err != nil {
		d.Close()
		return nil, err
	}
	return func() { _ = unlock(); d.Close() }, nil
}

// snapshot is what a file held at one moment.
type snapshot struct {
	exists bool
	data   []byte
	mode   fs.FileMode
}

func (s snapshot) same(o snapshot) bool {
	return s.exists == o.exists && bytes.Equal(s.data, o.data)
}

// errLeftAlone ends the error for a memory file Cairn will not touch as long as it stays
// what it is: not a regular file, or larger than maxFile ("...; Cairn leaves it as it is").
var errLeftAlone = errors.New("leaves it as it is")

// errLinkLeftAlone is errLeftAlone for a symbolic link, which Claude Code reads through.
var errLinkLeftAlone = fmt.Errorf("%w", errLeftAlone)

// errReadOnlyLeftAlone is errLeftAlone for a file its owner made read-only, which Claude Code's
// writers cannot write either, though a swap by name would replace it.
var errReadOnlyLeftAlone = fmt.Errorf("%w", errLeftAlone)

// errTooLargeLeftAlone is errLeftAlone for a file larger than maxFile.
var errTooLargeLeftAlone = fmt.Errorf("%w", errLeftAlone)

// errNotRegularLeftAlone is errLeftAlone for a directory, a FIFO or a device: it holds no
// line of anyone's that Cairn or Claude Code could read.
var errNotRegularLeftAlone = fmt.Errorf("%w", errLeftAlone)

// notRegularError is errNotRegularLeftAlone for a memory file's place: what says what is there
// ("PATH is a FIFO, not a regular file"), for a caller that words the rest itself.
type notRegularError struct{ what string }

func (e *notRegularError) Error() string { return e.what + "; Cairn " + errLeftAlone.Error() }
func (e *notRegularError) Unwrap() error { return errNotRegularLeftAlone }

// errForeignLeftAlone is errLeftAlone for a memory of the user's or the model's own at the
// topic file's name (othersMemory).
var errForeignLeftAlone = fmt.Errorf("%w", errLeftAlone)

// LeftAlone reports whether err says a memory file is one Cairn leaves as it is: retrying
// is of no use until the person changes it.
func LeftAlone(err error) bool { return errors.Is(err, errLeftAlone) }

// LeftAloneStep is the person's step after which Cairn writes a memory file err says it leaves
// as it is (LeftAlone). Claude Code loads MEMORY.md through a symbolic link: moved out of the
// way, the person's own index would leave every session, so a link is replaced by a copy of
// what it leads to; a file too large is shortened, for the same reason. A read-only file is made
// writable. Anything else is moved out of the way. Cairn's lines in the file a linked MEMORY.md
// leads to, which uninstall would take out, the person takes out there, keeping the link.
func LeftAloneStep(err error) string {
	if le, ok := errors.AsType[*linkedLinesError](err); ok {
		return "take the lines linking cairn-workflow.md and cairn-learning-*.md out of " + le.target + " (the link stays)"
	}
	switch {
	case errors.Is(err, errLinkLeftAlone):
		return "replace the link with a copy of the file it leads to"
	case errors.Is(err, errReadOnlyLeftAlone):
		return "make it writable (chmod u+w)"
	case errors.Is(err, errTooLargeLeftAlone):
		return fmt.Sprintf("shorten it to under %d MiB", maxFile>>20)
	case errors.Is(err, errForeignLeftAlone):
		return "rename it, and its link in " + IndexFile + ", to a name of its own"
	}
	return "move or rename it"
}

func readLimited(path string) ([]byte, error) {
	// Never blocks: a FIFO or device planted here is refused at open (durable.ReadPath).
	data, err := durable.ReadPath(path, maxFile, true)
	if errors.Is(err, durable.ErrTooLarge) {
		return nil, fmt.Errorf("%s is larger than %d bytes; Cairn %w", path, maxFile, errTooLargeLeftAlone)
	}
	if errors.Is(err, durable.ErrNotRegular) {
		return nil, &notRegularError{what: path + " is not a regular file"}
	}
	return data, err
}

// read takes a snapshot of a memory file. Only regular files are handled: a symlink or
// anything else is left alone.
func read(path string) (snapshot, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return snapshot{}, nil
	}
	if err != nil {
		return snapshot{}, err
	}
	link := ""
	if fi.Mode()&fs.ModeSymlink != 0 {
		// One to a device, a FIFO or a directory holds no line, and no copy of it is one to make.
		if fi, err = os.Stat(path); err != nil || fi.Mode().IsRegular() {
			return snapshot{}, fmt.Errorf("%s is a symbolic link; Cairn %w", path, errLinkLeftAlone)
		}
		link = "a symbolic link to "
	}
	if !fi.Mode().IsRegular() {
		kind := (&durable.NotRegularError{Mode: fi.Mode()}).Kind()
		return snapshot{}, &notRegularError{what: path + " is " + link + kind + ", not a regular file"}
	}
	data, err := readLimited(path)
	if errors.Is(err, fs.ErrNotExist) {
		return snapshot{}, nil // replaced by a rename between the two calls: treat as missing, the swap rechecks
	}
	if err != nil {
		return snapshot{}, err
	}
	return snapshot{exists: true, data: data, mode: fi.Mode().Perm()}, nil
}

// update applies edit to the file name in the memory directory without losing a concurrent
// edit. It reads the file and edits it, and replace swaps the result in only if the file
// still holds what was edited, handing back at once whatever else the swap displaced; a
// change since the read means the edit is redone on the new content. edit must be a pure
// function of its input.
func (m *Memory) update(name string, edit func(cur []byte, exists bool) ([]byte, error)) error {
	path := filepath.Join(m.loc.Dir, name)
	cur, err := read(path)
	if err != nil {
		return unavailable("reading "+name, err)
	}
	for range maxAttempts {
		next, err := edit(cur.data, cur.exists)
		if err != nil {
			return err
		}
		if cur.exists && bytes.Equal(next, cur.data) {
			return nil
		}
		if err := m.writable(name, cur); err != nil {
			return err
		}
		perm := fs.FileMode(newFilePerm)
		if cur.exists {
			perm = cur.mode
		}
		now, known, err := replace(path, next, perm, cur)
		if errors.Is(err, errChanged) {
			cur = now // changed since we read it: redo the edit on the new content
			continue
		}
		if err != nil {
			return unavailable("writing "+name, err)
		}
		if known {
			return nil
		}
		// No atomic exchange here: read back, and redo if someone wrote since.
		if cur, err = read(path); err != nil {
			return unavailable("reading "+name+" back", err)
		}
		if cur.exists && bytes.Equal(cur.data, next) {
			return nil
		}
	}
	return unavailable(name+" kept changing while Cairn tried to update it; it was left as the last writer made it", nil)
}

// writable is nil when Cairn may write over cur, the file name in the memory directory as read:
// a file its owner made read-only it leaves as it is.
func (m *Memory) writable(name string, cur snapshot) error {
	if cur.exists && cur.mode&0o200 == 0 {
		return unavailable("writing "+name, fmt.Errorf("%s is read-only; Cairn %w", filepath.Join(m.loc.Dir, name), errReadOnlyLeftAlone))
	}
	return nil
}

// swapHook, set by tests only, runs between replace's compare and its swap, where a writer
// that slips in is only seen in the content the swap displaces.
var swapHook func(path string)

// swappedHook, set by tests only, runs right after an exchange, where tmp holds what it
// displaced.
var swappedHook func(tmp string)

// errChanged says the file changed between the read and the swap, or a writer still had it
// open; nothing was written.
var errChanged = errors.New("changed since it was read")

// replace puts data at path durably and atomically if path still holds expect. It writes and
// syncs a temp file named for expect and data (tempPattern), checks that path still holds
// expect (else it returns errChanged, with cur what path holds now, and writes nothing), and
// swaps the temp file in. Where the platform can exchange two names atomically it does so
// (known is true); whatever the exchange displaced other than expect (a writer slipped in
// between the check and the swap, or still has the file open) goes back at once, and replace
// returns errChanged with cur the last content it saw there. A path that did not exist is created with a
// hard link, which fails rather than overwrite a file that appeared meanwhile. Elsewhere it
// renames over path, as durable.WriteFileAtomic does, and known is false.
func replace(path string, data []byte, perm fs.FileMode, expect snapshot) (cur snapshot, known bool, err error) {
	dir := filepath.Dir(path)
	tmp, err := writeTemp(dir, tempPattern(filepath.Base(path), expect.data, data), data, perm)
	if err != nil {
		return snapshot{}, false, err
	}
	// After a swap tmp holds what it displaced, which is never removed unless it is what data
	// was built on or is in place again: a hand-back that fails leaves it to sweepTemps.
	keep := false
	defer func() {
		if !keep {
			os.Remove(tmp)
		}
	}()
	unchanged := func() error {
		var err error
		if cur, err = read(path); err == nil && !cur.same(expect) {
			err = errChanged
		}
		return err
	}

	for range 3 {
		if err := unchanged(); err != nil {
			return cur, false, err
		}
		if swapHook != nil {
			swapHook(path)
		}
		err = exchange(tmp, path)
		if err == nil {
			if swappedHook != nil {
				swappedHook(tmp)
			}
			// A writer that still has the displaced file open (an in-place writer such as Node's
			// writeFile between its truncate and its write, however long it pauses) would write
			// into the temp file: hand the file back to it at once, for the caller to redo its
			// edit on what it writes. The kernel says who has it open, not a wait or a
			// timestamp; where it cannot, an empty file (what such a writer leaves) goes back.
			busy, sure := writing(tmp)
			if !busy {
				displaced, err := readDisplaced(tmp)
				if err != nil {
					// What a writer put there between the compare and the swap, which Cairn
					// cannot read (too large, say): it goes back rather than out with tmp.
					keep = !handBack(tmp, path, data)
					return snapshot{}, false, err
				}
				if displaced.same(expect) && (sure || len(displaced.data) > 0) {
					return displaced, true, syncDir(dir)
				}
				if !displaced.same(expect) {
					cur = displaced // a writer slipped in: the edit is redone on its content
				}
			}
			keep = !handBack(tmp, path, data)
			return cur, true, errChanged
		}
		if !errors.Is(err, fs.ErrNotExist) {
			break // no exchange on this platform or file system
		}
		// Nothing at path: create it, refusing to overwrite one that appears meanwhile.
		err = os.Link(tmp, path)
		if err == nil {
			return snapshot{}, true, syncDir(dir)
		}
		if !errors.Is(err, fs.ErrExist) {
			break // no hard links here
		}
	}
	if err := unchanged(); err != nil {
		return cur, false, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return snapshot{}, false, err
	}
	return snapshot{}, false, syncDir(dir)
}

// handBack exchanges tmp and path again, so that path holds what the exchange displaced into
// tmp, unless a writer replaced data at path meanwhile: its content then stands, as it would
// have had we never swapped (a symlink or anything but a regular file is such a write too).
// When what came back cannot be read, the writer's file stays at path: what tmp then holds,
// and loses, is almost surely only our own edit. It reports false when an exchange failed and
// tmp may hold what belongs at path: tmp must then be kept.
func handBack(tmp, path string, data []byte) bool {
	if exchange(tmp, path) != nil {
		return false
	}
	back, err := readDisplaced(tmp)
	if err == nil && !bytes.Equal(back.data, data) || errors.Is(err, durable.ErrNotRegular) {
		return exchange(tmp, path) == nil
	}
	return true
}

// sumLen is the length of a content sum in a temp file's name.
const sumLen = 16

// contentSum names content in a temp file's name: the first 8 bytes of its SHA-256, in hex.
func contentSum(data []byte) string { return contentHash(data)[:sumLen] }

// tempPattern is the os.CreateTemp pattern of a temp file that replaces the file base, which
// held expect, with data: ".tmp-<base>-<sum of expect>-<sum of data>-<random>". The two sums
// are the writer's intent, which sweepTemps reads when the writer was killed.
func tempPattern(base string, expect, data []byte) string {
	return ".tmp-" + base + "-" + contentSum(expect) + "-" + contentSum(data) + "-*"
}

// parseTemp takes a temp file's name apart: name is the memory file it was written for
// (MEMORY.md or a Cairn file; "" when it is not one of Cairn's temp files), and ok says
// whether the name carries the two sums (an older Cairn's names do not).
func parseTemp(base string) (name, expect, wrote string, ok bool) {
	rest, tmp := strings.CutPrefix(base, ".tmp-")
	if r, ok := strings.CutPrefix(rest, writtenFile+"-"); ok && tmp {
		name, rest = writtenFile, r // Cairn's record of its learnings
	} else {
		var md bool
		name, rest, md = strings.Cut(rest, ".md-")
		if !tmp || !md {
			return "", "", "", false
		}
		if name += ".md"; name != IndexFile && !IsCairnFile(name) {
			return "", "", "", false
		}
	}
	if len(rest) <= 2*sumLen+1 || rest[sumLen] != '-' || rest[2*sumLen+1] != '-' {
		return name, "", "", false
	}
	expect, wrote = rest[:sumLen], rest[sumLen+1:2*sumLen+1]
	_, err1 := hex.DecodeString(expect)
	_, err2 := hex.DecodeString(wrote)
	return name, expect, wrote, err1 == nil && err2 == nil
}

// tempFiles are the paths of dir's temp files (.tmp-*), read from the directory: filepath.Glob
// would take a '[', '*' or '?' in dir's path (from HOME or CLAUDE_CONFIG_DIR) as a pattern.
func tempFiles(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			names = append(names, filepath.Join(dir, e.Name()))
		}
	}
	return names
}

// sweepTemps settles the temp files a killed Cairn writer left behind. It runs under Cairn's
// writer lock, which dies with its holder, so no live Cairn writer owns any of them. A temp
// file's name says what its writer expected at the file and what it wrote, so its content
// tells what it is: that edit, or the content the edit was built on, which may go; or what an
// exchange displaced from another writer that slipped in, which goes back where it was while
// the killed writer's edit is still there and is otherwise kept, never removed. A temp file
// of an older Cairn, whose name says nothing, goes once it is old enough.
func sweepTemps(dir string) {
	names := tempFiles(dir)
	for _, p := range names {
		name, expect, wrote, ok := parseTemp(filepath.Base(p))
		switch {
		case name == "":
		case ok:
			settleTemp(p, filepath.Join(dir, name), expect, wrote)
		default:
			if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > 10*time.Minute {
				os.Remove(p)
			}
		}
	}
}

// KeptTemp is a temp file a killed Cairn write left holding what another writer (the model,
// the user) put in File: Cairn keeps it for good, for a person to merge.
type KeptTemp struct {
	Name string // the temp file's name in the memory directory
	File string // MEMORY.md or Cairn's file it was written for
	Size int64
}

// KeptTemps reads dir's temp files as sweepTemps settles them, changing nothing (for cairn
// doctor). Temp files younger than a minute are a live write's and not counted; settled
// counts those the next write removes or puts back.
func KeptTemps(dir string, now time.Time) (kept []KeptTemp, settled int) {
	names := tempFiles(dir)
	for _, p := range names {
		name, expect, wrote, ok := parseTemp(filepath.Base(p))
		if name == "" {
			continue
		}
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || now.Sub(fi.ModTime()) <= time.Minute {
			continue
		}
		if !ok {
			settled++ // an older Cairn's name, without the sums: the next write removes it
			continue
		}
		if t, err := readDisplaced(p); err == nil {
			if s := contentSum(t.data); s == wrote || s == expect {
				settled++
				continue
			}
		}
		if cur, err := read(filepath.Join(dir, name)); err == nil && cur.exists && contentSum(cur.data) == wrote {
			settled++ // goes back into the file, which still holds the killed write's edit
			continue
		} else if t, terr := readDisplaced(p); err == nil && cur.exists && terr == nil && holdsLines(cur.data, t.data) {
			settled++ // merged back by a person: the next write removes it
			continue
		}
		kept = append(kept, KeptTemp{Name: filepath.Base(p), File: name, Size: fi.Size()})
	}
	return kept, settled
}

// settleTemp settles the temp file p of the file at path, whose writer expected the content
// summed expect there and wrote the content summed wrote (see sweepTemps).
func settleTemp(p, path, expect, wrote string) {
	t, terr := readDisplaced(p)
	if terr == nil {
		if s := contentSum(t.data); s == wrote || s == expect {
			os.Remove(p)
			return
		}
	}
	cur, err := read(path)
	if err != nil || !cur.exists || contentSum(cur.data) != wrote {
		// Written since: p is kept, and nothing decided for its writer, until a person has
		// copied its lines back into the file: then removing it loses nothing.
		if terr == nil && err == nil && cur.exists && holdsLines(cur.data, t.data) {
			os.Remove(p)
		}
		return
	}
	if exchange(p, path) != nil {
		return
	}
	if back, err := readDisplaced(p); err == nil && contentSum(back.data) == wrote {
		os.Remove(p)
		_ = syncDir(filepath.Dir(path))
		return
	}
	_ = exchange(p, path) // a writer slipped in before the exchange: its content stands, p is kept
}

// holdsLines reports whether every line of temp that is not blank is a line of file (line
// ends aside): a kept temp file whose lines a person copied back into its file.
func holdsLines(file, temp []byte) bool {
	have := map[string]bool{}
	for l := range bytes.Lines(file) {
		have[string(bytes.TrimRight(l, "\r\n"))] = true
	}
	for l := range bytes.Lines(temp) {
		if l = bytes.TrimRight(l, "\r\n"); len(bytes.TrimSpace(l)) > 0 && !have[string(l)] {
			return false
		}
	}
	return true
}

// syncDir makes a rename or link in dir durable. Its failure is not reported: the new
// content is in place and only its survival of a power loss is in doubt, which L2 can live
// with.
func syncDir(dir string) error {
	_ = durable.SyncDir(dir)
	return nil
}

// writeTemp writes data to a new temp file in dir, named by os.CreateTemp's pattern, and
// fsyncs it.
func writeTemp(dir, pattern string, data []byte, perm fs.FileMode) (string, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", err
	}
	name := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(name)
		}
	}()
	if err := f.Chmod(perm); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		return "", err
	}
	if err := f.Sync(); err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	ok = true
	return name, nil
}

// readDisplaced reads the content an exchange displaced (now at p). Like read, it refuses
// anything but a regular file: a symlink renamed over the file is not read through.
func readDisplaced(p string) (snapshot, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return snapshot{}, err
	}
	if !fi.Mode().IsRegular() {
		return snapshot{}, &fs.PathError{Op: "read", Path: p, Err: durable.ErrNotRegular}
	}
	data, err := readLimited(p)
	if err != nil {
		return snapshot{}, err
	}
	return snapshot{exists: true, data: data, mode: fi.Mode().Perm()}, nil
}
