// Package gitremote is the remote.Backend over a git remote, through the user's own git: the
// credential helpers, SSH agents and CI tokens that let them push code let Cairn push state.
//
// Each workflow is one ref, refs/cairn/wf/<id>, pointing at a line of commits, one per record:
// revision n is the n-th commit from the root, its tree holds the record's bytes in the file
// "record" and its subject reads "cairn <id> r<n>". An append builds the new commits on the last
// one fetched and pushes with --force-with-lease=<ref>:<old oid>, which the receiving git checks
// under the ref's lock, so of two machines pushing after the same head exactly one lands.
// Fetched refs go to a local namespace, refs/cairn-mirror/<remote>/<id>, that no branch
// listing shows and no ordinary fetch or push touches.
//
// A host that refuses custom refs (some allow only branches) can be used with the Branches
// layout, one branch per workflow under cairn-state/; Probe finds out which a host allows.
//
// The package runs git and nothing else: it knows no record format and never merges.
package gitremote

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cairn-dev/cairn/internal/lazyre"
	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/secrets"
)

// Layout is where on the remote the workflows' refs live.
type Layout string

const (
	// Refs keeps each workflow at refs/cairn/wf/<id>: invisible to branch lists, CI
	// triggers and clones that fetch only branches. The default.
	Refs Layout = "refs/cairn/wf/"
	// Branches keeps each workflow on the branch cairn-state/<id>, for hosts that refuse
	// refs outside refs/heads and refs/tags. Branches show in the host's UI and may start CI.
	Branches Layout = "refs/heads/cairn-state/"

	// ClaimRefs and ClaimBranches hold each workflow's task claims (package claim) on a line
	// of their own beside the workflow's, so that claiming a task never races the
	// workflow's own writes: refs/cairn/claims/<id>, or the branch cairn-claims/<id>.
	ClaimRefs     Layout = "refs/cairn/claims/"
	ClaimBranches Layout = "refs/heads/cairn-claims/"
)

// Claims is the layout of the claims lines that go with l's workflow lines.
func (l Layout) Claims() Layout {
	if l == Branches {
		return ClaimBranches
	}
	return ClaimRefs
}

// Config says which repository and remote a Backend uses.
type Config struct {
	Dir    string        // a git repository on this machine (a work tree or bare); required
	Remote string        // a remote name ("origin") or URL; required
	Layout Layout        // Refs when empty
	Poll   time.Duration // Watch's poll interval; remote.DefaultPoll when zero
	// Timeout bounds each git command (DefaultTimeout when zero), so a connection that
	// stalls half-open ends as an error of unknown outcome rather than hanging a sync.
	Timeout time.Duration
}

// DefaultTimeout bounds one git command when Config.Timeout is zero.
const DefaultTimeout = 2 * time.Minute

// Backend is a remote.Backend over one git remote. Its methods run one at a time: they share
// the local repository's mirror refs.
type Backend struct {
	cfg    Config
	mirror string // refs/cairn-mirror/<name>/
	// commonDir is the git directory that holds the clone's refs (gitDir), once asked.
	commonDir string
	mu        sync.Mutex
	// leftOut maps each remote id that leaveOut leaves out of every fetch to the id that differs
	// from it only in case and is fetched instead, to broken for a ref whose object the
	// remote does not have (an oid in missing), or to "" for a name that is no workflow id.
	leftOut map[string]string
	missing map[string]bool
	// misfiled is set by tips when a mirror ref holds the line of an id that differs from its
	// own only in case: the one file a case-insensitive file system keeps for twin refs.
	// caseless is set once that was seen, or git's core.ignoreCase found true.
	misfiled, caseless bool
}

var _ remote.Backend = (*Backend)(nil)

