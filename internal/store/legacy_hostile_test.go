package store_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/secrets/secrettest"
	"github.com/cairn-dev/cairn/internal/store"
)

// TestLegacyFileRefused: a seed's state file that cannot be migrated, whether its content is
// not strict JSON, not an object, a newer Cairn's record, too large, or the path is not a
// regular file of its own, is reported by every read (creating or not) with a notice that
// says why and what to do next, and is left exactly as it is: not moved, not rewritten, no
// backup made. Before, a file over the size limit, a symlink, a FIFO or a hard-linked file
// there was passed over in silence, as if the project had no workflow.
func TestLegacyFileRefused(t *testing.T) {
	seed := []byte(`{"type":"APEX","phase":"plan","lastUpdated":"2026-02-11T09:00:00Z"}`)
	rel := ".claude/workflow-state.json"
	cases := []struct {
		name  string
		setup func(t *testing.T, p string) // makes the file at p
		why   string                       // in the notice
	}{
		{"bom", content(append([]byte("\ufeff"), seed...)), "byte order mark"},
		{"nul", content([]byte("{\"type\":\"APEX\",\"phase\":\"pl\x00an\"}")), "control character"},
		{"non-utf8", content([]byte("{\"type\":\"APEX\",\"phase\":\"pl\xffan\"}")), "invalid UTF-8"},
		{"utf-16", content(utf16LE(seed)), "UTF-16"},
		{"duplicate-key", content([]byte(`{"type":"APEX","type":"DEBUG","phase":"plan"}`)), "duplicate key"},
		{"deep", content([]byte(`{"type":"APEX","phase":"plan","x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`)), "nested deeper"},
		{"array", content([]byte(`[{"type":"APEX","phase":"plan"}]`)), "array, not an object"},
		{"string", content([]byte(`"APEX"`)), "string, not an object"},
		{"number", content([]byte(`7`)), "number, not an object"},
		{"truncated", content(seed[:25]), "truncated"},
		{"newer", content([]byte(`{"version":"3.0","workflow_id":"w-1","type":"apex","state":"plan"}`)), "newer Cairn"},
		{"too-large", content(append(append([]byte(`{"type":"APEX","phase":"plan","context":"`), bytes.Repeat([]byte("x"), 1<<20)...), `"}`...)), "1 MiB"},
		{"symlink", func(t *testing.T, p string) {
			target := filepath.Join(t.TempDir(), "elsewhere.json")
			os.WriteFile(target, seed, 0o600)
			if err := os.Symlink(target, p); err != nil {
				t.Skip(err)
			}
		}, "not a regular file"},
		{"fifo", func(t *testing.T, p string) {
			if runtime.GOOS == "windows" {
				t.Skip("no FIFOs")
			}
			if err := mkfifo(p); err != nil {
				t.Skip(err)
			}
		}, "not a regular file"},
		{"hard-link", func(t *testing.T, p string) {
			os.WriteFile(p, seed, 0o600)
			if err := os.Link(p, filepath.Join(filepath.Dir(p), "copy.json")); err != nil {
				t.Skip(err)
			}
		}, "hard link"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "proj")
			dir := filepath.Join(root, ".claude", "cairn")
			p := filepath.Join(root, filepath.FromSlash(rel))
			os.MkdirAll(filepath.Dir(p), 0o700)
			c.setup(t, p)
			before := snapshotPath(t, p)
			for i, opts := range [][]store.Option{{store.WithNoCreate()}, nil, nil} {
				w, err := mustOpen(t, dir, opts...).ReadWorkflow()
				if !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("read %d: %v, want not found", i, err)
				}
				if len(w.Notices) != 1 || w.Notices[0].Kind != "legacy-skipped" || w.Notices[0].Path != rel {
					t.Fatalf("read %d: notices %+v, want one legacy-skipped", i, w.Notices)
				}
				msg := w.Notices[0].Message
				if !strings.Contains(msg, c.why) || strings.Count(msg, "left as it is") != 1 {
					t.Fatalf("read %d: %q does not say %q, and once that the file was left as it is", i, msg, c.why)
				}
				if !strings.Contains(msg, "to resume it") && !strings.Contains(msg, "to migrate it") {
					t.Fatalf("read %d: %q gives no next step", i, msg)
				}
				if after := snapshotPath(t, p); after != before {
					t.Fatalf("read %d: the file changed: %s, was %s", i, after, before)
				}
				if baks, _ := filepath.Glob(filepath.Join(root, ".claude", "*.bak")); len(baks) != 0 {
					t.Fatalf("read %d: backups made: %v", i, baks)
				}
			}
		})
	}
}

