package engine

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cairn-dev/cairn/internal/secrets"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/memory"
	"github.com/cairn-dev/cairn/internal/project"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/store/migrate"
	"github.com/cairn-dev/cairn/internal/strictjson"
	"github.com/cairn-dev/cairn/internal/vars"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// Snapshot is the cheap view of the active workflow watchers compare.
type Snapshot struct {
	WorkflowID string    `json:"workflow_id,omitempty"`
	Revision   int64     `json:"revision"`
	Phase      string    `json:"phase,omitempty"`
	SessionID  string    `json:"session_id,omitempty"` // who last changed it
	PID        int       `json:"pid,omitempty"`        // and in which Claude Code client
	UpdatedAt  time.Time `json:"updated_at"`
}

// Summary is one line of `cairn list`.
type Summary struct {
	WorkflowID string    `json:"workflow_id"`
	Type       string    `json:"type"`
	Phase      string    `json:"phase"`
	Status     string    `json:"status"` // active, completed, expired, replaced, conflict, ...
	Context    string    `json:"context"`
	UpdatedAt  time.Time `json:"updated_at"`
	Archived   string    `json:"archived,omitempty"` // archive dir name
}

// Event is one journal record, for `cairn history`.
type Event struct {
	Seq      int64           `json:"seq"`
	Revision int64           `json:"revision"`
	At       time.Time       `json:"at"`
	Kind     string          `json:"kind"`
	Actor    string          `json:"actor,omitempty"`
	Session  string          `json:"session_id,omitempty"`
	Detail   json.RawMessage `json:"detail,omitempty"`
}

// Check is one line of `cairn doctor`.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"` // what to do, when not OK
}

// Snapshot is the cheap view of the active workflow that watchers compare between calls.
func (e *Engine) Snapshot() (Snapshot, error) {
	s, _, err := e.SnapshotNotices()
	return s, err
}

// SnapshotNotices is Snapshot with what the store did on its own while reading (a damaged
// snapshot set aside, the record rebuilt from the journal): the read that finds the damage is
// the only one that can tell it.
func (e *Engine) SnapshotNotices() (Snapshot, []string, error) {
	r, notices, err := e.active()
	told := messages(notices)
	if err != nil || r == nil {
		return Snapshot{}, told, err
	}
	s := Snapshot{WorkflowID: r.WorkflowID, Revision: r.Revision, Phase: r.State, UpdatedAt: r.UpdatedAt}
	if r.Owner != nil {
		s.SessionID, s.PID = r.Owner.SessionID, r.Owner.PID
	}
	return s, told, nil
}

// ListRecent returns the active workflow (if any) and the archived ones, newest first, at most
// n archives (all when n <= 0), and whether older archives were left out. The archives come from archive/index.jsonl; none is opened. With the active
// state written by a newer Cairn, the list is whole, that state a "newer" line of it, and the
// error is a *NewerStateError all the same: a caller that stops on it starts nothing over it.
func (e *Engine) ListRecent(n int) ([]Summary, bool, error) {
	out, more, _, err := e.ListRecentNotices(n)
	return out, more, err
}

// ListRecentNotices is ListRecent with what the store did on its own while reading (a damaged
// snapshot set aside, an archive in progress it could not read), for the person.
func (e *Engine) ListRecentNotices(n int) (out []Summary, more bool, notices []string, err error) {
	var r *workflow.Record
	w, err := e.st.ReadWorkflow()
	notices = messages(w.Notices)
	unreadable := false // a snapshot that is not a record this Cairn reads (a hand edit)
	if errors.Is(err, store.ErrNotFound) {
		err = nil
	} else if err == nil {
		r, err = w.Record()
		unreadable = err != nil
	}
	var damaged *store.DamagedError
	var unr *store.UnreadableError
	newer := newerState(err)
	switch {
	case newer != nil:
		// Left as it is, for a newer Cairn to resume; the archives are still listed.
		out = append(out, Summary{WorkflowID: e.newerID(), Status: "newer", Context: "written by a newer Cairn: upgrade Cairn to resume it"})
	case err == nil && r != nil:
		out = append(out, summarize(r, ""))
	case errors.As(err, &damaged):
		// On record but unreadable: listed as such, never left out.
		for _, id := range damagedIDs(damaged) {
			out = append(out, Summary{WorkflowID: id, Status: "damaged", Context: "snapshot and journal unreadable: see cairn status"})
		}
	case unreadable:
		out = append(out, Summary{WorkflowID: w.ID, Status: "unreadable", Context: "the record cannot be read: see cairn status"})
	case errors.As(err, &unr):
		ids := unr.IDs
		if len(ids) == 0 {
			ids = []string{""} // on record all the same
		}
		status, why := "damaged", "a file of its state cannot be read: see cairn status"
		if IsForeignSnapshot(err) {
			status, why = "unreadable", "its snapshot holds no workflow record this Cairn reads: see cairn status"
		}
		for _, id := range ids {
			out = append(out, Summary{WorkflowID: id, Status: status, Context: why})
		}
	case err != nil:
		return nil, false, notices, err
	}
	archives, more, skipped, err := e.st.RecentArchivesSkipped(n)
	indexed := err == nil
	if !indexed {
		// The index cannot be read (a directory or link in its place, too large): what is on
		// record is listed all the same, the archives from their directories, as show finds
		// them, and the index is said.
		dirs, derr := e.st.ArchiveDirs()
		if derr != nil {
			return out, false, notices, err
		}
		notices = append(notices, err.Error()+"; the archives are listed from their directories")
		if n > 0 && len(dirs) > n {
			dirs, more = dirs[:n], true
		}
		archives = dirs
	}
	if skipped > 0 {
		// Left out of the list, and kept in the index as it is: said, not hidden.
		notices = append(notices, fmt.Sprintf("archive/index.jsonl has %d line%s naming no archive, left out of this list and kept unchanged: look in %s", skipped, workflow.Plural(skipped), filepath.Join(e.st.Dir(), "archive", "index.jsonl")))
	}
	if indexed && !more {
		// Read to its end, the index may still not name every archive (lost, emptied, cut
		// short): those it does not are on record all the same, older than the indexed ones.
		unlisted, err := e.st.UnlistedArchives()
		if err != nil {
			return out, false, notices, err
		}
		if len(unlisted) > 0 {
			notices = append(notices, fmt.Sprintf("archive/index.jsonl does not name %d archive%s under %s: listed after the ones it names, read from the archive directories", len(unlisted), workflow.Plural(len(unlisted)), filepath.Join(e.st.Dir(), "archive")))
		}
		if n > 0 && len(archives)+len(unlisted) > n {
			unlisted, more = unlisted[:n-len(archives)], true
		}
		archives = append(archives, unlisted...)
	}
	for _, a := range archives {
		s := Summary{WorkflowID: a.WorkflowID, Status: a.Reason, UpdatedAt: a.At, Archived: a.Dir}
		if a.Type != "" {
			// The index holds the summary: no archive is opened.
			s.Type, s.Phase, s.Context = a.Type, a.Phase, a.Context
			if !a.UpdatedAt.IsZero() {
				s.UpdatedAt = a.UpdatedAt
			}
		} else if data, err := e.st.ReadArchiveRecord(a.Dir); err == nil {
			// An index line written before summaries were indexed.
			if r, err := store.ParseRecord(data); err == nil {
				s = summarize(r, a.Dir)
				s.Status = a.Reason
			}
		}
		out = append(out, s)
	}
	if newer != nil {
		return out, more, notices, newer
	}
	return out, more, notices, nil
}

// newerID is the workflow id a newer Cairn's snapshot gives, or "" when it gives none this Cairn
// takes for one.
func (e *Engine) newerID() string {
	data, err := durable.ReadPath(filepath.Join(e.st.Dir(), store.WorkflowFile), strictjson.MaxSize, false)
	var m struct {
		ID string `json:"workflow_id"`
	}
	if err != nil || json.Unmarshal(data, &m) != nil || store.ValidWorkflowID(m.ID) != nil {
		return ""
	}
	return m.ID
}

