package store

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/strictjson"
	"github.com/cairn-dev/cairn/internal/textsafe"
)

// A collection is a directory of NAME.json documents.
type collection struct {
	what string // for messages
	dir  string // "." for the state directory itself
	// own: every name read is one Cairn's code makes (a constant, a pid), never one from
	// outside, so a missing document's error repeats it unscanned: the scan's first use costs
	// a hook process most of a millisecond, and the hooks read such names every turn.
	own bool
}

var (
	documents   = collection{"document", ".", false}
	ownDocs     = collection{"document", ".", true}
	checkpoints = collection{"checkpoint", checkpointsDir, false}
	sessions    = collection{"session", sessionsDir, true}
)

func (c collection) file(name string) string {
	if c.dir == "." {
		return name + ".json"
	}
	return c.dir + "/" + name + ".json"
}

// CheckDocument applies the checks every stored document passes, in one pass of strictjson's
// tokenizer: strict JSON (size, depth, UTF-8, duplicate keys, one value) and no secret
// (secrets.ScanChecked). The error is a *strictjson.Error or a *secrets.Finding, which names the
// rule and JSON path, never the secret.
func CheckDocument(doc []byte) error {
	if len(doc) < parallelCheck {
		spans, err := strictjson.Default.AppendSpans(nil, doc, nil)
		if err != nil {
			return gateError(doc, err)
		}
		if f := secrets.ScanChecked(doc, spans); f != nil {
			return f
		}
		return nil
	}
	// A large document is checked on two cores (about a millisecond of work each for 1 MB,
	// as long as the durable replace): another goroutine scans its text for secrets while the
	// tokenizer checks it, then the strings written with escapes, handed over in runs as the
	// check finds them; this core takes a run when the other is behind.
	runs := make(chan []int, 64)
	probed := make(chan secrets.Probe, 1)
	go func() {
		text := secrets.ProbeText(doc)
		p := text
		for run := range runs {
			p = p.Or(secrets.ProbeEscaped(doc, run, &text))
		}
		probed <- p
	}()
	var p secrets.Probe
	buf := spanBufs.Get().(*[]int)
	defer spanBufs.Put(buf)
	spans, err := strictjson.Default.AppendSpans((*buf)[:0], doc, func(run []int) {
		select {
		case runs <- run:
		default: // without the text's probe, which the other core may not have yet
			p = p.Or(secrets.ProbeEscaped(doc, run, nil))
		}
	})
	if cap(spans) <= maxPooledSpans {
		*buf = spans
	}
	close(runs)
	p = p.Or(<-probed) // also on an error: doc is the caller's once this returns
	if err != nil {
		return gateError(doc, err)
	}
	if f := p.Finish(doc); f != nil {
		return f
	}
	return nil
}

// checkChange is CheckDocument for next, a change of the document old (nil for none): text of
// a secret's shape old holds already (kept before a rule found it, or written by hand) does not
// refuse it, only text the change brings in does (keptOut: next is scanned again with what old
// keeps put out of the way).
func checkChange(old, next []byte) error {
	err := CheckDocument(next)
	if _, ok := errors.AsType[*secrets.Finding](err); !ok || strictjson.Check(next) != nil { // a repeated key: decoding keeps one of its values
		return err
	}
	out := keptOut(old)
	if out == nil {
		return err
	}
	n, _ := scrubbed(next, out)
	return CheckDocument(n)
}

// checkText is checkChange for text, an event's detail, with the same rule: a task's is JSON,
// and a sync's is text that ends with the remote's event it quotes, JSON from its first '{' or
// '[' on. The secret it returns is one of text but those old holds (keptOut, in the JSON).
func checkText(old []byte, text string) *secrets.Finding {
	f := secrets.ScanString(text)
	if f == nil {
		return nil
	}
	i := quotedJSON(text)
	if i < 0 {
		return f
	}
	out := keptOut(old)
	if out == nil {
		return f
	}
	n, _ := scrubbed([]byte(text[i:]), out)
	return cmp.Or(secrets.ScanString(text[:i]+string(n)), secrets.ScanJSON(n))
}

// quotedJSON is where the JSON an event's detail ends with starts (checkText), -1 for none.
func quotedJSON(text string) int {
	i := strings.IndexAny(text, "{[")
	if i < 0 || strictjson.Check([]byte(text[i:])) != nil {
		return -1
	}
	return i
}

