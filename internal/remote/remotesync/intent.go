package remotesync

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/store"
)

// IntentDoc is the store document that holds a lost race's replay until it is done, so that a
// sync killed between taking the remote's line and replaying this machine's changes does not
// leave them only in the conflict archive: the next sync replays them. The store's retention
// reads it to keep the conflict archive it owes from.
const IntentDoc = store.ReplayIntent

// intent is a replay owed: workflow's copy at revision Mine lost to the remote's line at
// revision Theirs, the two sharing revisions 1..Common. At is when the race was found. Lost is
// lostSum of that copy's record at Mine: the conflict archive that holds it is the one the
// adoption made, whatever the clock did since and however many archives were made after it.
type intent struct {
	Workflow string    `json:"workflow_id,omitempty"`
	Common   int64     `json:"common,omitempty"`
	Theirs   int64     `json:"theirs,omitempty"`
	Mine     int64     `json:"mine,omitempty"`
	At       time.Time `json:"at,omitzero"`
	Lost     string    `json:"lost,omitempty"`
}

// lostSum is the SHA-256 of a record without insignificant space (as sameSnapshot compares),
// in hex, or "" for one that is not JSON.
func lostSum(snapshot []byte) string {
	var c bytes.Buffer
	if json.Compact(&c, snapshot) != nil {
		return ""
	}
	sum := sha256.Sum256(c.Bytes())
	return hex.EncodeToString(sum[:])
}

func writeIntent(st *store.Store, in intent) error {
	doc, err := json.Marshal(in)
	if err != nil {
		return err
	}
	if err := st.Write(IntentDoc, doc); err != nil {
		return fmt.Errorf("recording the replay owed before taking the remote's line: %w", err)
	}
	return nil
}

func clearIntent(st *store.Store) error { return writeIntent(st, intent{}) }

// intentSlack is how much earlier than an intent without Lost (written by an earlier Cairn) an
// archive's time may be and still be the one the intent's adoption made.
const intentSlack = 2 * time.Second

// resume replays the changes an interrupted sync owed, if any: when the intent's adoption
// happened (a conflict archive of the workflow holds this machine's copy at Mine), the
// archive's changes after Common are replayed on the active line, which is also theirs. The intent is cleared once done; without an adoption it is only cleared. It
// returns the conflict replayed, or nil.
//
// An intent that cannot be read does not stop the sync: unreadableIntent sets it aside, or
// leaves it, and says which, in the notice returned.
func resume(ctx context.Context, st *store.Store, from string, replay Replayer) (*Conflict, string, error) {
	doc, err := st.Read(IntentDoc)
	if errors.Is(err, store.ErrNotFound) {
		return nil, "", nil
	}
	if err != nil {
		return nil, unreadableIntent(st, err), nil
	}
	var in intent
	if err := json.Unmarshal(doc, &in); err != nil || in.Workflow == "" {
		return nil, "", nil // none owed (or unreadable: the next lost race writes a new one)
	}
	c, err := owed(st, in, from)
	if err != nil || c == nil {
		if err != nil {
			return nil, "", err
		}
		return nil, "", clearIntent(st)
	}
	if c.Replayed, err = replay(ctx, c); err != nil {
		return nil, "", fmt.Errorf("replaying the changes an interrupted sync owed ("+NextSyncTries+"): %w", err)
	}
	return c, "", clearIntent(st)
}