// damagedIDs are the ids of the workflows d finds on record but unreadable: those of its
// journal files, then those of its sealed journals (a workflow whose active journal is gone).
func damagedIDs(d *store.DamagedError) []string {
	if d == nil {
		return nil
	}
	ids := make([]string, 0, len(d.Journals)+len(d.Sealed))
	for _, j := range d.Journals {
		ids = append(ids, strings.TrimSuffix(filepath.Base(j), ".jsonl"))
	}
	for _, j := range d.Sealed {
		ids = append(ids, strings.TrimSuffix(filepath.Base(j), ".sealed"))
	}
	return ids
}

func summarize(r *workflow.Record, archived string) Summary {
	return Summary{WorkflowID: r.WorkflowID, Type: r.Type, Phase: r.State, Status: string(r.Status),
		Context: r.Context, UpdatedAt: r.UpdatedAt, Archived: archived}
}

// Archived is the archive show and history read an archived workflow from: its directory
// under archive/ and why it was archived, as the index says ("archived" when it says
// nothing). Both are "" for the active workflow.
type Archived struct{ Reason, Dir string }

// found is a workflow find located: its record (data), a reader of its journal's events (its
// lines without their states, a long journal's many times the record's size) for a caller that
// needs them, the journal's file (path, for a person to look at), what the person is told of
// it (notice: a newer archive's directory missing) and, for an archived one, its archive.
type found struct {
	data    []byte
	journal func() (store.Journal, error)
	path    string
	notice  string
	as      Archived
}

// find locates a workflow by id: the active one, else the newest archive of that id whose
// directory is there. It reads archive/index.jsonl once, for the archive and its reason.
func (e *Engine) find(id string) (found, error) {
	if id == "" {
		return found{}, errors.New("which workflow? give its id (cairn list shows them)")
	}
	w, activeErr := e.st.ReadWorkflow()
	if activeErr == nil && w.ID == id {
		return found{data: w.Data, journal: func() (store.Journal, error) {
			j, err := e.st.ReadJournalEvents(id)
			if err != nil && !errors.Is(err, ErrNotFound) {
				return j, err
			}
			return j, nil
		}, path: filepath.Join(e.st.Dir(), "journal", id+".jsonl")}, nil
	}
	var notice string
	archives, err := e.st.ListArchives()
	if err != nil {
		// The index cannot be read (too large, damaged): the archive's directory is found
		// without it.
		dir, _ := e.st.ArchiveDirOf(id)
		if dir == "" {
			return found{}, err
		}
		archives = []store.ArchiveInfo{{Dir: dir, WorkflowID: id}}
		notice = fmt.Sprintf("%s was read from its directory archive/%s: %v", id, dir, err)
	}
	if !slices.ContainsFunc(archives, func(a store.ArchiveInfo) bool { return a.WorkflowID == id || a.Dir == id }) {
		// Not in the index: an archive directory it does not name is on record all the same.
		if unlisted, err := e.st.UnlistedArchives(); err == nil {
			archives = append(archives, unlisted...)
		}
	}
	gone := ""
	for _, a := range archives {
		if a.WorkflowID == id || a.Dir == id {
			data, err := e.st.ReadArchiveRecord(a.Dir)
			if errors.Is(err, store.ErrNotFound) {
				// Its directory was moved or removed outside Cairn (retention drops the line at
				// the next archive): an older archive of the workflow may still be there.
				gone = cmp.Or(gone, filepath.Join(e.st.Dir(), "archive", a.Dir))
				continue
			}
			if gone != "" {
				notice = fmt.Sprintf("a newer archive of %s is listed in archive/index.jsonl, but its directory %s is missing (moved or removed outside Cairn): this is its older archive, %s; put that directory back to read the newer one", id, gone, a.Dir)
			}
			return found{data: data, journal: func() (store.Journal, error) { return e.st.ReadArchiveEvents(a.Dir) },
				path: filepath.Join(e.st.Dir(), "archive", a.Dir, "journal.jsonl"), notice: notice,
				as: Archived{Reason: cmp.Or(a.Reason, "archived"), Dir: a.Dir}}, err
		}
	}
	if gone != "" {
		return found{}, NotFoundMsg(fmt.Sprintf("%s is listed in archive/index.jsonl, but its archive directory %s is missing (moved or removed outside Cairn): put that directory back to read it", id, gone))
	}
	if activeErr != nil && !errors.Is(activeErr, ErrNotFound) {
		// It may be the active workflow, which cannot be read: that is the answer, not "no
		// such workflow".
		return found{}, stateErr(activeErr)
	}
	if activeErr != nil && len(archives) == 0 {
		return found{}, NotFoundMsg(fmt.Sprintf("no workflow %s: none is on record yet", idSaid(id)))
	}
	return found{}, NotFoundMsg(fmt.Sprintf("no workflow %s, active or archived: cairn list shows the ids", idSaid(id)))
}

// idSaid is a workflow id typed by a caller as a message names it: as typed when it is a
// valid id, so a typo shows, else (a secret, a path, a pasted paragraph) not repeated.
func idSaid(id string) string {
	if workflow.ValidID(id) == nil && secrets.ScanString(id) == nil {
		return id
	}
	return "with that id"
}

// ShowNotices returns a workflow record by id, active or archived, with its whole phase
// history (the record keeps only the newest workflow.MaxHistory entries, the journal all of
// them), with what it could not read, for the person (a record whose journal cannot be read
// is shown all the same, with the moves it keeps itself), and the archive it was read from.
func (e *Engine) ShowNotices(id string) (json.RawMessage, []string, Archived, error) {
	f, err := e.find(id)
	if f.data == nil {
		return nil, nil, Archived{}, err
	}
	data := f.data
	notices := warned(nil, f.notice, notWhole(id, data))
	r, err := store.ParseRecord(data)
	if err != nil || len(r.History) < workflow.MaxHistory {
		return data, notices, f.as, nil // every move it made is on the record: the journal adds none
	}
	var items []json.RawMessage
	if f.as.Dir != "" {
		items, err = e.st.ArchiveItems(f.as.Dir, "history")
	} else {
		items, err = e.st.JournalItems(id, "history")
	}
	if err != nil && !store.BrokenChain(err) {
		return data, append(notices, fmt.Sprintf("the journal of %s cannot be read, so the history shown is the record's own (its newest %d moves at most): %v", id, workflow.MaxHistory, err)), f.as, nil
	}
	return show(r, data, items), notices, f.as, nil
}

// notWhole says, of data, the record of id about to be shown (an archived one: the active slot
// refuses these), that this Cairn cannot read all of it: a newer Cairn's, or a document that
// holds no workflow record. "" for any other.
func notWhole(id string, data []byte) string {
	const shown = "what is shown is what this Cairn reads of it, and the record is left untouched; cairn show --json prints it as stored"
	_, err := migrate.Detect(data)
	if n, ok := errors.AsType[*migrate.NewerError](err); ok {
		return fmt.Sprintf("the record of %s was written by a newer Cairn (record version %s): %s", id, n.Version, shown)
	}
	if errors.Is(err, migrate.ErrForeign) {
		return fmt.Sprintf("the record of %s is not one this Cairn reads (%v): %s", id, err, shown)
	}
	return ""
}

// show is ShowNotices of r, read from data, with the moves its journal holds (items, its
// history's) that r no longer does.
func show(r *workflow.Record, data []byte, items []json.RawMessage) json.RawMessage {
	full := make([]workflow.HistoryEntry, len(items))
	for i, it := range items {
		if err := json.Unmarshal(it, &full[i]); err != nil {
			return data
		}
	}
	if full = joinHistory(full, r.History); len(full) <= len(r.History) {
		return data
	}
	r.History = full
	if out, err := json.Marshal(r); err == nil {
		return out
	}
	return data
}

