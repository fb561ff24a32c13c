// Package mirror is what this clone knows of its remote without asking it: whether sharing is
// on, against which remote, and what the last sync left (when, which workflow, the remote's
// head), and how many of this clone's task claims no sync has confirmed yet. Each sync records
// it through the store; the hooks and cairn remote status read it.
// Nothing here starts git or opens a connection, so the hooks may link it.
package mirror

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/project"
	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/claim"
	"github.com/cairn-dev/cairn/internal/report"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/strictjson"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// Doc is the store document that holds the Settings.
const Doc = "remote"

// ClaimsDoc is the store document that holds this clone's task claims (package claimsync); the
// mirror reads only its Unconfirmed part.
const ClaimsDoc = "claims"

// Unconfirmed is the part of the claims document (ClaimsDoc) that says which tasks this clone
// set running while the remote was out of reach: the next sync confirms or undoes each claim.
// Package claimsync writes it, embedded in its document, so there is one schema.
type Unconfirmed struct {
	Workflow string               `json:"workflow_id,omitempty"` // the workflow the claims are about
	Pending  map[string]time.Time `json:"pending,omitempty"`     // task id: when it was set running here
	// Unclaimed holds the tasks set running here unclaimed, the host refusing the claims ref,
	// each with its run's start: runs of this clone's that no claim shows (see RunsElsewhere).
	Unclaimed map[string]time.Time `json:"unclaimed,omitempty"`
}

// Claims is the claims document (ClaimsDoc), which package claimsync writes: this clone's
// identity, what it last read of the claims line of the workflow Unconfirmed names, and the
// claims it made offline or left on workflows replaced here.
type Claims struct {
	Owner string `json:"owner"`
	// Dir is the state directory the owner was made in or last moved to, Ino its inode (0
	// where there is none); empty in what an older Cairn saved.
	Dir string `json:"dir,omitempty"`
	Ino uint64 `json:"dir_inode,omitempty"`
	Unconfirmed
	Line claim.State `json:"line"`
	// Left holds, by workflow id and task, the revisions of the claims this clone held on
	// workflows the document was about before Workflow (replaced here) that no call could
	// release yet, the remote out of reach: the next call that reaches it releases them.
	Left map[string]map[string]int64 `json:"left,omitempty"`
	// Of is the instance (claim.Of) of Workflow, LeftOf those of Left's workflows: another
	// workflow started apart under one id shares the line, and a release read as both would
	// take its claim of a task for this clone's. Empty in what an older Cairn saved (any).
	Of     string            `json:"of,omitempty"`
	LeftOf map[string]string `json:"left_of,omitempty"`
	// Extra holds the members a newer Cairn wrote that this one has no field for, written
	// back unchanged.
	Extra map[string]json.RawMessage `json:"-"`
}

// claimsJSON is Claims without its methods, for workflow.EncodeKnown and DecodeKnown.
type claimsJSON Claims

func (c Claims) MarshalJSON() ([]byte, error) {
	c.Line.Extra = newer(c.Line.Extra)
	return workflow.EncodeKnown(claimsJSON(c), newer(c.Extra))
}
func (c *Claims) UnmarshalJSON(b []byte) error {
	return workflow.DecodeKnown(b, (*claimsJSON)(c), &c.Extra)
}

// Settings is this project's remote sync configuration and the mirror's state, kept in the
// state directory (per machine: each clone opts in on its own).
type Settings struct {
	Enabled  bool      `json:"enabled"`
	Remote   string    `json:"remote"`             // a git remote name, "origin" by default
	Layout   string    `json:"layout"`             // the gitremote.Layout the host accepted
	LastSync time.Time `json:"last_sync,omitzero"` // the end of the last successful sync
	// Workflow and Mirrored are the workflow the last sync was about and the remote's head
	// for it then: what the remote holds, as far as this clone knows.
	Workflow string `json:"workflow_id,omitempty"`
	Mirrored int64  `json:"remote_revision,omitempty"`

	// claimsFor and unconfirmed are read from ClaimsDoc by Load, not stored here: the workflow
	// the claims are about and how many of its claims no sync has confirmed yet.
	claimsFor   string
	unconfirmed int
}

