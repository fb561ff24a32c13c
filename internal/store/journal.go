package store

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
)

// Event says what a workflow change was, for the journal: a kind ("start", "transition",
// "task", ...) and a short detail.
type Event struct {
	Kind   string `json:"kind"`
	Detail string `json:"detail,omitempty"`
}

// MaxEventDetail caps an event's detail, in bytes.
const MaxEventDetail = 1024

// Record is one journal line: the change's sequence number (1, 2, ... per workflow), the
// record's revision, when, what, and the state after the change, either whole (Snapshot) or as
// the change from the previous line's state (Delta, see delta.go). Journals written before
// deltas hold a Snapshot on every line; they read, rebuild and continue as they are.
type Record struct {
	Seq      int64           `json:"seq"`
	Revision int64           `json:"revision"`
	At       time.Time       `json:"at"`
	Event    Event           `json:"event"`
	Snapshot json.RawMessage `json:"snapshot,omitempty"`
	Delta    json.RawMessage `json:"delta,omitempty"`
	// Base is the sequence number of the full line a delta's chain starts from, and Chain the
	// bytes of the chain's deltas up to this one: they bound what a rebuild reads.
	Base  int64 `json:"base,omitempty"`
	Chain int64 `json:"chain,omitempty"`
	// State is the hex SHA-256 (first 16 bytes) of the compact state after this line. A
	// delta is written only against a state whose sum matches, and a replay is checked by it.
	State string `json:"state,omitempty"`
}

// A journal writes a full line when the deltas since the newest full line would hold more than
// maxChainFactor times the state's bytes, or when the chain holds maxChainRecords lines that
// hold, each counted as its delta and lineCost (about its other members), as many bytes as the
// state: a rebuild reads a bounded tail after the full line, and a full line at most doubles
// what the changes before it cost. Lines alone do not end a chain: a small change to a large
// record (a heartbeat) costs about its own line, not a share of a full copy every few dozen.
const (
	maxChainRecords = 32
	maxChainFactor  = 4
	lineCost        = 256
)

func stateSum(compact []byte) string {
	sum := sha256.Sum256(compact)
	return hex.EncodeToString(sum[:16])
}

// Journal is a workflow's verified history.
type Journal struct {
	Records []Record
	// Torn is 1 when the journal ends in a partial line; the next append cuts it off.
	Torn int
	// Problems describes each complete line that was skipped (bad checksum, not JSON, out of
	// sequence) and each gap in the sequence, by line number.
	Problems []string
}

// A journal line is the record's JSON with "sum" last: the hex SHA-256 of every byte before
// `,"sum":`. A reader can then tell a real record from a stale or zeroed tail.
const sumKey = `,"sum":"`

func journalFile(id string) string { return journalDir + "/" + id + ".jsonl" }

// encodeRecord writes r as one line (no newline); r.Snapshot or r.Delta must be compact.
func encodeRecord(r Record) []byte {
	ev, _ := json.Marshal(r.Event)
	var b bytes.Buffer
	b.Grow(len(r.Snapshot) + len(r.Delta) + len(ev) + 250)
	b.WriteString(`{"seq":`)
	b.WriteString(strconv.FormatInt(r.Seq, 10))
	b.WriteString(`,"revision":`)
	b.WriteString(strconv.FormatInt(r.Revision, 10))
	b.WriteString(`,"at":"`)
	b.WriteString(r.At.UTC().Format(time.RFC3339Nano))
	b.WriteString(`","event":`)
	b.Write(ev)
	if r.Delta != nil {
		b.WriteString(`,"delta":`)
		b.Write(r.Delta)
		b.WriteString(`,"base":`)
		b.WriteString(strconv.FormatInt(r.Base, 10))
		b.WriteString(`,"chain":`)
		b.WriteString(strconv.FormatInt(r.Chain, 10))
	} else {
		b.WriteString(`,"snapshot":`)
		b.Write(r.Snapshot)
	}
	if r.State != "" {
		b.WriteString(`,"state":"`)
		b.WriteString(r.State)
		b.WriteString(`"`)
	}
	sum := sha256.Sum256(b.Bytes())
	b.WriteString(sumKey)
	b.WriteString(hex.EncodeToString(sum[:]))
	b.WriteString(`"}`)
	return b.Bytes()
}

// DecodeRecord verifies and decodes one journal line (without its newline).
func DecodeRecord(line []byte) (Record, error) { return decodeRecord(line, true) }

// decodeRecord is DecodeRecord, leaving out the event when events is false (a rebuild needs
// only the states).
func decodeRecord(line []byte, events bool) (Record, error) {
	var r Record
	if err := checkSum(line); err != nil {
		return r, err
	}
	if err := decodeLine(line, &r, events); err != nil {
		return r, err
	}
	if r.Seq < 1 || r.Revision < 1 || (len(r.Snapshot) == 0) == (len(r.Delta) == 0) {
		return r, errors.New("missing seq, revision, or one of snapshot and delta")
	}
	if r.Delta != nil && (r.Base < 1 || r.Base >= r.Seq || r.State == "") {
		return r, errors.New("a delta without its base or state")
	}
	return r, nil
}

// decodeLine reads a line whose checksum holds. A line in the layout encodeRecord writes is
// read by its fixed parts without scanning its state (readLayout); any other (a journal
// written before that layout) goes through encoding/json. A state rebuilt from either is
// checked by its sum.
func decodeLine(line []byte, r *Record, events bool) error {
	if readLayout(line, r, events) {
		return nil
	}
	*r = Record{}
	if err := json.Unmarshal(line, r); err != nil {
		return err
	}
	if !events {
		r.Event = Event{}
	}
	if !isObject(r.Snapshot) {
		r.Snapshot = nil
	}
	if !isObject(r.Delta) {
		r.Delta = nil
	}
	if r.State != "" && len(r.State) != 32 {
		return errors.New("bad state sum")
	}
	return nil
}

func isObject(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '{' }