// New returns a Backend for cfg. It runs nothing: the first method call is the first git.
func New(cfg Config) (*Backend, error) {
	if cfg.Dir == "" || cfg.Remote == "" {
		return nil, errors.New("a repository directory and a remote are required")
	}
	if strings.HasPrefix(cfg.Remote, "-") {
		return nil, errors.New("a remote name or URL cannot start with '-'")
	}
	switch cfg.Layout {
	case "":
		cfg.Layout = Refs
	case Refs, Branches, ClaimRefs, ClaimBranches:
	default:
		return nil, errors.New("unknown layout: use gitremote.Refs or gitremote.Branches")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	name := mirrorName(cfg.Remote)
	switch cfg.Layout { // each layout's lines are different lines
	case Branches:
		name += "-branches"
	case ClaimRefs:
		name += "-claims"
	case ClaimBranches:
		name += "-claims-branches"
	}
	if !simpleName().MatchString(name) {
		return nil, errors.New("the mirror name must be letters, digits, '-' and '_'")
	}
	return &Backend{cfg: cfg, mirror: "refs/cairn-mirror/" + name + "/"}, nil
}

// simpleName and userinfo are compiled on first use: the hooks' binary links this package and
// never runs git.
var simpleName = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// mirrorName is the remote's name when it is a plain name, and a digest of it when it is a URL
// (which may hold a user name or a token, never to be written into a ref name).
func mirrorName(r string) string {
	if simpleName().MatchString(r) {
		return r
	}
	sum := sha256.Sum256([]byte(r))
	return "url-" + hex.EncodeToString(sum[:6])
}

func (b *Backend) remoteRef(id string) string { return string(b.cfg.Layout) + id }
func (b *Backend) mirrorRef(id string) string { return b.mirror + id }

// Heads implements remote.Backend: one fetch of every workflow ref into the mirror (pruning
// the ones the remote no longer has), then a local listing.
func (b *Backend) Heads(ctx context.Context) (remote.Heads, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.misfiled = false
	if len(b.leftOut) > 0 {
		// Asked again each time, so that a line no longer left out is fetched again.
		if _, err := b.leaveOut(ctx); err != nil {
			return nil, err
		}
	}
	if err := b.fetch(ctx, "*"); err != nil {
		return nil, err
	}
	h, err := b.mirrored(ctx)
	if b.misfiled {
		// Twin refs are one loose ref file here, which the fetch filled with whichever
		// line it wrote last.
		if changed, uerr := b.leaveOut(ctx); uerr == nil && changed {
			if err := b.fetch(ctx, "*"); err != nil {
				return nil, err
			}
			h, err = b.mirrored(ctx)
		}
	}
	return h, b.withLeftOut(err)
}

// leaveOut asks the remote for its refs and leaves out of every later fetch the ones a fetch
// cannot take: where the file system ignores case (macOS, Windows), of each set of ids that
// differ only in case, all but the first in byte order (they are one loose ref file, which a
// fetch of both fails on or fills with whichever it wrote last); every name that is no workflow
// id (one too long for a file name, a Windows device name), which Cairn never writes or reads;
// and refs whose object the remote does not have (an oid in missing). The mirror refs of a newly
// found twin set are deleted one at a time (one transaction would lock the one file twice), so
// the kept line is fetched afresh; a broken ref's, so the line it held is not listed. It reports
// whether the refs left out changed.
func (b *Backend) leaveOut(ctx context.Context) (bool, error) {
	kept := map[string]string{}
	out := map[string]string{}
	var ids []string
	bad := map[string]bool{}
	err := b.lines(ctx, func(line string) error {
		oid, ref, _ := strings.Cut(line, "\t")
		if id, ok := strings.CutPrefix(ref, string(b.cfg.Layout)); ok {
			ids = append(ids, id)
			bad[id] = b.missing[oid]
		}
		return nil
	}, "ls-remote", "--refs", b.cfg.Remote, string(b.cfg.Layout)+"*")
	if err != nil {
		return false, err
	}
	if b.misfiled {
		b.caseless = true
	} else if !b.caseless {
		// git sets it in a repository it creates on a file system that ignores case.
		v, _ := b.output(ctx, nil, "config", "--type=bool", "core.ignoreCase")
		b.caseless = v == "true"
	}
	slices.Sort(ids)
	for _, id := range ids {
		low := strings.ToLower(id) // ids are ASCII
		if remote.ValidID(id) != nil {
			out[id] = ""
		} else if bad[id] {
			out[id] = broken
		} else if k, ok := kept[low]; ok && b.caseless {
			out[id] = k
		} else {
			kept[low] = id
		}
	}
	for id, k := range out {
		if k == "" || b.leftOut[id] == k {
			continue
		}
		refs := []string{b.mirrorRef(id), b.mirrorRef(k)}
		if k == broken {
			refs = refs[:1] // the line it held before is no longer the remote's
		}
		err := b.withMirror(ctx, func() error {
			for _, ref := range refs {
				if err := b.run(ctx, nil, nil, "update-ref", "-m", "cairn: case twin", "-d", ref); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return false, err
		}
	}
	changed := !maps.Equal(out, b.leftOut)
	b.leftOut = out
	return changed, nil
}

// broken is leftOut's mark of a ref whose object the remote does not have.
const broken = "/"

// withLeftOut adds the lines leaveOut left out to err, the mirror listing's error, as lines left
// out: twins and broken refs, each with its reason and step; names that are no workflow id are
// no lines.
func (b *Backend) withLeftOut(err error) error {
	var ids []string
	var lines []remote.LeftOut
	for id, k := range b.leftOut {
		switch k {
		case "":
			continue
		case broken:
			lines = append(lines, remote.LeftOut{ID: id, Reason: remote.Damaged, Ref: b.remoteRef(id), Step: b.damagedStep(id)})
		default:
			lines = append(lines, remote.LeftOut{ID: id, Reason: remote.CaseTwin, Twin: k, Ref: b.remoteRef(id), Step: b.twinStep(id, k)})
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return err
	}
	ue, ok := errors.AsType[*remote.UnreadableError](err)
	if !ok && err != nil {
		return err
	}
	if !ok {
		ue = &remote.UnreadableError{}
	}
	ue.IDs = append(ue.IDs, ids...)
	slices.Sort(ue.IDs)
	ue.Lines = append(ue.Lines, lines...)
	slices.SortFunc(ue.Lines, func(x, y remote.LeftOut) int { return strings.Compare(x.ID, y.ID) })
	if ue.Err == nil {
		ue.Err = b.leftOutError(ue.IDs[0])
	}
	return ue
}

// leftOutError is the error for id, a line leaveOut left out.
func (b *Backend) leftOutError(id string) error {
	k := b.leftOut[id]
	if k == broken {
		return remote.Unreadable(fmt.Errorf("the remote's ref for workflow %s, %s, points at a commit the remote does not have (its repository is damaged): %s", id, b.remoteRef(id), b.damagedStep(id)))
	}
	return remote.Unreadable(fmt.Errorf("workflow ids %s and %s differ only in case, and this machine's file system holds their refs as one file, so only %s is synced here: %s", k, id, k, b.twinStep(id, k)))
}

// notCairnsError is the error for workflow id, whose ref points at a commit Cairn did not write,
// or at an object of another kind (git's objecttype: a tag, a tree, a blob).
func (b *Backend) notCairnsError(id, kind string) error {
	what := "a commit Cairn did not write"
	if kind != "commit" {
		what = "a " + kind + ", which Cairn did not write"
	}
	return remote.Unreadable(fmt.Errorf("the remote's ref for workflow %s, %s, points at %s: %s", id, b.remoteRef(id), what, b.notCairnsStep(id, kind)))
}

// rewrittenError is the error for workflow id's line, whose commits read as Cairn's up to where
// what says it is not: a history rewritten by hand (squashed, a revision dropped) and
// force-pushed. No sync can read it, so it gets the step of a line Cairn did not write.
func (b *Backend) rewrittenError(id, what string) error {
	return remote.Unreadable(fmt.Errorf("the remote's line for workflow %s %s: it was rewritten by something other than Cairn; %s", id, what, b.notCairnsStep(id, "commit")))
}

// The steps below name the one ref to act on and say why acting loses no work: a ref deleted
// on the remote is every machine's shared copy of that line.

// notCairnsStep is the step for workflow id's ref holding commits Cairn did not write: they
// may be someone's work pushed to the wrong place, so they are looked at and kept first.
// git log shows a commit's history, and nothing of another kind of object.
func (b *Backend) notCairnsStep(id, kind string) string {
	r, ref, show := b.remoteName(), b.remoteRef(id), "log"
	if kind != "commit" {
		show = "show"
	}
	see := fmt.Sprintf("see what it holds (git fetch %s %s, then git %s FETCH_HEAD) and keep any work there on a branch", r, ref, show)
	if b.claimsLine() {
		return see + " before anything deletes it"
	}
	return fmt.Sprintf("%s; deleting the ref then (git push %s :%s) loses no workflow: every machine keeps its own copy of %s, and one where it is active pushes it again", see, r, ref, id)
}

// UnreadableStep implements remote.Stepper: the step for workflow id's line, one of whose
// records Cairn did not write.
func (b *Backend) UnreadableStep(id string) string { return b.notCairnsStep(id, "commit") }

// claimsLine reports whether b's lines are task claims rather than workflows, which no machine
// pushes again whole.
func (b *Backend) claimsLine() bool {
	return b.cfg.Layout == ClaimRefs || b.cfg.Layout == ClaimBranches
}

// damagedStep is the step for workflow id's ref, which points at an object the remote lacks.
func (b *Backend) damagedStep(id string) string {
	step := fmt.Sprintf("delete it (git push %s :%s), which loses nothing more since nobody can read that line there", b.remoteName(), b.remoteRef(id))
	if b.claimsLine() {
		return step
	}
	return step + ": every machine keeps its own copy of " + id + ", and one where it is active pushes it again"
}

// twinStep is the step for id, left out as a case twin of kept. Nothing needs doing: deleting
// id's ref while its work goes on would stop the machine that holds it from sharing it (a new
// line of a twin's id is refused, and nothing renames a workflow), so the deletion is offered
// only once that work has ended, and only there; kept's ref must stay.
func (b *Backend) twinStep(id, kept string) string {
	return fmt.Sprintf("nothing is lost and nothing needs doing: %s's line stays on the remote and a clone whose file system tells case apart syncs both; once %s has ended, the machine whose files hold its work (only there) may quiet this with git push %s :%s, leaving %s alone",
		id, id, b.remoteName(), b.remoteRef(id), b.remoteRef(kept))
}

// remoteName is the remote as a step names it: a URL may hold a user name or a token.
func (b *Backend) remoteName() string {
	if remote.IsName(b.cfg.Remote) {
		return b.cfg.Remote
	}
	return "<remote>"
}

// Mirrored lists the heads as of the last fetch, from the local mirror alone: no network, for
// status lines that must not wait on the remote.
func (b *Backend) Mirrored(ctx context.Context) (remote.Heads, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.mirrored(ctx)
}

func (b *Backend) mirrored(ctx context.Context) (remote.Heads, error) {
	tips, err := b.tips(ctx, "")
	if tips == nil {
		return nil, err
	}
	h := remote.Heads{}
	for id, t := range tips {
		h[id] = t.rev
	}
	return h, err
}

// Watch implements remote.Backend by polling Heads with jitter.
func (b *Backend) Watch(ctx context.Context, known remote.Heads) (remote.Heads, error) {
	return remote.Poll(ctx, b, known, b.cfg.Poll)
}

// Since implements remote.Backend: a fetch of the workflow's ref, then a local read.
func (b *Backend) Since(ctx context.Context, id string, rev int64) ([]remote.Record, error) {
	return remote.Records(ctx, b, id, rev)
}

// Each implements remote.Reader: Since, with each record handed to fn as git gives it, so that
// the line is never held whole here. fn must not call b.
func (b *Backend) Each(ctx context.Context, id string, rev int64, fn func(remote.Record) error) error {
	if err := remote.ValidID(id); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.leftOut[id] != "" {
		return b.leftOutError(id)
	}
	if err := b.fetch(ctx, id); err != nil {
		return err
	}
	t, ok, err := b.tip(ctx, id)
	if err != nil || !ok || t.rev <= rev {
		return err
	}
	return b.read(ctx, id, t, max(rev, 0), fn)
}

// Holds reports whether b's remote holds, in its line of workflow id, the head of that line as
// other (a Backend of the same clone through another remote) last fetched it: the two remotes
// are then one repository (a remote renamed), or copies of one, as far as id goes. It fetches
// id's line from b's remote; false when other has no line of id, or git fails.
func (b *Backend) Holds(ctx context.Context, other *Backend, id string) bool {
	if remote.ValidID(id) != nil {
		return false
	}
	other.mu.Lock()
	was, ok, err := other.tip(ctx, id)
	other.mu.Unlock()
	if err != nil || !ok {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fetch(ctx, id) != nil {
		return false
	}
	now, ok, err := b.tip(ctx, id)
	return err == nil && ok && b.run(ctx, nil, nil, "merge-base", "--is-ancestor", was.oid, now.oid) == nil
}

// Append implements remote.Backend: each of data's records is committed here as it comes, and
// the commits are pushed at once.
func (b *Backend) Append(ctx context.Context, id string, after int64, data remote.Data) (int64, error) {
	data, err := remote.CheckAppend(id, after, data)
	if err != nil {
		return 0, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok, err := b.tip(ctx, id)
	if err != nil {
		return 0, err
	}
	if !ok {
		// A new line. Ids that differ only in case are two refs here but one file on a
		// case-insensitive file system (macOS, Windows), where a clone could fetch neither:
		// the remote's ids are read first, and such an id is refused.
		if err := b.fetch(ctx, "*"); err != nil {
			return 0, err
		}
		if twin, err := b.caseTwin(ctx, id); err != nil || twin != "" {
			if err == nil {
				err = fmt.Errorf("workflow id %s differs only in case from %s, which the remote has: on macOS and Windows the two would be one file; choose another id", id, twin)
			}
			return 0, err
		}
		if t, ok, err = b.tip(ctx, id); err != nil {
			return 0, err
		}
	}
	if t.rev != after {
		// The mirror is behind (or ahead of a writer that is behind): ask the remote.
		if err := b.fetch(ctx, id); err != nil {
			return 0, err
		}
		if t, ok, err = b.tip(ctx, id); err != nil {
			return 0, err
		}
		if t.rev != after {
			return 0, &remote.ConflictError{Workflow: id, Expected: after, Current: t.rev}
		}
	}
	parent := ""
	if ok {
		parent = t.oid
	}
	head, n := parent, int64(0)
	if err := data(func(d []byte) (err error) {
		n++
		head, err = b.commit(ctx, id, after+n, head, d)
		return err
	}); err != nil {
		return 0, err
	}
	rejected, said, err := b.push(ctx, b.remoteRef(id), parent, head)
	if err != nil {
		return 0, err
	}
	if damaged(rejected) {
		return 0, b.refusedDamaged(ctx, b.remoteRef(id), rejected)
	}
	if rejected != "" {
		// Refused: either the head moved (a conflict, nothing written) or the host refuses
		// the ref itself. The remote's head tells which: a line rewritten by hand and
		// force-pushed since it was read moved it too, even to a commit of the same revision.
		if err := b.fetch(ctx, id); err != nil {
			return 0, fmt.Errorf("push refused (%s), and reading the remote's head failed: %w", rejected, err)
		}
		cur, _, err := b.tip(ctx, id)
		if err != nil {
			return 0, err
		}
		if cur.rev != after || cur.oid != parent {
			return 0, &remote.ConflictError{Workflow: id, Expected: after, Current: cur.rev}
		}
		if strings.Contains(rejected, "stale info") {
			// The lease, the head the fetch reads, is not the head where the push goes.
			return 0, b.splitLine(id)
		}
		return 0, &RefusedError{Ref: b.remoteRef(id), Reason: rejected, HostSaid: said}
	}
	if parent == "" {
		// A new line: its lease (no such ref) holds where the push goes even when that is
		// another repository than the fetch reads, so it is read back there, as Probe does.
		// Unread (the fetch side out of reach), the push stands: the next sync finds out.
		if listed, err := b.output(ctx, nil, "ls-remote", "--", b.cfg.Remote, b.remoteRef(id)); err == nil && strings.TrimSpace(listed) == "" {
			return 0, b.splitLine(id)
		}
	}
	// The records are on the remote whatever happens to the mirror now; a failed update
	// here only means the next call fetches first. The mirror moves only from the head this
	// append read ("" for none: the ref must not exist): another process of this clone that
	// fetched or pushed past it meanwhile must not be moved back.
	_ = b.withMirror(ctx, func() error {
		return b.run(ctx, nil, nil, "update-ref", "-m", "cairn: pushed", b.mirrorRef(id), head, parent)
	})
	return after + n, nil
}

// splitLine is ErrSplit for the line of workflow id (or of its claims), pushed.
func (b *Backend) splitLine(id string) error {
	what := "the line of " + id + " pushed"
	if b.claimsLine() {
		what = "the task claims line of " + id + " pushed"
	}
	return splitError{b.remoteName(), what}
}

// ErrSplit matches (errors.Is) a push refused because the remote pushes to another repository
// than it fetches from (a pushurl or pushInsteadOf naming another one): the line Cairn reads is
// never the one it writes, so every sync fails the same way until it shares through a remote
// that fetches and pushes one repository.
var ErrSplit = errors.New("the remote pushes to another repository than it fetches from")

// splitError is ErrSplit for what, the line of a workflow or of its claims (or a probe's), as
// pushed to remote.
type splitError struct{ remote, what string }

func (e splitError) Error() string {
	return fmt.Sprintf("%s, so %s there is never read back: cairn remote enable REMOTE, with a remote that fetches and pushes one repository, shares through it",
		SplitWhy(e.remote), e.what)
}

// SplitWhy says that remote pushes to another repository than it fetches from, and how to see
// where.
func SplitWhy(remote string) string {
	return fmt.Sprintf("%s pushes to another repository than it fetches from (git remote get-url --push %s shows where)", remote, remote)
}

func (splitError) Is(target error) bool { return target == ErrSplit }

// ErrRefused is what a *RefusedError matches with errors.Is.
var ErrRefused = errors.New("remote refused the ref")

// RefusedError reports a push the host refused for a reason other than a moved head: a hook,
// a protected namespace, permissions, or a damaged repository.
type RefusedError struct {
	Ref    string
	Reason string // git's summary of the refusal
	// HostSaid is what the remote's side said (a hook's reason, one safe line), or "".
	HostSaid string
	// Broken is set when the refusal is a damaged repository's (see Damaged): a ref there
	// that points at an object it does not have, when one was found, and Step what ends it.
	Broken, Step string
	// probe is set for a probe's push (cairn remote enable, doctor), which syncs nothing: a
	// sync's step does not follow what the host said.
	probe bool
}

func (e *RefusedError) Error() string {
	switch {
	case e.Broken != "":
		return fmt.Sprintf("the remote refused %s (%s): its repository is damaged, %s there points at an object it does not have, and every push is refused until that ref is gone; %s", e.Ref, e.Reason, e.Broken, e.Step)
	case e.Damaged():
		return fmt.Sprintf("the remote refused %s (%s): its repository is damaged, and every push is refused until it is repaired (git fsck there names the ref that points at a missing object)", e.Ref, e.Reason)
	}
	if e.HostSaid != "" && e.probe {
		return fmt.Sprintf("the remote refused %s (%s), and said: %s", e.Ref, e.Reason, e.HostSaid)
	}
	if e.HostSaid != "" {
		// The host said why: what to do is in its words, not in which refs it accepts; they
		// are the host's to act on, and the step here is to sync once it has.
		return fmt.Sprintf("the remote refused %s (%s), and said: %s; nothing here was lost: the host's admin settles what it said, then %s", e.Ref, e.Reason, e.HostSaid, remote.NextSyncTries)
	}
	return fmt.Sprintf("the remote refused %s (%s): run `cairn doctor` to check which refs it accepts", e.Ref, e.Reason)
}

// Damaged reports a refusal that is no rule of the host's: while one of its refs points at an
// object it does not have, git's check of a push there fails for every push, to any ref.
func (e *RefusedError) Damaged() bool { return damaged(e.Reason) }

func damaged(reason string) bool { return strings.Contains(reason, "missing necessary objects") }

// refusedDamaged is the error for a push to ref the remote refused as damaged (see
// RefusedError.Damaged): a fetch of every line finds the refs to missing objects (leaveOut), and
// the first is named with the step that ends it.
func (b *Backend) refusedDamaged(ctx context.Context, ref, reason string) error {
	_ = b.fetch(ctx, "*") // only to find them: the push's refusal is the error
	e := &RefusedError{Ref: ref, Reason: reason}
	for _, id := range slices.Sorted(maps.Keys(b.leftOut)) {
		if b.leftOut[id] == broken {
			e.Broken, e.Step = b.remoteRef(id), b.damagedStep(id)
			break
		}
	}
	return e
}

// Is makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// caseTwin is a mirrored id that differs from id only in case, or "".
func (b *Backend) caseTwin(ctx context.Context, id string) (string, error) {
	twin := ""
	err := b.lines(ctx, func(line string) error {
		if other := strings.TrimPrefix(line, b.mirror); twin == "" && other != id && strings.EqualFold(other, id) {
			twin = other
		}
		return nil
	}, "for-each-ref", "--format=%(refname)", strings.TrimSuffix(b.mirror, "/"))
	return twin, err
}

// tipInfo is a mirror ref's commit and the revision its subject names.
type tipInfo struct {
	oid string
	rev int64
}

// tip reads one workflow's mirror ref; ok is false when there is none (revision 0). Where the
// file system ignores case, a fetch of a prefix of twin ids (Since's "<id>*") before any Heads
// left one out fills their one ref file with whichever it wrote last: found holding id's twin's
// line, the twin is left out as Heads does and id's line fetched again.
func (b *Backend) tip(ctx context.Context, id string) (tipInfo, bool, error) {
	was := b.misfiled
	b.misfiled = false
	tips, err := b.tips(ctx, id)
	if b.misfiled {
		if changed, uerr := b.leaveOut(ctx); uerr == nil && changed {
			if b.leftOut[id] != "" {
				return tipInfo{}, false, b.leftOutError(id)
			}
			if err := b.fetch(ctx, id); err != nil {
				return tipInfo{}, false, err
			}
			tips, err = b.tips(ctx, id)
		}
	}
	b.misfiled = b.misfiled || was
	t, ok := tips[id]
	return t, ok, err
}

// tips reads the mirror refs (all of them when id is empty) with their revisions. Listing all,
// a ref whose commit Cairn did not write is left out and named in a *remote.UnreadableError
// returned with the others; one whose subject is too long to be Cairn's is cut short by the
// listing, its ref still named at the line's start, rather than read whole.
func (b *Backend) tips(ctx context.Context, id string) (map[string]tipInfo, error) {
	pattern := strings.TrimSuffix(b.mirror, "/")
	if id != "" {
		pattern = b.mirrorRef(id)
	}
	tips := map[string]tipInfo{}
	var skipped *remote.UnreadableError
	err := b.cutLines(ctx, func(line string, cut bool) error {
		f := strings.Fields(line)
		if len(f) < 3 {
			return nil
		}
		ref := strings.TrimPrefix(f[2], b.mirror)
		if ref == f[2] || remote.ValidID(ref) != nil || (id != "" && ref != id) {
			return nil // not a workflow ref of ours
		}
		// Only a commit is a record: a tag's message can read as a commit's subject.
		rev, ok := parseSubject(strings.Join(f[3:], " "), ref)
		ok = ok && !cut && f[1] == "commit"
		if !ok && !cut && len(f) > 4 && f[3] == "cairn" && f[4] != ref && strings.EqualFold(f[4], ref) {
			b.misfiled = true
		}
		switch {
		case !ok && id == "":
			if skipped == nil {
				skipped = &remote.UnreadableError{Err: b.notCairnsError(ref, f[1])}
			}
			skipped.IDs = append(skipped.IDs, ref) // for-each-ref lists them sorted
			skipped.Lines = append(skipped.Lines, remote.LeftOut{ID: ref, Reason: remote.NotCairns, Ref: b.remoteRef(ref), Step: b.notCairnsStep(ref, f[1])})
		case !ok:
			return b.notCairnsError(ref, f[1])
		default:
			tips[ref] = tipInfo{oid: f[0], rev: rev}
		}
		return nil
	}, "for-each-ref", "--format=%(objectname) %(objecttype) %(refname) %(subject)", pattern)
	if err != nil {
		return nil, err
	}
	if skipped != nil {
		return tips, skipped
	}
	return tips, nil
}

// subject is a record commit's first line; the revision in it is what Heads reports without
// walking the history.
func subject(id string, rev int64) string { return fmt.Sprintf("cairn %s r%d", id, rev) }

// parseSubject is the revision a record commit of id's subject s names; ok is false when Cairn
// did not write it.
func parseSubject(s, id string) (rev int64, ok bool) {
	rest, ok := strings.CutPrefix(s, "cairn "+id+" r")
	if ok {
		if n, err := strconv.ParseInt(rest, 10, 64); err == nil && n > 0 {
			return n, true
		}
	}
	return 0, false
}

// fetch brings the remote's refs for id (every workflow when id is "*") into the mirror. The
// pattern refspec fetches nothing rather than failing when the remote has no such ref, and
// --prune drops mirror refs the remote no longer has.
func (b *Backend) fetch(ctx context.Context, id string) error {
	err := b.fetchOnce(ctx, id)
	// Each round leaves out at least one more ref, and stops at the first that does not.
	for range 16 {
		ge, ok := errors.AsType[*GitError](err)
		if !ok {
			break
		}
		if oid, ok := notOurRef(ge.Stderr); ok {
			// A ref on the remote points at an object the remote does not have: the
			// remote refuses the whole fetch, every workflow's with it.
			if b.missing == nil {
				b.missing = map[string]bool{}
			}
			b.missing[oid] = true
		} else if !localLockBusy(ge.Stderr) {
			break
		}
		// Or a lock still refused after the retries: a ref this file system cannot hold
		// as a file of its own fails every fetch. The remote is asked which to leave out.
		if changed, uerr := b.leaveOut(ctx); uerr != nil || !changed {
			break
		}
		err = b.fetchOnce(ctx, id)
	}
	return err
}

// notOurRef is the object upload-pack refused to send because the remote does not have it.
func notOurRef(stderr string) (string, bool) {
	_, oid, ok := strings.Cut(stderr, "not our ref ")
	oid = strings.TrimSpace(oid)
	return oid, ok && len(oid) >= 40 && strings.Trim(oid, "0123456789abcdef") == ""
}

// fetchOnce is fetch without leaveOut, retrying while another git updates a mirror ref.
func (b *Backend) fetchOnce(ctx context.Context, id string) error {
	src, dst := b.remoteRef(id), b.mirrorRef(id)
	if id != "*" {
		// "<ref>*" matches the workflow and any whose id it prefixes; those land in their
		// own mirror refs, which is harmless and keeps absence from being an error.
		src, dst = src+"*", dst+"*"
	}
	// --no-filter: in a partial clone (git clone --filter=...) a fetch takes the clone's filter,
	// and each record's blob left on the host would then be fetched on its own when read.
	args := []string{"fetch", "--quiet", "--no-tags", "--prune", "--no-write-fetch-head",
		"--no-recurse-submodules", "--no-auto-gc", "--no-filter", "--", b.cfg.Remote, "+" + src + ":" + dst}
	for out := range b.leftOut {
		args = append(args, "^"+b.remoteRef(out))
	}
	return b.withMirror(ctx, func() error {
		var err error
		for attempt := range 3 {
			// Left by gits that were killed: none holds them, and the refs they guard are
			// this clone's copy of the remote's, which the fetch writes again. One killed a
			// moment ago is cleared by the next attempt, once git has waited for it.
			for _, l := range b.leftLocks(time.Now()) {
				_ = os.Remove(l)
			}
			err = b.run(ctx, nil, nil, args...)
			var ge *GitError
			if err == nil || !errors.As(err, &ge) || !localLockBusy(ge.Stderr) {
				return err
			}
			// Another git holds a mirror ref's lock file, or updated the ref between git's
			// read of it and its lock (a git of the user's, or one whose Cairn was killed
			// and that runs on), or one that was killed left its lock file.
			if remote.Sleep(ctx, time.Duration(attempt+1)*50*time.Millisecond) != nil {
				return err
			}
		}
		return err
	})
}

// localLockBusy reports git's refusals to update a local ref another git is updating.
func localLockBusy(stderr string) bool {
	return strings.Contains(stderr, "cannot lock ref") || strings.Contains(stderr, lockExists)
}

// lockExists is git's words for a ref's lock file found in its place.
const lockExists = ".lock': File exists"

// read hands fn the records after rev up to t, oldest first, walking back from t and reading
// the blobs in one cat-file, one at a time as it writes them. It checks that the line is
// Cairn's: one parent each, subjects counting down.
func (b *Backend) read(ctx context.Context, id string, t tipInfo, rev int64, fn func(remote.Record) error) error {
	n := t.rev - rev
	// Grown by what git prints, never sized by n: the revision comes from a subject anyone who
	// can push may write, and a forged one must be an error rather than a huge allocation.
	var oids []string
	want := t.rev
	err := b.lines(ctx, func(line string) error {
		head, subj, _ := strings.Cut(line, "\t")
		f := strings.Fields(head)
		got, ok := parseSubject(subj, id)
		if !ok {
			return b.notCairnsError(id, "commit")
		}
		if len(f) == 0 || got != want || (got == 1) != (len(f) == 1) || len(f) > 2 {
			return b.rewrittenError(id, fmt.Sprintf("is broken at revision %d", want))
		}
		oids = append(oids, f[0])
		want--
		return nil
	}, "log", "--first-parent", "--format=%H %P%x09%s", "-n", strconv.FormatInt(n, 10), t.oid, "--")
	if errors.Is(err, errLongLine) {
		return b.notCairnsError(id, "commit")
	}
	if err != nil {
		return err
	}
	if int64(len(oids)) != n {
		return fmt.Errorf("the remote's line for workflow %s is shorter than its head says", id)
	}
	var in bytes.Buffer
	for i := len(oids) - 1; i >= 0; i-- {
		fmt.Fprintf(&in, "%s:record\n", oids[i])
	}
	// The blobs are read as cat-file writes them, so that one too large is refused from its
	// header, before it is read: closing the pipe then ends cat-file.
	pr, pw := io.Pipe()
	ran := make(chan error, 1)
	go func() {
		err := b.run(ctx, &in, pw, "cat-file", "--batch")
		pw.CloseWithError(err) // nil: the reader sees the end
		ran <- err
	}()
	err = b.readBatch(bufio.NewReader(pr), id, rev, len(oids), fn)
	pr.Close()
	if runErr := <-ran; runErr != nil && (err == nil || errors.Is(err, runErr)) {
		return runErr // git failed, rather than a record found wrong
	}
	return err
}

// readBatch reads n records, revisions rev+1 on, from git cat-file --batch's output, and hands
// each to fn before it reads the next.
func (b *Backend) readBatch(r *bufio.Reader, id string, rev int64, n int, fn func(remote.Record) error) error {
	for i := range n {
		hdr, err := r.ReadString('\n')
		if err != nil {
			return fmt.Errorf("reading revision %d of %s: %w", rev+int64(i)+1, id, err)
		}
		f := strings.Fields(hdr)
		if len(f) != 3 || f[1] != "blob" {
			return b.rewrittenError(id, fmt.Sprintf("has no record in revision %d's commit", rev+int64(i)+1))
		}
		size, err := strconv.Atoi(f[2])
		if err != nil || size < 0 {
			return fmt.Errorf("git cat-file gave a bad size for revision %d of %s", rev+int64(i)+1, id)
		}
		if size > remote.MaxRecord {
			return remote.Unreadable(fmt.Errorf("revision %d of workflow %s is a record of %d bytes, larger than Cairn writes: it was not written by Cairn; %s", rev+int64(i)+1, id, size, b.notCairnsStep(id, "commit")))
		}
		d := make([]byte, size+1) // the object and cat-file's newline
		if _, err := io.ReadFull(r, d); err != nil {
			return fmt.Errorf("reading revision %d of %s: %w", rev+int64(i)+1, id, err)
		}
		if err := fn(remote.Record{Rev: rev + int64(i) + 1, Data: d[:size]}); err != nil {
			return err
		}
	}
	return nil
}

// commit writes one record as a commit on parent ("" for the first) and returns its oid. The
// identity is fixed (a CI runner may have no user.email); a nonce keeps two machines' equal
// records after the same head from being one commit that both would think they pushed.
func (b *Backend) commit(ctx context.Context, id string, rev int64, parent string, data []byte) (string, error) {
	blob, err := b.output(ctx, bytes.NewReader(data), "hash-object", "-w", "--stdin")
	if err != nil {
		return "", err
	}
	tree, err := b.output(ctx, strings.NewReader("100644 blob "+blob+"\trecord\n"), "mktree")
	if err != nil {
		return "", err
	}
	nonce := make([]byte, 8)
	rand.Read(nonce)
	msg := fmt.Sprintf("%s\n\nCairn-Workflow: %s\nCairn-Revision: %d\nCairn-Nonce: %x\n", subject(id, rev), id, rev, nonce)
	args := []string{"commit-tree", tree}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	return b.output(ctx, strings.NewReader(msg), args...)
}

// push sends head to ref if the remote's ref is still old ("" for none). It returns git's
// reason when the remote refused the update (which the host may word: safeSaid), with what the remote's side said about it (a
// hook's reason: GitError.Host), and an error when the outcome is unknown.
func (b *Backend) push(ctx context.Context, ref, old, head string) (rejected, said string, err error) {
	var out bytes.Buffer
	err = b.run(ctx, nil, &out, "push", "--porcelain", "--no-verify", "--no-recurse-submodules",
		"--force-with-lease="+ref+":"+old, "--", b.cfg.Remote, head+":"+ref)
	// --porcelain prints "<flag>\t<from>:<to>\t<summary>" per ref; '!' is a refusal.
	for line := range strings.Lines(out.String()) {
		f := strings.SplitN(strings.TrimSuffix(line, "\n"), "\t", 3)
		if len(f) == 3 && strings.HasSuffix(f[1], ":"+ref) {
			if f[0] == "!" {
				if ge, ok := errors.AsType[*GitError](err); ok {
					said = ge.Host
				}
				return safeSaid(f[2]), said, nil // the host's words, as said is
			}
			if err == nil {
				return "", "", nil
			}
		}
	}
	if err != nil {
		return "", "", err
	}
	return "", "", fmt.Errorf("git push said nothing about %s; the outcome is unknown", ref)
}

// maxLine bounds a line of git's listings (for-each-ref, log) that Cairn reads: a commit's
// subject is whatever its writer made it, and one with a huge subject, pushed by anyone with
// access, must be an error rather than read whole into memory. Cairn's are a few dozen bytes.
const maxLine = 64 << 10

// errLongLine is lines' error for a line longer than maxLine; the callers name the ref.
var errLongLine = errors.New("a commit on the remote was not written by Cairn")

// lines runs git and calls fn with each line it prints, as it prints them, without the
// newline; an error from fn, or a line longer than maxLine, stops git and is returned.
func (b *Backend) lines(ctx context.Context, fn func(line string) error, args ...string) error {
	return b.cutLines(ctx, func(line string, cut bool) error {
		if cut {
			return fmt.Errorf("git %s printed a line of more than %d bytes: %w", args[0], maxLine, errLongLine)
		}
		return fn(line)
	}, args...)
}

// cutLines is lines, except that a line longer than maxLine is handed to fn as its first
// maxLine bytes with cut set, the rest read and dropped, rather than ending the listing.
func (b *Backend) cutLines(ctx context.Context, fn func(line string, cut bool) error, args ...string) error {
	pr, pw := io.Pipe()
	ran := make(chan error, 1)
	go func() {
		err := b.run(ctx, nil, pw, args...)
		pw.CloseWithError(err) // nil: the reader sees the end
		ran <- err
	}()
	r := bufio.NewReaderSize(pr, 4096)
	var line []byte
	var err error
	for err == nil {
		chunk, rerr := r.ReadSlice('\n')
		if len(line) <= maxLine {
			line = append(line, chunk[:min(len(chunk), maxLine+1-len(line))]...)
		}
		if rerr == bufio.ErrBufferFull {
			continue
		}
		if l := bytes.TrimSuffix(line, []byte("\n")); len(l) > 0 || rerr == nil {
			cut := len(l) > maxLine
			err = fn(string(l[:min(len(l), maxLine)]), cut)
		}
		line = line[:0]
		if rerr != nil {
			if rerr != io.EOF {
				err = rerr
			}
			break
		}
	}
	pr.Close()
	runErr := <-ran
	if runErr != nil && (err == nil || errors.Is(err, runErr)) {
		return runErr // git failed, rather than a line found wrong
	}
	return err
}

func (b *Backend) output(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
	var out bytes.Buffer
	if err := b.run(ctx, stdin, &out, args...); err != nil {
		return "", err
	}
	return strings.TrimSpace(out.String()), nil
}

// run runs git in the repository. Prompts are off (nobody is there to answer one in the MCP
// server): git's by GIT_TERMINAL_PROMPT, ssh's since git runs without the terminal (detach),
// and the askpass programs of both (usually a window on the desktop) by an empty GIT_ASKPASS,
// which outranks core.askPass and SSH_ASKPASS in git, and by an empty SSH_ASKPASS with
// SSH_ASKPASS_REQUIRE=never in ssh; credential helpers and SSH agents still answer.
// The project's hooks are off: core.hooksPath often names a directory the repository tracks,
// and a reference-transaction hook runs on every ref update, the mirror's included. The locale
// is C so git's porcelain is the same everywhere; the user's config, credential helpers and SSH
// setup are used as they are. git waits refLockWait for a ref's lock file another git holds.
// An http(s) transfer that stalls ends on its own (stallEnds).
func (b *Backend) run(ctx context.Context, stdin io.Reader, stdout io.Writer, args ...string) error {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "core.hooksPath=" + os.DevNull,
		"-c", "core.filesRefLockTimeout=" + strconv.FormatInt(refLockWait.Milliseconds(), 10)}, stallEnds(b.cfg.Timeout, args)...)...)
	cmd.Dir = b.cfg.Dir
	cmd.Env = gitEnv("GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=", "SSH_ASKPASS=", "SSH_ASKPASS_REQUIRE=never", "LC_ALL=C", "LANGUAGE=",
		"GIT_AUTHOR_NAME=Cairn", "GIT_AUTHOR_EMAIL=cairn@localhost",
		"GIT_COMMITTER_NAME=Cairn", "GIT_COMMITTER_EMAIL=cairn@localhost")
	cmd.Stdin = stdin
	cmd.Stdout = stdout
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 2 * time.Second
	waited := detach(cmd)
	err := cmd.Run()
	waited()
	if err != nil {
		if errors.Is(parent.Err(), context.DeadlineExceeded) {
			// The caller's time (a whole sync's) ran out while git waited: the remote did
			// not answer in time, as with Timeout below.
			return &GitError{Op: args[0], Err: parent.Err(), Stderr: "no answer in the time allowed"}
		}
		if parent.Err() != nil {
			return fmt.Errorf("git %s: %w", args[0], parent.Err())
		}
		if ctx.Err() != nil {
			return &GitError{Op: args[0], Err: ctx.Err(), Stderr: fmt.Sprintf("no answer within %s", b.cfg.Timeout)}
		}
		if errors.Is(err, exec.ErrNotFound) {
			return ErrNoGit
		}
		ge := &GitError{Op: args[0], Err: err, Stderr: diagnose(stderr.String()), Host: hostSaid(stderr.String())}
		if (ge.Op == "fetch" || ge.Op == "push") && remote.IsName(b.cfg.Remote) {
			// A name the clone no longer has fails every sync alike: asked here, where no
			// network is needed, only once git has failed.
			ge.NoRemote = NoSuchRemote(HasRemote(parent, b.cfg.Dir, b.cfg.Remote, b.cfg.Timeout))
		}
		return ge
	}
	return nil
}

// stallEnds is args with git told to end an http(s) transfer that stalls for timeout (rounded
// up, so that the caller's timeout says so first): the remote helper that holds its connection
// is no child the kernel ends with Cairn (terminateWithParent), and outlived git after kill -9.
func stallEnds(timeout time.Duration, args []string) []string {
	return append([]string{"-c", "http.lowSpeedLimit=1", "-c", "http.lowSpeedTime=" + strconv.Itoa(int((timeout+time.Second-1)/time.Second))}, args...)
}

// gitEnv is this process's environment for a git run in Config.Dir, then extra. It leaves out
// the variables that choose the repository, its objects or its ref namespace (git's own list of
// repository-local variables, plus the namespace and a hook's quarantine): set by a git hook
// that runs cairn, or left exported in a shell, they would make git ignore cmd.Dir and write
// Cairn's objects and refs somewhere else. Everything else (credentials, SSH, config) is the
// user's, used as it is.
func gitEnv(extra ...string) []string {
	env := os.Environ()
	out := make([]string, 0, len(env)+len(extra))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
			"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_PREFIX", "GIT_IMPLICIT_WORK_TREE",
			"GIT_GRAFT_FILE", "GIT_REPLACE_REF_BASE", "GIT_NO_REPLACE_OBJECTS", "GIT_SHALLOW_FILE",
			"GIT_QUARANTINE_PATH":
			continue
		}
		out = append(out, kv)
	}
	return append(out, extra...)
}

// ErrNoGit is a git command's error when no git is on PATH.
var ErrNoGit = errors.New("no git on PATH, and sharing workflows runs git: install git 2.29 or later")

// ErrNoRemote matches (errors.Is) a fetch or push that failed because the clone has no remote
// by the name sharing goes through any more (git remote rename, git remote remove): every sync
// fails the same way until sharing is enabled on a remote the clone has.
var ErrNoRemote = errors.New("no git remote by that name in this clone")

// ErrLocked matches (errors.Is) a git that could not update a ref of this clone (Cairn's copy of
// the remote's lines) because the ref's lock file exists even after git's wait and the
// retries: held by a git that runs on (stopped), or left where a sync does not clear it (see
// leftLocks), which fails every sync until it is gone. The GitError's line names it.
var ErrLocked = errors.New("a lock file holds a ref of this clone")

// GitError is a git command that failed.
type GitError struct {
	Op     string // the git subcommand
	Err    error
	Stderr string // git's last line of diagnostics, credentials in URLs masked
	// Host is what the remote's side printed ("remote: " lines: a hook's reason for refusing
	// a push), one safe line (hostSaid).
	Host string
	// NoRemote is set on a fetch or push whose remote, a name, is none of the clone's any
	// more (ErrNoRemote).
	NoRemote bool
}

func (e *GitError) Error() string {
	if e.Stderr == "" {
		return fmt.Sprintf("git %s: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("git %s: %s", e.Op, e.Stderr)
}

func (e *GitError) Unwrap() error { return e.Err }

// Is makes a git that could not write for want of space (its words under LC_ALL=C) match
// syscall.ENOSPC, as a write of Cairn's own does, and a remote the clone no longer has match
// ErrNoRemote, and a lock file in the way match ErrLocked.
func (e *GitError) Is(target error) bool {
	switch target {
	case ErrNoRemote:
		return e.NoRemote
	case ErrLocked:
		return strings.Contains(e.Stderr, lockExists)
	}
	return target == syscall.ENOSPC && strings.Contains(e.Stderr, "No space left on device")
}

// userinfo is the credentials of a URL as git's diagnostics name them: after "://"; in a host
// git:// could not reach ("unable to look up sam:s3cret@host"), which holds whatever the URL had
// before the host; and any user with a password ("sam:s3cret@host: Permission denied", ssh's).
var userinfo = lazyre.New(`(://|unable to (?:look up|connect to) )[^/\s@]+@|[^\s'"/@:]+:[^\s'"/@]*@`)

// diagnose is the line of git's diagnostics an error reports: the last one, except that a git
// too old for an option Cairn passes says so first and then prints its whole usage, whose last
// line names some other option, and that a ref's lock file found there is named first and then
// followed by a paragraph whose last line ("remove the file manually") names no file, and that
// a connection that failed (a remote gone, a host out of reach, a connection dropped) ends in
// git's advice ("... and the repository exists."), after the line that says why.
func diagnose(stderr string) string {
	for line := range strings.Lines(stderr) {
		if strings.HasPrefix(line, "error: unknown option") || strings.HasPrefix(line, "error: unknown switch") {
			return lastLine(line) + " (this git is too old: Cairn's sharing needs git 2.29 or later)"
		}
		if strings.Contains(line, lockExists) {
			// Never "delete it": a git that runs on would then write over what another wrote.
			return lastLine(line) + " (a git running in this repository holds it, or one that was killed left it: try again once no git runs here; one stopped with Ctrl-Z holds it until it is resumed)"
		}
	}
	if why, _, ok := strings.Cut(stderr, couldNotRead); ok {
		return lastLine(cmp.Or(strings.TrimSpace(why), couldNotRead))
	}
	return lastLine(stderr)
}

// couldNotRead is the line git prints when it could not talk to the remote, after its reason
// when it knows one.
const couldNotRead = "fatal: Could not read from remote repository."

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return masked(userinfo().ReplaceAllString(strings.TrimSpace(lines[len(lines)-1]), "${1}***@"))
}

// maxHostSaid bounds what the remote's side said, as told in an error: a hook's reason is a
// line or two, and anyone who can install one chooses its words.
const maxHostSaid = 300

// hostSaid is the lines git printed for the remote's side ("remote: ..."), such as a hook's
// reason for refusing a push, joined into one safe line (textsafe.Line) of at most maxHostSaid
// runes, credentials in URLs masked; "" when it said nothing.
func hostSaid(stderr string) string {
	var said []string
	for line := range strings.Lines(stderr) {
		if rest, ok := strings.CutPrefix(line, "remote: "); ok {
			// "error: hook declined to update REF" is git's own, as the refusal's reason says.
			if rest = strings.TrimSpace(rest); rest != "" && !strings.HasPrefix(rest, "error: hook declined") {
				said = append(said, rest)
			}
		}
	}
	if len(said) == 0 {
		return ""
	}
	return safeSaid(strings.Join(said, " "))
}

// safeSaid is what the host said (its words, or its reason for a refusal) as one safe line of
// at most maxHostSaid runes, credentials in URLs masked.
func safeSaid(s string) string {
	return secrets.Line(masked(userinfo().ReplaceAllString(s, "${1}***@")), maxHostSaid)
}

// urlPart is a run of text between the characters that part a URL (and a line of git's).
var urlPart = lazyre.New(`[^\s'"/?&=#;,@]+`)

// masked is line with each part of a secret's shape (a token in a URL's path or query, which
// git names as it names the URL) as ***; secrets.Hidden should the line have that shape all
// the same.
func masked(line string) string {
	if secrets.ScanString(line) == nil {
		return line
	}
	return secrets.Shown(urlPart().ReplaceAllStringFunc(line, func(p string) string {
		if secrets.ScanString(p) != nil {
			return "***"
		}
		return p
	}))
}