// Load reads the settings; absent means off. Settings that are on are refused unless cairn
// remote enable switched them on in this clone, or an older Cairn did (see enabledHere). With
// sharing on it also counts the claims not yet confirmed (ClaimsDoc), for Shared; a damaged
// claims document counts none: the next task call or sync moves it to quarantine/ and
// rebuilds it (package claimsync).
func Load(st *store.Store) (Settings, error) {
	var s Settings
	if found, err := st.ReadJSON(Doc, &s); found && err != nil {
		return s, fmt.Errorf("the remote settings (%s) are not readable: run cairn remote enable again: %w", Doc, err)
	} else if err != nil {
		return s, err
	}
	if s.Enabled {
		if !remote.IsName(s.Remote) { // never repeated: an address may hold a token
			return s, fmt.Errorf("the remote settings (%s) name an address or a path rather than one of this project's git remotes, so nothing is shared: run cairn remote enable [REMOTE]", Doc)
		}
		if !enabledHere(st.Dir(), s.Remote) {
			s.Enabled = false
			return s, fmt.Errorf("the remote settings (%s) switch sharing on, but cairn remote enable %s was not run in this clone (or only with an older Cairn, which kept no record of it here; or were they committed into the repository, or copied?), so nothing is shared: run cairn remote enable %s to share this clone's workflows, or cairn remote disable", Doc, s.Remote, s.Remote)
		}
		var u Unconfirmed
		if _, err := st.ReadJSON(ClaimsDoc, &u); err == nil {
			s.claimsFor, s.unconfirmed = u.Workflow, len(u.Pending)
		}
	}
	return s, nil
}

// EnvLease sets the lease (a Go duration): how long a claim nobody renews holds. Package
// claimsync claims by it; the hooks read it to say when another machine's claim lapses.
const (
	EnvLease     = "CAIRN_CLAIM_LEASE"
	DefaultLease = time.Hour
)

// Lease is the lease getenv sets (EnvLease), else DefaultLease.
func Lease(getenv func(string) string) time.Duration {
	if d, err := time.ParseDuration(getenv(EnvLease)); err == nil && d > 0 {
		return d
	}
	return DefaultLease
}

// Uptime is claim.Claimer.Uptime's clock (SinceBoot), here so that the hooks time claims as the
// task tools do, shifted by skew as the wall clock the claims are timed by is: a skew changed
// between calls is time passed, as on a wall clock set alike.
func Uptime(skew time.Duration) func() (string, time.Duration, bool) {
	return func() (string, time.Duration, bool) {
		boot, up, ok := SinceBoot()
		return boot, up + skew, ok
	}
}

// Claim is what this clone last read of the claim on a task running on another machine.
type Claim struct {
	Holder string        // the owner holding it; "" when the line as read had no claim of it
	Left   time.Duration // until this machine may take it over, if not renewed; 0 once lapsed
}

// Lapsed says the holder's claim went unrenewed past the lease, as of the last read of the
// line: update_task here takes the task over.
func (c Claim) Lapsed() bool { return c.Holder != "" && c.Left <= 0 }