// readLayout reads a line as encodeRecord writes it, `{"seq":N,"revision":N,"at":"T",
// "event":{...},` then `"snapshot":STATE` or `"delta":DELTA,"base":N,"chain":N`, then
// `,"state":"SUM"` and the line's sum, and reports false for any other shape. STATE and DELTA
// are taken as the bytes between the fixed parts: a rebuild checks what it makes of them
// against the state sum, so a 1,000-transition rebuild never scans a snapshot it does not
// apply (BenchmarkRebuild1000, rebuild/read).
func readLayout(line []byte, r *Record, events bool) bool {
	seq, rest, ok := cutNum(line, `{"seq":`)
	if !ok {
		return false
	}
	rev, rest, ok := cutNum(rest, `,"revision":`)
	if !ok || !bytes.HasPrefix(rest, []byte(`,"at":"`)) {
		return false
	}
	rest = rest[len(`,"at":"`):]
	q := bytes.IndexByte(rest, '"')
	if q < 0 {
		return false
	}
	at, err := time.Parse(time.RFC3339Nano, string(rest[:q]))
	if err != nil || !bytes.HasPrefix(rest[q:], []byte(`","event":{`)) {
		return false
	}
	rest = rest[q+len(`","event":`):]
	// The event holds only strings, in which a quote is escaped: the first `},"` that is
	// not in one ends it.
	ev := bytes.Index(rest, []byte(`},"`))
	if ev < 0 {
		return false
	}
	event, rest := rest[:ev+1], rest[ev+1:]
	// The line ends `,"state":"<32 hex>","sum":"<64 hex>"}` (checkSum read the sum).
	tail := len(rest) - len(sumKey) - 64 - 2 - len(`,"state":"`) - 32 - 1
	if tail < 0 || !bytes.HasPrefix(rest[tail:], []byte(`,"state":"`)) {
		return false
	}
	state := rest[tail+len(`,"state":"`) : tail+len(`,"state":"`)+32]
	rest = rest[:tail]
	var x Record
	switch {
	case bytes.HasPrefix(rest, []byte(`,"snapshot":{`)) && rest[len(rest)-1] == '}':
		x.Snapshot = rest[len(`,"snapshot":`):]
	case bytes.HasPrefix(rest, []byte(`,"delta":{`)):
		b := bytes.LastIndex(rest, []byte(`,"base":`))
		if b < 0 || rest[b-1] != '}' {
			return false
		}
		var tail []byte
		if x.Base, tail, ok = cutNum(rest[b:], `,"base":`); !ok {
			return false
		}
		if x.Chain, tail, ok = cutNum(tail, `,"chain":`); !ok || len(tail) != 0 {
			return false
		}
		x.Delta = rest[len(`,"delta":`):b]
	default:
		return false
	}
	if events && json.Unmarshal(event, &x.Event) != nil {
		return false
	}
	x.Seq, x.Revision, x.At, x.State = seq, rev, at, string(state)
	*r = x
	return true
}

// cutNum reads key and the whole number after it from the front of b.
func cutNum(b []byte, key string) (int64, []byte, bool) {
	if !bytes.HasPrefix(b, []byte(key)) {
		return 0, nil, false
	}
	b = b[len(key):]
	n := 0
	for n < len(b) && n < 18 && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	if n == 0 || n == 18 || (b[0] == '0' && n > 1) {
		return 0, nil, false
	}
	v, err := strconv.ParseInt(string(b[:n]), 10, 64)
	return v, b[n:], err == nil
}

// checkSum verifies a journal line's "sum".
func checkSum(line []byte) error {
	i := bytes.LastIndex(line, []byte(sumKey))
	if i < 0 || !bytes.HasSuffix(line, []byte(`"}`)) || len(line)-2-(i+len(sumKey)) != 64 {
		return errors.New("no checksum")
	}
	want := sha256.Sum256(line[:i])
	var got [sha256.Size]byte
	if _, err := hex.Decode(got[:], line[i+len(sumKey):len(line)-2]); err != nil || got != want {
		return errors.New("checksum mismatch")
	}
	return nil
}

// peekRecord reads only the sequence and revision of a journal line whose checksum holds,
// from the prefix every record is written with (`{"seq":N,"revision":M,`); ok is false for
// any other shape, and the caller decodes the line in full.
func peekRecord(line []byte) (seq, rev int64, ok bool) {
	seq, rest, ok := cutNum(line, `{"seq":`)
	if !ok {
		return 0, 0, false
	}
	rev, rest, ok = cutNum(rest, `,"revision":`)
	if !ok || len(rest) == 0 || rest[0] != ',' || seq < 1 || rev < 1 || checkSum(line) != nil {
		return 0, 0, false
	}
	return seq, rev, true
}

// ParseJournal verifies journal data: checksums, and sequence numbers rising by one.
func ParseJournal(data []byte) Journal {
	var j Journal
	var last *Record
	n := 0
	for line := range bytes.Lines(data) {
		n++
		line, whole := bytes.CutSuffix(line, []byte("\n"))
		if !whole {
			j.Torn = 1
			break
		}
		r, err := DecodeRecord(line)
		if err != nil {
			j.Problems = append(j.Problems, fmt.Sprintf("line %d skipped: %v", n, err))
			continue
		}
		if last != nil {
			if r.Seq <= last.Seq || r.Revision <= last.Revision {
				j.Problems = append(j.Problems, fmt.Sprintf("line %d skipped: seq %d revision %d does not follow seq %d revision %d", n, r.Seq, r.Revision, last.Seq, last.Revision))
				continue
			}
			if r.Seq != last.Seq+1 {
				j.Problems = append(j.Problems, fmt.Sprintf("line %d: seq jumps from %d to %d", n, last.Seq, r.Seq))
			}
		}
		j.Records = append(j.Records, r)
		last = &j.Records[len(j.Records)-1]
	}
	return j
}

// MaxJournalSize caps what ReadJournal reads.
const MaxJournalSize = 256 << 20

