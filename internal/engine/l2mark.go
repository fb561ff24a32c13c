package engine

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cairn-dev/cairn/internal/memory"
	"github.com/cairn-dev/cairn/internal/store"
)

// l2MarkDoc keeps what Cairn's L2 (its index line in MEMORY.md and its topic file) held right
// after Cairn last wrote it, so that a rewrite by one of Claude Code's background memory
// writers can be noticed and undone (RestoreL2).
const l2MarkDoc = "l2-mark"

// markNow is the mark of L2 as it is now, after a write of ours, to replace cur; nil when it
// is cur already or L2 cannot be read (which only weakens the restore). The caller holds the
// mark's lock: read before it, another process's later line could be written and marked
// meanwhile, and this older mark would then be kept over it.
func (e *Engine) markNow(cur []byte) []byte {
	k, err := e.mem.CurrentMark()
	if err != nil || k.Empty() {
		return nil
	}
	if data := encodeMark(k); string(cur) != string(data) {
		return data
	}
	return nil
}

// RestoreL2 puts Cairn's index line and topic file back where they differ from what Cairn
// last wrote, unless Claude Code's memory consolidation holds its lock or another Cairn
// process is writing L2 (then deferred is true and the next Stop or SessionStart checks
// again; the warning then names the process). It returns what it put back ("MEMORY.md line",
// "cairn-workflow.md") and a warning when L2 could not be written.
func (e *Engine) RestoreL2() (restored []string, deferred bool, warning string) {
	restored, deferred, warning, _ = e.restoreL2(false)
	return restored, deferred, warning
}

// restoreL2 is RestoreL2. With quiet (the Stop hook, after every turn), a memory file Cairn
// leaves as it is (a symlink, a directory, a file over 4 MiB) fails the restore without a word,
// as it fails a settling's write: it lasts until the person changes the file, and a move's L2
// write says so. failed is the failure, said or not, for the log.
func (e *Engine) restoreL2(quiet bool) (restored []string, deferred bool, warning, failed string) {
	if e.memWarn != "" {
		return nil, false, "", ""
	}
	data, err := e.st.ReadOwn(l2MarkDoc)
	// The usual case, L2 as Cairn left it, is seen by encoding what L2 holds and comparing:
	// decoding the mark (1.7 KB of hex) costs a hook about three times as much.
	if held, ok := e.mem.HeldMark(); ok && err == nil && string(encodeMark(held)) == string(data) {
		return nil, false, "", ""
	}
	k, ok := decodeMark(data)
	if !ok && !errors.Is(err, store.ErrNotFound) {
		return nil, false, e.setMarkAside(), ""
	}
	if !ok || k.Empty() {
		return nil, false, "", ""
	}
	if e.mem.Holds(k) {
		return nil, false, "", "" // as Cairn left it: the usual case, no lock taken
	}
	// Restored under the mark's lock, which a writer of L2 holds until its line is marked:
	// a line of ours written but not yet marked is never taken for a foreign rewrite.
	var res memory.Restored
	var rerr error
	ran := false
	_, aside, err := e.st.UpdateOwn(l2MarkDoc, func(cur []byte) ([]byte, error) {
		ran = true
		if k, ok := decodeMark(cur); ok && !k.Empty() {
			res, rerr = e.mem.Restore(k, e.now(), processAlive)
		}
		if _, pushed := errors.AsType[*memory.PushedError](rerr); (rerr == nil || pushed) && !res.Kept.Empty() {
			// Another Cairn's write (memory.Restored.Kept): what L2 holds now is the mark,
			// also when putting the line back pushed others out (written, said below).
			return e.markNow(cur), nil
		}
		return nil, nil
	})
	switch {
	case aside != nil:
		return nil, false, aside.Message, "" // damaged since it was read: nothing to restore to
	case ran:
		err = rerr
	case isLockTimeout(err) && quiet:
		return nil, true, "", "" // another Cairn process is writing L2, and marks what it wrote
	case isLockTimeout(err):
		// Said by who holds it: no consolidation, as a deferral alone is told.
		return nil, true, "Cairn's auto-memory line is checked again later: " + withoutRetry(err.Error(), err), ""
	default:
		res, err = e.mem.Restore(k, e.now(), processAlive) // no lock to be had: as before
	}
	if p, ok := errors.AsType[*memory.PushedError](err); ok {
		warning, err = p.Error(), nil // restored: said once, by the restore that pushed them
	}
	if err != nil {
		retry, step := " (retried after the next turn)", userStep(err, "puts the line back")
		if step != "" {
			retry = ""
		}
		failed = "Cairn's auto-memory line not restored" + retry + ": " + lineErr(err, e.mem.Location().Dir) + step
		if quiet && memory.LeftAlone(err) {
			return nil, false, "", failed
		}
		return nil, false, failed, failed
	}
	if res.Index {
		restored = append(restored, memory.IndexFile+" line (restored)")
	}
	if res.Topic {
		restored = append(restored, memory.TopicFile+" (restored)")
	}
	return restored, res.Deferred, warning, ""
}

