package store

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"slices"
	"sort"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/strictjson"
)

// MaxLogSize caps what ReadLog reads and what AppendLog appends to: of a larger log (one
// written by a version before the cap), its newest entries.
const MaxLogSize = 64 << 20

// Lines is what a JSONL reader found.
type Lines struct {
	// Lines are the complete, valid lines, in order, without their newline.
	Lines []json.RawMessage
	// Torn is 1 when the file ends in a partial line (a writer was killed mid-append); the next
	// append moves it to quarantine/.
	Torn int
	// Invalid counts complete lines that are not one strict JSON value of at most
	// MaxLogLine bytes; they are skipped.
	Invalid int
	// InvalidAt numbers the Invalid lines, in order: from 1, the file's first line, or, when a
	// read of its tail did not reach its start, from -1, its last line (whole or not).
	InvalidAt []int
	// Older is, for a log over MaxLogSize, the bytes before its newest MaxLogSize that were
	// not read: its oldest entries.
	Older int64
}

// ParseLines splits JSONL data into complete valid lines, skipping and counting the rest.
// Only newline-terminated lines count: a partial last line may be half of a record.
func ParseLines(data []byte, maxLine int) Lines {
	var out Lines
	lim := strictjson.Limits{MaxSize: maxLine, MaxDepth: strictjson.MaxDepth}
	n := 0
	for line := range bytes.Lines(data) {
		n++
		line, whole := bytes.CutSuffix(line, []byte("\n"))
		if !whole {
			out.Torn = 1
			break
		}
		if lim.Check(line) != nil {
			out.Invalid++
			out.InvalidAt = append(out.InvalidAt, n)
			continue
		}
		out.Lines = append(out.Lines, json.RawMessage(line))
	}
	return out
}

// LogFile is the file that keeps log name, relative to the state directory.
func LogFile(name string) string { return logsDir + "/" + name + ".jsonl" }

// AppendLog appends one JSON value as a line to logs/NAME.jsonl, durably, under the log's
// lock. The entry is checked (strict JSON, no secret), compacted to one line and refused over
// MaxLogLine bytes. A last line without its newline is given one when it is a whole entry, and
// moved to quarantine/ when it is cut short (a writer killed mid-line; TakeNotices says so);
// a failed write is taken back, so the log only ever holds whole lines.
func (s *Store) AppendLog(name string, entry []byte) error {
	if err := ValidName(name); err != nil {
		return err
	}
	line, err := strictjson.Compact(entry)
	if je, ok := errors.AsType[*strictjson.Error](err); ok && je.Kind == strictjson.TooLarge {
		return &logLineError{name: name, err: je}
	}
	if err != nil {
		return fmt.Errorf("log %q entry not appended: %w", name, err)
	}
	if len(line) > MaxLogLine {
		return &logLineError{name: name, size: len(line), err: &strictjson.Error{Kind: strictjson.TooLarge, Offset: MaxLogLine,
			Reason: fmt.Sprintf("a log line is at most %d bytes, this one is %d", MaxLogLine, len(line))}}
	}
	if f := secrets.ScanJSON(line); f != nil {
		return fmt.Errorf("log %q entry not appended: %w", name, f)
	}
	if err := s.mkdir(logsDir); err != nil {
		return err
	}
	unlock, err := s.lock("log-" + name)
	if err != nil {
		return err
	}
	defer unlock()
	last, prev, size, err := lastEntry(s.fs, LogFile(name))
	if err != nil {
		return s.writeErr(LogFile(name), err)
	}
	// Each entry was scanned alone, but the log is read as lines: a secret split over two
	// (a key file appended a line at a time) is refused as one in this entry would be.
	if prev != nil {
		if f := SplitSecret(prev, line); f != nil {
			return fmt.Errorf("log %q entry not appended: with the log's last line before it, %w", name, f)
		}
	}
	// A log stops where ReadLog stops reading: lines past it would be written and never read.
	if size+int64(len(line))+1+int64(min(len(last), 1)) > MaxLogSize {
		return fmt.Errorf("log %q entry not appended: the log holds %d bytes and a log is at most %d MiB, all cairn reads of it; nothing was changed: append to a new log name, such as %s",
			name, size, MaxLogSize>>20, nextLogName(name))
	}
	if last != nil {
		// Given its newline where it is: cut and written again, a failure between the two
		// would lose an entry readers showed.
		if err := durable.EndLine(s.fs, LogFile(name)); err != nil {
			return s.writeErr(LogFile(name), err)
		}
	}
	// A last line cut short, which the append cuts off, is kept first: never deleted.
	var kept tornKept
	res, err := durable.AppendLineKeeping(s.fs, LogFile(name), line, true, func(tail []byte) error {
		return s.keepTornTail(name, tail, &kept)
	})
	if kept.dst != "" {
		s.keepNotice(kept.notice(LogFile(name), res.Repaired > 0))
	}
	if err != nil && err == kept.err {
		return err
	}
	return s.writeErr(LogFile(name), err)
}