// RunsElsewhere reports, when this clone shares workflow r through a remote, which of its
// running tasks run on another machine: those this clone neither held when it last read the
// claims line (ClaimsDoc) nor set running while out of reach, nor started the run of unclaimed
// (Unconfirmed.Unclaimed). Such a task came with another machine's revisions, and its run is
// that machine's. With it comes the claim as last read, timed by this clone's lease and clock
// as a claim here is (claim.Claimer.Held). nil when sharing is off.
func RunsElsewhere(st *store.Store, r *workflow.Record, lease time.Duration, now time.Time) func(task string) (Claim, bool) {
	id := r.WorkflowID
	if s, err := Load(st); err != nil || !s.Enabled {
		return nil
	}
	var c Claims
	if _, err := st.ReadJSON(ClaimsDoc, &c); err != nil || c.Workflow != id || c.Owner == "" {
		return func(string) (Claim, bool) { return Claim{}, true } // none known to be this clone's
	}
	// Timed as claimsync times it, the wall clock's steps since the read corrected: else the
	// report says lapsed a claim update_task refuses as held. A now apart from this clock's (a
	// test's) is time passed, as claimsync's skew is.
	cl := claim.New(nil, id, c.Owner, lease, func() time.Time { return now }).Uptime(Uptime(time.Until(now)))
	cl.Restore(c.Line)
	return func(task string) (Claim, bool) {
		h := c.Line.Holders[task]
		if _, pending := c.Pending[task]; pending || h.Owner == c.Owner {
			return Claim{}, false
		}
		if at, ok := c.Unclaimed[task]; ok && slices.ContainsFunc(r.Tasks, func(t workflow.Task) bool { return t.ID == task && t.StartedAt.Equal(at) }) {
			return Claim{}, false // this run, started here, is this clone's
		}
		k := Claim{Holder: h.Owner}
		if he, ok := errors.AsType[*claim.HeldError](cl.Held(task)); ok {
			k.Left = he.Left
		}
		return k, true
	}
}

// Held is the claims this clone holds on one workflow (HeldHere).
type Held struct {
	Workflow string
	Tasks    []string // sorted
}

// HeldHere lists the claims this clone held when it last read the claims line (ClaimsDoc), by
// workflow, and those it held on workflows replaced here that no call could release yet (the
// remote out of reach: claimsync keeps them as left): what other machines see as taken until
// released or lapsed. The workflow the document is about comes first, the others by id; any of
// them may be one no longer active here (archived, or replaced), whose claims no call released
// yet. err says why the claims document could not be read: whichever claims it holds are
// not known.
func HeldHere(st *store.Store) (_ []Held, err error) {
	var c Claims
	if _, err := st.ReadJSON(ClaimsDoc, &c); err != nil || c.Owner == "" {
		return nil, err
	}
	var held []Held
	add := func(wf string, tasks []string) {
		if wf != "" && len(tasks) > 0 {
			slices.Sort(tasks)
			held = append(held, Held{Workflow: wf, Tasks: tasks})
		}
	}
	var tasks []string
	for task, h := range c.Line.Holders {
		if h.Owner == c.Owner {
			tasks = append(tasks, task)
		}
	}
	add(c.Workflow, tasks)
	for _, wf := range slices.Sorted(maps.Keys(c.Left)) {
		if wf != c.Workflow {
			add(wf, slices.Collect(maps.Keys(c.Left[wf])))
		}
	}
	return held, nil
}

// Save writes the settings atomically, and records in the repository's git directory whether
// sharing is on (see enabledHere): before the settings when it is switched on, after them when
// off.
func Save(st *store.Store, s Settings) error {
	doc, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if s.Enabled {
		if _, err := recordEnabled(st.Dir(), s.Remote, true, false); err != nil {
			return fmt.Errorf("recording in the git directory that sharing is on: %w", err)
		}
	}
	if err := st.Write(Doc, doc); err != nil {
		return err
	}
	if !s.Enabled {
		// Off whatever happens here: the settings say so. A line left behind only matters to
		// settings switched on again behind enable's back.
		_, _ = recordEnabled(st.Dir(), s.Remote, false, false)
	}
	return nil
}