// joinHistory is the whole history from the journal's (log) and the record's newest entries
// (recent). The journal holds them all unless a damaged line broke its last delta chain: then
// the moves after the break are missing from it until the next full line, and recent, the
// newer, goes on from where log's end overlaps its front.
func joinHistory(log, recent []workflow.HistoryEntry) []workflow.HistoryEntry {
	enc := func(h []workflow.HistoryEntry) [][]byte {
		out := make([][]byte, len(h))
		for i := range h {
			out[i], _ = json.Marshal(h[i])
		}
		return out
	}
	l, r := enc(log), enc(recent)
	for i := len(l) - len(r); i >= 0; i-- {
		if slices.EqualFunc(l[i:i+len(r)], r, bytes.Equal) {
			return log // the journal has every move the record holds
		}
	}
	for k := max(len(l)-len(r), 0); k < len(l); k++ {
		if slices.EqualFunc(l[k:], r[:len(l)-k], bytes.Equal) {
			return append(log[:k:k], recent...)
		}
	}
	return append(log[:len(log):len(log)], recent...)
}

// HistoryNotices returns a workflow's journal, oldest first, with what it left out, for the
// person (journal lines Cairn cannot read, another tool's or damaged, and gaps in the
// sequence, which the journal keeps as they are), and the archive it was read from.
func (e *Engine) HistoryNotices(id string) ([]Event, []string, Archived, error) {
	f, err := e.find(id)
	if err != nil {
		return nil, nil, Archived{}, err
	}
	j, err := f.journal()
	if err != nil {
		return nil, nil, Archived{}, err
	}
	notices := warned(nil, f.notice)
	if n := len(j.Problems); n > 0 {
		const most = 3
		why := strings.Join(j.Problems[:min(n, most)], "; ")
		if n > most {
			why += fmt.Sprintf("; +%d more", n-most)
		}
		notices = append(notices, fmt.Sprintf("the history of %s leaves out what its journal holds that Cairn cannot read, kept there as it is (%s): look at it in %s", id, why, f.path))
	}
	return events(j.Records), notices, f.as, nil
}

// HistorySince is HistoryNotices' journal of the active workflow id's changes after revision after, read back
// from the journal's end as far as they go (cairn watch names who made each change it prints).
func (e *Engine) HistorySince(id string, after int64) ([]Event, error) {
	recs, err := e.st.ReadEventsSince(id, after)
	return events(recs), err
}

// events is what History shows of journal records.
func events(recs []store.Record) []Event {
	out := make([]Event, 0, len(recs))
	for _, r := range recs {
		ev := Event{Seq: r.Seq, Revision: r.Revision, At: r.At, Kind: r.Event.Kind}
		var d eventDetail
		hide := secrets.ScanString(r.Event.Detail) != nil // a phase's name the record kept (store.checkEvent)
		if json.Unmarshal([]byte(r.Event.Detail), &d) == nil {
			if hide {
				d = eventDetail{secrets.Shown(d.Actor), secrets.Shown(d.Session), secrets.Shown(d.From), secrets.Shown(d.To), secrets.Shown(d.Note), secrets.Shown(d.Subject)}
			}
			ev.Actor, ev.Session = d.Actor, d.Session
			ev.Detail = json.RawMessage(r.Event.Detail)
			if hide {
				ev.Detail, _ = json.Marshal(d)
			}
		} else if r.Event.Detail != "" {
			ev.Detail, _ = json.Marshal(secrets.Shown(r.Event.Detail))
		}
		out = append(out, ev)
	}
	return out
}

// DoctorOptions says where the installed plugin and binaries are, for the checks that need it.
type DoctorOptions struct {
	PluginRoot string // the plugin's root (holds .claude-plugin/); "" skips the plugin checks
	BinDir     string // where cairn-mcp and the hook binaries should be
	// Foreign says what a binary is when it cannot run on this machine ("a darwin/arm64
	// binary"), else "". The executable formats are read by the caller: the hooks link this
	// package, and need not link debug/elf and its kin.
	Foreign func(path string) string
	// Outside says no project is named and none holds the working directory (cairn run in
	// $HOME, say): where no state is either, the CLI's writing commands refuse.
	Outside bool
	// GOOS is the system the binaries are for ("" for this one's): on Windows they are
	// NAME.exe, and carry no execute bits.
	GOOS string
}