// cutDetail is detail cut to MaxEventDetail bytes. The JSON it ends with (quotedJSON) stays
// JSON, so a sync's quote of it is checked as it was: its strings are cut to the most runes
// that fit (secrets.Clip), one holding a secret to "…" (cut, a kept one would be new). Other
// text, or JSON that does not fit so, is cut between characters, before a word the cut would
// make a secret of (secrets.Cut: a token glued to more text), as is a detail far longer than
// any Cairn quotes (a remote's), whose every fit would scan all its strings again.
func cutDetail(detail string) string {
	if i := quotedJSON(detail); i >= 0 && len(detail) <= 8*MaxEventDetail {
		clip := func(n int) string {
			j, _ := scrubbed([]byte(detail[i:]), func(s, _ string, key bool) string {
				switch c := secrets.Clip(s, n); {
				case key || c == s:
					return s
				case secrets.ScanString(s) != nil:
					return textsafe.Ellipsis
				default:
					return c
				}
			})
			return detail[:i] + string(j)
		}
		if n := sort.Search(MaxEventDetail, func(n int) bool { return len(clip(n+1)) > MaxEventDetail }); n > 0 {
			return clip(n)
		}
	}
	i := MaxEventDetail
	for !utf8.RuneStart(detail[i]) {
		i--
	}
	return secrets.Cut(detail, detail[:i])
}

// keptOut is the rule checkChange and checkText share: what of old, a record, is put out of
// the way (made "") in a change of it before the change is scanned again, nil when old holds no
// secret (or is no JSON). It is each string of a secret's shape old holds (as a value or a key),
// and each value whose member is one ("password": "…") wherever it stands with that name: so a
// secret the change brings in is found, beside a kept one or a name old holds. When old holds a
// secret neither makes (a name and a value in strings side by side), its strings are put out of
// the way (its keys of a secret's shape) but each value old is clean without (the name): a new
// value beside it is found. Past a few scans of old, all are: text beside them is not refused.
func keptOut(old []byte) func(s, name string, key bool) string {
	var was any
	if old == nil || secrets.ScanJSON(old) == nil || decodeNumbers(old, &was) != nil {
		return nil
	}
	all, alone, members := map[string]bool{}, map[string]bool{}, map[[2]string]bool{}
	var vals []string // old's values, each once, in order
	strs(was, "", func(s, name string, key bool) string {
		if !all[s] && !key {
			vals = append(vals, s)
		}
		all[s] = true
		if secrets.ScanString(s) != nil {
			alone[s] = true
		} else if m, _ := json.Marshal(map[string]string{name: s}); name != "" && secrets.ScanJSON(m) != nil {
			members[[2]string{name, s}] = true
		}
		return s
	})
	out := func(s, name string, _ bool) string {
		if alone[s] || members[[2]string{name, s}] {
			return ""
		}
		return s
	}
	if o, _ := scrubbed(old, out); secrets.ScanJSON(o) == nil {
		return out
	}
	out = func(s, _ string, key bool) string {
		if all[s] && (!key || alone[s]) {
			return ""
		}
		return s
	}
	for _, v := range vals { // in order: a name is tried before its value
		if len(vals)*len(old) > 4<<20 {
			break // all are put out of the way
		}
		delete(all, v)
		if o, _ := scrubbed(old, out); alone[v] || secrets.ScanJSON(o) != nil {
			all[v] = true
		}
	}
	return out
}

func decodeNumbers(doc []byte, v *any) error {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	return d.Decode(v)
}

// scrubbed is doc with f applied to its strings (strs), or false when doc does not decode;
// its text is written as json.Marshal writes it, but &, < and > as they are.
func scrubbed(doc []byte, f func(s, name string, key bool) string) ([]byte, bool) {
	var v any
	if decodeNumbers(doc, &v) != nil {
		return nil, false
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(strs(v, "", f))
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), true
}