// JournalInTheWay returns, without reading the journal of id, the refusal every change would
// meet when something other than a file Cairn wrote is in its place; nil when there is none.
func (s *Store) JournalInTheWay(id string) error {
	if ValidWorkflowID(id) != nil {
		return nil
	}
	if err := durable.CheckFile(s.fs, journalFile(id)); InPlace(err) != "" {
		return s.readErr("the journal of "+id, journalFile(id), err)
	}
	return nil
}

// ReadJournal returns the verified history of the active workflow id: its sealed segments
// (journal/<id>.sealed/), oldest first, then journal/<id>.jsonl.
func (s *Store) ReadJournal(id string) (Journal, error) {
	return s.readJournal(id, true)
}

// ReadJournalEvents is ReadJournal without the states: each record with its event, its
// Snapshot and Delta left out as each file is read, so that a long journal costs its events
// and a file's lines, not every line (history, doctor).
func (s *Store) ReadJournalEvents(id string) (Journal, error) {
	return s.readJournal(id, false)
}

func (s *Store) readJournal(id string, states bool) (Journal, error) {
	if err := ValidWorkflowID(id); err != nil {
		return Journal{}, err
	}
	return s.readJournalFile(journalFile(id), id, states)
}

// readJournalFile reads the journal file and the segments sealed from it, oldest first, with
// their states or without (ReadJournalEvents). The journal file is read first: a compaction
// running meanwhile seals only lines already read, into a segment that is there by the time
// the segments are listed, so nothing is missed.
func (s *Store) readJournalFile(file, id string, states bool) (Journal, error) {
	return s.readJournalBack(file, id, func([]Record) bool { return false }, states)
}

// readJournalBack is readJournalFile reading the segments newest first, and only as far back
// as the first one whose records (oldest first) far says reach back far enough.
func (s *Store) readJournalBack(file, id string, far func([]Record) bool, states bool) (Journal, error) {
	parse := func(data []byte) Journal {
		j := ParseJournal(data)
		for i := range j.Records {
			if !states { // the file's bytes are let go with them
				j.Records[i].Snapshot, j.Records[i].Delta = nil, nil
			}
		}
		return j
	}
	data, err := durable.ReadFile(s.fs, file, MaxJournalSize)
	missing := errors.Is(err, fs.ErrNotExist)
	if err != nil && !missing {
		return Journal{}, s.readErr("the journal of "+id, file, err)
	}
	segs, err := s.segments(file)
	if err != nil {
		// Named as a path in it, so that readErr names what is in the segments' directory's
		// place (a symlink out of the state directory, a file) with its step.
		return Journal{}, s.readErr("the sealed journal of "+id, sealedDir(file)+"/", err)
	}
	if missing && len(segs) == 0 {
		return Journal{}, &NotFoundError{What: "journal", Name: id}
	}
	parsed := make([]Journal, len(segs))
	first := 0
	for i := len(segs) - 1; i >= 0; i-- {
		seg, err := durable.ReadFile(s.fs, segs[i], MaxJournalSize)
		if err != nil {
			return Journal{}, fmt.Errorf("reading journal %s in %s: %w", segs[i], s.dir, err)
		}
		if parsed[i] = parse(seg); far(parsed[i].Records) {
			first = i
			break
		}
	}
	var j Journal
	for i := first; i < len(segs); i++ {
		j.join(parsed[i], segs[i], true)
	}
	if !missing {
		j.join(parse(data), file, len(segs) > 0)
	}
	return j, nil
}

// join appends next, the journal's next file, keeping the first copy of each sequence number
// (a compaction cut short leaves the lines it sealed in both files). Problems name the file
// when there are several.
func (j *Journal) join(next Journal, file string, named bool) {
	for _, p := range next.Problems {
		if named {
			p = file + ": " + p
		}
		j.Problems = append(j.Problems, p)
	}
	j.Torn = next.Torn
	recs := next.Records
	if n := len(j.Records); n > 0 {
		last := j.Records[n-1].Seq
		for len(recs) > 0 && recs[0].Seq <= last {
			recs = recs[1:]
		}
		if len(recs) > 0 && recs[0].Seq != last+1 {
			j.Problems = append(j.Problems, fmt.Sprintf("%s: seq jumps from %d to %d", file, last, recs[0].Seq))
		}
	}
	j.Records = append(j.Records, recs...)
}

// A long journal is compacted by sealing, so that no file of it grows without bound: once the
// active journal holds more than compactAt bytes before a full line just appended, the lines
// before that line move to the next sealed segment, <journal>.sealed/<n>.jsonl (n = 1, 2, ...),
// and the active journal keeps that full line alone. Nothing is dropped: history, show and
// sync read the segments, oldest first, then the active journal (readJournalFile);
// ReadJournalSince from an old revision reads them newest first, back to the one it needs
// (readBackTo); appends, reads and rebuilds read the active journal's tail only, which starts
// with a full line. An archive takes the segments along.
//
// Both steps are whole-file replaces (temp, fsync, rename, fsync of the directory) under the
// workflow lock, the segment first: cut short between the two, the sealed lines are in both
// files, readers keep the first copy of each sequence number, and the next compaction seals
// only the lines after the newest segment's last one.

const sealedSuffix = ".sealed"

// sealedDir is where the segments sealed from the journal file active are kept.
func sealedDir(active string) string { return strings.TrimSuffix(active, ".jsonl") + sealedSuffix }

// segments returns the segment files sealed from the journal file active, oldest first.
func (s *Store) segments(active string) ([]string, error) {
	dir := sealedDir(active)
	names, err := s.fs.ReadDirNames(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	// segmentNum takes only a number's one spelling (not 01.jsonl), so a longer name is a
	// larger number, and names of one length sort as their digits do.
	names = slices.DeleteFunc(names, func(n string) bool { return segmentNum(n) == 0 })
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b)) })
	for i, n := range names {
		names[i] = dir + "/" + n
	}
	return names, nil
}