// tornKept is what keepTornTail kept of a log's unfinished last line.
type tornKept struct {
	dst  string // where in quarantine/; "" for nothing kept
	size int
	err  error // keepTornTail's own error, returned as it is
}

// notice says where the unfinished line went, cut off the log (cut) or only copied.
func (k *tornKept) notice(file string, cut bool) Notice {
	msg := fmt.Sprintf("%s ended in an unfinished line of %d bytes (a writer stopped mid-line), cut off before the append and kept in %s", file, k.size, k.dst)
	if !cut {
		msg = fmt.Sprintf("%s ended in an unfinished line of %d bytes (a writer stopped mid-line), copied to %s; the log still holds it", file, k.size, k.dst)
	}
	return Notice{Kind: "quarantined", Path: k.dst, Message: msg}
}

// keepTornTail copies tail, the unfinished last line of log name that the append is about to
// cut off, to quarantine/, durably, for the notice that says so (TakeNotices). A tail given
// again (the log grew meanwhile) supersedes the copy before it, whose bytes are in the log or
// in the new tail. Opened WithNoRepair, it answers ErrRepairLeft, as Quarantine does.
func (s *Store) keepTornTail(name string, tail []byte, k *tornKept) error {
	file := LogFile(name)
	if k.dst != "" {
		_ = s.fs.Remove(k.dst)
		k.dst = ""
	}
	if tail == nil {
		return nil
	}
	if s.o.noRepair {
		k.err = fmt.Errorf("%s: %w", file, ErrRepairLeft)
		return k.err
	}
	dst, err := s.setAside(path.Base(file), func(dst string) error {
		return s.writeErr(dst, durable.WriteFileNoReplace(s.fs, dst, tail, 0o600))
	})
	if err != nil {
		k.err = fmt.Errorf("log %q entry not appended: its unfinished last line could not be kept in quarantine/ first: %w", name, s.writeErr(dst, err))
		return k.err
	}
	k.dst, k.size = dst, len(tail)
	return nil
}

// SplitSecret reports the secret that log line line, clean alone, makes on the line after
// prev (a key file appended a line at a time), or nil. Text of a secret's shape prev holds
// alone (written before a rule found it, or by hand) is no secret line makes: only the end of
// prev after it, the longest that holds none, is read with line.
func SplitSecret(prev, line []byte) *secrets.Finding {
	p := string(prev)
	if secrets.ScanString(p) != nil {
		p = p[sort.Search(len(p), func(i int) bool { return secrets.ScanString(p[i:]) == nil }):]
	}
	return secrets.ScanString(p + "\n" + string(line))
}