// strs is v, decoded JSON, with f applied to each string in it, each object key too (key set),
// a key f changes given a name no other key of its object has. name is the key of the member
// whose value v is, "" elsewhere (a key, an item of an array).
func strs(v any, name string, f func(s, name string, key bool) string) any {
	switch v := v.(type) {
	case string:
		return f(v, name, false)
	case []any:
		for i := range v {
			v[i] = strs(v[i], "", f)
		}
	case map[string]any:
		out := make(map[string]any, len(v))
		i := 0 // names tried go on from the last: a name longer for each made it quadratic
		for k, x := range v {
			n := f(k, "", true)
			for n != k {
				_, inV := v[n]
				if _, inOut := out[n]; !inOut && !inV {
					break
				}
				n, i = "_"+strconv.Itoa(i), i+1
			}
			out[n] = strs(x, k, f)
		}
		return out
	}
	return v
}

// gateError is strictjson's refusal of doc, or, for a repeated key, the secret doc holds
// (secrets.InRefusal).
func gateError(doc []byte, err error) error {
	if f := secrets.InRefusal(doc, err); f != nil {
		return f
	}
	return err
}

// parallelCheck is the size from which CheckDocument scans on two cores: below it, starting
// a goroutine costs more than it saves.
const parallelCheck = 64 << 10

// spanBufs holds the buffers CheckDocument gathers escaped strings' spans in.
var spanBufs = sync.Pool{New: func() any { return new([]int) }}

const maxPooledSpans = 1 << 16

// get checks the name's shape before reading and scans it for secrets (whose first use costs
// a hook about 0.1 ms) only before an error, which repeats the name, and not for a collection
// of Cairn's own names: no file holds a name ValidName refuses, since every write checks it in
// full.
func (s *Store) get(c collection, name string) ([]byte, error) {
	if err := nameShape(name, false); err != nil {
		return nil, err
	}
	file := c.file(name)
	data, err := durable.ReadFile(s.fs, file, strictjson.MaxSize)
	switch {
	case err == nil:
		if err = strictjson.Check(data); err == nil {
			return data, nil
		}
		err = fmt.Errorf("%s %s in %s is damaged and was left as it is: %w", c.what, file, s.dir, err)
	case errors.Is(err, fs.ErrNotExist):
		err = &NotFoundError{What: c.what, Name: name}
	default:
		err = s.readErr(fmt.Sprintf("%s %q", c.what, name), file, err)
	}
	if c.own {
		return nil, err
	}
	return nil, cmp.Or(ValidName(name), err)
}

// put checks and writes a document with write (durable.WriteFile or WriteFileNoSync).
func (s *Store) put(c collection, name string, doc []byte, write func(durable.FS, string, []byte, fs.FileMode) error) error {
	if err := checkPut(c, name, doc); err != nil {
		return err
	}
	return s.store(c, name, doc, write)
}

// checkPut refuses a name or a document that may not be stored.
func checkPut(c collection, name string, doc []byte) error {
	if err := ValidName(name); err != nil {
		return err
	}
	if err := CheckDocument(doc); err != nil {
		return fmt.Errorf("%s %q not saved: %w", c.what, name, err)
	}
	return nil
}

// store writes a document checkPut accepted.
func (s *Store) store(c collection, name string, doc []byte, write func(durable.FS, string, []byte, fs.FileMode) error) error {
	if c.dir != "." {
		if err := s.mkdir(c.dir); err != nil {
			return err
		}
	}
	file := c.file(name)
	return s.writeErr(file, write(s.fs, file, doc, 0o600))
}

// lockDoc takes the lock of a named document that is not reserved, and removes the temp files
// a killed writer left for it: every writer of it holds that lock.
func (s *Store) lockDoc(name string) (unlock func() error, err error) {
	if name == workflowName {
		return nil, fmt.Errorf("%q: %w: the active workflow is written through the journal (UpdateWorkflow), so its history stays complete", name, ErrReserved)
	}
	if unlock, err = s.lock(name); err == nil {
		s.cleanTemps(".", durable.TempPrefix(documents.file(name)))
	}
	return unlock, err
}

// Read returns the named state document (NAME.json in the state directory) without taking a
// lock: a concurrent write is seen completely or not at all. A missing document is a
// *NotFoundError (errors.Is(err, ErrNotFound)).
func (s *Store) Read(name string) ([]byte, error) { return s.get(documents, name) }

// ReadOwn is Read of a document whose name is a constant of Cairn's code, never one from
// outside, so an error repeats it without scanning it for secrets: the hooks read such
// documents every turn.
func (s *Store) ReadOwn(name string) ([]byte, error) { return s.get(ownDocs, name) }