// sealedTail is the sequence number and revision of the last verified line sealed from the
// journal file active (zero when nothing is sealed): where that journal goes on when the
// active file has no line to continue from.
func (s *Store) sealedTail(active string) (tailState, error) {
	segs, err := s.segments(active)
	if err != nil {
		return tailState{}, fmt.Errorf("reading the sealed journal %s in %s: %w", sealedDir(active), s.dir, err)
	}
	for i := len(segs) - 1; i >= 0; i-- {
		r, err := s.journalTail(segs[i])
		if err != nil {
			return tailState{}, fmt.Errorf("reading journal %s in %s: %w", segs[i], s.dir, err)
		}
		if r != nil {
			return tailState{seq: r.Seq, rev: r.Revision}, nil
		}
	}
	return tailState{}, nil
}

// segmentNum is n for a segment named <n>.jsonl, else 0.
func segmentNum(name string) int {
	num, ok := strings.CutSuffix(name, ".jsonl")
	n, err := strconv.Atoi(num)
	if !ok || err != nil || n < 1 || strconv.Itoa(n) != num {
		return 0
	}
	return n
}

// compactJournal seals the lines of the active journal file before cut, where the full line
// just appended starts, into the next segment, and leaves that line alone in file. The caller
// holds the workflow lock.
func (s *Store) compactJournal(file string, cut int64) error {
	dir := sealedDir(file)
	s.cleanTemps(path.Dir(file), durable.TempPrefix(path.Base(file)))
	s.cleanTemps(dir, ".tmp-")
	data, err := durable.ReadFile(s.fs, file, MaxJournalSize)
	if err != nil {
		return s.writeErr(file, err)
	}
	if cut <= 0 || cut >= int64(len(data)) || data[cut-1] != '\n' {
		return fmt.Errorf("compacting %s: the journal is not as just written", file)
	}
	head, tail := data[:cut], data[cut:]
	segs, err := s.segments(file)
	if err != nil {
		return s.writeErr(dir, err)
	}
	n := 1
	if len(segs) > 0 {
		last := segs[len(segs)-1]
		n = segmentNum(last[len(dir)+1:]) + 1
		r, err := s.journalTail(last)
		if err != nil {
			return s.writeErr(last, err)
		}
		if r != nil {
			head = sealedOff(head, r.Seq)
		}
	}
	if len(head) > 0 {
		if err := s.mkdir(dir); err != nil {
			return err
		}
		seg := dir + "/" + strconv.Itoa(n) + ".jsonl"
		if err := durable.WriteFile(s.fs, seg, head, 0o600); err != nil {
			return s.writeErr(seg, err)
		}
	}
	return s.writeErr(file, durable.WriteFile(s.fs, file, tail, 0o600))
}

// sealedOff returns the lines of data after the last one whose sequence number is at most
// seq: what a compaction cut short had already sealed.
func sealedOff(data []byte, seq int64) []byte {
	rest, off := data, 0
	for line := range bytes.Lines(data) {
		off += len(line)
		line, whole := bytes.CutSuffix(line, []byte("\n"))
		if n, _, ok := peekRecord(line); whole && ok && n <= seq {
			rest = data[off:]
		}
	}
	return rest
}

// journalTail returns the last verified record of a journal file as written, without its
// event (a delta line comes back without its state), reading backwards from the end so a long
// journal costs no more than its last lines. nil when the file is missing or holds no valid
// record.
func (s *Store) journalTail(file string) (*Record, error) {
	recs, err := s.tailRecords(file, func(Record) bool { return true }, false, false, nil)
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	return &recs[len(recs)-1], nil
}

// journalState returns the last verified record of a journal file with its complete state in
// Snapshot: read as is from a full line, or rebuilt from the newest full line and the deltas
// after it. nil when the file is missing or holds no valid record.
func (s *Store) journalState(file string) (*Record, error) {
	// The read buffer is recycled: only the state comes out of it, copied when it is a full
	// line's bytes (a rebuild allocates half as much, which a loaded machine's garbage
	// collector notices: BenchmarkRebuild1000).
	w := windows.Get().(*[]byte)
	defer windows.Put(w)
	recs, err := s.tailRecords(file, func(r Record) bool { return r.Snapshot != nil }, false, false, w)
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	last, err := replay(recs, nil, nil)
	if last != nil {
		if i := slices.IndexFunc(recs, func(r Record) bool { return r.Seq == last.Seq }); i >= 0 && recs[i].Snapshot != nil {
			last.Snapshot = bytes.Clone(last.Snapshot)
		}
	}
	return last, err
}

// windows holds read buffers for journalState.
var windows = sync.Pool{New: func() any { return new([]byte) }}

// journalTailRevision is journalState for a caller that needs the state only when the
// journal is ahead of minRev: a record at or below it comes back with Seq and Revision alone,
// read from the line's prefix without decoding the rest.
func (s *Store) journalTailRevision(file string, minRev int64) (*Record, error) {
	recs, err := s.tailRecords(file, func(Record) bool { return true }, true, false, nil)
	if err != nil || len(recs) == 0 || recs[0].Revision <= minRev {
		if len(recs) == 0 {
			return nil, err
		}
		return &recs[0], err
	}
	return s.journalState(file)
}

// ReadJournalSince returns the records of workflow id's journal with a revision above after,
// oldest first, each with its complete state in Snapshot. It reads the journal backwards only
// as far as the newest full line at or before after, and the sealed segments only when that
// line is in them.
func (s *Store) ReadJournalSince(id string, after int64) ([]Record, error) {
	return s.readStatesSince(id, after, func(Record) bool { return true }, 0)
}

// EachJournalSince is ReadJournalSince handing fn each record as its state is built, so that
// the states are not held at once (each a full copy of the record); fn's error stops it and is
// returned. A broken chain is told (BrokenChain) after the records before it.
func (s *Store) EachJournalSince(id string, after int64, fn func(Record) error) error {
	if err := ValidWorkflowID(id); err != nil {
		return err
	}
	return eachSince(func(fn func(Record) error) error { return s.journalLines(journalFile(id), id, after, fn) }, after, anyRecord, fn)
}