// Enable switches sharing on through remote with layout. Enabled again on the same remote, or
// on one that is the previous one under the name sameAs (a remote renamed: see
// gitremote.Backend.Holds; "" for none), what the last sync left stays (or the next sync would
// not push the end of a workflow finished here since, and the status would say never synced).
// It returns the settings saved.
func Enable(st *store.Store, remote, layout, sameAs string) (Settings, error) {
	return change(st, func(prev Settings, err error) Settings {
		s := Settings{Enabled: true, Remote: remote, Layout: layout}
		if err == nil && (prev.Remote == remote || sameAs != "" && prev.Remote == sameAs) {
			s.LastSync, s.Workflow, s.Mirrored = prev.LastSync, prev.Workflow, prev.Mirrored
		}
		return s
	})
}

// Disable switches sharing off, keeping the rest of the settings; settings Load refuses
// (planted, unreadable, naming an address) are cleared. It returns the settings saved.
func Disable(st *store.Store) (Settings, error) {
	return change(st, func(prev Settings, err error) Settings {
		if err != nil {
			prev = Settings{}
		}
		prev.Enabled = false
		return prev
	})
}

// change is Save of what fn makes of the settings as Load reads them, read and written under
// the settings' lock, as Synced does: a sync recorded between the read and the write would
// otherwise be overwritten with what the last sync before it left. Settings that are not
// JSON, or too large, are saved over unlocked, as before: Save moves them to quarantine/, and
// they hold nothing to keep.
func change(st *store.Store, fn func(prev Settings, err error) Settings) (Settings, error) {
	var s Settings
	ran := false
	_, err := st.Update(Doc, func(cur []byte) ([]byte, error) {
		if cur != nil && strictjson.Check(cur) != nil {
			return nil, errDamaged
		}
		ran = true
		prev, err := Load(st)
		if s = fn(prev, err); err != nil {
			cur = nil // settings Load refuses are cleared, what a newer Cairn would read in them too
		}
		if s.Enabled {
			if _, err := recordEnabled(st.Dir(), s.Remote, true, false); err != nil {
				return nil, fmt.Errorf("recording in the git directory that sharing is on: %w", err)
			}
		}
		return withNewer(s, cur)
	})
	var timeout *durable.LockTimeoutError
	if !ran && err != nil && !errors.As(err, &timeout) { // errDamaged, or too large to read
		s = fn(Settings{}, err)
		return s, Save(st, s)
	}
	if err == nil && !s.Enabled {
		_, _ = recordEnabled(st.Dir(), s.Remote, false, false) // as Save
	}
	return s, err
}

// errDamaged stops change's locked update: the settings are not JSON.
var errDamaged = errors.New("the remote settings are damaged")

// sharingFile lists, in the git directory of the repository that holds a state directory, the
// state directories (relative to the work tree) whose sharing cairn remote enable switched on,
// each with its remote: "origin .claude/cairn". The settings live in the state directory,
// inside the work tree, where a repository can carry them (committed past its .gitignore) or a
// pull can overwrite them (git overwrites ignored files); git never checks anything out into
// its own directory, so sharing is on only where a person ran enable in this clone. Being
// relative, it survives a move of the project directory.
const sharingFile = "cairn-sharing"

// maxSharingFile bounds what is read of sharingFile: one short line per state directory.
const maxSharingFile = 64 << 10

// sharingLine returns the file that records sharing for the state directory dir and dir's line
// in it with remote. inRepo is false when no work tree holds dir (nothing cloned can have put
// settings there); file is "" when one does but its git directory cannot be found.
func sharingLine(dir, remote string) (file, line string, inRepo bool) {
	tree, gitdir, ok := project.GitDir(filepath.Dir(dir))
	if !ok {
		return "", "", false
	}
	rel, err := filepath.Rel(tree, dir)
	if gitdir == "" || err != nil || strings.ContainsAny(rel, "\r\n") {
		return "", "", true
	}
	return filepath.Join(gitdir, sharingFile), remote + " " + filepath.ToSlash(rel), true
}