// Doctor checks the install and the state: binaries, plugin files, state directory
// permissions, the memory directory, the workflow state, lock health and stale temp files.
// Each failed check says what to do.
func (e *Engine) Doctor(opt DoctorOptions) []Check {
	var out []Check
	add := func(name string, ok bool, detail, fix string) {
		c := Check{Name: name, OK: ok, Detail: detail}
		if !ok {
			c.Fix = fix
		}
		out = append(out, c)
	}
	if opt.BinDir != "" {
		goos := cmp.Or(opt.GOOS, runtime.GOOS)
		var present []string
		for _, b := range append([]string{"cairn-mcp"}, hookBinaries...) {
			p := filepath.Join(opt.BinDir, Exe(goos, b))
			fi, err := os.Stat(p)
			// Windows runs a file by its name, and Go reports no execute bits there.
			ok, detail := false, p
			switch {
			case errors.Is(err, fs.ErrNotExist):
				detail = p + " is missing"
			case err != nil:
				detail = err.Error()
			case !fi.Mode().IsRegular():
				detail = p + " is not a file"
			case goos != "windows" && fi.Mode()&0o111 == 0:
				detail = p + " is not executable"
			case fi.Size() == 0:
				// A power loss soon after an install can leave one: none to the launcher.
				detail = p + " is empty (an install cut short?)"
			default:
				ok = true
			}
			fix := "start a new session: the plugin's hooks install its binaries"
			if opt.PluginRoot != "" {
				fix = RefreshCommand(opt.PluginRoot, opt.BinDir, "")
			}
			add("binary "+b, ok, detail, fix)
			if ok {
				present = append(present, Exe(goos, b))
			}
		}
		if opt.PluginRoot != "" && len(present) > 0 {
			if fi, err := os.Stat(filepath.Join(opt.BinDir, Exe(goos, "cairn"))); err == nil && fi.Mode().IsRegular() {
				present = append(present, Exe(goos, "cairn"))
			}
			// Without the plugin's checksums there is nothing to compare, and no install can
			// help: the plugin file's check below says so, with its step.
			if _, err := os.Stat(filepath.Join(opt.PluginRoot, "release", "checksums.txt")); err == nil {
				ok, detail := stampCheck(opt.PluginRoot, opt.BinDir, present)
				add("binary stamp", ok, detail, RefreshCommand(opt.PluginRoot, opt.BinDir, ""))
			}
			if opt.Foreign != nil {
				// A set made on another OS or CPU carries the plugin's stamp all the same:
				// the launcher replaces it only once an exec of it fails (its fast path
				// looks at nothing else), so doctor names it beforehand.
				var foreign []string
				// The binary the fix runs: one that cannot run here, cairn where it is one, else
				// cairn-mcp (present names it first), a hook only where neither is; cairn where
				// the set lacks one, which the launcher installs for it.
				run := ""
				if len(present) < len(hookBinaries)+2 {
					run = "cairn"
				}
				for _, b := range present {
					if f := opt.Foreign(filepath.Join(opt.BinDir, b)); f != "" {
						foreign = append(foreign, b+" is "+f)
						if b = strings.TrimSuffix(b, ".exe"); run == "" || b == "cairn" {
							run = b
						}
					}
				}
				detail := fmt.Sprintf("%s: for this machine (%s/%s)", opt.BinDir, runtime.GOOS, runtime.GOARCH)
				if len(foreign) > 0 {
					detail = fmt.Sprintf("in %s, %s; this machine is %s/%s, so they cannot run (exit 126, Exec format error)", opt.BinDir, strings.Join(foreign, ", "), runtime.GOOS, runtime.GOARCH)
				}
				add("binary platform", len(foreign) == 0, detail, RefreshCommand(opt.PluginRoot, opt.BinDir, run)+
					"; a plugin data directory (CLAUDE_PLUGIN_DATA) or bin/ cannot be shared between machines of different OS or CPU")
			}
		}
	}
	if opt.PluginRoot != "" {
		// One fix where the plugin is: a checkout's file comes back from git; Claude Code's
		// copy of a marketplace install (no .git) comes back with the plugin.
		checkout := project.HasGit(opt.PluginRoot)
		// The launcher's files too: without them every hook ends at once, saying nothing
		// (hooks.json's "|| exit 0"), and the MCP server does not start.
		for _, f := range []string{".claude-plugin/plugin.json", "hooks/hooks.json", ".mcp.json", "skills/cairn/SKILL.md",
			"hooks/launch", "hooks/install", "release/checksums.txt"} {
			p := filepath.Join(opt.PluginRoot, f)
			data, err := durable.ReadPath(p, 1<<20, true)
			ok := err == nil
			detail := p
			fix := "reinstall the plugin: claude plugin uninstall cairn@cairn && claude plugin install cairn@cairn"
			if checkout {
				fix = "restore it from the checkout: git -C " + vars.Quote(opt.PluginRoot) + " checkout -- " + vars.Quote(f)
			}
			switch {
			case ok && strings.HasSuffix(f, ".json") && !json.Valid(data):
				ok, detail = false, p+" is not valid JSON"
			case ok && f == "hooks/launch" && cmp.Or(opt.GOOS, runtime.GOOS) != "windows":
				// .mcp.json runs it as the MCP server's command, with no shell to read it.
				if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 == 0 {
					ok, detail, fix = false, p+" is not executable, so Claude Code cannot start Cairn's MCP server", "chmod +x "+vars.Quote(p)
				}
			}
			add("plugin file "+f, ok, detail, fix)
		}
	}
	dir := e.st.Dir()
	// doctor reads only: a state directory not created yet is not created here; doctor says
	// where the first write will create it.
	missing := !e.st.Exists()
	gone := missing && projectGone(e.root)
	notProject := missing && opt.Outside && !gone
	if fi, err := os.Lstat(dir); notProject || gone {
		// the project root check says why there is none
	} else if d, _ := nearest(dir); missing && durable.LinkToNothing(d) != "" {
		add("state directory", false, d+" is "+durable.LinkToNothing(d), "create the directory it points to, or set "+project.EnvStateDir+" to a directory")
	} else if missing && errors.Is(err, fs.ErrNotExist) {
		add("state directory", creatable(dir), dir+" does not exist yet; the first write creates it", writeFix(dir))
	} else if err != nil {
		add("state directory", false, err.Error(), "check that the project directory is writable")
	} else if c, other := OwnerCheck(dir, fi); other {
		out = append(out, c)
	} else {
		perm := fi.Mode().Perm()
		add("state directory permissions", perm&0o077 == 0, fmt.Sprintf("%s is %04o", dir, perm), fixIn(dir, "make it private", "chmod 700 "+vars.Quote(dir)))
		ok, detail, fix := writable(dir), dir, writeFix(dir)
		if what, inodes := noRoom(dir); ok && what != "" {
			ok, detail, fix = false, dir+": "+what, freeStep(inodes)
		}
		add("state directory writable", ok, detail, fix+"; reads still work meanwhile")
	}
	if missing {
		// nothing on disk to check
	} else if loose := looseFiles(dir); len(loose) > 0 {
		add("state file permissions", false, strings.Join(loose, ", ")+" readable by others", fixIn(dir, "make them private", "chmod -R go-rwx "+vars.Quote(dir)))
	} else {
		add("state file permissions", true, "files are 0600", "")
	}
	if e.confBad != "" {
		add("settings", false, e.confBad, "correct it: archive_retention is a whole number; stop_blocking and approvals are true or false")
	}
	if n, set, bad := envRetention(e.cfg.Getenv); bad != "" {
		add("archive retention", false, bad, "set it to the number of archives to keep per project (0 keeps every one), or unset it")
	} else if set && n == 0 {
		add("archive retention", true, "every archive is kept (CAIRN_ARCHIVE_RETENTION is 0)", "")
	} else if n := e.conf.ArchiveRetention; !set && n != nil && *n == 0 {
		add("archive retention", true, "every archive is kept (archive_retention is 0)", "")
	}
	if e.memWarn != "" {
		// Off is no failure; any other warning is a directory that cannot be named at all, or a
		// repository's that Cairn refuses.
		fix := "set CLAUDE_PROJECT_DIR to the project's absolute path: the memory directory is named from it"
		switch {
		case e.mem.Location().Refused:
			fix = "set autoMemoryDirectory in your user settings, or " + memory.EnvCairnMemoryDir + ", to use that directory"
		case strings.Contains(e.memWarn, `="`): // a variable whose path Cairn cannot use, as VAR="value"
			before, _, _ := strings.Cut(e.memWarn, `="`)
			fix = "give " + before[strings.LastIndexByte(before, ' ')+1:] + " an absolute path"
		case strings.Contains(e.memWarn, "HOME"):
			fix = "set HOME as Claude Code has it: the memory directory is named from it"
		}
		add("auto-memory (L2)", e.memoryOff(), e.memWarn, fix+l2Retried)
	} else {
		md := e.mem.Location().Dir
		ok, detail, fix := creatable(md), md, writeFix(md)
		if why, step := e.memoryNotDir(); why != "" {
			ok, detail, fix = false, why, step
		} else if d, _ := nearest(md); ok {
			if what, inodes := noRoom(d); what != "" {
				ok, detail, fix = false, md+": "+what, freeStep(inodes)
			}
		}
		add("auto-memory (L2)", ok, detail, fix+l2Retried)
		// A MEMORY.md Cairn leaves as it is keeps every line and learning out of auto-memory, as
		// does what is in the lock's place; a cairn-workflow.md, every workflow line.
		for _, f := range []struct {
			check, file string
			err         error
		}{
			{"auto-memory index", memory.IndexFile, e.mem.IndexLeftAlone()},
			{"auto-memory topic file", memory.TopicFile, e.mem.TopicLeftAlone()},
			{"auto-memory lock", memory.LockFile, e.mem.LockLeftAlone()},
		} {
			if !memory.LeftAlone(f.err) {
				if f.file == memory.LockFile {
					if te := e.mem.StoppedHolder(); te != nil {
						add(f.check, false, te.Path+" is held "+te.Who(), te.Resume()+l2Retried)
						continue
					}
				}
				add(f.check, true, filepath.Join(md, f.file), "")
				continue
			}
			detail := f.err.Error()
			if ue, ok := errors.AsType[*memory.UnavailableError](f.err); ok {
				detail = ue.Cause() // its learnings' words are not what failed here
			}
			add(f.check, false, detail, memory.LeftAloneStep(f.err)+l2Retried)
		}
		kept, settled := memory.KeptTemps(md, e.now())
		detail = "none kept"
		if settled > 0 {
			detail = fmt.Sprintf("none kept; %d left by killed writes, which the next Cairn write settles", settled)
		}
		if len(kept) > 0 {
			var each []string
			for _, k := range kept {
				each = append(each, fmt.Sprintf("%s holds %d bytes of %s that another writer wrote and a killed Cairn write displaced", k.Name, k.Size, k.File))
			}
			detail = "in " + md + ": " + strings.Join(each, "; ")
		}
		add("auto-memory temp files", len(kept) == 0, detail,
			"Cairn keeps them rather than guess which lines win: compare each with the file it names (diff) and copy back into that file the lines it is missing; the next Cairn write then removes the temp file, whose lines that file holds")
	}
	if !missing {
		// Read without repairing: doctor changes nothing.
		if c, ok := e.stateCheck(dir); !ok {
			out = append(out, c)
		}
		out = append(out, e.lockChecks(dir)...)
		if inPlace := filesInPlace(dir); len(inPlace) > 0 {
			add("checkpoint and log files", false, strings.Join(inPlace, "; "),
				afterRemount(dir, "move each out of the state directory (it may be someone's): the next save writes the file anew"))
		}
		stale := staleTemps(dir, e.now())
		rm := "rm -f --"
		for _, p := range stale {
			rm += " " + vars.Quote(filepath.Join(dir, p))
		}
		add("stale temp files", len(stale) == 0, cmp.Or(strings.Join(stale, ", "), "none"), fixIn(dir, "left by interrupted writes, they hold no state of record", rm))
		// What was set aside, told once in a notice: where to find it again. Information, not
		// a failure: the files are kept to be read.
		held, newest := e.st.Quarantined(maxQuarantineShown)
		for i, q := range newest {
			newest[i] = filepath.Join(dir, filepath.FromSlash(q))
		}
		detail := "none"
		switch {
		case held == 1:
			detail = "1 file set aside: " + newest[0]
		case held > 1:
			detail = fmt.Sprintf("%d files set aside, newest first: %s", held, strings.Join(newest, ", "))
			if more := held - len(newest); more > 0 {
				detail += fmt.Sprintf(", and %d more in %s", more, filepath.Join(dir, "quarantine"))
			}
		}
		add("quarantine", true, detail, "")
	}
	root := e.root
	if gone {
		add("project root", false, (&ProjectGoneError{Root: root}).Error()+", and cairn commands that write refuse", ProjectGoneStep)
	} else if notProject {
		add("project root", false, NoGit(root)+", and no Cairn state is there, so it is not a project and cairn commands that write refuse here",
			NotAProjectStep)
	} else {
		if !e.inGit {
			root += " " + LaunchRoot(root)
		}
		add("project root", true, root, "")
	}
	// The loaded definitions' doubts are named beside whatever else fails the check, so that
	// fixing that is not followed by another run of doctor to learn of them; the notes of the
	// passing line (no faults) stay beside them for the same reason.
	// The active workflow's lost phase too: it is why the workflow cannot move.
	doubts := e.definitionDoubts()
	notes := e.definitionNotes()
	lost, lostFix, lostFile := e.phaseNotDefined(dir, missing)
	if defErrs := e.definitionErrors(); len(defErrs) > 0 {
		fix := "fix the files named (the others load fine)"
		if e.definitionsDirTrouble() {
			// None of the user's loads: the directory itself is in the way (unreadable, or a file).
			fix = "make " + e.workflow + " a directory this user can read (Cairn leaves what is there untouched); the built-in definitions load meanwhile"
		}
		switch {
		case lost == "":
		case lostFile != "" && slices.ContainsFunc(defErrs, func(s string) bool { return strings.Contains(s, lostFile+":") }):
			// The type's own file is there and named: fixing it is the step, not restoring it.
			defErrs, fix = append(defErrs, lost), fix+"; the active workflow cannot move until "+lostFile+" loads"
		default:
			defErrs, fix = append(defErrs, lost), fix+"; "+lostFix
		}
		add("workflow definitions", false, strings.Join(slices.Concat(defErrs, doubts, notes), "; "), fix)
	} else if lost != "" {
		add("workflow definitions", false, strings.Join(slices.Concat([]string{lost}, doubts, notes), "; "), lostFix)
	} else if len(doubts) > 0 {
		add("workflow definitions", false, strings.Join(slices.Concat(doubts, notes), "; "), "fix the lines named; meanwhile the definitions load as they are")
	} else {
		add("workflow definitions", true, strings.Join(slices.Concat([]string{strings.Join(e.definitions().Names(), ", ")}, notes), "; "), "")
	}
	return out
}

