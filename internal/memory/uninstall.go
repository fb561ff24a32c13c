package memory

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/adrg/frontmatter"
	"github.com/cairn-dev/cairn/internal/durable"
)

// Footprint is what Cairn has put into the auto-memory directory: the MEMORY.md lines that
// point at a Cairn file, and Cairn's own files (the topic file and the learning files).
type Footprint struct {
	Dir   string   // the memory directory
	Lines []string // MEMORY.md lines of Cairn's, as they are (plain text, no terminator)
	Files []string // Cairn's files in Dir, by name, sorted
	// Edited are the learning files someone changed since Cairn wrote them (asWritten), by
	// name, sorted: theirs now, neither they nor their index lines are Cairn's to remove.
	Edited []string
	// Unproven are learning files an older Cairn wrote, which kept no record of them
	// (writtenFile), whose body past its first line it cannot check: kept, as Edited are.
	Unproven []string
	// Later, from RemoveCairn only, are Cairn's files that came after the footprint it was
	// given (a session recorded them meanwhile), by name, sorted: not removed, nor their lines.
	Later []string
	// IndexLeft, from Footprint, is a MEMORY.md that is no regular file (a directory, a FIFO):
	// it holds no line of Cairn's, is left as it is, and Cairn's files go without one.
	IndexLeft string
}

// Empty reports whether Cairn left nothing there.
func (f Footprint) Empty() bool { return len(f.Lines) == 0 && len(f.Files) == 0 }

