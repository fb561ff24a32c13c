package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/fsx"
)

// ArchiveInfo describes one archived workflow.
type ArchiveInfo struct {
	Dir        string    `json:"dir"` // under archive/, e.g. "apex-20261122T173000Z-3f9a-20261123T101500.000Z"
	WorkflowID string    `json:"workflow_id"`
	Reason     string    `json:"reason"` // completed, expired, replaced, conflict, ...
	At         time.Time `json:"at"`
	Revision   int64     `json:"revision"`
}

const archiveStamp = "20060102T150405.000Z"

// Archive moves the active workflow's snapshot and journal into archive/<workflow_id>-<utc>/
// (archive/conflict-<workflow_id>-<utc>/ when reason is "conflict", as seed 004 does), under
// the workflow lock, so that no workflow is active afterwards. It then applies retention: the
// newest N archives are kept (DefaultRetention, or WithRetention) and older archive
// directories are removed. That pruning is the only deletion the store ever makes; the active
// workflow is never touched by it. A missing active workflow is a *NotFoundError.
func (s *Store) Archive(reason string) (ArchiveInfo, error) {
	if err := ValidName(reason); err != nil {
		return ArchiveInfo{}, fmt.Errorf("archive reason: %w", err)
	}
	unlock, err := s.lock("workflow")
	if err != nil {
		return ArchiveInfo{}, err
	}
	defer unlock()
	w, _, err := s.loadLocked()
	if err != nil {
		return ArchiveInfo{}, err
	}
	info, err := s.archiveLocked(w.ID, w.Revision, reason, nil)
	if err != nil {
		return info, err
	}
	return info, s.prune()
}

// ArchiveRecord files a workflow record that is not the active one (the losing side of a
// conflict, a replaced import) as an archive, without touching the active workflow, then
// applies retention as Archive does.
func (s *Store) ArchiveRecord(doc []byte, reason string) (ArchiveInfo, error) {
	if err := ValidName(reason); err != nil {
		return ArchiveInfo{}, fmt.Errorf("archive reason: %w", err)
	}
	if err := CheckDocument(doc); err != nil {
		return ArchiveInfo{}, fmt.Errorf("record not archived: %w", err)
	}
	m, err := readMeta(doc)
	if err != nil {
		return ArchiveInfo{}, fmt.Errorf("record not archived: %w", err)
	}
	unlock, err := s.lock("workflow")
	if err != nil {
		return ArchiveInfo{}, err
	}
	defer unlock()
	info, err := s.archiveLocked(m.id, m.rev, reason, doc)
	if err != nil {
		return info, err
	}
	return info, s.prune()
}