// unreadableIntent deals with an intent that cannot be read, and says what it did. The replay
// it owes, if any, cannot be done: the archive to replay from and the revisions are unknown.
// That archive is one of the active workflow's conflict archives, and no owed change may be
// lost with it. While the intent stays unreadable, the store's retention keeps them all; once
// it is gone, only the newest. So the intent is set aside in quarantine (store.Write moves a
// damaged document there) only when the active workflow has at most one conflict archive;
// otherwise, or when it cannot be moved (an I/O error, not a regular file), it stays where it
// is, and the next sync says so again.
func unreadableIntent(st *store.Store, why error) string {
	const file = IntentDoc + ".json"
	// The store's words for it ("... was left as it is: ...") would not stay true: the cause.
	why = cmp.Or(errors.Unwrap(why), why)
	var dirs []string
	w, err := st.ReadWorkflow()
	if err == nil {
		var archives []store.ArchiveInfo
		if archives, err = st.ListArchives(); err == nil {
			for _, a := range archives {
				if a.WorkflowID == w.ID && a.Reason == "conflict" {
					dirs = append(dirs, "archive/"+a.Dir)
				}
			}
		}
	} else if errors.Is(err, store.ErrNotFound) {
		err = nil // no workflow active: no replay is owed on it
	}
	if err != nil {
		return fmt.Sprintf("%s, the replay an interrupted sync owed, cannot be read (%v); it was left as it is, and so are the workflow's conflict archives, one of which may hold changes of this machine's that were not replayed (which ones is not known: %v)", file, why, err)
	}
	if len(dirs) <= 1 {
		held := "no conflict archive of the active workflow holds changes to replay"
		if len(dirs) == 1 {
			held = "the changes it owed, if any, are in " + dirs[0] + ", kept, and were not replayed: compare it with the workflow (cairn show)"
		}
		if err := clearIntent(st); err == nil {
			return fmt.Sprintf("%s, the replay an interrupted sync owed, could not be read (%v) and was set aside in quarantine/; %s", file, why, held)
		}
	}
	if len(dirs) == 0 {
		return fmt.Sprintf("%s, the replay an interrupted sync owed, cannot be read (%v) and could not be set aside; it was left as it is, and syncs go on without it: no conflict archive of the active workflow holds changes to replay", file, why)
	}
	return fmt.Sprintf("%s, the replay an interrupted sync owed, cannot be read (%v); it was left as it is, so that the active workflow's conflict archives (%s) are all kept: one of them may hold changes of this machine's that were not replayed. They stay kept while %s is there; compare them with the workflow (cairn show)", file, why, strings.Join(dirs, ", "), file)
}

// errFound stops a read that found what it looked for.
var errFound = errors.New("found")

// owed rebuilds the conflict an intent describes, or nil when its adoption did not happen; from
// is the remote the line was taken from.
func owed(st *store.Store, in intent, from string) (*Conflict, error) {
	w, err := st.ReadWorkflow()
	if errors.Is(err, store.ErrNotFound) || err == nil && w.ID != in.Workflow {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if w.Revision < in.Theirs || in.Common < 1 || in.Common >= in.Mine {
		return nil, nil
	}
	// All of them: retention may keep more archives than any window, and only an intent
	// left owed (rare) gets here.
	archives, err := st.ListArchives()
	if err != nil {
		return nil, err
	}
	// An archive's revision Common, and lostSum of its revision Mine, read one at a time.
	read := func(dir string) (base []byte, sum string, err error) {
		line, err := archiveLine(st, dir, in.Workflow, in.Common-1, in.Mine)
		if err == nil {
			err = line(func(e Entry) error {
				switch e.Revision {
				case in.Common:
					base = e.Snapshot
				case in.Mine:
					sum = lostSum(e.Snapshot)
				}
				return nil
			})
		}
		return base, sum, err
	}
	var info *store.ArchiveInfo
	var base []byte
	var readErr error
	for _, a := range archives { // newest first, in the order they were made
		if a.WorkflowID != in.Workflow || a.Reason != "conflict" {
			continue
		}
		if in.Lost == "" {
			// Written by an earlier Cairn: the newest conflict archive, dated after it.
			if a.Revision == in.Mine && !a.At.Before(in.At.Add(-intentSlack)) {
				info = &a
			}
			break
		}
		if a.Revision != in.Mine {
			continue
		}
		b, sum, err := read(a.Dir)
		if err != nil {
			readErr = cmp.Or(readErr, err)
			continue
		}
		if sum == in.Lost {
			info, base = &a, b
			break
		}
	}
	if info == nil {
		// An archive that could not be read may be the one: the next sync tries again.
		return nil, readErr
	}
	if base == nil {
		if base, _, err = read(info.Dir); err != nil {
			return nil, err
		}
	}
	var won *store.Record // revision Theirs, read alone: work may have gone on long since
	if err := st.EachJournalSince(in.Workflow, in.Theirs-1, func(r store.Record) error { won = &r; return errFound }); !errors.Is(err, errFound) {
		return nil, err
	}
	if won.Revision != in.Theirs {
		return nil, nil
	}
	// Theirs is the active line as it is now, not as it was adopted: a change made here since
	// (the sync was killed, and work went on) was acknowledged after the lost ones, so where
	// it changed the same thing it stands and the lost change is left out.
	c := &Conflict{Common: in.Common, Archive: *info, Lost: int(in.Mine - in.Common), Base: base, Theirs: w.Data, st: st}
	c.wonBy(remoteEvent(won.Event, from), won.Snapshot)
	return c, nil
}
