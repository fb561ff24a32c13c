package engine

import (
	"encoding/hex"

	"github.com/cairn-dev/cairn/internal/jsonx"

	"github.com/cairn-dev/cairn/internal/memory"
)

// l2MarkDoc keeps what Cairn's L2 (its index line in MEMORY.md and its topic file) held right
// after Cairn last wrote it, so that a rewrite by one of Claude Code's background memory
// writers can be noticed and undone (RestoreL2).
const l2MarkDoc = "l2-mark"

// keepMark records L2 as it is now, after a write of ours. Failing only weakens the restore.
func (e *Engine) keepMark() {
	k, err := e.mem.CurrentMark()
	if err != nil || k.Empty() {
		return
	}
	data := encodeMark(k)
	_, _ = e.st.Update(l2MarkDoc, func(cur []byte) ([]byte, error) {
		if string(cur) == string(data) {
			return nil, nil
		}
		return data, nil
	})
}

// RestoreL2 puts Cairn's index line and topic file back where they differ from what Cairn
// last wrote, unless Claude Code's memory consolidation holds its lock (then deferred is true
// and the next Stop or SessionStart checks again). It returns what it put back ("MEMORY.md
// line", "cairn-workflow.md") and a warning when L2 could not be written.
func (e *Engine) RestoreL2() (restored []string, deferred bool, warning string) {
	if e.memWarn != "" {
		return nil, false, ""
	}
	data, err := e.st.Read(l2MarkDoc)
	if err != nil {
		return nil, false, ""
	}
	k, ok := decodeMark(data)
	if !ok || k.Empty() {
		return nil, false, ""
	}
	res, err := e.mem.Restore(k, e.now(), processAlive)
	if err != nil {
		return nil, false, "Cairn's auto-memory line not restored (retried after the next turn): " + err.Error()
	}
	if res.Index {
		restored = append(restored, memory.IndexFile+" line (restored)")
	}
	if res.Topic {
		restored = append(restored, memory.TopicFile+" (restored)")
	}
	return restored, res.Deferred, ""
}

// The mark is read and written with jsonx, as the hooks' other documents are: encoding/json's
// first use costs a hook process its reflection set-up. Its two texts are stored in hex, so
// that the document holds no string escapes (which jsonx.Check hands to encoding/json) and
// nothing a secret rule could match by accident; MEMORY.md's text was scanned when written.

func encodeMark(k memory.Mark) []byte {
	w := jsonx.NewObjectWriter(nil, false)
	w.String("index_hex", hex.EncodeToString([]byte(k.Index)))
	w.String("topic_hex", hex.EncodeToString([]byte(k.Topic)))
	return w.Close()
}

func decodeMark(data []byte) (memory.Mark, bool) {
	vs, err := jsonx.Members(data, "index_hex", "topic_hex")
	if err != nil {
		return memory.Mark{}, false
	}
	var k memory.Mark
	for i, dst := range []*string{&k.Index, &k.Topic} {
		if vs[i] == nil {
			continue
		}
		h, err := jsonx.NewReader(vs[i]).String()
		if err != nil {
			return memory.Mark{}, false
		}
		b, err := hex.DecodeString(h)
		if err != nil {
			return memory.Mark{}, false
		}
		*dst = string(b)
	}
	return k, true
}
