package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/durable"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/store/migrate"
	"github.com/cairn-dev/cairn/internal/strictjson"
	"github.com/cairn-dev/cairn/internal/textsafe"
	"github.com/cairn-dev/cairn/internal/workflow"
)

// InitiativeRequest is the initiative tool's input. Action is one of get, create, set_status,
// add_milestone, update_milestone.
type InitiativeRequest struct {
	Action    string `json:"action"`
	Title     string `json:"title,omitempty"`
	Status    string `json:"status,omitempty"`
	Milestone string `json:"milestone,omitempty"`
	Note      string `json:"note,omitempty"`
}

// initiativeDoc is the initiative's L1 document (initiative.json).
const initiativeDoc = "initiative"

// InitiativeFile is the file that keeps the initiative, relative to the state directory.
var InitiativeFile = store.DocumentFile(initiativeDoc)

// statusFile is where seed 001's WORKFLOW-STATUS.yaml lives: at the project root when the
// project has one there, else beside Cairn's state in .claude/.
func (e *Engine) statusFile() string {
	if p := filepath.Join(e.root, workflow.StatusFileName); e.exists(p) {
		return p
	}
	return filepath.Join(e.root, ".claude", workflow.StatusFileName)
}

// statusName is statusFile as texts name it: from the project root, where a person looks.
func (e *Engine) statusName() string {
	name, _ := filepath.Rel(e.root, e.statusFile())
	return name
}

// createWithTitle is the step where there is no initiative yet: create takes a title, said here
// so that the next call is not refused for the one it left out.
const createWithTitle = "create one with action create and a title, one line naming it"