// definitionNotes are what doctor says of the definitions that is no fault: files skipped as
// documentation (said here only, not at every start: a README beside the definitions is no
// fault), and gates some ways pass by (one may be meant).
func (e *Engine) definitionNotes() []string {
	var notes []string
	if docs := e.definitions().Skipped(); len(docs) > 0 {
		names := make([]string, len(docs))
		for i, p := range docs {
			names[i] = workflow.ShownPath(filepath.Base(p))
		}
		notes = append(notes, "skipped as documentation (no front matter): "+strings.Join(names, ", "))
	}
	for _, n := range e.definitions().Names() {
		d, _ := e.definitions().Lookup(n)
		if route := d.GatelessRoute(); route != nil {
			notes = append(notes, fmt.Sprintf("%s completes with no approval by %s, which enters no gate (%s)", n, strings.Join(route, " -> "), strings.Join(d.Approvals, ", ")))
		}
	}
	return notes
}

// Exe is the file name of the binary name on goos: name.exe on Windows, as the release's zip
// and hooks/install name it.
func Exe(goos, name string) string {
	if goos == "windows" {
		return name + ".exe"
	}
	return name
}

// maxQuarantineShown is how many of the files quarantine/ holds doctor names, newest first.
const maxQuarantineShown = 3

// phaseNotDefined is the resume check's finding, and the step that lets the workflow move,
// when the active workflow's type has no definition any more (its file removed, or naming
// another type) or its phase is not a phase of its definition, read from the snapshot without
// repairing (doctor changes nothing), and the definition file it names; "" otherwise.
func (e *Engine) phaseNotDefined(dir string, missing bool) (finding, fix, file string) {
	if missing {
		return "", "", ""
	}
	data, err := durable.ReadPath(filepath.Join(dir, store.WorkflowFile), strictjson.MaxSize, false)
	if err != nil {
		return "", "", ""
	}
	r, err := store.ParseRecord(data)
	if err != nil || r.Status != workflow.StatusActive {
		return "", "", ""
	}
	def, _ := e.definitionFor(r)
	for _, f := range workflow.Check(workflow.CheckInput{Def: def, Record: r}) {
		switch f.Code {
		case workflow.FindingUnknownPhase:
			return "workflow " + r.WorkflowID + ": " + f.Text, "put the phase back in " + def.Source + ": the workflow cannot move from it until then", ""
		case workflow.FindingNoDefinition:
			file := filepath.Join(e.workflow, workflow.DefinitionFile(workflow.NormalizeName(r.Type)))
			return "workflow " + r.WorkflowID + ": " + f.Text, fmt.Sprintf("restore the definition of type %s (%s): the workflow cannot move until it loads",
				workflow.Quote(r.Type), file), file
		}
	}
	return "", "", ""
}

