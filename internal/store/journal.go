package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"time"

	"github.com/cairn-dev/cairn/internal/fsx"
	"github.com/cairn-dev/cairn/internal/jsonx"
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
// record's revision, when, what, and the complete snapshot after the change.
type Record struct {
	Seq      int64           `json:"seq"`
	Revision int64           `json:"revision"`
	At       time.Time       `json:"at"`
	Event    Event           `json:"event"`
	Snapshot json.RawMessage `json:"snapshot"`
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

var journalLimits = jsonx.Limits{MaxSize: jsonx.MaxSize + 8<<10, MaxDepth: jsonx.MaxDepth + 2}

func journalFile(id string) string { return journalDir + "/" + id + ".jsonl" }

// encodeRecord writes r as one line (no newline); r.Snapshot must be compact.
func encodeRecord(r Record) []byte {
	ev, _ := json.Marshal(r.Event)
	var b bytes.Buffer
	b.Grow(len(r.Snapshot) + len(ev) + 200)
	b.WriteString(`{"seq":`)
	b.WriteString(strconv.FormatInt(r.Seq, 10))
	b.WriteString(`,"revision":`)
	b.WriteString(strconv.FormatInt(r.Revision, 10))
	b.WriteString(`,"at":"`)
	b.WriteString(r.At.UTC().Format(time.RFC3339Nano))
	b.WriteString(`","event":`)
	b.Write(ev)
	b.WriteString(`,"snapshot":`)
	b.Write(r.Snapshot)
	sum := sha256.Sum256(b.Bytes())
	b.WriteString(sumKey)
	b.WriteString(hex.EncodeToString(sum[:]))
	b.WriteString(`"}`)
	return b.Bytes()
}

// DecodeRecord verifies and decodes one journal line (without its newline).
func DecodeRecord(line []byte) (Record, error) {
	var r Record
	if err := checkSum(line); err != nil {
		return r, err
	}
	if err := journalLimits.Check(line); err != nil {
		return r, err
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return r, err
	}
	if r.Seq < 1 || r.Revision < 1 || len(r.Snapshot) == 0 {
		return r, errors.New("missing seq, revision or snapshot")
	}
	return r, nil
}

// checkSum verifies a journal line's "sum".
func checkSum(line []byte) error {
	i := bytes.LastIndex(line, []byte(sumKey))
	if i < 0 || !bytes.HasSuffix(line, []byte(`"}`)) || len(line)-2-(i+len(sumKey)) != 64 {
		return errors.New("no checksum")
	}
	want := sha256.Sum256(line[:i])
	got, err := hex.DecodeString(string(line[i+len(sumKey) : len(line)-2]))
	if err != nil || !bytes.Equal(got, want[:]) {
		return errors.New("checksum mismatch")
	}
	return nil
}

// peekRecord reads only the sequence and revision of a journal line whose checksum holds,
// from the prefix every record is written with (`{"seq":N,"revision":M,`); ok is false for
// any other shape, and the caller decodes the line in full.
func peekRecord(line []byte) (seq, rev int64, ok bool) {
	num := func(b []byte, key string) (int64, []byte, bool) {
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
	seq, rest, ok := num(line, `{"seq":`)
	if !ok {
		return 0, 0, false
	}
	rev, rest, ok = num(rest, `,"revision":`)
	if !ok || len(rest) == 0 || rest[0] != ',' || seq < 1 || rev < 1 || checkSum(line) != nil {
		return 0, 0, false
	}
	return seq, rev, true
}

// ParseJournal verifies journal data: checksums, and sequence numbers rising by one.
func ParseJournal(data []byte) Journal {
	var j Journal
	var last *Record
	for n := 1; len(data) > 0; n++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			j.Torn = 1
			break
		}
		line := data[:i]
		data = data[i+1:]
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

// ReadJournal returns the verified history of the active workflow id (journal/<id>.jsonl).
func (s *Store) ReadJournal(id string) (Journal, error) {
	if err := ValidWorkflowID(id); err != nil {
		return Journal{}, err
	}
	return s.readJournalFile(journalFile(id), id)
}

func (s *Store) readJournalFile(file, id string) (Journal, error) {
	data, err := fsx.ReadFile(s.fs, file, MaxJournalSize)
	if errors.Is(err, fs.ErrNotExist) {
		return Journal{}, &NotFoundError{What: "journal", Name: id}
	}
	if err != nil {
		return Journal{}, fmt.Errorf("reading journal %s in %s: %w", file, s.dir, err)
	}
	return ParseJournal(data), nil
}

// journalTail returns the last verified record of a journal file, reading backwards from the
// end in growing windows so a long journal costs no more than its last lines. nil when the
// file is missing or holds no valid record.
func (s *Store) journalTail(file string) (*Record, error) { return s.journalTailMode(file, false) }

// journalTailRevision is journalTail for a caller that needs the snapshot only when the
// journal is ahead of minRev: a record at or below it comes back with Seq and Revision alone,
// read from the line's prefix without decoding the snapshot.
func (s *Store) journalTailRevision(file string, minRev int64) (*Record, error) {
	r, err := s.journalTailMode(file, true)
	if err != nil || r == nil || r.Snapshot != nil || r.Revision <= minRev {
		return r, err
	}
	return s.journalTailMode(file, false)
}

func (s *Store) journalTailMode(file string, peek bool) (*Record, error) {
	f, st, err := fsx.OpenRead(s.fs, file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := st.Size()
	for window := int64(64 << 10); ; window *= 4 {
		start := max(size-window, 0)
		buf := make([]byte, size-start)
		if n, err := f.ReadAt(buf, start); err != nil && !(err == io.EOF && n == len(buf)) {
			return nil, err
		}
		if end := bytes.LastIndexByte(buf, '\n'); end >= 0 {
			body := buf[:end]
			if start > 0 {
				// The window's first line may be cut; only lines after a newline are whole.
				if i := bytes.IndexByte(body, '\n'); i >= 0 {
					body = body[i+1:]
				} else {
					body = nil
				}
			}
			for len(body) > 0 {
				j := bytes.LastIndexByte(body, '\n')
				if peek {
					if seq, rev, ok := peekRecord(body[j+1:]); ok {
						return &Record{Seq: seq, Revision: rev}, nil
					}
				}
				if r, err := DecodeRecord(body[j+1:]); err == nil {
					return &r, nil
				}
				if j < 0 {
					break
				}
				body = body[:j]
			}
		}
		if start == 0 {
			return nil, nil
		}
	}
}