// ReadJournalKindSince is ReadJournalSince for the last records whose event is kind alone, at
// most last of them (all when last <= 0): the states of the others are not built (a turn of
// task updates between two moves costs their lines, not a copy of the record each), and the
// journal is read back only as far as the last of them needs.
func (s *Store) ReadJournalKindSince(id string, after int64, kind string, last int) ([]Record, error) {
	return s.readStatesSince(id, after, func(r Record) bool { return r.Event.Kind == kind }, last)
}

// readStatesSince is ReadJournalSince for the last records want is true for (all when
// last <= 0).
func (s *Store) readStatesSince(id string, after int64, want func(Record) bool, last int) ([]Record, error) {
	recs, err := s.linesSince(id, after, want, last)
	if err != nil {
		return nil, err
	}
	var out []Record
	err = eachSince(eachRecord(recs, after), after, want, func(r Record) error { out = append(out, r); return nil })
	if last > 0 && len(out) > last {
		out = out[len(out)-last:]
	}
	return out, err
}

// linesSince is the journal's lines readStatesSince builds its states from: from the newest full
// line at or before after, or before the last records want is true for.
func (s *Store) linesSince(id string, after int64, want func(Record) bool, last int) ([]Record, error) {
	enough := func(n int) bool { return last > 0 && n >= last }
	var newest int64
	wanted := 0
	recs, err := s.readBackTo(id, func(r Record) bool {
		if r.Seq >= newest {
			newest, wanted = r.Seq, 0 // a wider window is read back from the last line again
		}
		if r.Revision > after && want(r) {
			wanted++
		}
		return r.Snapshot != nil && (r.Revision <= after || enough(wanted))
	}, true, func(recs []Record) bool {
		return len(recs) > 0 && recs[0].Snapshot != nil && recs[0].Revision <= after+1
	})
	return recs, err
}

// ReadEventsSince returns the records of workflow id's journal with a revision above after,
// oldest first, as written, each with its event (a delta line without its state): who made the
// changes since after, at the cost of those lines. It reads the journal backwards only as far
// as the line at after, and the sealed segments only when that line is in them.
func (s *Store) ReadEventsSince(id string, after int64) ([]Record, error) {
	recs, err := s.readBackTo(id, func(r Record) bool { return r.Revision <= after }, true,
		func(recs []Record) bool { return len(recs) > 0 && recs[0].Revision <= after })
	i := slices.IndexFunc(recs, func(r Record) bool { return r.Revision > after })
	if err != nil || i < 0 {
		return nil, err
	}
	return recs[i:], nil
}

// readBackTo reads workflow id's active journal backwards from its end to the newest record
// stop is true for (tailRecords), and when what it read does not reach back as far as reached
// asks (or stop was never true) and segments were sealed from it, the journal again with the
// segments, newest first, back to the one holding the newest record stop is true for.
// stop sees each record once, newest first, except that a wider window of the active journal
// is read back from its last line again.
func (s *Store) readBackTo(id string, stop func(Record) bool, events bool, reached func([]Record) bool) (recs []Record, err error) {
	if err := ValidWorkflowID(id); err != nil {
		return nil, err
	}
	jf := journalFile(id)
	stopped := false
	if recs, err = s.tailRecords(jf, func(r Record) bool { stopped = stop(r); return stopped }, false, events, nil); err != nil {
		return nil, err
	}
	if !stopped && !reached(recs) {
		// The active journal starts after the line asked for: the rest is sealed.
		if segs, err := s.segments(jf); err != nil || len(segs) > 0 {
			oldest := int64(math.MaxInt64)
			if len(recs) > 0 {
				oldest = recs[0].Seq
			}
			j, jerr := s.readJournalBack(jf, id, func(seg []Record) bool {
				for _, r := range slices.Backward(seg) {
					if r.Seq < oldest { // a line sealed and still in a later file is seen once
						oldest = r.Seq
						if stop(r) {
							return true
						}
					}
				}
				return false
			}, true)
			if jerr != nil {
				return nil, cmp.Or(err, jerr)
			}
			return j.Records, nil
		}
	}
	return recs, nil
}

// journalLines hands fn the verified records of the journal file and the segments sealed from
// it, oldest first, as readJournalFile keeps them (each sequence number once, rising), one line
// at a time as it is read: a long journal is not held whole. It starts at the newest of those
// files whose first record is a full line at or before revision after+1 (the oldest when none
// is): the records before it are not needed to rebuild the states after after. The journal
// file is opened first, as readJournalFile reads it first: a compaction running meanwhile
// replaces it, and the lines it sealed are in a segment by the time the segments are listed.
func (s *Store) journalLines(file, id string, after int64, fn func(Record) error) error {
	active, err := openLines(s, file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s.readErr("the journal of "+id, file, err)
	}
	defer active.close()
	starts := func(r *Record) bool { return r != nil && r.Snapshot != nil && r.Revision <= after+1 }
	var segs []string
	if first, err := active.first(); err != nil {
		return s.readErr("the journal of "+id, file, err)
	} else if !starts(first) {
		if segs, err = s.segments(file); err != nil {
			return s.readErr("the sealed journal of "+id, sealedDir(file)+"/", err)
		}
		for i := len(segs) - 1; i > 0; i-- {
			seg, err := openLines(s, segs[i])
			first, ferr := seg.first()
			seg.close()
			if err = cmp.Or(err, ferr); err != nil {
				return fmt.Errorf("reading journal %s in %s: %w", segs[i], s.dir, err)
			}
			if starts(first) {
				segs = segs[i:]
				break
			}
		}
	}
	var seq, rev int64
	keep := func(r Record) error {
		if r.Seq <= seq || r.Revision <= rev {
			return nil // out of sequence, or a line sealed and still in a later file
		}
		seq, rev = r.Seq, r.Revision
		return fn(r)
	}
	for _, name := range segs {
		seg, err := openLines(s, name)
		var stopped error
		if err == nil {
			stopped, err = seg.each(keep)
			seg.close()
		}
		if stopped != nil {
			return stopped
		}
		if err != nil {
			return fmt.Errorf("reading journal %s in %s: %w", name, s.dir, err)
		}
	}
	stopped, err := active.each(keep)
	if err != nil {
		return s.readErr("the journal of "+id, file, err)
	}
	return stopped
}