// stateCheck is doctor's check of the active workflow's state, read without repairing: ok
// when there is nothing to say. A snapshot that cannot be read is judged by the journal the
// next command would rebuild it from.
func (e *Engine) stateCheck(dir string) (c Check, ok bool) {
	const name = "workflow state"
	snap := filepath.Join(dir, store.WorkflowFile)
	data, err := durable.ReadPath(snap, strictjson.MaxSize, false)
	var why string
	var inPlace Check // what is in the snapshot's place cannot be read: the step without a journal
	quarantine := " and keeps the damaged file in quarantine/"
	switch {
	case err == nil:
		_, err := migrate.Detect(data)
		if n := newerState(err); n != nil {
			return Check{Name: name, Detail: n.Error(), Fix: "install a Cairn newer than " + cairn.Version() + "; do not start a new workflow over this one"}, false
		}
		if err == nil {
			// The snapshot reads, but every change commits to the journal first.
			for _, j := range e.journalsIn(dir, true) {
				if what := store.InPlace(j.err); what != "" {
					p := filepath.Join(dir, j.rel)
					return Check{Name: name, Detail: p + " cannot be read: " + what + "; the snapshot reads, but every change is refused until the journal is a file again",
						Fix: afterRemount(dir, "move "+p+" out of the state directory (it may be someone's), then run cairn status")}, false
				}
			}
			_, rerr := store.ParseRecord(data)
			if rerr == nil {
				return c, true
			}
			// A hand edit, which the journal may hold too: every command refuses it and Cairn
			// leaves it as it is, so the step is the file corrected.
			return Check{Name: name, Detail: snap + " does not read as a workflow record: " + cmp.Or(errors.Unwrap(rerr), rerr).Error(),
				Fix: "correct the field the error names in " + snap + " by hand, or restore the file from a backup; Cairn keeps it as it is, and no new workflow should start over this one"}, false
		}
		if IsForeignSnapshot(err) {
			return Check{Name: name, Detail: snap + ": " + err.Error() + "; another tool's file, or a newer Cairn's that this one cannot tell: Cairn leaves it as it is",
				Fix: afterRemount(dir, e.moveOut()+", then run cairn status: it reads the workflow from its journal, if there is one; do not start a new workflow before")}, false
		}
		why = snap + " is damaged (" + err.Error() + ")"
		if errors.Is(err, migrate.ErrForeign) {
			// Another tool's file: its error says so, and it is kept all the same.
			why, quarantine = snap+": "+err.Error(), " and keeps that file in quarantine/"
		}
	case errors.Is(err, fs.ErrNotExist):
		why, quarantine = snap+" is missing", ""
	case errors.Is(err, durable.ErrTooLarge):
		why = snap + " is too large to be a workflow record"
	default:
		// Not a regular file, or not readable by this user: Cairn leaves it as it is.
		inPlace = Check{Name: name, Detail: fmt.Sprintf("%s cannot be read: %v", snap, err),
			Fix: "make " + snap + " a regular file this user can read, or restore it from a backup; Cairn keeps it as it is, and no new workflow should start over this one"}
		why = inPlace.Detail
	}
	rebuilt, bad, aside, others := e.journalStates(dir)
	switch {
	case len(rebuilt) > 0:
		fix := "run cairn status: it rebuilds the snapshot from the journal" + quarantine
		if inPlace.Name != "" {
			// Cairn leaves it in its place: moved out, the next read rebuilds the snapshot.
			fix = e.moveOut() + ", then run cairn status: it rebuilds the snapshot from the journal"
		}
		return Check{Name: name, Detail: why + "; its journal holds the state of " + strings.Join(rebuilt, ", "), Fix: afterRemount(dir, fix)}, false
	case inPlace.Name != "":
		return inPlace, false
	case others != "":
		// Not damage: a move would lose nothing but is refused in another user's journal/,
		// and would hide the workflow; the owner's chown gives it back.
		for p := others; ; p = filepath.Dir(p) {
			if fi, err := os.Lstat(p); err == nil {
				if uid, other := otherOwner(fi); other {
					_, fix := store.NotThisUsers(dir, uid, euid())
					return Check{Name: name, Detail: why + ", and its journal cannot be read: " + strings.Join(bad, "; "),
						Fix: fix + ", which gives the state directory back to this user, then run cairn status"}, false
				}
			}
			if p == dir || p == filepath.Dir(p) {
				break
			}
		}
		fallthrough
	case len(bad) > 0:
		// The state directory is not committed, so there is seldom a backup: the step that
		// works keeps the files in quarantine/, where they can be read, and lets a workflow
		// start anew.
		// Each under a name of its own, as the store names what it sets aside: a name kept
		// there before (the same workflow id damaged again) is never moved onto.
		cmd := "mkdir -p " + vars.Quote(filepath.Join(dir, "quarantine"))
		for _, p := range aside {
			cmd += " && mv -- " + vars.Quote(p) + " " + vars.Quote(filepath.Join(dir, filepath.FromSlash(store.QuarantineName(filepath.Base(p), e.now()))))
		}
		return Check{Name: name, Detail: why + ", and no state can be rebuilt from its journal: " + strings.Join(bad, "; "),
			Fix: fixIn(dir, "keep them aside in quarantine/, where they stay to be read, and a new workflow can start", cmd)}, false
	}
	if quarantine != "" {
		// Damaged, and nothing to rebuild it from: the next read sets it aside and finds no
		// workflow, which doctor says before it happens.
		return Check{Name: name, Detail: why + ", and no journal holds a state to rebuild it from",
			Fix: afterRemount(dir, "restore it from a backup if you have one; otherwise run cairn status: it"+strings.TrimPrefix(quarantine, " and")+", where it stays to be read, and a new workflow can start")}, false
	}
	return c, true // no workflow on record
}

// snapshotInPlace reports whether err, a read of the workflow snapshot, found what is there
// unreadable as a file (not a regular file, or not readable by this user): Cairn leaves that
// as it is, where a damaged or too large snapshot goes to quarantine/.
func snapshotInPlace(err error) bool {
	return err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, durable.ErrTooLarge)
}

// rebuildsOnceMoved reports whether what is in the place of the workflow snapshot cannot be
// read as a file while a journal holds a workflow's state: moved out of the state directory,
// the next read rebuilds the snapshot from that journal (doctor's step, stateCheck). It reads
// the journals: only for a state that already failed to read.
func (e *Engine) rebuildsOnceMoved() bool {
	dir := e.st.Dir()
	if _, err := durable.ReadPath(filepath.Join(dir, store.WorkflowFile), strictjson.MaxSize, false); !snapshotInPlace(err) {
		return false
	}
	rebuilt, _, _, _ := e.journalStates(dir)
	return len(rebuilt) > 0
}

// journalStates reads the journals in dir as doctor does: rebuilt names the workflows whose
// state a journal holds (with its revision), bad the journals no state can be rebuilt from,
// and aside their files; others is the first of them another user's (cairn run with sudo),
// which only a chown gives back.
func (e *Engine) journalStates(dir string) (rebuilt, bad, aside []string, others string) {
	for _, j := range e.journalsIn(dir, false) {
		switch {
		case j.err != nil && !errors.Is(j.err, store.ErrNotFound):
			bad = append(bad, fmt.Sprintf("%s (%v)", j.rel, j.err))
			if others == "" && store.OtherUsers(j.err) {
				others = filepath.Join(dir, j.rel)
			}
		case len(j.Records) > 0:
			rebuilt = append(rebuilt, fmt.Sprintf("%s (revision %d)", j.id, j.Records[len(j.Records)-1].Revision))
			continue
		case len(j.Problems) > 0:
			bad = append(bad, j.rel+" ("+j.Problems[0]+")")
		default:
			continue
		}
		// The workflow's journal and its sealed segments, kept aside together.
		for _, f := range []string{j.id + ".jsonl", j.id + ".sealed"} {
			if p := filepath.Join(dir, "journal", f); e.exists(p) {
				aside = append(aside, p)
			}
		}
	}
	return rebuilt, bad, aside, others
}

// journalRead is one workflow's journal as doctor read it: rel is its file in the state
// directory, err the read's error.
type journalRead struct {
	store.Journal
	id, rel string
	err     error
}

// journalsIn reads the journal of each workflow journal/ in dir holds one of, without repairing;
// with inPlaceOnly it reads none, and err is the refusal every change would meet when something
// other than a file is in a journal's place (store.JournalInTheWay): a long workflow's history,
// active and sealed, is read only where doctor needs what it holds.
func (e *Engine) journalsIn(dir string, inPlaceOnly bool) []journalRead {
	var seen []string
	var out []journalRead
	ents, _ := durable.ReadDirPath(filepath.Join(dir, "journal"))
	for _, ent := range ents {
		id, isJournal := strings.CutSuffix(ent.Name(), ".jsonl")
		if !isJournal {
			id, _ = strings.CutSuffix(ent.Name(), ".sealed")
		}
		if id == ent.Name() || store.ValidWorkflowID(id) != nil || slices.Contains(seen, id) {
			continue // ReadJournalEvents reads a workflow's sealed segments with its journal
		}
		seen = append(seen, id)
		var j store.Journal
		var err error
		if inPlaceOnly {
			err = e.st.JournalInTheWay(id)
		} else {
			j, err = e.st.ReadJournalEvents(id)
		}
		out = append(out, journalRead{Journal: j, id: id, rel: filepath.Join("journal", ent.Name()), err: err})
	}
	return out
}