// Initiative reads or changes the long-lived initiative. Actions: get (also runs seed 001's
// sync with WORKFLOW-STATUS.yaml), create (title), set_status (status), add_milestone
// (milestone), update_milestone (milestone, status in_progress or completed).
func (e *Engine) Initiative(r InitiativeRequest) (*Result, error) {
	action := strings.ToLower(strings.TrimSpace(r.Action))
	now := e.now()
	if action == "get" {
		return e.syncInitiative()
	}
	var synced []string
	switch action {
	case "create", "set_status", "add_milestone", "update_milestone":
		var err error
		if synced, err = e.syncFirst(); err != nil {
			return nil, fmt.Errorf("%s was not done, since %s must be taken into account first: %w", action, e.statusName(), err)
		}
	}
	// An operation's refusal is the update's error: the store returns it as it is and writes
	// nothing.
	var ch workflow.InitiativeChange
	kept := "" // where an archived initiative create replaces is kept
	data, err := e.st.Update(initiativeDoc, func(cur []byte) (_ []byte, err error) {
		in, err := e.readInitiative(cur)
		if err != nil {
			return nil, err
		}
		// Every change writes the document whole, which the store refuses as if the caller
		// had sent the secret ("keep it in an environment variable").
		if f := secrets.ScanJSON(cur); cur != nil && f != nil {
			return nil, fmt.Errorf("%s was not done, nothing was changed: the initiative is not written again while %s", action, e.storedInitiativeSecret(f))
		}
		if in == nil && (action == "set_status" || action == "add_milestone" || action == "update_milestone") {
			return nil, errors.New("no initiative: " + createWithTitle)
		}
		switch action {
		case "create":
			title := textsafe.OneLine(r.Title)
			if in != nil && in.Status != workflow.InitiativeArchived {
				if title != "" && title == in.Title {
					// Created already: a retry. The status file is written if the first did
					// not get to it (a crash between the two writes).
					ch = workflow.InitiativeChange{Initiative: in, SyncStatusFile: true}
					return nil, nil
				}
				// Only a completed initiative can be archived: for an open one that step
				// would be refused. A completed one has nothing to go on with: archiving it
				// (for good) is the one step, and the user's.
				step := "ask the user whether it may be archived (set_status archived) to make room for another"
				if in.Status != workflow.InitiativeCompleted {
					step = "go on with it; only a completed one can be archived to make room for another"
				}
				return nil, fmt.Errorf("initiative %s (%s) already exists; nothing was changed: %s", in.ID, in.Status, step)
			}
			if title == "" {
				return nil, errors.New("create needs a title: one line naming the initiative")
			}
			if in != nil {
				// The archived initiative is replaced: kept first, so that it and its
				// milestones are not lost with the files that held them.
				name := keptInitiative(in.ID)
				_, err := e.st.Update(name, func(prev []byte) ([]byte, error) {
					if prev != nil && !bytes.Equal(prev, cur) {
						return nil, fmt.Errorf("%s.json holds another initiative", name)
					}
					return cur, nil
				})
				if err != nil {
					return nil, fmt.Errorf("create was not done: the archived initiative %s could not be kept (%w); nothing was changed", in.ID, err)
				}
				kept = filepath.Join(e.st.Dir(), name+".json")
			}
			var id string
			if id, err = workflow.NewID("initiative", now, nil); err == nil {
				ch = workflow.InitiativeChange{Changed: true, SyncStatusFile: true}
				ch.Initiative, err = workflow.NewInitiative(id, title, nil, now)
			}
		case "set_status":
			ch, err = workflow.SetInitiativeStatus(in, workflow.InitiativeStatus(strings.ToLower(strings.TrimSpace(r.Status))), now)
		case "add_milestone":
			ch, err = workflow.AddMilestone(in, workflow.MilestoneSpec{ID: r.Milestone, Title: r.Note}, now)
		case "update_milestone":
			switch strings.ToLower(strings.TrimSpace(r.Status)) {
			case "in_progress", "started", "start":
				ch, err = workflow.StartMilestone(in, strings.TrimSpace(r.Milestone), now)
			case "completed", "complete", "done":
				ch, err = workflow.CompleteMilestone(in, strings.TrimSpace(r.Milestone), now)
			default:
				err = fmt.Errorf("update_milestone takes status in_progress or completed, not %s", workflow.Quote(r.Status))
			}
		default:
			err = fmt.Errorf("unknown initiative action %s: use get, create, set_status, add_milestone or update_milestone", workflow.Quote(r.Action))
		}
		if err != nil || !ch.Changed {
			return nil, err
		}
		return json.Marshal(ch.Initiative)
	})
	if je := tooLarge(err); je != nil {
		return nil, fmt.Errorf("%s was not done: initiative.json would take more than the 1 MiB it may hold (%s); nothing was changed. Shorten long milestone titles in %s, %s",
			action, je.Reason, e.statusName(), workflow.EditTakenIn)
	}
	if err != nil {
		return nil, err
	}
	res := &Result{Changed: ch.Changed, Workflow: data, Warnings: synced}
	if ch.Initiative != nil {
		res.Message = fmt.Sprintf("initiative %s is %s, %d%% done", ch.Initiative.ID, ch.Initiative.Status, ch.Initiative.Progress)
		// A milestone's change names it: the initiative's line alone did not say it was made.
		// An id already there keeps its title and status, said after where the initiative
		// stands, as every retry that changed nothing is.
		m := workflow.Quote(strings.TrimSpace(r.Milestone))
		switch i := slices.IndexFunc(ch.Initiative.Milestones, func(x workflow.Milestone) bool { return x.ID == strings.TrimSpace(r.Milestone) }); {
		case action == "add_milestone" && !ch.Changed:
			res.Message += "; milestone " + m + " is already there, kept as it is"
		case action == "add_milestone":
			res.Message = "milestone " + m + " added; " + res.Message
		case action == "update_milestone" && ch.Changed && i >= 0:
			res.Message = "milestone " + m + " is " + string(ch.Initiative.Milestones[i].Status) + "; " + res.Message
		}
	}
	if kept != "" {
		if rel, err := filepath.Rel(e.root, kept); err == nil && filepath.IsLocal(rel) {
			kept = rel
		}
		res.Message += "; the archived initiative it replaces is kept in " + kept
	}
	if !ch.Changed && ch.Initiative != nil {
		// Nothing to write: an unusable file is said all the same, as a change would say it.
		if _, err := os.Lstat(e.statusFile()); ch.SyncStatusFile && errors.Is(err, fs.ErrNotExist) {
			if err := e.writeStatusFile(ch.Initiative); err != nil {
				res.Warnings = append(res.Warnings, e.statusName()+" not written: "+err.Error())
			} else {
				res.Changed = true
				res.Message += "; " + e.statusName() + ", which its creation had not written, is written now"
			}
		} else if _, err := e.statusPrev(ch.Initiative); err != nil && !errors.Is(err, errNoYAML) {
			res.Warnings = append(res.Warnings, e.statusName()+" was not used: "+err.Error())
		}
	}
	if !res.Changed {
		res.Message += "; nothing changed"
	}
	if ch.Changed && ch.SyncStatusFile {
		if err := e.writeStatusFile(ch.Initiative); err != nil {
			res.Warnings = append(res.Warnings, e.statusName()+" not updated: "+err.Error())
		}
	}
	return e.withoutStoredSecret(res, nil), nil
}

