package memory

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/adrg/frontmatter"
)

// writtenFile is Cairn's record, in the memory directory beside its lock, of what it last wrote
// to each learning file: the file's name and the SHA-256 of its whole content, as JSON
// ({"learnings":{"cairn-learning-x.md":"<hex>"}}). A learning's description shows its body's
// first line only, so a line someone added or changed below it is seen only against this
// record: `cairn uninstall` then keeps the file as theirs. Claude Code loads only .md files
// of the directory. Projects that share the directory share the record.
const writtenFile = ".cairn-written.json"

type writtenDoc struct {
	Learnings map[string]string `json:"learnings"`
}

// contentHash is what the record keeps of a file's content.
func contentHash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// readWritten is the record's map; empty when it is missing or not the record's JSON (it then
// proves nothing, and a learning it would have proven is kept, not removed).
func (m *Memory) readWritten() map[string]string {
	data, err := readLimited(filepath.Join(m.loc.Dir, writtenFile))
	if err != nil {
		return nil
	}
	return decodeWritten(data)
}

func decodeWritten(data []byte) map[string]string {
	var doc writtenDoc
	if json.Unmarshal(data, &doc) != nil {
		return nil
	}
	return doc.Learnings
}

// noteWritten records, under the memory lock, that Cairn's learning file name holds content
// (or, with content nil, nothing of Cairn's), keeping every other name.
func (m *Memory) noteWritten(name string, content []byte) error {
	return m.update(writtenFile, func(cur []byte, _ bool) ([]byte, error) {
		w := decodeWritten(cur)
		if w == nil {
			w = map[string]string{}
		}
		if content == nil {
			delete(w, name)
		} else {
			w[name] = contentHash(content)
		}
		return json.Marshal(writtenDoc{Learnings: w})
	})
}

// forgetWritten drops from the record, under the memory lock, every name whose file is gone
// or no longer Cairn's (changed since), and removes the record when none is left (`cairn
// uninstall`).
func (m *Memory) forgetWritten() error {
	p := filepath.Join(m.loc.Dir, writtenFile)
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	left := false
	err := m.update(writtenFile, func(cur []byte, _ bool) ([]byte, error) {
		w := decodeWritten(cur)
		for name := range w {
			if data, err := readLimited(filepath.Join(m.loc.Dir, name)); err != nil || contentHash(data) != w[name] {
				delete(w, name)
			}
		}
		left = len(w) > 0
		if !left {
			return cur, nil
		}
		return json.Marshal(writtenDoc{Learnings: w})
	})
	if err != nil || left {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return unavailable("removing "+writtenFile, err)
	}
	return nil
}

// ownership is whether a learning file is Cairn's to remove.
type ownership int

const (
	own      ownership = iota // as Cairn wrote it
	edited                    // changed since Cairn wrote it: someone's own now
	unproven                  // an older Cairn's, which kept no record, with a body it cannot check
)

// learningOwner tells whose the learning file name, holding data, is: the record's hash
// decides; without one (an older Cairn wrote it), a file as renderLearning writes it whose
// description shows its whole body (one line, not cut) is Cairn's, and a longer body, which
// someone may have added to or changed past its first line unseen, is unproven.
func learningOwner(name string, data []byte, written map[string]string) ownership {
	for n, sum := range written {
		if sameName(n, name) {
			if sum == contentHash(data) {
				return own
			}
			return edited
		}
	}
	if !asWritten(data, name) {
		return edited
	}
	var head struct {
		Description string `yaml:"description"`
	}
	body, err := frontmatter.MustParse(strings.NewReader(string(data)), &head)
	if err != nil || strings.Contains(plainBody(body), "\n") || utf8.RuneCountInString(head.Description) >= maxHookRunes+50 {
		return unproven
	}
	return own
}
