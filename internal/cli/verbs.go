package cli

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/secrets"
	"github.com/cairn-dev/cairn/internal/store"
	"github.com/cairn-dev/cairn/internal/strictjson"
	"github.com/cairn-dev/cairn/internal/workflow"
)

func runCheckpointDelete(a *app, pos []string, e *engine.Engine) error {
	res, err := e.DeleteCheckpoint(pos[0])
	if errors.Is(err, engine.ErrNotFound) {
		// No near name: "did you mean plan-v2?" would steer toward deleting another.
		return missingCheckpoint(e, pos[0], err, false)
	}
	return a.wrote(res, err)
}

// missingCheckpoint is err, checkpoint name not found, with the one step: that it was deleted
// (a delete keeps no copy), the nearest saved name (when near is true), or cairn checkpoint
// list; with none saved, that none is.
func missingCheckpoint(e *engine.Engine, name string, err error, near bool) error {
	if note := e.CheckpointDeletedNote(name); note != "" {
		return fmt.Errorf("%w: %s", err, note)
	}
	names, lerr := e.ListCheckpoints("")
	if lerr == nil && len(names) == 0 {
		return fmt.Errorf("%w: no checkpoint is saved", err)
	}
	if !near {
		names = nil
	}
	return fmt.Errorf("%w%s", err, hint(name, names, "cairn checkpoint list shows the saved ones"))
}

func runVarsUnset(a *app, pos []string, e *engine.Engine) error {
	// A name vars set refuses (plan_path for PLAN_PATH) was never set: "no change", exit 0,
	// would pass a typo for done. Checked before the write, so none of the others is unset.
	if set, err := e.GetVars(nil); err == nil {
		for _, k := range pos {
			if err := neverSet(k, set); err != nil {
				return err
			}
		}
	}
	return a.wrote(e.UnsetVars(pos))
}

func runLogShow(a *app, pos []string, _ *engine.Engine) error {
	if a.opt.tail.n < 0 {
		return a.usageErr("--tail: the value is a number of entries, 0 or more")
	}
	e, err := a.engine()
	if err != nil {
		return err
	}
	read := e.ReadLog
	if t := a.opt.tail; t.set {
		read = func(name string) (store.Lines, error) { return e.ReadLogTail(name, t.n) }
	}
	lines, err := read(pos[0])
	if errors.Is(err, engine.ErrNotFound) {
		return fmt.Errorf("%w: nothing was appended to it yet (cairn log append %s JSON adds an entry)", err, pos[0])
	}
	if err != nil {
		return err
	}
	entries := lines.Lines
	if lines.Older > 0 {
		a.warn(fmt.Sprintf("log %s is larger than cairn reads: only the entries in its last %d MiB are shown (the older ones stay in the file)",
			pos[0], store.MaxLogSize>>20))
	}
	if lines.Invalid > 0 || lines.Torn > 0 {
		n := lines.Invalid + lines.Torn
		a.warn(fmt.Sprintf("log %s: %d unreadable line%s skipped (%s)", pos[0], n, workflow.Plural(n), lineNumbers(lines)))
	}
	// An append refuses a secret, alone or split over two lines, but a line may be older than
	// the rule that finds it, or written by hand: it is not printed, nor one that makes a
	// secret's shape with the entry printed before it.
	kept := make([]json.RawMessage, 0, len(entries))
	alone, joined := 0, 0
	for _, l := range entries {
		switch {
		case secrets.ScanJSON(l) != nil:
			alone++
		case len(kept) > 0 && store.SplitSecret(kept[len(kept)-1], l) != nil:
			joined++
		default:
			kept = append(kept, l)
		}
	}
	for _, n := range []struct {
		count      int
		one, other string
	}{
		{alone, "it holds", "they hold"},
		{joined, "with the entry printed before it, it makes", "with the entry printed before each, they make"},
	} {
		if n.count > 0 {
			what := "1 entry not shown: " + n.one
			if n.count > 1 {
				what = fmt.Sprintf("%d entries not shown: %s", n.count, n.other)
			}
			a.warn(fmt.Sprintf("log %s: %s text of a secret's shape, appended before Cairn refused such text or written by hand", pos[0], what))
		}
	}
	entries = kept
	if a.json {
		return a.printJSON(orEmpty(entries))
	}
	// One compact JSON value a line, as appended (safe for a terminal: the same value): jq and
	// grep read it as they read the file. A hand-edited line (spaces, a tab, CRLF) is
	// compacted too.
	var buf bytes.Buffer
	for _, l := range entries {
		buf.Reset()
		if json.Compact(&buf, l) == nil {
			l = buf.Bytes()
		}
		fmt.Fprintf(a.stdout, "%s\n", safeJSON(l))
	}
	return nil
}