// ReadJSON decodes the named document into v. found is false, with a nil error, when there is
// no such document; when found, err is the decoding's, for the caller to name the document.
// name is a constant of Cairn's code, as for ReadOwn.
func (s *Store) ReadJSON(name string, v any) (found bool, err error) {
	doc, err := s.ReadOwn(name)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, json.Unmarshal(doc, v)
}

// Write replaces the named document durably and atomically, under its lock. A damaged
// current version (not strict JSON) is moved to quarantine/ first rather than overwritten.
func (s *Store) Write(name string, doc []byte) error {
	if err := checkPut(documents, name, doc); err != nil {
		return err
	}
	_, _, err := s.update(name, true, func([]byte) ([]byte, error) { return doc, nil })
	if err != nil {
		return fmt.Errorf("document %q not saved: %w", name, err)
	}
	return nil
}

// Update is a locked read-modify-write of the named document: fn gets the current content
// (nil when there is none) and returns the new one, or nil to leave it as it is, or an error
// to abort. No other Update or Write of the same name runs in between, in any process. It
// returns what the document holds afterwards. fn runs under the lock: it must not write the
// same document itself.
func (s *Store) Update(name string, fn func(cur []byte) ([]byte, error)) ([]byte, error) {
	doc, _, err := s.update(name, false, fn)
	return doc, err
}

// UpdateOwn is Update for a document Cairn itself owns and can rebuild from nothing (never
// one a user or a tool writes, which Update leaves as it is when damaged): a damaged current
// version is moved to quarantine/ (Quarantine) and fn gets nil. The notice, nil otherwise,
// says what was set aside and where. name is one Cairn gives (a constant, never input): its
// shape is checked, and the secret scan, whose first use costs a hook most of a millisecond
// at a turn that writes nothing, is left to the write (put), which scans name and document.
func (s *Store) UpdateOwn(name string, fn func(cur []byte) ([]byte, error)) ([]byte, *Notice, error) {
	return s.update(name, true, fn)
}

func (s *Store) update(name string, own bool, fn func(cur []byte) ([]byte, error)) ([]byte, *Notice, error) {
	check := ValidName
	if own {
		check = func(name string) error { return nameShape(name, false) }
	}
	if err := check(name); err != nil {
		return nil, nil, err
	}
	unlock, err := s.lockDoc(name)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	var cur []byte
	var note *Notice
	if own {
		cur, note, err = s.readOwn(documents, name)
	} else if cur, err = s.get(documents, name); errors.Is(err, ErrNotFound) {
		err = nil
	}
	if err != nil {
		return nil, nil, err
	}
	next, err := fn(cur)
	if err != nil {
		return nil, note, err
	}
	if next == nil {
		return cur, note, nil
	}
	if err := s.put(documents, name, next, durable.WriteFile); err != nil {
		return nil, note, err
	}
	return next, note, nil
}

// readOwn reads the named document of c for UpdateOwn or a checkpoint's save, under its lock:
// nil when there is none, and a damaged one (not strict JSON, or too large) is quarantined
// and reads as none.
func (s *Store) readOwn(c collection, name string) ([]byte, *Notice, error) {
	file := c.file(name)
	cur, damage := durable.ReadFile(s.fs, file, strictjson.MaxSize)
	switch {
	case damage == nil:
		if damage = strictjson.Check(cur); damage == nil {
			return cur, nil, nil
		}
	case errors.Is(damage, fs.ErrNotExist):
		return nil, nil, nil
	case !errors.Is(damage, durable.ErrTooLarge):
		return nil, nil, fmt.Errorf("reading %s %q in %s: %w", c.what, name, s.dir, damage)
	}
	n, err := s.Quarantine(file, damage)
	if err != nil {
		return nil, nil, err
	}
	return nil, &n, nil
}

// checkpointsLock is the lock that SaveCheckpointChanged and DeleteCheckpoint hold (one for
// all checkpoints: saves are rare and take a millisecond).
const checkpointsLock = "checkpoints"