// IsCairnFile reports whether a memory file name is one of Cairn's: cairn-workflow.md or a
// cairn-learning-*.md, in any case only where names fold case (foldNames).
func IsCairnFile(name string) bool {
	return sameName(name, TopicFile) || namePrefix(name, learningPrefix) && strings.HasSuffix(strings.ToLower(name), ".md") && !strings.ContainsAny(name, `/\`)
}

// cairnsFiles is IsCairnFile in this memory directory: a memory of another's at the topic
// file's name (othersMemory) is not Cairn's, and neither is its index line; nor is a learning
// file someone changed since Cairn wrote it (asWritten). A learning file that is gone is
// Cairn's: its index line points nowhere.
func (m *Memory) cairnsFiles() func(name string) bool {
	owner := m.owners()
	return func(name string) bool { return IsCairnFile(name) && owner(name) == own }
}

// owners is learningOwner for any of Cairn's file names in this memory directory; the topic
// file is Cairn's unless it is a memory of another's (othersMemory), then edited.
func (m *Memory) owners() func(name string) ownership {
	of := m.ownerOf()
	return func(name string) ownership {
		data, err := readLimited(filepath.Join(m.loc.Dir, name))
		if err != nil {
			return own
		}
		return of(name, data)
	}
}

// ownerOf is owners for a file's content as read.
func (m *Memory) ownerOf() func(name string, data []byte) ownership {
	written := m.readWritten()
	return func(name string, data []byte) ownership {
		if sameName(name, TopicFile) {
			if othersMemory(data) {
				return edited
			}
			return own
		}
		return learningOwner(name, data, written)
	}
}

// asWritten reports whether data, the learning file name, is byte for byte what RecordLearning
// writes for its own title, body and type. A file the model rewrote with its Write tool (in
// Claude Code's header format), or whose description, type or first line someone changed, is
// not; nor, unchanged, is one an older Cairn wrote with other quoting.
func asWritten(data []byte, name string) bool {
	var head struct {
		Description string `yaml:"description"`
		Metadata    struct {
			Type string `yaml:"type"`
		} `yaml:"metadata"`
	}
	body, err := frontmatter.MustParse(bytes.NewReader(data), &head)
	if err != nil {
		return false
	}
	desc := head.Description
	// The stored title is the description up to one of its ": " (sameLearning).
	for i := range len(desc) {
		if !strings.HasPrefix(desc[i:], ": ") {
			continue
		}
		l := Learning{Title: unescape(desc[:i]), Body: plainBody(body), Type: head.Metadata.Type}
		if want, _, _, err := renderLearning(l, name); err == nil && bytes.Equal(want, data) {
			return true
		}
	}
	return false
}

// Footprint reads, without changing anything, what Cairn has in the memory directory.
func (m *Memory) Footprint() (Footprint, error) {
	if err := m.usable(); err != nil {
		return Footprint{}, err
	}
	fp := Footprint{Dir: m.loc.Dir}
	path := filepath.Join(m.loc.Dir, IndexFile)
	idx, err := read(path)
	linked := errors.Is(err, errLinkLeftAlone)
	if linked {
		// Claude Code reads through the link, and so may Cairn: only a write stops there.
		idx, err = readThrough(path, err)
	}
	if ne, ok := errors.AsType[*notRegularError](err); ok {
		fp.IndexLeft, err = ne.what, nil
	}
	if err != nil {
		return fp, unavailable("reading "+IndexFile, err)
	}
	owner := m.owners()
	for _, l := range splitLines(idx.data) {
		if t := l.target(); t != "" && IsCairnFile(t) && owner(t) == own {
			fp.Lines = append(fp.Lines, strings.TrimPrefix(l.text, bom))
		}
	}
	if linked && len(fp.Lines) > 0 {
		target, _ := filepath.EvalSymlinks(path)
		return fp, unavailable("reading "+IndexFile, &linkedLinesError{link: path, target: target})
	}
	ents, err := durable.ReadDirPath(m.loc.Dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fp, unavailable("listing "+m.loc.Dir, err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || !IsCairnFile(e.Name()) {
			continue
		}
		switch owner(e.Name()) {
		case own:
			fp.Files = append(fp.Files, e.Name())
		case unproven:
			fp.Unproven = append(fp.Unproven, e.Name())
		default:
			if !sameName(e.Name(), TopicFile) {
				fp.Edited = append(fp.Edited, e.Name())
			}
		}
	}
	sort.Strings(fp.Files)
	sort.Strings(fp.Edited)
	sort.Strings(fp.Unproven)
	return fp, nil
}

// IndexLeftAlone is nil when Cairn writes MEMORY.md, else why not: LeftAlone says it leaves the
// file as it is (a symbolic link, a read-only file), which Footprint, only reading, does not.
func (m *Memory) IndexLeftAlone() error { return m.leftAlone(IndexFile) }

// TopicLeftAlone is IndexLeftAlone for cairn-workflow.md, which every workflow line is
// written to: a memory that is not Cairn's there is left as it is too.
func (m *Memory) TopicLeftAlone() error {
	if err := m.leftAlone(TopicFile); err != nil {
		return err
	}
	if cur, err := read(filepath.Join(m.loc.Dir, TopicFile)); err == nil && othersMemory(cur.data) {
		return m.notCairns()
	}
	return nil
}

// LockLeftAlone is IndexLeftAlone for LockFile: what is in its place keeps Cairn from every
// write in the memory directory.
func (m *Memory) LockLeftAlone() error { return m.leftAlone(LockFile) }

// StoppedHolder is the memory lock's refusal when a stopped process holds it (Ctrl-Z on a
// Cairn process as it wrote), which keeps every write out until it is resumed; else nil
// (durable.StoppedHolder). Like dirLock, it looks where a symlinked directory really is.
func (m *Memory) StoppedHolder() *durable.LockTimeoutError {
	dir := m.loc.Dir
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return durable.StoppedHolder(dir, LockFile)
}

// leftAlone is IndexLeftAlone for the memory file name.
func (m *Memory) leftAlone(name string) error {
	if err := m.usable(); err != nil {
		return err
	}
	cur, err := read(filepath.Join(m.loc.Dir, name))
	if err != nil {
		return unavailable("reading "+name, err)
	}
	return m.writable(name, cur)
}

// readThrough reads the file the symbolic link at path leads to; a link that leads nowhere is
// a missing file (one to what is no regular file read said as such: it holds no line).
// Anything else it cannot read leaves linkErr, read's refusal of the link.
func readThrough(path string, linkErr error) (snapshot, error) {
	data, err := readLimited(path)
	switch {
	case err == nil:
		return snapshot{exists: true, data: data}, nil
	case errors.Is(err, fs.ErrNotExist):
		return snapshot{}, nil
	}
	return snapshot{}, linkErr
}

// linkedLinesError: MEMORY.md is a symbolic link (a ~/.claude kept in dotfiles) whose file holds
// lines of Cairn's, which Cairn writes no file through; the person takes them out there.
type linkedLinesError struct{ link, target string }

func (e *linkedLinesError) Error() string {
	return e.link + " is a symbolic link to " + e.target + ", which holds Cairn's lines; Cairn leaves it as it is"
}

func (e *linkedLinesError) Unwrap() error { return errLeftAlone }

// RemoveCairn takes Cairn out of the memory directory, for `cairn uninstall`: under Cairn's
// memory lock it removes every MEMORY.md line pointing at a Cairn file (with the same
// compare-and-swap writer as every other edit, so every byte of every other line, and any
// edit made meanwhile, is kept), then Cairn's files. The index lines go first, so MEMORY.md
// never points at a file that is gone. With shown, the footprint the person agreed to remove,
// it removes only the files shown there (by name, or by a line shown): one recorded since is
// kept, with its line, and named in Later. It returns what was removed.
func (m *Memory) RemoveCairn(shown *Footprint) (Footprint, error) {
	if err := m.usable(); err != nil {
		return Footprint{}, err
	}
	agreed := func(string) bool { return true }
	if shown != nil {
		agreed = func(name string) bool {
			is := func(s string) bool { return sameName(s, name) }
			return slices.ContainsFunc(shown.Files, is) || slices.ContainsFunc(shown.Lines, func(l string) bool { return is(entryTarget(l)) })
		}
	}
	var done Footprint
	err := m.locked(func() error {
		fp, err := m.Footprint()
		if err != nil {
			return err
		}
		done.Dir = fp.Dir
		done.Later = done.Later[:0]
		for _, name := range fp.Files {
			if !agreed(name) {
				done.Later = append(done.Later, name)
			}
		}
		// MEMORY.md as it was and as the removal left it: a line kept below goes back to its
		// place in the first while the file is still the second.
		var before, after []byte
		if len(fp.Lines) > 0 {
			cairns := m.cairnsFiles()
			err := m.update(IndexFile, func(cur []byte, _ bool) ([]byte, error) {
				done.Lines, before = done.Lines[:0], cur
				for _, l := range splitLines(cur) {
					if t := l.target(); t != "" && cairns(t) && agreed(t) {
						text := strings.TrimPrefix(l.text, bom)
						done.Lines = append(done.Lines, text)
						cur = RemoveEntry(cur, t)
					}
				}
				after = cur
				return cur, nil
			})
			if err != nil {
				return err
			}
			if len(done.Lines) > 0 {
				removeEmpty(filepath.Join(m.loc.Dir, IndexFile))
			}
		}
		owner := m.ownerOf()
		var putBack []string // the lines of files kept, removed above
		for _, name := range fp.Files {
			p := filepath.Join(m.loc.Dir, name)
			cur, err := read(p)
			if err != nil || !cur.exists || !agreed(name) {
				continue // gone meanwhile, no longer a plain file, or not shown: not ours to remove
			}
			removed := false
			if owner(name, cur.data) == own {
				if removeHook != nil {
					removeHook(p)
				}
				if removed, err = removeIfSame(p, cur); err != nil {
					return unavailable("removing "+name, err)
				}
			}
			if removed {
				done.Files = append(done.Files, name)
				continue
			}
			// Written since the footprint was read: the writer's now, kept with its line.
			done.Edited = append(done.Edited, name)
			for _, l := range done.Lines {
				if t := entryTarget(l); t != "" && sameName(t, name) {
					putBack = append(putBack, l)
					done.Lines = slices.DeleteFunc(done.Lines, func(s string) bool { return s == l })
					break
				}
			}
		}
		if len(putBack) > 0 {
			err := m.update(IndexFile, func(cur []byte, _ bool) ([]byte, error) {
				if bytes.Equal(cur, after) {
					// Unchanged since: the removal again, of the lines removed for good only.
					next := before
					for _, l := range done.Lines {
						next = RemoveEntry(next, entryTarget(l))
					}
					return next, nil
				}
				for _, l := range putBack { // changed meanwhile: where a missing line goes
					cur = SetEntry(cur, entryTarget(l), l)
				}
				return cur, nil
			})
			if err != nil {
				return err
			}
		}
		if err := m.forgetWritten(); err != nil {
			return err
		}
		return syncDir(m.loc.Dir)
	})
	return done, err
}

// removeHook, set by tests only, runs between RemoveCairn's read of a file of Cairn's and its
// removal.
var removeHook func(path string)

// removeEmpty removes the file at path when it is empty: a MEMORY.md that held only Cairn's
// lines, which Claude Code would load as an index of nothing.
func removeEmpty(path string) {
	if cur, err := read(path); err == nil && cur.exists && len(cur.data) == 0 {
		_, _ = removeIfSame(path, cur)
	}
}

// removeIfSame removes the file at path if it still holds expect, and reports whether it did.
// A writer may write there at any moment (the model's Write tool takes no lock of Cairn's), so
// the file is first renamed aside (a temp file named as replace names one that expected expect
// and wrote nothing, which sweepTemps settles after a kill) and goes only if it holds expect and
// no one has it open for writing; otherwise it is put back, unless a new file took its name
// meanwhile: then both stay, the aside one for sweepTemps and doctor. A file gone already is
// removed.
func removeIfSame(path string, expect snapshot) (bool, error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, tempPattern(filepath.Base(path), expect.data, nil))
	if err != nil {
		return false, err
	}
	tmp := f.Name()
	f.Close()
	if err := os.Rename(path, tmp); err != nil {
		os.Remove(tmp)
		if errors.Is(err, fs.ErrNotExist) {
			return true, nil
		}
		return false, err
	}
	if got, err := readDisplaced(tmp); err == nil && got.same(expect) {
		if busy, _ := writing(tmp); !busy {
			os.Remove(tmp)
			return true, syncDir(dir)
		}
	}
	if os.Link(tmp, path) == nil {
		os.Remove(tmp)
	}
	return false, syncDir(dir)
}

// foldNames says memory file names fold case, as on macOS and Windows, where Cairn-Workflow.md
// is Cairn's cairn-workflow.md; elsewhere it is another file, a user's own, which Cairn
// neither rewrites the index line of nor removes. A variable for tests.
var foldNames = runtime.GOOS == "darwin" || runtime.GOOS == "windows"

// sameName reports whether two memory file names name one file (foldNames).
func sameName(a, b string) bool {
	if foldNames {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// namePrefix reports whether name begins with prefix, as sameName compares them.
func namePrefix(name, prefix string) bool {
	return len(name) >= len(prefix) && sameName(name[:len(prefix)], prefix)
}