// typeInfo is one definition in `cairn types --json`.
type typeInfo struct {
	Name        string              `json:"name"`
	Description string              `json:"description,omitempty"`
	Phases      []string            `json:"phases"`
	Transitions map[string][]string `json:"transitions"`
	Terminal    []string            `json:"terminal"`
	Approvals   []string            `json:"approvals"`
	TTL         string              `json:"ttl,omitempty"`
	Source      string              `json:"source"`
}

func runTypes(a *app, pos []string, e *engine.Engine) error {
	names := e.Definitions()
	a.warn(e.Warnings()...)
	if len(pos) == 1 {
		d, err := e.TypeDefinition(pos[0]) // any letter case, as start takes it
		if err != nil && slices.Contains(names, workflow.NormalizeName(pos[0])) {
			return err // defined in a file that does not load
		}
		if err != nil {
			return noType(pos[0], names)
		}
		names = []string{d.Name}
	}
	var out []typeInfo
	for _, n := range names {
		if d, ok := e.Definition(n); ok {
			out = append(out, describeType(d))
		}
	}
	if a.json {
		return a.printJSON(orEmpty(out))
	}
	for i, t := range out {
		if i > 0 {
			fmt.Fprintln(a.stdout)
		}
		writeType(a, t)
	}
	return nil
}

func describeType(d *workflow.Definition) typeInfo {
	t := typeInfo{Name: d.Name, Description: d.Description, Phases: d.Phases, Transitions: map[string][]string{},
		Terminal: orEmpty(d.Terminal), Approvals: orEmpty(d.Approvals), TTL: d.TTL, Source: d.Source}
	for _, p := range d.Phases {
		t.Transitions[p] = orEmpty(d.Allowed(p))
	}
	return t
}

func writeType(a *app, t typeInfo) {
	w := a.stdout
	title := a.style(bold, clean(t.Name))
	if t.Description != "" {
		title += ": " + clean(t.Description)
	}
	fmt.Fprintln(w, title)
	row := func(label, v string) { fmt.Fprintf(w, "  %-12s %s\n", label, clean(v)) }
	var phases []string
	for _, p := range t.Phases {
		var tags []string
		if slices.Contains(t.Approvals, p) {
			tags = append(tags, "approval")
		}
		if slices.Contains(t.Terminal, p) {
			tags = append(tags, "terminal")
		}
		if len(tags) > 0 {
			p += " (" + strings.Join(tags, ", ") + ")"
		}
		phases = append(phases, p)
	}
	row("phases:", strings.Join(phases, ", "))
	label := "moves:"
	for _, p := range t.Phases {
		if len(t.Transitions[p]) > 0 {
			row(label, p+" -> "+strings.Join(t.Transitions[p], ", "))
			label = ""
		}
	}
	row("approvals:", cmp.Or(strings.Join(t.Approvals, ", "), "none"))
	row("ttl:", cmp.Or(t.TTL, "none"))
	row("from:", workflow.ShownPath(t.Source))
}

// readRecord reads a workflow record, active or archived.
func readRecord(e *engine.Engine, id string) (*workflow.Record, error) {
	data, _, _, err := e.ShowNotices(id)
	if err != nil {
		return nil, err
	}
	return decodeRecord(id, data)
}

// decodeRecord reads the stored record data of workflow id.
// Only a record that is JSON is pointed at show --json, which prints JSON and nothing else.
func decodeRecord(id string, data []byte) (*workflow.Record, error) {
	var r workflow.Record
	err := json.Unmarshal(data, &r)
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		return nil, fmt.Errorf("workflow %s is on record but its stored record is not JSON (it goes wrong at byte %d)", id, se.Offset)
	}
	if err != nil {
		return nil, fmt.Errorf("workflow %s is on record but cannot be read as a workflow (%v); cairn show --json prints it as stored", id, strictjson.ExplainIn(data, err))
	}
	return &r, nil
}

// lineNumbers names the unreadable lines of l by number, never their text: a few, then how
// many more.
func lineNumbers(l store.Lines) string {
	const few = 5
	var named []string
	end := ""
	for i, v := range l.InvalidAt {
		if i == few {
			named = append(named, fmt.Sprintf("%d more", len(l.InvalidAt)-few))
			break
		}
		if v < 0 {
			v, end = -v, " from the end"
		}
		named = append(named, strconv.Itoa(v))
	}
	s := ""
	switch len(named) {
	case 0:
	case 1:
		s = "line " + named[0] + end
	default:
		s = "lines " + strings.Join(named[:len(named)-1], ", ") + " and " + named[len(named)-1] + end
	}
	if l.Torn > 0 && s != "" {
		s += ", and "
	}
	if l.Torn > 0 {
		s += "the last, cut short"
	}
	return s
}