// utf16LE is b, ASCII, as Windows' "Unicode" text: UTF-16LE after its byte order mark.
func utf16LE(b []byte) []byte {
	out := []byte{0xff, 0xfe}
	for _, c := range b {
		out = append(out, c, 0)
	}
	return out
}

func content(b []byte) func(*testing.T, string) {
	return func(t *testing.T, p string) {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshotPath describes what is at p without opening it (a FIFO would block): its type,
// size and, for a regular file, its bytes; a symlink's target.
func snapshotPath(t *testing.T, p string) string {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	s := fi.Mode().Type().String()
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		l, _ := os.Readlink(p)
		b, _ := os.ReadFile(l)
		s += " -> " + l + " " + string(b)
	case fi.Mode().IsRegular():
		b, _ := os.ReadFile(p)
		s += " " + string(b)
	}
	return s
}

// TestLegacyCRLF: a seed file written with CRLF line ends (an editor on Windows) is strict
// JSON and migrates as with LF.
func TestLegacyCRLF(t *testing.T) {
	old := migrateTestdata(t, "seed001/apex-implement.json")
	crlf := bytes.ReplaceAll(old, []byte("\n"), []byte("\r\n"))
	s, dir := newStore(t)
	root := filepath.Dir(filepath.Dir(dir))
	p := filepath.Join(root, ".claude", "workflow-state.json")
	os.WriteFile(p, crlf, 0o600)
	w, err := s.ReadWorkflow()
	if err != nil || len(w.Notices) != 1 || w.Notices[0].Kind != "migrated" {
		t.Fatalf("%+v %v", w.Notices, err)
	}
	if b, err := os.ReadFile(filepath.Join(root, ".claude", "workflow-state.v1.json.bak")); err != nil || !bytes.Equal(b, crlf) {
		t.Fatalf("original not kept byte for byte: %v", err)
	}
}

// TestLegacyExecutionUnreadable: seed 002's execution.json that is there but cannot be read (a
// symlink, too large) stops the migration of its phase.json with a notice, rather than
// migrating the workflow without its tasks; both files are left as they are.
func TestLegacyExecutionUnreadable(t *testing.T) {
	phase := migrateTestdata(t, "seed002/implementation.json")
	exec := migrateTestdata(t, "seed002/implementation.execution.json")
	for _, name := range []string{"symlink", "too-large"} {
		t.Run(name, func(t *testing.T) {
			s, dir := newStore(t)
			state := filepath.Join(filepath.Dir(filepath.Dir(dir)), "memory", "state")
			os.MkdirAll(state, 0o700)
			os.WriteFile(filepath.Join(state, "phase.json"), phase, 0o600)
			ep := filepath.Join(state, "execution.json")
			if name == "symlink" {
				target := filepath.Join(t.TempDir(), "execution.json")
				os.WriteFile(target, exec, 0o600)
				if err := os.Symlink(target, ep); err != nil {
					t.Skip(err)
				}
			} else {
				os.WriteFile(ep, append(bytes.Repeat([]byte(" "), 1<<20), exec...), 0o600)
			}
			before := snapshotPath(t, ep)
			for run := 1; run <= 2; run++ {
				w, err := s.ReadWorkflow()
				if !errors.Is(err, store.ErrNotFound) || len(w.Notices) != 1 || w.Notices[0].Kind != "legacy-skipped" {
					t.Fatalf("run %d: %+v %v, want not found with legacy-skipped", run, w.Notices, err)
				}
				if msg := w.Notices[0].Message; !strings.Contains(msg, "execution.json") || !strings.Contains(msg, "to migrate it") {
					t.Fatalf("run %d: %q", run, msg)
				}
				if b, _ := os.ReadFile(filepath.Join(state, "phase.json")); !bytes.Equal(b, phase) {
					t.Fatalf("run %d: phase.json changed or moved", run)
				}
				if after := snapshotPath(t, ep); after != before {
					t.Fatalf("run %d: execution.json changed or moved", run)
				}
			}
		})
	}
}

// TestLegacyRefusalStepFitsTheCause: a seed file that is strict JSON in a format Cairn knows
// but cannot be migrated is not told to be corrected "to strict JSON in a format Cairn knows",
// and each notice says once that the file was left as it is. A migrated record over a limit
// (the fields kept under legacy sit two levels deeper) asks for a smaller file; a conversion
// that lacks something asks to correct what the notice says; the cleared state {} has nothing
// to migrate. Before, all of them got the strict JSON step, and a conversion's refusal said
// twice that the file was left as it is.
func TestLegacyRefusalStepFitsTheCause(t *testing.T) {
	for name, c := range map[string]struct{ doc, step string }{
		"too-deep":   {`{"type":"APEX","phase":"plan","x":` + strings.Repeat("[", 62) + strings.Repeat("]", 62) + `}`, "make it smaller or less deeply nested"},
		"too-large":  {`{"type":"APEX","phase":"plan","x":"` + strings.Repeat("\u2028", 300000) + `"}`, "make it smaller or less deeply nested"},
		"no-phase":   {`{"type":"Custom","lastUpdated":"2026-01-01T00:00:00Z"}`, "correct in it what that says"},
		"no-type":    {`{"type":"???","phase":"plan"}`, "correct in it what that says"},
		"cleared-up": {`{}`, "there is no workflow in it to migrate"},
	} {
		t.Run(name, func(t *testing.T) {
			s, dir := newStore(t)
			p := filepath.Join(filepath.Dir(dir), "workflow-state.json")
			if err := os.WriteFile(p, []byte(c.doc), 0o600); err != nil {
				t.Fatal(err)
			}
			w, err := s.ReadWorkflow()
			if !errors.Is(err, store.ErrNotFound) || len(w.Notices) != 1 || w.Notices[0].Kind != "legacy-skipped" {
				t.Fatalf("%+v %v, want not found with one legacy-skipped notice", w.Notices, err)
			}
			msg := w.Notices[0].Message
			if strings.Contains(msg, "strict JSON") || !strings.Contains(msg, c.step) || strings.Count(msg, "left as it is") != 1 {
				t.Fatalf("%q: want no strict JSON step, the step %q, and \"left as it is\" once", msg, c.step)
			}
			if b, _ := os.ReadFile(p); string(b) != c.doc {
				t.Fatal("the file changed")
			}
		})
	}
}

// A seed's state file holding text of a secret's shape (written before any scan) could never
// be migrated: every read refused it, as if the caller had sent the secret, and told it to keep
// it in an environment variable. The text is on record already: it migrates, and no notice
// repeats it.
func TestLegacyFileWithASecretMigrates(t *testing.T) {
	s := secrettest.Shapes()[3]
	q, _ := json.Marshal(s.Text)
	root := filepath.Join(t.TempDir(), "proj")
	p := filepath.Join(root, ".claude", "workflow-state.json")
	os.MkdirAll(filepath.Dir(p), 0o700)
	content([]byte(`{"type":"APEX","phase":"plan","context":`+string(q)+`,"lastUpdated":"2026-02-11T09:00:00Z"}`))(t, p)
	w, err := mustOpen(t, filepath.Join(root, ".claude", "cairn")).ReadWorkflow()
	if err != nil || len(w.Notices) != 1 || w.Notices[0].Kind != "migrated" || strings.Contains(w.Notices[0].Message, s.Core) {
		t.Fatalf("%v, %+v", err, w.Notices)
	}
}
