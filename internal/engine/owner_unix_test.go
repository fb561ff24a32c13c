//go:build unix

package engine

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/yamldoc"
)

// TestDoctorStateOwnedByAnother: a state directory another user made (cairn run with sudo,
// say) is one problem with one fix, chown, not a chmod its user is not allowed to make and a
// second failure for the same cause.
func TestDoctorStateOwnedByAnother(t *testing.T) {
	en := openStateDir(t, "proj")
	me := os.Geteuid()
	defer func() { euid = os.Geteuid }()
	euid = func() int { return me + 1 }
	var failed []Check
	for _, c := range en.Doctor(DoctorOptions{}) {
		if !c.OK {
			failed = append(failed, c)
		}
	}
	if len(failed) != 1 || failed[0].Name != "state directory owner" || !strings.HasPrefix(failed[0].Fix, "sudo chown -R ") ||
		!strings.Contains(failed[0].Detail, en.StateDir()) {
		t.Fatalf("doctor fails %+v", failed)
	}
}

// TestDoctorChmodQuoted: the fix for an open state directory is a command to paste; a
// project path with a space in it is quoted, as the chown fix quotes it.
func TestDoctorChmodQuoted(t *testing.T) {
	t.Parallel()
	en := openStateDir(t, "my proj")
	for _, c := range en.Doctor(DoctorOptions{}) {
		if c.Name == "state directory permissions" {
			if want := "make it private: chmod 700 '" + en.StateDir() + "'"; c.OK || c.Fix != want {
				t.Fatalf("check %+v, want it failed with fix %q", c, want)
			}
			return
		}
	}
	t.Fatal("no state directory permissions check")
}

// openStateDir opens an engine on a new project of that name whose state directory exists
// and is open to others (0755), as a doctor check finds it.
func openStateDir(t *testing.T, name string) *Engine {
	t.Helper()
	base := t.TempDir()
	project, home := filepath.Join(base, name), filepath.Join(base, "home")
	os.MkdirAll(filepath.Join(project, ".git"), 0o755)
	os.MkdirAll(home, 0o755)
	env := map[string]string{"HOME": home, "CLAUDE_PROJECT_DIR": project}
	en, err := Open(Config{Getenv: func(k string) string { return env[k] }, WorkDir: project, YAML: yamldoc.Codec{}, Actor: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := en.SaveCheckpoint("probe", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	os.Chmod(en.StateDir(), 0o755)
	return en
}

// TestDoctorJournalOwnedByAnother: after cairn run with sudo made journal/ (root's, 0700) in a
// state directory of this user's, every change failed on it, and doctor said every check was
// ok. It names what belongs to another user, with the chown that gives the state back.
func TestDoctorJournalOwnedByAnother(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give files away")
	}
	en := openStateDir(t, "proj")
	if _, err := en.Start(StartRequest{Type: "apex", Context: "under sudo"}); err != nil {
		t.Fatal(err)
	}
	dir := en.StateDir()
	os.Chmod(dir, 0o700)
	me := os.Geteuid() + 1 // this user; journal/ stays root's
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || filepath.Base(p) == "journal" {
			return err
		}
		return os.Lchown(p, me, me)
	})
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(dir, "journal"), 0o700)
	defer func() { euid = os.Geteuid }()
	euid = func() int { return me }
	var failed []Check
	for _, c := range en.Doctor(DoctorOptions{}) {
		if !c.OK {
			failed = append(failed, c)
		}
	}
	want := "sudo chown -R " + strconv.Itoa(me) + " '" + dir + "'"
	if len(failed) != 1 || !strings.Contains(failed[0].Detail, filepath.Join(dir, "journal")+" belongs to uid 0") || failed[0].Fix != want {
		t.Fatalf("doctor fails %+v; want one check naming journal/ with fix %q", failed, want)
	}
}