// lastEntry returns the size of the log file (0 when there is none) and its last line when
// that is a whole entry without its newline (written by a person's editor or another tool, or
// by a writer stopped just before its newline), for AppendLog to keep: AppendLine cuts off a
// line without its newline, as a line cut short. A number is not taken for whole: it may be
// the start of a longer one. prev is the line the next entry will follow (that one, or the
// last line ended by its newline; nil for a line longer than an entry or cut short).
func lastEntry(fsys durable.FS, file string) (last, prev []byte, size int64, err error) {
	f, st, err := durable.OpenRead(fsys, file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, 0, nil
	}
	if err != nil {
		return nil, nil, 0, err
	}
	defer f.Close()
	size = st.Size()
	if size == 0 {
		return nil, nil, 0, nil
	}
	// The newline before a line of at most MaxLogLine bytes, the line, and its own newline.
	buf := make([]byte, min(size, MaxLogLine+2))
	if _, err := f.ReadAt(buf, size-int64(len(buf))); err != nil {
		return nil, nil, size, err
	}
	line, ended := bytes.CutSuffix(buf, []byte("\n"))
	i := bytes.LastIndexByte(line, '\n')
	if i < 0 && size > int64(len(buf)) {
		return nil, nil, size, nil // a longer last line is no entry
	}
	line = line[i+1:]
	switch {
	case ended:
		return nil, line, size, nil
	case wholeEntry(line):
		return line, line, size, nil
	}
	return nil, nil, size, nil
}

// wholeEntry reports whether a log's last line, without its newline, is nonetheless a whole
// entry, which readers show and the next append keeps: one strict JSON value of at most
// MaxLogLine bytes, not a number (which may be the start of a longer one).
func wholeEntry(line []byte) bool {
	lim := strictjson.Limits{MaxSize: MaxLogLine, MaxDepth: strictjson.MaxDepth}
	return lim.Check(line) == nil && strictjson.KindOf(line) != "a number"
}

// nextLogName is the new log name a full log's refusal proposes: NAME-2, its NAME cut so that
// it is a name (at most MaxNameLen), and NAME-3 where that is NAME itself.
func nextLogName(name string) string {
	base := name[:min(len(name), MaxNameLen-2)]
	if base+"-2" == name {
		return base + "-3"
	}
	return base + "-2"
}

// logLineError is a log entry refused for its size. It says so in its own words: the
// strictjson.Error it wraps would call valid JSON invalid, and an entry over strictjson's limit
// may have been read only that far (the CLI's stdin), so its whole size is not known.
type logLineError struct {
	name string
	size int // on one line; 0 when over strictjson's limit
	err  *strictjson.Error
}

func (e *logLineError) Error() string {
	const next = "; keep large data in a checkpoint and log its name"
	if e.size == 0 {
		// Over strictjson's limit, which is a checkpoint's too: only a file holds it.
		return fmt.Sprintf("log %q entry not appended: it is over %d bytes, and a log line may hold %d; keep the data in a file and log its path", e.name, e.err.Offset, MaxLogLine)
	}
	return fmt.Sprintf("log %q entry not appended: it is %d bytes on one line, over the %d a log line may hold%s", e.name, e.size, MaxLogLine, next)
}

func (e *logLineError) Unwrap() error { return e.err }

// ReadLog returns the complete lines of logs/NAME.jsonl, counting a torn tail and invalid
// lines; of a log over MaxLogSize, those in its last MaxLogSize bytes, with the bytes before
// them counted in Older. It takes no lock. A missing log is a *NotFoundError.
func (s *Store) ReadLog(name string) (Lines, error) {
	if err := ValidName(name); err != nil {
		return Lines{}, err
	}
	data, err := durable.ReadFile(s.fs, LogFile(name), MaxLogSize)
	if errors.Is(err, durable.ErrTooLarge) {
		return s.ReadLogTail(name, math.MaxInt) // its newest entries: all in the last MaxLogSize
	}
	if errors.Is(err, fs.ErrNotExist) {
		return Lines{}, &NotFoundError{What: "log", Name: name}
	}
	if err != nil {
		return Lines{}, s.readErr(fmt.Sprintf("log %q", name), LogFile(name), err)
	}
	l := ParseLines(data, MaxLogLine)
	if last := data[bytes.LastIndexByte(data, '\n')+1:]; l.Torn == 1 && wholeEntry(last) {
		l.Lines, l.Torn = append(l.Lines, json.RawMessage(last)), 0
	}
	return l, nil
}