// SaveCheckpointChanged durably replaces checkpoints/NAME.json (last writer wins) and reports
// whether it held other bytes (or none) just before. The look and the save are one step under
// the checkpoints' lock: a save of another process between them would otherwise be replaced
// by this one, reported unchanged. A damaged one in its place (not strict JSON, too large) is
// moved to quarantine/ first, never overwritten, and note says where.
func (s *Store) SaveCheckpointChanged(name string, doc []byte) (changed bool, note *Notice, err error) {
	if err := checkPut(checkpoints, name, doc); err != nil {
		return false, nil, err
	}
	unlock, err := s.lock(checkpointsLock)
	if err != nil {
		return false, nil, err
	}
	defer unlock()
	prev, err := s.get(checkpoints, name)
	if fileInTheWay(err) {
		// What a load refuses in the file's place (a symlink, a FIFO) a save would replace,
		// cutting a link the user made: refused the same way, and left as it is (a directory the
		// write refuses itself).
		return false, nil, fmt.Errorf("checkpoint %q not saved: %w", name, err)
	}
	if _, bad := errors.AsType[*strictjson.Error](err); bad || errors.Is(err, durable.ErrTooLarge) {
		if prev, note, err = s.readOwn(checkpoints, name); err != nil {
			return false, nil, fmt.Errorf("checkpoint %q not saved: %w", name, err)
		}
	}
	if err := s.store(checkpoints, name, doc, durable.WriteFile); err != nil {
		if note != nil {
			// The damaged file back in its place rather than gone from it with nothing there.
			_ = s.Unquarantine(*note, checkpoints.file(name))
			note = nil
		}
		return false, note, err
	}
	return !bytes.Equal(prev, doc), note, nil
}

// CheckpointFile is the file that keeps checkpoint name as saved, relative to the state
// directory.
func CheckpointFile(name string) string { return checkpoints.file(name) }

// DocumentFile is the file that keeps document name (Get, Update), relative to the state
// directory.
func DocumentFile(name string) string { return documents.file(name) }

// LoadCheckpoint returns checkpoints/NAME.json; a missing one is a *NotFoundError.
func (s *Store) LoadCheckpoint(name string) ([]byte, error) { return s.get(checkpoints, name) }

// ScanLimit is the most of a checkpoint's file ScanCheckpointFile reads: 16 MiB, scanned in
// a fraction of a second. A larger file is not read at all.
const ScanLimit = 16 << 20

// ScanCheckpointFile scans the file of checkpoint name as text (secrets.ScanReader): a load
// that could not read it as a checkpoint (over the size a load reads, or not JSON) scanned
// nothing, and its file must not be named to whoever asked when it holds a secret. nil, nil
// only when the whole file was read and holds none; a file over ScanLimit is an error
// satisfying errors.Is(err, durable.ErrTooLarge), read or not, as is one a read cannot finish.
func (s *Store) ScanCheckpointFile(name string) (*secrets.Finding, error) {
	if err := ValidName(name); err != nil {
		return nil, err
	}
	file := checkpoints.file(name)
	f, st, err := durable.OpenRead(s.fs, file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tooLarge := &fs.PathError{Op: "scan", Path: file, Err: fmt.Errorf("%w: over %d bytes", durable.ErrTooLarge, ScanLimit)}
	if st.Size() > ScanLimit {
		return nil, tooLarge
	}
	// One byte past the limit says the file grew past it while read.
	r := &io.LimitedReader{R: f, N: ScanLimit + 1}
	found, err := secrets.ScanReader(r)
	if found == nil && err == nil && r.N == 0 {
		err = tooLarge
	}
	return found, err
}

// CheckpointSaved is when checkpoint name was last saved: its file's modification time, from
// one Lstat. It is zero when there is no such checkpoint or its file cannot be looked at (or is
// not a regular file, which no load reads): then when it was saved is not known.
func (s *Store) CheckpointSaved(name string) time.Time {
	if nameShape(name, false) != nil {
		return time.Time{}
	}
	fi, err := s.fs.Lstat(checkpoints.file(name))
	if err != nil || !fi.Mode().IsRegular() {
		return time.Time{}
	}
	return fi.ModTime()
}

// LoadCheckpointOrEmpty is LoadCheckpoint with the seeds' graceful default: a missing
// checkpoint reads as {}.
func (s *Store) LoadCheckpointOrEmpty(name string) ([]byte, error) {
	data, err := s.get(checkpoints, name)
	if errors.Is(err, ErrNotFound) {
		return []byte("{}"), nil
	}
	return data, err
}

// errPatternPath: a pattern with a '/' would match no checkpoint, and its empty list read as
// none saved. A path.ErrBadPattern, as a pattern that is no glob is.
var errPatternPath = patternError("a checkpoint name has no '/'")

type patternError string

func (e patternError) Error() string      { return string(e) }
func (patternError) Is(target error) bool { return target == path.ErrBadPattern }

// ListCheckpoints returns the names of the checkpoints matching a glob pattern (path.Match
// syntax: *, ?, [a-z]; "" matches all), sorted. It reads only the directory, never the files.
func (s *Store) ListCheckpoints(pattern string) ([]string, error) {
	if pattern == "" {
		pattern = "*"
	}
	_, err := path.Match(pattern, "")
	if err == nil && strings.Contains(pattern, "/") {
		err = errPatternPath
	}
	if err != nil {
		if f := secrets.ScanString(pattern); f != nil {
			// A refused value may be a secret pasted in error: never repeated.
			return nil, fmt.Errorf("checkpoint pattern (not repeated: it has the shape of a secret, %s): %w", f.Rule, err)
		}
		return nil, fmt.Errorf("checkpoint pattern %q: %w", pattern, err)
	}
	names, err := s.names(checkpoints)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(names))
	for _, name := range names {
		if ok, _ := path.Match(pattern, name); ok {
			out = append(out, name)
		}
	}
	return out, nil
}