// setMarkAside moves a damaged l2-mark to quarantine/, as UpdateOwn does any document of
// Cairn's that is not JSON, and returns the notice's message ("" when another process wrote a
// good mark meanwhile, or the mark's lock cannot be had: the next Stop looks again). With no
// mark there is nothing to restore until the next L2 write marks what it wrote; a damaged
// mark kept would make every restore give up without a word.
func (e *Engine) setMarkAside() string {
	var set *store.Notice
	_, aside, _ := e.st.UpdateOwn(l2MarkDoc, func(cur []byte) ([]byte, error) {
		set = e.setNoMarkAside(cur)
		return nil, nil
	})
	return withNotice(withNotice("", aside), set)
}

// setNoMarkAside moves l2-mark to quarantine/ when cur, its content read under its lock, is
// JSON but not a mark's (UpdateOwn set aside what is not JSON), and returns the notice; nil
// when cur is a mark or missing, or the move failed.
func (e *Engine) setNoMarkAside(cur []byte) *store.Notice {
	if _, ok := decodeMark(cur); cur == nil || ok {
		return nil
	}
	return e.setAside(l2MarkDoc, "was damaged (it holds no mark)")
}

// setAside moves Cairn's document name, JSON but not what Cairn keeps there, to quarantine/, as
// UpdateOwn does one that is not JSON, and returns the notice that tells it, what it is (told)
// in its words: one a newer Cairn or another tool wrote is not told as damaged. nil when the
// move failed.
func (e *Engine) setAside(name, told string) *store.Notice {
	file := name + ".json"
	n, err := e.st.Quarantine(file, errors.New(told))
	if err != nil {
		return nil
	}
	n.Message = fmt.Sprintf("%s %s and was moved to %s, where it is kept", file, told, n.Path)
	return &n
}

// The mark's two texts are stored in hex, so that the document holds nothing a secret rule
// could match by accident; MEMORY.md's text was scanned when written.
type markDoc struct {
	IndexHex string `json:"index_hex"`
	TopicHex string `json:"topic_hex"`
}

func encodeMark(k memory.Mark) []byte {
	data, _ := json.Marshal(markDoc{IndexHex: hex.EncodeToString([]byte(k.Index)), TopicHex: hex.EncodeToString([]byte(k.Topic))})
	return data
}

func decodeMark(data []byte) (memory.Mark, bool) {
	var d markDoc
	if json.Unmarshal(data, &d) != nil {
		return memory.Mark{}, false
	}
	index, err1 := hex.DecodeString(d.IndexHex)
	topic, err2 := hex.DecodeString(d.TopicHex)
	if err1 != nil || err2 != nil {
		return memory.Mark{}, false
	}
	return memory.Mark{Index: string(index), Topic: string(topic)}, true
}