// withoutStoredSecret leaves out res's initiative document when it holds text of a secret's
// shape (kept before a save refused it, or written by hand): the initiative's answer gives the
// document to the model. A warning names the rule and where, never the text; the fix is the
// user's, since no action rewrites what is already there. notUpdated is why
// WORKFLOW-STATUS.yaml was not written from the document, if it was not: refused for the same
// secret, it is said in that one warning, not in a second.
func (e *Engine) withoutStoredSecret(res *Result, notUpdated error) *Result {
	f := secrets.ScanJSON(res.Workflow)
	same := f != nil && errors.Is(notUpdated, errStatusSecret)
	if notUpdated != nil && !same {
		res.Warnings = append(res.Warnings, e.statusName()+" not updated: "+notUpdated.Error())
	}
	if f == nil {
		return res
	}
	res.Workflow = nil
	w := "the initiative's document is not shown: " + e.storedInitiativeSecret(f)
	if same {
		w += "; until then " + e.statusName() + " is not updated from it"
	}
	res.Warnings = append(res.Warnings, w)
	return res
}

// errStatusSecret is why WORKFLOW-STATUS.yaml is not written from an initiative holding text
// of a secret's shape.
var errStatusSecret = errors.New("the initiative holds text of a secret's shape")

// storedInitiativeSecret says that initiative.json holds text of a secret's shape (f), naming
// the rule and where, never the text, and the step: the user's, as no action rewrites it.
func (e *Engine) storedInitiativeSecret(f *secrets.Finding) string {
	doc := filepath.Join(e.st.Dir(), InitiativeFile)
	if rel, err := filepath.Rel(e.root, doc); err == nil && filepath.IsLocal(rel) {
		doc = rel
	}
	return fmt.Sprintf("it holds text of a secret's shape (%s at %s), kept before Cairn refused such text or written by hand, and left as it is; tell the user, who can take it out of %s",
		f.Rule, f.Path, doc)
}

