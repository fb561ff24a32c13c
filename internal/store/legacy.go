package store

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cairn-dev/cairn/internal/fsx"
	"github.com/cairn-dev/cairn/internal/jsonx"
	"github.com/cairn-dev/cairn/internal/store/migrate"
)

// Where the seeds kept their state, relative to the project root.
const (
	seed001File   = ".claude/workflow-state.json"
	seed002Phase  = "memory/state/phase.json"
	seed002Exec   = "memory/state/execution.json"
	seed004Dir    = ".workflow-state"
	seed004Suffix = "-state.json"
)

// findLegacy looks, with a few lstats and no reads, for a seed's state file in the project.
func (s *Store) findLegacy() (root, name string, ok bool) {
	root = s.o.projectRoot
	if root == "" {
		return "", "", false
	}
	regular := func(rel string) bool {
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
		return err == nil && fi.Mode().IsRegular()
	}
	for _, rel := range []string{seed001File, seed002Phase} {
		if regular(rel) {
			return root, rel, true
		}
	}
	entries, err := os.ReadDir(filepath.Join(root, seed004Dir))
	if err != nil {
		return "", "", false
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), seed004Suffix) && e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	if len(names) > 0 {
		return root, seed004Dir + "/" + names[0], true
	}
	return "", "", false
}

// migrateLegacy converts a seed's state file into the active workflow (journaled as a
// "migrated" event) and then renames the original to its .v<old>.json.bak name beside it, so
// it is kept but not migrated twice. A file that is not a format Cairn migrates is left alone.
func (s *Store) migrateLegacy(w Workflow, root, name string) (Workflow, tailState, error) {
	pd, err := fsx.OpenDir(root)
	if err != nil {
		return w, tailState{}, &NotFoundError{What: "workflow"}
	}
	defer pd.Close()
	data, err := fsx.ReadFile(pd, name, jsonx.MaxSize)
	if err != nil {
		return w, tailState{}, &NotFoundError{What: "workflow"}
	}
	extra := migrate.Extra{Name: name}
	if name == seed002Phase {
		if exec, err := fsx.ReadFile(pd, seed002Exec, jsonx.MaxSize); err == nil {
			extra.Execution = exec
		}
	}
	res, err := migrate.Migrate(data, extra, s.o.now().UTC())
	if err != nil || !res.From.NeedsMigration() || res.Record == nil {
		why := "it holds no workflow"
		if err != nil {
			why = err.Error()
		}
		w.Notices = append(w.Notices, Notice{Kind: "legacy-skipped", Path: name,
			Message: fmt.Sprintf("%s in the project was not migrated (%s); it was left as it is", name, why)})
		return w, tailState{}, &NotFoundError{What: "workflow"}
	}
	out, err := s.commitLocked(Workflow{}, tailState{}, res.Record, Event{Kind: "migrated", Detail: "from " + res.From.String() + " " + name})
	if err != nil {
		return w, tailState{}, fmt.Errorf("migrating %s: %w", name, err)
	}
	backup := freeName(pd, res.Backup)
	if err := pd.Rename(name, backup); err != nil {
		return out.Workflow, tailState{seq: out.Seq, rev: out.Revision}, fmt.Errorf("%s was migrated but could not be renamed to %s: %w", name, backup, err)
	}
	if name == seed002Phase && extra.Execution != nil {
		_ = pd.Rename(seed002Exec, freeName(pd, migrate.BackupName(seed002Exec, res.From)))
	}
	_ = pd.SyncDir(dirOf(name))
	out.Notices = append(w.Notices, append(out.Notices, Notice{Kind: "migrated", Path: name, Revision: out.Revision,
		Message: fmt.Sprintf("%s (%s) was migrated to schema 2.0; the original is kept as %s", name, res.From, backup)})...)
	return out.Workflow, tailState{seq: out.Seq, rev: out.Revision}, nil
}

// migrateOwn converts an older record found in the state directory's own snapshot, keeping
// the original as workflow-state.v<old>.json.bak.
func (s *Store) migrateOwn(w Workflow, data []byte) (Workflow, tailState, error) {
	res, err := migrate.Migrate(data, migrate.Extra{Name: WorkflowFile}, s.o.now().UTC())
	if err != nil {
		return w, tailState{}, fmt.Errorf("the workflow snapshot in %s is in an older format that could not be migrated; it was left as it is: %w", s.dir, err)
	}
	if res.Record == nil {
		return w, tailState{}, &NotFoundError{What: "workflow"}
	}
	backup := freeName(s.fs, res.Backup)
	if err := s.writeErr(backup, fsx.WriteFile(s.fs, backup, data, 0o600)); err != nil {
		return w, tailState{}, err
	}
	out, err := s.commitLocked(Workflow{}, tailState{}, res.Record, Event{Kind: "migrated", Detail: "from " + res.From.String()})
	if err != nil {
		return w, tailState{}, fmt.Errorf("migrating %s: %w", WorkflowFile, err)
	}
	out.Notices = append(out.Notices, Notice{Kind: "migrated", Path: WorkflowFile, Revision: out.Revision,
		Message: fmt.Sprintf("the workflow snapshot (%s) was migrated to schema 2.0; the original is kept as %s", res.From, backup)})
	return out.Workflow, tailState{seq: out.Seq, rev: out.Revision}, nil
}

// freeName returns name, or name with a counter before ".json.bak" when it is taken: a backup
// is never overwritten.
func freeName(fsys fsx.FS, name string) string {
	cand := name
	for i := 2; ; i++ {
		if _, err := fsys.Lstat(cand); err != nil {
			// Free, or unknowable: the rename or write that follows reports the problem.
			return cand
		}
		cand = strings.TrimSuffix(name, ".json.bak") + fmt.Sprintf("-%d.json.bak", i)
	}
}
