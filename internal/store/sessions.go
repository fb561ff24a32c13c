package store

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/strictjson"
)

// StaleSessionAge is how long the session record of a client that is no longer running is kept
// (PruneSessions). By then its pid is unlikely to have been reused, and no hook can still be
// writing it: a record that young may be a new client's, written a moment ago.
const StaleSessionAge = time.Hour

// PruneSessions removes the records of Claude Code clients that have exited, which nothing else
// removes: sessions/<pid>.json whose pid is no running process (or one that took it since the
// client exited: PIDTaken) and that was last written at
// least StaleSessionAge ago, and temp files StaleTempAge old. It never touches keep's record (the
// caller's own client), names that are not <pid>.json, or anything but a regular file, and
// leaves everything alone when sessions/ is not a real directory. At most limit names are looked
// at (an lstat each, and a kill(pid, 0) for an old record), so a large backlog is cleared over
// several calls. It reports how many records it removed and the error that stopped it: a
// directory it cannot write keeps its files. Where a pid cannot be checked cheaply (Windows) it
// does nothing.
func (s *Store) PruneSessions(keep, limit int) (int, error) {
	if !canCheckPIDs {
		return 0, nil
	}
	if fi, err := s.fs.Lstat(sessionsDir); err != nil || !fi.IsDir() {
		return 0, nil // no client recorded yet, or not ours to look into
	}
	names, err := s.fs.ReadDirNames(sessionsDir)
	if err != nil {
		return 0, fmt.Errorf("reading %s in %s: %w", sessionsDir, s.dir, err)
	}
	removed := 0
	for _, n := range names[:min(max(limit, 0), len(names))] {
		file := sessionsDir + "/" + n
		if strings.HasPrefix(n, ".tmp-") {
			s.removeStaleTemp(file)
			continue
		}
		pid, ok := sessionPID(n)
		if !ok || pid == keep {
			continue
		}
		fi, err := s.fs.Lstat(file)
		// The pid is checked last, just before the removal, so a client that got it since is
		// seen alive (and its record is young anyway).
		if err != nil || !fi.Mode().IsRegular() || s.o.now().Sub(fi.ModTime()) < StaleSessionAge || !s.clientGone(file, pid) {
			continue
		}
		// Only the record looked at: one a client that took the pid wrote since (no lock
		// keeps it out) is that client's. One gone already another server pruned.
		gone, err := durable.RemoveIfSame(s.fs, file, fi)
		if err != nil {
			return removed, fmt.Errorf("removing %s in %s: %w", file, s.dir, err)
		}
		if gone {
			removed++
		}
	}
	return removed, nil
}

// sessionPID is the pid a session record's file name stands for, as WriteSession's callers
// write it: decimal, no sign, no leading zero.
func sessionPID(file string) (int, bool) {
	name, ok := strings.CutSuffix(file, ".json")
	pid, err := strconv.ParseInt(name, 10, 32)
	if !ok || err != nil || pid <= 0 || strconv.FormatInt(pid, 10) != name {
		return 0, false
	}
	return int(pid), true
}

// PIDTaken reports whether the process that has pid now started at another time than start,
// the start of the process that had it (0: not known): that one exited and this one took its
// pid. Where the platform does not tell a process's start (ProcessStart), it answers false.
func PIDTaken(pid int, start uint64) bool {
	if start == 0 {
		return false
	}
	now, ok := ProcessStart(pid)
	return ok && now != start
}

// clientGone reports whether the client whose session record is file, of pid, has exited: no
// process has its pid, or the one that has it took it since (the record's client_start).
func (s *Store) clientGone(file string, pid int) bool {
	if processGone(pid) {
		return true
	}
	var r struct {
		ClientStart uint64 `json:"client_start"`
	}
	b, err := durable.ReadFile(s.fs, file, strictjson.MaxSize)
	return err == nil && json.Unmarshal(b, &r) == nil && PIDTaken(pid, r.ClientStart)
}