// lineReader reads a journal file's verified records forward, one line at a time, through a
// small window: a line longer than the window is read again whole into its own buffer, so
// that what is held is the lines themselves.
type lineReader struct {
	f      durable.File
	buf    []byte // the window; buf[lo:hi] is not read yet
	lo, hi int
	off    int64 // the file offset of buf[hi]
}

// openLines opens file for reading its records; a missing file reads as one without any.
func openLines(s *Store, file string) (*lineReader, error) {
	f, st, err := durable.OpenRead(s.fs, file)
	if err != nil {
		return &lineReader{}, err
	}
	if st.Size() > MaxJournalSize {
		f.Close()
		return &lineReader{}, fmt.Errorf("%w: %d bytes, the limit is %d", durable.ErrTooLarge, st.Size(), MaxJournalSize)
	}
	return &lineReader{f: f, buf: make([]byte, 64<<10)}, nil
}

func (l *lineReader) close() {
	if l.f != nil {
		l.f.Close()
	}
}

// whole returns the next whole line, without its newline, in a buffer of its own (a state
// rebuilt from it may keep parts of it); nil at the end (a torn last line is no line).
func (l *lineReader) whole() ([]byte, error) {
	if i := bytes.IndexByte(l.buf[l.lo:l.hi], '\n'); i >= 0 {
		line := bytes.Clone(l.buf[l.lo : l.lo+i])
		l.lo += i + 1
		return line, nil
	}
	start := l.off - int64(l.hi-l.lo)
	for {
		if l.off > MaxJournalSize {
			return nil, fmt.Errorf("%w: over %d bytes", durable.ErrTooLarge, int64(MaxJournalSize))
		}
		n, err := l.f.ReadAt(l.buf, l.off)
		if i := bytes.IndexByte(l.buf[:n], '\n'); i >= 0 {
			line := make([]byte, l.off+int64(i)-start)
			if _, err := l.f.ReadAt(line, start); err != nil {
				return nil, err
			}
			l.off, l.lo, l.hi = l.off+int64(n), i+1, n
			return line, nil
		}
		l.off, l.lo, l.hi = l.off+int64(n), n, n
		if err == io.EOF {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// first returns the file's first verified record, and reads the file from its start again.
func (l *lineReader) first() (*Record, error) {
	r, err := l.line()
	l.lo, l.hi, l.off = 0, 0, 0
	return r, err
}

// line reads the next verified record from the file, nil at the end.
func (l *lineReader) line() (*Record, error) {
	for l.f != nil {
		line, err := l.whole()
		if err != nil || line == nil {
			return nil, err
		}
		if r, err := decodeRecord(line, true); err == nil {
			return &r, nil
		}
	}
	return nil, nil
}

// each hands fn the records not yet read, oldest first. fn's error stops it and is returned as
// stopped; err is the file's.
func (l *lineReader) each(fn func(Record) error) (stopped, err error) {
	for {
		r, err := l.line()
		if err != nil || r == nil {
			return nil, err
		}
		if err := fn(*r); err != nil {
			return err, nil
		}
	}
}

// States returns j's records, oldest first, each with its complete state in Snapshot (what ReadJournalSince gives for the active workflow, here for a
// journal already read, such as an archive's).
func (j Journal) States() ([]Record, error) {
	var out []Record
	err := j.EachState(math.MinInt64, func(r Record) error { out = append(out, r); return nil })
	return out, err
}

// EachState is States handing fn, one at a time as it is built, each record after revision
// after (so that the states are not held at once, each a full copy of the record), as
// EachJournalSince: the replay starts at the newest full line at or before after+1, and the
// states before them are not built. fn's error stops it and is returned.
func (j Journal) EachState(after int64, fn func(Record) error) error {
	return eachSince(eachRecord(j.Records, after), after, anyRecord, fn)
}

// errChain: a delta line does not follow the line before it (a damaged line in between) or
// its state does not check out. The states after it cannot be rebuilt.
var errChain = errors.New("the journal's chain of changes is broken")

// BrokenChain reports whether err is a journal read's broken chain: a damaged line leaves the
// states after it, up to the next full line, beyond rebuilding.
func BrokenChain(err error) bool { return errors.Is(err, errChain) }

// JournalPaths are the files that hold workflow id's journal in the state directory: its
// active file, and the directory its sealed segments go to once there are any.
func (s *Store) JournalPaths(id string) (active, sealed string) {
	f := journalFile(id)
	return filepath.Join(s.dir, filepath.FromSlash(f)), filepath.Join(s.dir, filepath.FromSlash(sealedDir(f)))
}

// replay rebuilds states from recs (oldest first, from a full line on) and returns the last
// record, its state in Snapshot. each, when set, sees every rebuilt record want is true for
// and its compact state (an error from it stops the replay and is returned); the other states
// are not built (the last one's sum checks them). A chain that breaks stops the replay: the
// last good record comes back with errChain.
func replay(recs []Record, want func(Record) bool, each func(Record, []byte) error) (*Record, error) {
	var x replayer
	for i, r := range recs {
		wanted := each != nil && want(r)
		last := i == len(recs)-1
		next, err := x.step(r, wanted || last)
		if err != nil {
			good, _ := replay(recs[:i], nil, nil)
			return good, errChain
		}
		if wanted {
			if err := each(r, next); err != nil {
				return nil, err
			}
		}
		if last {
			r.Snapshot, r.Delta = next, nil
			return &r, nil
		}
	}
	return nil, nil
}

// replayer rebuilds states one record at a time, oldest first: it holds one state (as a tree
// patched in place), however long the chain.
type replayer struct {
	tree *jnode
	p    jparser // one slab for the whole chain
	size int     // the full line's state size, about the size of every state after it
	seq  int64   // of the record stepped last
	// own parses each line with a slab of its own, so that a long chain's slabs do not keep
	// the lines before the state's (a replay of a bounded tail shares one, as it is faster).
	own bool
}

// step applies r to the state. With build, it returns r's compact state, checked by its sum.
// errChain when r does not follow the record before it, or its state does not check out: the
// states after it, up to the next full line, cannot be rebuilt.
func (x *replayer) step(r Record, build bool) ([]byte, error) {
	prev := x.seq
	x.seq = r.Seq
	var next []byte
	switch {
	case r.Snapshot != nil:
		snap := r.Snapshot
		if r.State == "" {
			// A line from before deltas: compact it as the state it stands for.
			var buf bytes.Buffer
			if err := json.Compact(&buf, r.Snapshot); err != nil {
				return x.broken()
			}
			snap = buf.Bytes()
		}
		n, err := lazyJSON(snap)
		if err != nil {
			return x.broken()
		}
		x.tree, next, x.size, x.p = n, snap, len(snap), jparser{}
	case x.tree == nil || r.Seq != prev+1:
		return x.broken()
	default:
		// Deltas patch the tree in place; the bytes handed out are copies.
		if x.own {
			x.p = jparser{}
		}
		d, err := x.p.parseDelta(r.Delta)
		if err != nil {
			return x.broken()
		}
		if x.tree, err = x.p.apply(x.tree, d); err != nil {
			return x.broken()
		}
	}
	if !build {
		return nil, nil
	}
	if next == nil {
		next = x.tree.appendTo(make([]byte, 0, x.size+x.size/8))
	}
	// The sum proves the bytes are those the writer checked before it wrote them (as a full
	// line's are trusted by it), not that a writer was Cairn: whoever uses a state as a
	// record checks it as a record (readMeta).
	if r.State != "" && stateSum(next) != r.State {
		return x.broken()
	}
	return next, nil
}

func (x *replayer) broken() ([]byte, error) {
	x.tree = nil
	return nil, errChain
}

// eachSince replays the records source hands it, oldest first, and hands fn each one after
// revision after that want is true for, with its state, one at a time: a long journal costs a
// state, not its lines; the other states are not built (the last one's sum checks them). A
// broken chain is errChain, told after the records before it, unless a full line at or before
// after+1 mends it: the states after after are rebuilt from there.
func eachSince(source func(func(Record) error) error, after int64, want func(Record) bool, fn func(Record) error) error {
	x := replayer{own: true}
	broken := false
	unchecked := "" // the sum of the last record's state, when it was not built
	err := source(func(r Record) error {
		wanted := r.Revision > after && want(r)
		next, err := x.step(r, wanted)
		if err != nil {
			broken = true
		} else if r.Snapshot != nil && r.Revision <= after+1 {
			broken = false
		}
		if broken && r.Revision > after {
			return errChain
		}
		if unchecked = ""; !wanted {
			unchecked = r.State
			return nil
		}
		r.Snapshot, r.Delta = next, nil
		return fn(r)
	})
	if err != nil {
		return err
	}
	if broken || unchecked != "" && x.tree != nil && stateSum(x.tree.appendTo(make([]byte, 0, x.size+x.size/8))) != unchecked {
		return errChain
	}
	return nil
}

// eachRecord is a source for eachSince from revision after: recs, oldest first, from the newest
// full line at or before after+1 (the records before it rebuild no state eachSince hands on).
func eachRecord(recs []Record, after int64) func(func(Record) error) error {
	for i, r := range slices.Backward(recs) {
		if r.Snapshot != nil && r.Revision <= after+1 {
			recs = recs[i:]
			break
		}
	}
	return func(fn func(Record) error) error {
		for _, r := range recs {
			if err := fn(r); err != nil {
				return err
			}
		}
		return nil
	}
}

// anyRecord wants every record.
func anyRecord(Record) bool { return true }

// tailRecords reads a journal file backwards from its end (readBack) and returns its verified
// records, oldest first, from the newest one for which stop is true (or from the first line).
// With peek, only the last record comes back, with Seq and Revision read from its prefix when
// that is enough; without events, records come back without their event. With scratch, the
// records point into *scratch (see readBack).
func (s *Store) tailRecords(file string, stop func(Record) bool, peek, events bool, scratch *[]byte) ([]Record, error) {
	var rev []Record
	err := s.readBack(file, 64<<10, scratch, func(body []byte, _ bool) bool {
		rev = rev[:0]
		for len(body) > 0 {
			j := bytes.LastIndexByte(body, '\n')
			line := body[j+1:]
			if peek {
				if seq, r, ok := peekRecord(line); ok {
					rev = []Record{{Seq: seq, Revision: r}}
					return true
				}
			}
			if r, err := decodeRecord(line, events); err == nil {
				rev = append(rev, r)
				if stop(r) {
					return true
				}
			}
			body = body[:max(j, 0)]
		}
		return false
	})
	if err != nil {
		return nil, err
	}
	slices.Reverse(rev)
	return rev, nil
}

// readBack reads file backwards from its end in windows growing fourfold from window, and
// calls lines with each window's whole lines, up to its last newline and after its first one
// unless the window starts the file (whole), until lines returns true or a window starts the
// file. A missing file has no lines. With scratch, the windows are read into *scratch, grown as
// needed.
func (s *Store) readBack(file string, window int64, scratch *[]byte, lines func(body []byte, whole bool) bool) error {
	f, st, err := durable.OpenRead(s.fs, file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	size := st.Size()
	for ; ; window *= 4 {
		start := max(size-window, 0)
		var buf []byte
		switch {
		case scratch == nil:
			buf = make([]byte, size-start)
		case int64(cap(*scratch)) >= size-start:
			buf = (*scratch)[:size-start]
		default:
			buf = make([]byte, size-start)
			if len(buf) <= 1<<20 {
				*scratch = buf
			}
		}
		if n, err := f.ReadAt(buf, start); err != nil && !(err == io.EOF && n == len(buf)) {
			return err
		}
		var body []byte
		if end := bytes.LastIndexByte(buf, '\n'); end >= 0 {
			body = buf[:end]
			if start > 0 {
				// The window's first line may be cut; only lines after a newline are whole.
				if i := bytes.IndexByte(body, '\n'); i >= 0 {
					body = body[i+1:]
				} else {
					body = nil
				}
			}
		}
		if lines(body, start == 0) || start == 0 {
			return nil
		}
	}
}

// JournalItems returns every item the top-level array member of the active workflow id's
// states ever held, oldest first (items), reading its journal one line at a time: a long
// journal is not held whole. A journal not there holds none.
func (s *Store) JournalItems(id, member string) ([]json.RawMessage, error) {
	if err := ValidWorkflowID(id); err != nil {
		return nil, err
	}
	return s.items(journalFile(id), id, member)
}

// ArchiveItems is JournalItems over an archived workflow's journal (dir is an ArchiveInfo.Dir).
func (s *Store) ArchiveItems(dir, member string) ([]json.RawMessage, error) {
	if !archiveDirName(dir) {
		return nil, &NotFoundError{What: "archive", Name: dir}
	}
	return s.items(archiveDir+"/"+dir+"/journal.jsonl", dir, member)
}

// items returns every item the top-level array member of the states of the journal file (and
// the segments sealed from it) ever held, oldest first. For an array kept bounded by dropping
// its oldest items as new ones are appended (the workflow's phase history), that is the whole
// array as if nothing had been dropped; an array rewritten otherwise replaces the items it
// held. A chain that breaks (a damaged line) leaves out the states up to the next full line,
// from which the list goes on, joined to what came before where the two overlap, and the
// error is errChain; a read's error is returned with the items before it.
func (s *Store) items(file, id, member string) ([]json.RawMessage, error) {
	key, _ := json.Marshal(member)
	var tree *jnode
	var window, log []json.RawMessage
	var broken error
	gap := false // states were left out since window
	var seq int64
	var p jparser
	long := false // the last line parsed was long
	err := s.journalLines(file, id, math.MinInt64, func(r Record) error {
		prev := seq
		seq = r.Seq
		var err error
		switch {
		case r.Snapshot != nil:
			var buf bytes.Buffer
			if err = json.Compact(&buf, r.Snapshot); err == nil {
				tree, err = lazyJSON(buf.Bytes())
			}
			p = jparser{}
		case tree == nil || r.Seq != prev+1:
			err = errChain
		default:
			// A long line's nodes get slabs of their own: a node of the state in a slab
			// shared with them would keep that line (short lines share one, as it costs less
			// than the lines they keep).
			if next := len(r.Delta) >= 4<<10; next || long {
				p, long = jparser{}, next
			}
			var d *jnode
			if d, err = p.parseDelta(r.Delta); err == nil {
				tree, err = p.apply(tree, d)
			}
			if err == nil && !setsMember(d, key) {
				return nil // the array is window still: a heartbeat costs its own line
			}
		}
		var items []json.RawMessage
		if err == nil {
			err = tree.expand()
		}
		if x := -1; err == nil {
			if x = tree.index(key); x >= 0 && tree.vals[x].kind == '[' {
				err = tree.vals[x].expand()
				for _, v := range tree.vals[x].vals {
					items = append(items, v.bytesOf())
				}
			}
		}
		if err != nil {
			// Nothing is known of the states up to the next full line.
			tree, broken, gap = nil, errChain, true
			return nil
		}
		if gap {
			log, gap = rejoin(log, window, items), false
		} else {
			log = slide(log, window, items)
		}
		window = items
		return nil
	})
	return log, cmp.Or(err, broken)
}

// setsMember says whether delta, applied to an object, may change its member key: it replaces
// the whole value, or names key among the members it changes or deletes.
func setsMember(delta *jnode, key []byte) bool {
	if string(delta.keys[0]) != `"o"` || delta.vals[0].index(key) >= 0 {
		return true
	}
	for i := 1; i < len(delta.keys); i++ {
		if string(delta.keys[i]) == `"d"` && slices.ContainsFunc(delta.vals[i].vals, func(k *jnode) bool { return bytes.Equal(k.src, key) }) {
			return true
		}
	}
	return false
}

// rejoin adds items, the array after states that were left out, to log (whose last
// len(window) items are window, the array before them): from where items' front overlaps
// window's end, or all of them when they do not overlap (items in between are missing; none
// that is known is dropped).
func rejoin(log, window, items []json.RawMessage) []json.RawMessage {
	for k := range window {
		if len(window)-k <= len(items) && slices.EqualFunc(window[k:], items[:len(window)-k], func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
			return kept(log, items[len(window)-k:])
		}
	}
	return kept(log, items)
}

// slide adds to log (whose last len(window) items are window) the change from window to
// items: what was appended when items is window with some dropped from the front and some
// appended, else items in window's place.
func slide(log, window, items []json.RawMessage) []json.RawMessage {
	for k := 0; k <= len(window); k++ {
		if len(window)-k > len(items) {
			continue
		}
		same := slices.EqualFunc(window[k:], items[:len(window)-k], func(a, b json.RawMessage) bool { return bytes.Equal(a, b) })
		if same && (k < len(window) || len(window) == 0) {
			return kept(log, items[len(window)-k:])
		}
	}
	return kept(log[:len(log)-len(window)], items)
}

// kept appends to log a copy of each of items: an item points into the line it was read from,
// which a long journal's list would keep else.
func kept(log, items []json.RawMessage) []json.RawMessage {
	for _, it := range items {
		log = append(log, bytes.Clone(it))
	}
	return log
}