// archiveLocked builds the archive directory. With doc nil it moves the active snapshot and
// journal; the snapshot's rename is the commit point, so a crash before it leaves the
// workflow active (its journal may already be in the archive: later changes start a new one).
func (s *Store) archiveLocked(id string, rev int64, reason string, doc []byte) (ArchiveInfo, error) {
	now := s.o.now().UTC()
	info := ArchiveInfo{WorkflowID: id, Reason: reason, At: now, Revision: rev}
	if err := s.mkdir(archiveDir); err != nil {
		return info, err
	}
	base := id + "-" + now.Format(archiveStamp)
	if reason == "conflict" {
		base = "conflict-" + base
	}
	info.Dir = base
	for i := 2; ; i++ {
		err := s.fs.Mkdir(archiveDir+"/"+info.Dir, 0o700)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || i > 100 {
			return info, s.writeErr(archiveDir+"/"+info.Dir, err)
		}
		info.Dir = base + "-" + strconv.Itoa(i)
	}
	dir := archiveDir + "/" + info.Dir
	if err := s.fs.SyncDir(archiveDir); err != nil {
		return info, s.writeErr(archiveDir, err)
	}
	metaDoc, _ := json.Marshal(info)
	if err := fsx.WriteFile(s.fs, dir+"/archive.json", metaDoc, 0o600); err != nil {
		return info, s.writeErr(dir+"/archive.json", err)
	}
	if doc != nil {
		if err := fsx.WriteFile(s.fs, dir+"/"+WorkflowFile, doc, 0o600); err != nil {
			return info, s.writeErr(dir+"/"+WorkflowFile, err)
		}
	} else {
		jf := journalFile(id)
		// The journal must leave journal/ before the snapshot goes, or a later read would
		// rebuild the archived workflow from it.
		if _, err := s.fs.Lstat(jf); err == nil {
			if err := s.fs.Rename(jf, dir+"/journal.jsonl"); err != nil {
				return info, s.writeErr(jf, err)
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return info, s.writeErr(jf, err)
		}
		if err := s.fs.Rename(WorkflowFile, dir+"/"+WorkflowFile); err != nil {
			return info, s.writeErr(WorkflowFile, err)
		}
		for _, d := range []string{dir, journalDir, "."} {
			if err := s.fs.SyncDir(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return info, s.writeErr(d, err)
			}
		}
	}
	line, _ := json.Marshal(info)
	if _, err := fsx.AppendLine(s.fs, archiveIndex, line, true); err != nil {
		return info, s.writeErr(archiveIndex, err)
	}
	return info, nil
}

// parseArchiveDir reads the time from an archive directory name; ok is false for anything
// else found in archive/.
func parseArchiveDir(name string) (id string, at time.Time, ok bool) {
	n := len(archiveStamp)
	rest := name
	// A "-2" style suffix for archives made in the same millisecond.
	if i := strings.LastIndexByte(rest, '-'); i > 0 && len(rest)-i <= 4 {
		if _, err := strconv.Atoi(rest[i+1:]); err == nil {
			rest = rest[:i]
		}
	}
	if len(rest) < n+2 || rest[len(rest)-n-1] != '-' {
		return "", time.Time{}, false
	}
	at, err := time.Parse(archiveStamp, rest[len(rest)-n:])
	if err != nil {
		return "", time.Time{}, false
	}
	return strings.TrimPrefix(rest[:len(rest)-n-1], "conflict-"), at, true
}

// prune keeps the newest s.o.retention archive directories and rewrites the index to match.
// Only directories whose names parse as archives are considered; anything else is left.
func (s *Store) prune() error {
	names, err := s.fs.ReadDirNames(archiveDir)
	if err != nil {
		return s.writeErr(archiveDir, err)
	}
	type entry struct {
		name string
		at   time.Time
	}
	var all []entry
	for _, n := range names {
		if _, at, ok := parseArchiveDir(n); ok {
			all = append(all, entry{n, at})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if !all[i].at.Equal(all[j].at) {
			return all[i].at.After(all[j].at)
		}
		return all[i].name > all[j].name
	})
	keep := all[:min(len(all), s.o.retention)]
	for _, e := range all[len(keep):] {
		if err := s.fs.RemoveAll(archiveDir + "/" + e.name); err != nil {
			return s.writeErr(archiveDir+"/"+e.name, err)
		}
	}
	// Rewrite the index to the kept archives, reading the few that the index lacks.
	index := map[string]ArchiveInfo{}
	for _, a := range s.readIndex() {
		index[a.Dir] = a
	}
	var buf []byte
	for i := len(keep) - 1; i >= 0; i-- {
		e := keep[i]
		a, ok := index[e.name]
		if !ok {
			a = ArchiveInfo{Dir: e.name, At: e.at, Reason: "unknown"}
			a.WorkflowID, _, _ = parseArchiveDir(e.name)
			if strings.HasPrefix(e.name, "conflict-") {
				a.Reason = "conflict"
			}
			if b, err := fsx.ReadFile(s.fs, archiveDir+"/"+e.name+"/archive.json", 64<<10); err == nil {
				var m ArchiveInfo
				if json.Unmarshal(b, &m) == nil && m.Reason != "" {
					a = m
					a.Dir = e.name
				}
			}
		}
		line, _ := json.Marshal(a)
		buf = append(append(buf, line...), '\n')
	}
	return s.writeErr(archiveIndex, fsx.WriteFile(s.fs, archiveIndex, buf, 0o600))
}

func (s *Store) readIndex() []ArchiveInfo {
	data, err := fsx.ReadFile(s.fs, archiveIndex, 16<<20)
	if err != nil {
		return nil
	}
	var out []ArchiveInfo
	for _, l := range ParseLines(data, MaxLogLine).Lines {
		var a ArchiveInfo
		if json.Unmarshal(l, &a) == nil && a.Dir != "" {
			out = append(out, a)
		}
	}
	return out
}

// ListArchives returns the archives, newest first, from archive/index.jsonl: it never lists
// the archive directory, so its cost does not grow with stray directories there.
func (s *Store) ListArchives() ([]ArchiveInfo, error) {
	out := s.readIndex()
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.After(out[j].At) })
	return out, nil
}

// ReadArchive returns an archived workflow's snapshot and verified journal (the journal is
// empty when the archive has none). dir is an ArchiveInfo.Dir.
func (s *Store) ReadArchive(dir string) ([]byte, Journal, error) {
	if _, _, ok := parseArchiveDir(dir); !ok || strings.ContainsAny(dir, `/\`) || strings.Contains(dir, "..") {
		return nil, Journal{}, &NotFoundError{What: "archive", Name: dir}
	}
	data, err := fsx.ReadFile(s.fs, archiveDir+"/"+dir+"/"+WorkflowFile, 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Journal{}, &NotFoundError{What: "archive", Name: dir}
	}
	if err != nil {
		return nil, Journal{}, err
	}
	j, err := s.readJournalFile(archiveDir+"/"+dir+"/journal.jsonl", dir)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return data, j, err
	}
	return data, j, nil
}