// readInitiative decodes initiative.json's stored bytes: nil when there are none. One a newer
// Cairn wrote is refused before it is decoded, so that no change (nor the sync) writes this
// Cairn's idea of it over what the newer one keeps there.
func (e *Engine) readInitiative(cur []byte) (*workflow.Initiative, error) {
	if cur == nil {
		return nil, nil
	}
	var v struct{ Version json.RawMessage }
	if json.Unmarshal(cur, &v) == nil {
		if n := migrate.NewerVersion(v.Version); n != nil {
			return nil, fmt.Errorf("initiative.json was written by a newer Cairn (version %s; this is Cairn %s, which reads 2.x) and is left untouched: install a Cairn newer than %s to read or change the initiative",
				n.Version, cairn.Version(), cairn.Version())
		}
	}
	in := new(workflow.Initiative)
	if err := json.Unmarshal(cur, in); err != nil {
		file := filepath.Join(e.st.Dir(), InitiativeFile)
		if rel, err := filepath.Rel(e.root, file); err == nil && filepath.IsLocal(rel) {
			file = rel
		}
		// The store passed it as strict JSON: only its shape is wrong, said in JSON's words.
		what := "a member's value is not of the form it takes"
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
			what = strictjson.ExplainIn(cur, te).Error()
		}
		return nil, fmt.Errorf("initiative.json does not hold an initiative Cairn reads (%s) and was left as it is: correct that in %s, and the initiative can be read again",
			what, file)
	}
	return in, nil
}

// keptInitiative is the state document an archived initiative is kept in when another is
// created: its id in lower case (as document names are), which Cairn's own ids start with
// "initiative-", so that an id taken from a status file cannot name another document.
func keptInitiative(id string) string {
	if id = strings.ToLower(id); strings.HasPrefix(id, "initiative-") {
		return id
	}
	return "initiative-" + id
}

// syncFirst runs the sync before a change whenever WORKFLOW-STATUS.yaml is there and usable,
// so that the change starts from the newer of the two sources: the change rewrites the file
// from initiative.json, and would drop what a person edited in it since (or the whole
// initiative, in a fresh clone where only the status file is committed). It returns the
// sync's warnings.
func (e *Engine) syncFirst() ([]string, error) {
	if doc, err := e.readStatusFile(e.statusFile()); err != nil || doc == nil {
		return nil, nil // none; or unusable, and then left as it is
	}
	res, err := e.syncInitiative()
	if err != nil {
		return nil, err
	}
	return res.Warnings, nil
}

// statusPrev is WORKFLOW-STATUS.yaml as it is read to be written from in; an error says why it
// is not (and so is left as it is).
func (e *Engine) statusPrev(in *workflow.Initiative) (*workflow.StatusDoc, error) {
	prev, err := e.readStatusFile(e.statusFile())
	if err == nil && prev != nil {
		err = leftAsItIs(prev.CheckIDs(in))
	}
	return prev, err
}

func (e *Engine) writeStatusFile(in *workflow.Initiative) error {
	prev, err := e.statusPrev(in)
	if errors.Is(err, errNoYAML) {
		prev = nil // putStatusFile says so
	} else if err != nil {
		return err
	}
	return e.putStatusFile(e.statusFile(), workflow.StatusDocFrom(in, prev))
}

// readStatusFile reads WORKFLOW-STATUS.yaml at p: nil when there is none or it holds no YAML.
// Any other failure is an error saying the file is to be left as it is: rewriting it from
// initiative.json would drop the keys its author or another tool added.
func (e *Engine) readStatusFile(p string) (*workflow.StatusDoc, error) {
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 && !e.inProject(p) {
		// Planted by a repository, it may lead to another project's initiative.
		return nil, leftAsItIs(errors.New("it is a link out of the project"))
	}
	data, err := durable.ReadPath(p, 256<<10, true)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err == nil && e.cfg.YAML == nil:
		return nil, errNoYAML
	case err == nil:
		var doc *workflow.StatusDoc
		if doc, err = e.cfg.YAML.ParseStatusDoc(data); err == nil {
			return doc, nil
		}
	}
	return nil, leftAsItIs(err)
}

// leftAsItIs is err, a reason WORKFLOW-STATUS.yaml is not used, saying it is kept; nil if
// err is.
func leftAsItIs(err error) error {
	if err == nil {
		return nil
	}
	left := "; it was left as it is, so that nothing written in it is lost"
	if errors.Is(err, durable.ErrNotRegular) || errors.Is(err, durable.ErrHardLinked) {
		left = "" // their own words say it was left untouched
	}
	return fmt.Errorf("%w%s: correct it, and the next initiative change brings it up to date", err, left)
}