// enabledHere reports whether sharing through remote was switched on by cairn remote enable
// for the state directory dir in this clone (see sharingFile), or dir is in no git work tree.
//
// A clone that enabled sharing with a Cairn older than sharingFile has no such file; its
// settings are taken as enabled here (and the line recorded) when its git directory holds the
// refs Cairn's syncs fetch from that remote (refs/cairn-mirror/<remote>/<id>): neither a clone
// nor settings planted in the work tree can create them. Once any Cairn that knows the file
// has switched sharing on or off in this git directory, the file exists and only its lines
// count.
func enabledHere(dir, remote string) bool {
	file, line, inRepo := sharingLine(dir, remote)
	if !inRepo {
		return true
	}
	if file == "" {
		return false
	}
	b, err := durable.ReadPath(file, maxSharingFile, false)
	if errors.Is(err, fs.ErrNotExist) && mirroredFrom(filepath.Dir(file), remote) {
		// Decided again under the record's lock: an enable or disable may have written the
		// file since it was read.
		if recorded, err := recordEnabled(dir, remote, true, true); err == nil {
			return recorded
		}
		return true // not recorded: found the same way next time
	}
	return err == nil && hasLine(b, line)
}

// mirroredFrom reports whether the repository whose git directory is gitdir holds a ref that
// Cairn's sync fetched from remote, loose or in packed-refs. It reads the files git keeps
// rather than starting git: the hooks call Load.
func mirroredFrom(gitdir, remote string) bool {
	common, ok := project.CommonDir(gitdir) // a linked worktree's refs are in the main git directory
	if !ok {
		common = gitdir
	}
	prefix := "refs/cairn-mirror/" + remote + "/"
	if ents, err := os.ReadDir(filepath.Join(common, filepath.FromSlash(prefix))); err == nil {
		for _, e := range ents {
			if e.Type().IsRegular() {
				return true
			}
		}
	}
	f, err := os.Open(filepath.Join(common, "packed-refs"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sorted := false
	for sc.Scan() {
		// "<oid> <ref>"; the header starts with '#', peeled tags with '^'.
		line := sc.Text()
		if strings.HasPrefix(line, "# pack-refs with:") {
			sorted = strings.Contains(line, " sorted")
			continue
		}
		_, ref, ok := strings.Cut(line, " ")
		id, found := strings.CutPrefix(ref, prefix)
		if ok && found && id != "" && !strings.Contains(id, "/") {
			return true
		}
		if sorted && ok && !found && ref > prefix {
			return false // past where they would be: a large packed-refs is not read whole
		}
	}
	return false
}

// recordEnabled records in sharingFile that sharing through remote is on (or off) for the state
// directory dir; nothing when dir is in no git work tree. carry is the older-Cairn carry-over
// (see enabledHere): it records the line only while the file does not exist, and otherwise
// reports whether the line is there, so an enable or disable that got there first decides.
// recorded is whether dir's line is in the file afterwards.
//
// The read-modify-write holds a lock on a dedicated file beside it (sharingLock): concurrent
// enables, disables and hooks' carry-overs, for other state directories of the same
// repository, would otherwise each write back what they read and drop the others' lines.
func recordEnabled(dir, remote string, on, carry bool) (recorded bool, err error) {
	file, line, inRepo := sharingLine(dir, remote)
	if !inRepo {
		return false, nil
	}
	if file == "" {
		return false, errors.New("this clone's git directory could not be found from its .git file")
	}
	d, err := durable.OpenDir(filepath.Dir(file))
	if err != nil {
		return false, err
	}
	defer d.Close()
	unlock, err := d.Lock(sharingLock, store.DefaultLockWait)
	if err != nil {
		return false, err
	}
	defer unlock()
	_, rel, _ := strings.Cut(line, " ")
	b, err := durable.ReadPath(file, maxSharingFile, false)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if carry && err == nil {
		return hasLine(b, line), nil
	}
	var out strings.Builder
	for l := range strings.Lines(string(b)) {
		l = strings.TrimSuffix(l, "\n")
		if _, r, _ := strings.Cut(l, " "); r != rel {
			out.WriteString(l + "\n")
		}
	}
	if on {
		out.WriteString(line + "\n")
	}
	// Kept when empty: its presence says sharing here is switched on by its lines only, not
	// by an older Cairn's mirror refs (see enabledHere).
	if err := durable.WriteFile(d, sharingFile, []byte(out.String()), 0o600); err != nil {
		return false, err
	}
	return on, nil
}

// hasLine reports whether the sharingFile content b holds line.
func hasLine(b []byte, line string) bool {
	for l := range strings.Lines(string(b)) {
		if strings.TrimSuffix(l, "\n") == line {
			return true
		}
	}
	return false
}

// sharingLock is the lock file, beside sharingFile, that its updates hold. It is never renamed
// or deleted: a lock on the file that is replaced by rename would not exclude anything.
const sharingLock = ".lock-" + sharingFile

// Synced records a successful sync against remote, under the store's lock so that a remote
// enable or disable meanwhile is kept: workflow is the one synced ("" when none) and head the
// remote's revision of it afterwards.
func Synced(st *store.Store, remote, workflow string, head int64, at time.Time) error {
	return record(st, remote, workflow, head, at)
}

// Reached records what a sync against remote that failed had taken here first: the remote's
// revisions of workflow up to head, which are the remote's, not unpushed. The time of the last
// successful sync stays.
func Reached(st *store.Store, remote, workflow string, head int64) error {
	return record(st, remote, workflow, head, time.Time{})
}

// record is Synced, and Reached when at is zero.
func record(st *store.Store, remote, workflow string, head int64, at time.Time) error {
	_, err := st.Update(Doc, func(cur []byte) ([]byte, error) {
		var s Settings
		if cur != nil {
			if err := json.Unmarshal(cur, &s); err != nil {
				return nil, fmt.Errorf("the remote settings (%s) are not readable: run cairn remote enable again: %w", Doc, err)
			}
		}
		if s.Remote != remote {
			return nil, errors.New("the remote settings changed during the sync: its result was not recorded")
		}
		if !at.IsZero() {
			s.LastSync = at.UTC()
		}
		s.Workflow, s.Mirrored = workflow, head
		return withNewer(s, cur)
	})
	return err
}

// withNewer is s as JSON, with the members of cur, the settings as read, that a newer Cairn
// wrote and s has no field for, written back unchanged.
func withNewer(s Settings, cur []byte) ([]byte, error) {
	var all map[string]json.RawMessage
	if cur != nil {
		_ = json.Unmarshal(cur, &all) // not an object: nothing to keep
	}
	return workflow.EncodeKnown(s, newer(all))
}

// newer is extra, the members a newer Cairn wrote, without any that has a secret's shape: no
// Cairn writes one (its store refuses it), and kept, it would have every write refused.
func newer(extra map[string]json.RawMessage) map[string]json.RawMessage {
	kept := maps.Clone(extra)
	maps.DeleteFunc(kept, func(k string, v json.RawMessage) bool {
		one, _ := json.Marshal(map[string]json.RawMessage{k: v})
		return secrets.ScanJSON(one) != nil
	})
	return kept
}

// Shared is s's view of the active workflow id at local revision rev, for the report line
// (report.SharedLine) at time now; nil when sharing is off. A workflow other than the one last
// synced counts as wholly unpushed. The claims not yet confirmed are counted for id only.
func Shared(s Settings, id string, rev int64, now time.Time) *report.Shared {
	if !s.Enabled {
		return nil
	}
	out := &report.Shared{Remote: s.Remote, Never: s.LastSync.IsZero(), Unpushed: rev}
	if !out.Never {
		out.Age = now.Sub(s.LastSync)
	}
	if id != "" && id == s.Workflow {
		out.Unpushed = max(rev-s.Mirrored, 0)
	}
	if id != "" && id == s.claimsFor {
		out.Unconfirmed = s.unconfirmed
	}
	return out
}