// stampCheck compares the set's stamp (bin/.checksums, written by make build and
// hooks/install) with the plugin's release/checksums.txt, as hooks/launch does (see
// StaleSet): the launcher runs a set only while the two are equal, so a set that differs
// holds binaries of other sources, such as a checkout's bin/ after git pull without make
// build, which the hooks pass over but a cairn linked to it still runs.
func stampCheck(root, bin string, names []string) (bool, string) {
	why := StaleSet(root, bin)
	if why == "" {
		return true, filepath.Join(bin, ".checksums") + " matches " + filepath.Join(root, "release", "checksums.txt")
	}
	return false, fmt.Sprintf("%s in %s are stale: built from other sources than this plugin (%s), so the hooks do not run them", strings.Join(names, ", "), bin, why)
}

// StaleSet says why the binaries in bin were not made from the plugin at root ("" when they
// were), as hooks/launch's cairn_mine decides (a missing file reads as empty there too).
func StaleSet(root, bin string) string {
	sums := filepath.Join(root, "release", "checksums.txt")
	stamp := filepath.Join(bin, ".checksums")
	// Read as the launcher reads them, files alone: a FIFO would hang doctor and every command.
	want, _ := durable.ReadPath(sums, 1<<20, true)
	got, err := durable.ReadPath(stamp, 1<<20, true)
	// A set Go built names the plugin it was built from, and the launcher runs it only for that
	// one: checkouts with the same checksums share a data dir (see cairn_mine in hooks/launch).
	// It is that one however its path is spelled (a symlink to the checkout, a bind mount).
	from, ferr := durable.ReadPath(filepath.Join(bin, ".built-from"), 1<<20, true)
	mine := ferr != nil || SameStamp(from, []byte(root+"\n")) || durable.SameDir(strings.TrimSuffix(string(from), "\n"), root)
	switch {
	case SameStamp(got, want) && mine:
		return ""
	case err != nil:
		return bin + " has no .checksums stamp"
	case !mine:
		return "built by Go from " + strings.TrimSuffix(string(from), "\n")
	}
	return stamp + " differs from " + sums
}

// SameStamp compares a binary set's stamp with the plugin's checksums as the launcher's
// cairn_read does: each line ended by a newline, one added after a last line without it. So a
// non-empty text equals another when both are the same without one final newline, and an
// empty text equals only itself.
func SameStamp(a, b []byte) bool {
	nl := []byte("\n")
	return (len(a) == 0) == (len(b) == 0) && bytes.Equal(bytes.TrimSuffix(a, nl), bytes.TrimSuffix(b, nl))
}

// BuildCommand is make build for a plugin that is a checkout (it has a Makefile), which puts
// this machine's binaries into its bin/; "" for another install (a marketplace's has none).
func BuildCommand(root string) string {
	if root == "" {
		return ""
	}
	if _, err := os.Stat(filepath.Join(root, "Makefile")); err != nil {
		return ""
	}
	return "make -C " + vars.Quote(root) + " build"
}

// hookBinaries are the plugin's hooks: Claude Code runs them, never a fix (RefreshCommand).
var hookBinaries = []string{"cairn-session-start", "cairn-stop", "cairn-event"}

// RefreshCommand is the one command that puts this machine's binaries of this plugin into
// bin: make build for a checkout's bin/, else the launcher, which installs them into its data
// directory. The launcher installs the whole set, each file replaced by a rename, when the
// binary it is asked to run is stale or cannot run here, or for cairn when any of the set is
// missing or empty: so the command runs cairn version, and needs nothing removed first. Never
// a hook, which run by hand acts on the project's workflow (a session recorded, a turn's end
// settled). name is a binary the launcher finds wanting only by running it (one made for
// another machine), "" when none; cairn-mcp runs with no input, which ends it at once.
func RefreshCommand(root, bin, name string) string {
	if filepath.Clean(bin) == filepath.Join(root, "bin") {
		if build := BuildCommand(root); build != "" {
			return build
		}
		// Not a checkout (no Makefile to build it): the launcher passes over a bin/ that does
		// not fit and installs the plugin's binaries into its data directory.
		return "start a new session: the launcher passes over " + bin + " and installs this plugin's binaries into its data directory"
	}
	run := "cairn version"
	switch name {
	case "", "cairn":
	case "cairn-mcp":
		run = name + " </dev/null"
	default:
		// A hook that cannot run here fails its exec in the session, and the launcher then
		// installs this machine's set.
		return "start a new session: when it runs " + name + ", the launcher installs this machine's binaries in their place"
	}
	return "CLAUDE_PLUGIN_DATA=" + vars.Quote(filepath.Dir(bin)) + " sh " + vars.Quote(filepath.Join(root, "hooks", "launch")) + " " + run + " (installs this plugin's binaries; the next session would too)"
}

// OwnerCheck is doctor's check of a state directory another user owns (made by cairn run with
// sudo, say), given its Lstat (nil: read here); other is false when this user owns it or may
// write anywhere. Its permissions and this user's failing writes both follow from the owner,
// and only the owner can change them: one problem, one fix.
func OwnerCheck(dir string, fi fs.FileInfo) (c Check, other bool) {
	if fi == nil {
		var err error
		if fi, err = os.Lstat(dir); err != nil {
			return c, false
		}
	}
	uid, other := otherOwner(fi)
	at := dir
	if !other {
		// A part of it another user made (journal/, by a cairn run with sudo) refuses every
		// change the same way, and the same chown gives it back.
		at, uid, other = ownedInside(dir)
	}
	if !other {
		return c, false
	}
	whose, _ := store.NotThisUsers(at, uid, euid())
	_, fix := store.NotThisUsers(dir, uid, euid())
	return Check{Name: "state directory owner", Detail: whose + ", so Cairn run as this user cannot use it", Fix: fix}, true
}

// ownedInside is the first file or directory in dir, or in its subdirectories but archive/
// and quarantine/ (large, and written by none but an archive), that another user owns.
func ownedInside(dir string) (at string, uid int, other bool) {
	ents, _ := durable.ReadDirPath(dir)
	var subs []string
	for _, ent := range ents[:min(len(ents), 1000)] {
		p := filepath.Join(dir, ent.Name())
		if fi, err := ent.Info(); err == nil {
			if uid, other := otherOwner(fi); other {
				return p, uid, true
			}
		}
		if ent.IsDir() && ent.Name() != "archive" && ent.Name() != "quarantine" {
			subs = append(subs, p)
		}
	}
	for _, sub := range subs {
		ents, _ := durable.ReadDirPath(sub)
		for _, ent := range ents[:min(len(ents), 1000)] {
			if fi, err := ent.Info(); err == nil {
				if uid, other := otherOwner(fi); other {
					return filepath.Join(sub, ent.Name()), uid, true
				}
			}
		}
	}
	return "", 0, false
}

// creatable reports whether dir exists and is writable, or could be created: its nearest
// existing ancestor is a writable directory.
func creatable(dir string) bool {
	d, ok := nearest(dir)
	return ok && writable(d)
}

// noRoom says why dir's file system takes no new write though dir is writable: the disk is
// full, or no inode is free (df -h then shows space; inodes is true). access(2), which
// writable asks, says neither. "" when there is room.
func noRoom(dir string) (what string, inodes bool) {
	switch {
	case durable.NoFreeInodes(dir):
		return "the file system has no free inodes, though it may have room for data (df -i counts them)", true
	case durable.NoFreeSpace(dir):
		return "the disk is full (df shows no space available)", false
	}
	return "", false
}

// freeStep is the person's step for noRoom's want.
func freeStep(inodes bool) string {
	if inodes {
		return "free some inodes there (each file takes one)"
	}
	return "free some space there"
}