// names lists the names of c's documents, sorted (nil when c's directory is not there), and
// removes the temp files killed writes left there once StaleTempAge old. It reads only the
// directory, never the files: their types come with the directory read, no stat each, and a
// directory or FIFO named like a document is none (reading it is refused), so it is not listed.
func (s *Store) names(c collection) ([]string, error) {
	entries, err := s.fs.ReadDir(c.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if e := s.notDir(c.dir, err); e != nil {
		return nil, s.readErr(c.what+"s", c.dir, e)
	}
	if err != nil {
		return nil, fmt.Errorf("listing %ss in %s: %w", c.what, s.dir, err)
	}
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, ".tmp-") {
			s.removeStaleTemp(c.dir + "/" + n)
			continue
		}
		name, ok := strings.CutSuffix(n, ".json")
		if !ok || !e.Type().IsRegular() || ValidName(name) != nil {
			continue // anything that is not ours
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out, nil
}

// WriteSession records what the SessionStart hook knows about a running client, as
// sessions/NAME.json (NAME is usually its pid). The replace is atomic but not fsynced: the
// record is advisory and rewritten at every session start, and its two fsyncs were the
// largest cost of the hook. After a power loss it may be old or unreadable, which readers
// treat as "no session recorded".
func (s *Store) WriteSession(name string, doc []byte) error {
	return s.put(sessions, name, doc, durable.WriteFileNoSync)
}

// WriteOwnSession is WriteSession of the record of the client with that pid, built only from
// values Cairn controls or has checked (no text from outside that could hold a secret): it is
// checked as strict JSON but not scanned for secrets, whose first use would cost every session
// start most of a millisecond.
func (s *Store) WriteOwnSession(pid int, doc []byte) error {
	name := strconv.Itoa(pid)
	if err := nameShape(name, false); err != nil {
		return err
	}
	if err := strictjson.Check(doc); err != nil {
		return fmt.Errorf("%s %q not saved: %w", sessions.what, name, err)
	}
	return s.store(sessions, name, doc, durable.WriteFileNoSync)
}

// Sessions lists the session records' names (sessions/NAME.json), in name order: none when
// no client is recorded.
func (s *Store) Sessions() ([]string, error) { return s.names(sessions) }

// ReadSession returns sessions/NAME.json; a missing one is a *NotFoundError.
func (s *Store) ReadSession(name string) ([]byte, error) { return s.get(sessions, name) }

// StaleTempAge is how old a temp file must be before ListCheckpoints or PruneSessions removes
// it. Checkpoint and session saves take no lock, so only a temp file no live writer can still be
// using is removed: a replace takes milliseconds, so one an hour old was left by a process that
// died mid-save.
const StaleTempAge = time.Hour

func (s *Store) removeStaleTemp(name string) {
	fi, err := s.fs.Lstat(name)
	if err != nil || !fi.Mode().IsRegular() || s.o.now().Sub(fi.ModTime()) < StaleTempAge {
		return
	}
	_ = s.fs.Remove(name) // best effort: a read-only directory keeps it
}