// ReadLogTail is ReadLog for the newest n entries only: it reads logs/NAME.jsonl backward
// from its end, in growing blocks, until it holds n valid whole lines, the file's start or
// the last MaxLogSize bytes, so a long log costs what its tail does. Lines are those
// ReadLog's would end with, Torn is as ReadLog's, Invalid counts the invalid lines read
// among them (after the first returned), and Older is set only when the last MaxLogSize
// bytes held fewer than n entries. It takes no lock. A missing log is a *NotFoundError.
func (s *Store) ReadLogTail(name string, n int) (Lines, error) {
	if err := ValidName(name); err != nil {
		return Lines{}, err
	}
	f, st, err := durable.OpenRead(s.fs, LogFile(name))
	if errors.Is(err, fs.ErrNotExist) {
		return Lines{}, &NotFoundError{What: "log", Name: name}
	}
	if err == nil {
		defer f.Close()
		var l Lines
		if l, err = readTail(f, st.Size(), n, MaxLogSize); err == nil {
			return l, nil
		}
	}
	return Lines{}, s.readErr(fmt.Sprintf("log %q", name), LogFile(name), err)
}

// readTail reads the newest n valid whole lines of the size bytes r holds, reading at most
// the last limit bytes and the one before them (a newline there makes the first line whole).
func readTail(r io.ReaderAt, size int64, n int, limit int64) (Lines, error) {
	var out Lines
	lim := strictjson.Limits{MaxSize: MaxLogLine, MaxDepth: strictjson.MaxDepth}
	var buf []byte   // the file from start to size
	start := size    // where buf begins in the file
	pos := int64(-1) // the lines from pos on are read; -1 until the torn tail is known
	var rev []json.RawMessage
	k := 0 // the lines from pos on
	for block := int64(32 << 10); ; block *= 2 {
		if floor := max(0, size-limit-1); start > floor {
			from := max(floor, start-block)
			more := make([]byte, start-from+int64(len(buf)))
			if k, err := r.ReadAt(more[:start-from], from); k < int(start-from) {
				return Lines{}, cmp.Or(err, io.ErrUnexpectedEOF) // the log was cut back meanwhile
			}
			copy(more[start-from:], buf)
			buf, start = more, from
		}
		if pos < 0 {
			if i := bytes.LastIndexByte(buf, '\n'); i >= 0 || start == 0 {
				pos = start + int64(i) + 1
				if pos < size {
					k = 1
				}
				switch last := buf[i+1:]; {
				case pos == size:
				case !wholeEntry(last):
					out.Torn = 1
				case n > 0:
					rev = append(rev, json.RawMessage(last))
				}
			}
		}
		for pos > start && len(rev) < n {
			end := int(pos-start) - 1 // buf[end] is the line's newline
			i := bytes.LastIndexByte(buf[:end], '\n')
			if i < 0 && start > 0 {
				break // the line begins before buf
			}
			if line := buf[i+1 : end]; lim.Check(line) == nil {
				rev = append(rev, json.RawMessage(line))
			} else {
				out.Invalid++
				out.InvalidAt = append(out.InvalidAt, -k-1)
			}
			k++
			pos = start + int64(i) + 1
		}
		if pos >= 0 && (len(rev) >= n || pos == 0) {
			break
		}
		if start == max(0, size-limit-1) { // the last limit bytes hold fewer than n entries
			if pos >= 0 {
				out.Older = pos
			} else {
				out.Older = size
			}
			break
		}
	}
	slices.Reverse(rev)
	out.Lines = rev
	slices.Reverse(out.InvalidAt)
	for i, v := range out.InvalidAt {
		if pos == 0 { // all read: numbered from the start
			out.InvalidAt[i] = k + 1 + v
		}
	}
	return out, nil
}