// nearest is dir, or when it does not exist its nearest existing ancestor; ok is false when
// that is no directory (a link to nothing among them).
func nearest(dir string) (d string, ok bool) {
	for d = dir; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil {
			return d, fi.IsDir()
		} else if _, err := os.Lstat(d); err == nil {
			return d, false // a link to nothing
		}
		if filepath.Dir(d) == d {
			return d, false
		}
	}
}

// writeFix is the command that lets this user write in dir (or create it, in its nearest
// existing ancestor): chmod, except on a read-only file system, where chmod fails too.
func writeFix(dir string) string {
	d, _ := nearest(dir)
	if readOnlyFS(d) {
		return d + " is on a read-only file system: remount it read-write (chmod cannot help there)"
	}
	return "chmod u+w " + vars.Quote(d)
}

// fixIn is the fix why: cmd, a command that changes dir or files in it: on a read-only file
// system, where cmd fails too, it comes after remounting it read-write.
func fixIn(dir, why, cmd string) string {
	if readOnlyFS(dir) {
		return afterRemount(dir, cmd)
	}
	return why + ": " + cmd
}

// afterRemount is fix, a step that writes in dir: on a read-only file system, where it fails
// too, it comes after remounting that read-write.
func afterRemount(dir, fix string) string {
	if readOnlyFS(dir) {
		return dir + " is on a read-only file system: remount it read-write, then " + fix
	}
	return fix
}

// lockChecks tries every lock without waiting and says who holds a busy one.
func (e *Engine) lockChecks(dir string) []Check {
	d, err := durable.OpenDir(dir)
	if err != nil {
		return []Check{{Name: "locks", OK: false, Detail: err.Error(), Fix: "check the state directory"}}
	}
	defer d.Close()
	names, _ := d.ReadDirNames(".")
	var busy, pids, stopped, inPlace []string
	n, untried, resumable := 0, 0, 0
	for _, name := range names {
		if !strings.HasPrefix(name, ".lock-") {
			continue
		}
		n++
		unlock, err := d.Lock(name, 0)
		if te, ok := errors.AsType[*durable.LockTimeoutError](err); ok {
			// Tried, not waited for: the holder, not the words of a command that gave up.
			busy = append(busy, te.Path+" is held "+te.Who())
			if h := te.Holder; te.Stopped {
				// Resumed, it finishes its write and lets go: nothing is ended.
				resumable++
				if pid := strconv.Itoa(h.PID); !slices.Contains(stopped, pid) {
					stopped = append(stopped, pid)
				}
			} else if h != nil {
				// Another machine's pid is ended there.
				pid := strconv.Itoa(h.PID)
				if host := h.Elsewhere(); host != "" {
					pid += " on " + host
				}
				if !slices.Contains(pids, pid) {
					pids = append(pids, pid)
				}
			}
			continue
		}
		if errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission) {
			// Not held: it cannot be opened to try, as the state directory cannot be written.
			untried++
			continue
		}
		if err != nil {
			busy = append(busy, err.Error())
			if store.InPlace(err) != "" {
				inPlace = append(inPlace, vars.Quote(filepath.Join(dir, name)))
			}
			continue
		}
		_ = unlock()
	}
	if len(busy) > 0 {
		var fix []string
		if len(inPlace) > 0 {
			// No process holds it: every write refuses until it is out of the way.
			fix = append(fix, afterRemount(dir, "move "+strings.Join(inPlace, " ")+" out of the state directory (it may be someone's): Cairn makes its lock files anew"))
		}
		for _, pid := range stopped {
			fix = append(fix, "pid "+pid+" is stopped and holds its lock until it is resumed: resume it (fg in its shell, or kill -CONT "+pid+")")
		}
		if len(inPlace)+resumable < len(busy) {
			holder := "the process"
			if len(pids) > 0 {
				holder = "pid " + strings.Join(pids, " or pid ")
			}
			fix = append(fix, "a lock is held only while a Cairn process writes: if "+holder+" still holds it in a minute, it is stuck; end it (locks die with their process)")
		}
		return []Check{{Name: "locks", OK: false, Detail: strings.Join(busy, "; "), Fix: strings.Join(fix, "; ")}}
	}
	detail := fmt.Sprintf("%d lock file%s, none held", n, workflow.Plural(n))
	if untried > 0 {
		detail = fmt.Sprintf("%d lock file%s, none held that could be tried; %d could not be opened for writing, so not tried", n, workflow.Plural(n), untried)
	}
	return []Check{{Name: "locks", OK: true, Detail: detail}}
}

func looseFiles(dir string) []string {
	var loose []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || len(loose) >= 10 {
			return filepath.SkipDir
		}
		if d.IsDir() && d.Name() == "archive" {
			return filepath.SkipDir // may be large; its files are written 0600 like the rest
		}
		if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o077 != 0 {
			rel, _ := filepath.Rel(dir, p)
			loose = append(loose, rel)
		}
		return nil
	})
	return loose
}

// filesInPlace says what is in the place of a checkpoint or log file, or of their directory
// (a directory, FIFO or symlink), each "PATH is a KIND", and a file with a second hard link:
// the store refuses to read or write through it, and says only that it was left as it is.
func filesInPlace(dir string) []string {
	var found []string
	for _, sub := range []struct{ dir, ext string }{{"checkpoints", ".json"}, {"logs", ".jsonl"}} {
		p := filepath.Join(dir, sub.dir)
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if !fi.IsDir() {
			found = append(found, p+" is "+(&durable.NotRegularError{Mode: fi.Mode()}).Kind()+", not a directory")
			continue
		}
		ents, err := durable.ReadDirPath(p)
		if err != nil {
			continue
		}
		for _, ent := range ents {
			if !strings.HasSuffix(ent.Name(), sub.ext) || len(found) >= 10 {
				continue
			}
			if !ent.Type().IsRegular() {
				found = append(found, filepath.Join(p, ent.Name())+" is "+(&durable.NotRegularError{Mode: ent.Type()}).Kind())
			} else if fi, err := ent.Info(); err == nil {
				// Refused by a save as the others are: writing it would change its other name.
				if n, ok := durable.LinkCount(fi); ok && n > 1 {
					found = append(found, filepath.Join(p, ent.Name())+" has more than one hard link")
				}
			}
		}
	}
	return found
}

func staleTemps(dir string, now time.Time) []string {
	var stale []string
	subs := []string{".", "checkpoints", "logs", "journal", "sessions", "archive", KeptTasksDir}
	// Only real directories: one that is a link leads out of the state directory, and what it
	// holds is not Cairn's to remove.
	realDir := func(sub string) bool {
		fi, err := os.Lstat(filepath.Join(dir, sub))
		return err == nil && fi.IsDir()
	}
	// Inside archive directories too (a killed archive.json write), a bounded look.
	if ents, err := durable.ReadDirPath(filepath.Join(dir, "archive")); err == nil && realDir("archive") {
		for _, ent := range ents[:min(len(ents), 1000)] {
			if ent.IsDir() {
				subs = append(subs, filepath.Join("archive", ent.Name()))
			}
		}
	}
	for _, sub := range subs {
		ents, err := durable.ReadDirPath(filepath.Join(dir, sub))
		if err != nil || !realDir(sub) {
			continue
		}
		for _, ent := range ents {
			// A directory (an archive's, made under archive/.tmp-archive-dir-*) is the archive
			// recovery's to finish or remove, not a temp file of a write.
			if !strings.HasPrefix(ent.Name(), ".tmp-") || ent.IsDir() {
				continue
			}
			if fi, err := ent.Info(); err == nil && now.Sub(fi.ModTime()) > time.Minute {
				stale = append(stale, filepath.Join(sub, ent.Name()))
			}
		}
	}
	return stale
}

// l2Retried ends doctor's step for the memory directory: a line that could not be written there
// is owed and retried after each turn, as a move's warning and SessionStart say; one of a move
// made while the directory could not be named is read from the journal once it can be.
const l2Retried = "; Cairn retries L2 lines after each turn"