func (e *Engine) putStatusFile(p string, d workflow.StatusDoc) error {
	if e.cfg.YAML == nil {
		return errNoYAML
	}
	out, err := e.cfg.YAML.MarshalStatusDoc(d)
	if err != nil {
		return err
	}
	// initiative.json may hold what a write refuses (stored before a rule found it, or
	// written by hand): it is not copied into a file of the project's.
	if f := secrets.ScanString(string(out)); f != nil {
		return fmt.Errorf("%w (%s), which Cairn does not write there", errStatusSecret, f.Rule)
	}
	// No component below the project root may be a link (.claude -> /elsewhere).
	if _, err := durable.MkdirBeneath(e.root, filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if err := durable.CheckBeneath(e.root, p); err != nil {
		return err
	}
	return durable.WriteFileAtomic(p, out, 0o644)
}

// syncInitiative is seed 001's sync on read: the newer of initiative.json and
// WORKFLOW-STATUS.yaml wins, a gap over five minutes is a warning, the stale side is updated.
func (e *Engine) syncInitiative() (*Result, error) {
	// Under initiative.json's lock from the read to both writes: another process's change in
	// between would otherwise be written over with what was read before it.
	var d workflow.SyncDecision
	var warnings []string
	keep := false // the file is there and unusable: not rewritten
	data, err := e.st.Update(initiativeDoc, func(cur []byte) ([]byte, error) {
		in, err := e.readInitiative(cur)
		if err != nil {
			return nil, err
		}
		doc, err := e.readStatusFile(e.statusFile())
		if err == nil && doc != nil {
			if err = leftAsItIs(doc.CheckIDs(in)); err != nil {
				doc = nil
			}
		}
		if errors.Is(err, errNoYAML) {
			warnings = append(warnings, e.statusName()+" was not read: "+err.Error())
		} else if err != nil {
			warnings = append(warnings, e.statusName()+" was not used: "+err.Error())
			keep = true
		}
		if d, err = workflow.Sync(in, doc, e.now()); err != nil || d.Initiative == nil {
			return nil, err
		}
		if !d.WriteInitiative {
			return nil, nil
		}
		return json.Marshal(d.Initiative)
	})
	if f, ok := errors.AsType[*secrets.Finding](err); ok && d.Winner == workflow.StatusFileName {
		// A person's file, not the caller's text: the caller is not told how to keep a
		// secret it never sent.
		return nil, fmt.Errorf("%s holds text of a secret's shape (%s at %s of the initiative it says), which Cairn does not store; nothing was changed: take it out of %s",
			e.statusName(), f.Rule, f.Path, e.statusName())
	}
	if err != nil {
		return nil, err
	}
	if d.Initiative == nil {
		return &Result{Message: "no initiative: " + createWithTitle, Warnings: warnings}, nil
	}
	if !d.WriteInitiative {
		if data, err = json.Marshal(d.Initiative); err != nil {
			return nil, err
		}
	}
	res := &Result{Warnings: append(warnings, d.Warnings...), Workflow: data, Changed: d.WriteInitiative}
	var notUpdated error
	if d.WriteStatusDoc && !keep {
		notUpdated = e.putStatusFile(e.statusFile(), d.StatusDoc)
	}
	title := "(" + textsafe.OneLine(d.Initiative.Title) + ")"
	if secrets.ScanString(d.Initiative.Title) != nil {
		title = secrets.Hidden // in parentheses of its own
	}
	res.Message = fmt.Sprintf("initiative %s %s is %s, %d%% done", d.Initiative.ID, title, d.Initiative.Status, d.Initiative.Progress)
	switch d.Winner {
	case "":
	case workflow.StatusFileName:
		res.Message += "; authoritative: " + e.statusName()
	default:
		res.Message += "; authoritative: " + d.Winner
	}
	return e.withoutStoredSecret(res, notUpdated), nil
}
