package mcptools_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairn-dev/cairn/internal/engine"
	"github.com/cairn-dev/cairn/internal/vars"
)

// TestStateOfAnotherUserStepIsTheChown: state left by cairn run with sudo (root's) refuses this
// user's open or write. The model was told to have the user "make that directory writable"
// (or "the directory it names"), a step that cannot be taken on another user's directory
// without the chown the store's error gives; it is told to give the user that command.
func TestStateOfAnotherUserStepIsTheChown(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run the server as another user")
	}
	for _, tc := range []struct {
		name, rootOwns, call, args string
		said                       string
	}{
		{name: "state directory", rootOwns: ".", call: "resume_check", args: `{}`, said: "could not open the workflow state"},
		{name: "checkpoints", rootOwns: "checkpoints", call: "save_checkpoint", args: `{"name":"plan","data":{"a":1}}`, said: "belongs to uid 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := nobodysProject(t)
			if _, err := p.other(t, "seed").Start(engine.StartRequest{Type: "apex", Context: "sudo"}); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(p.state, "checkpoints"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := filepath.Walk(filepath.Dir(p.root), func(f string, _ os.FileInfo, err error) error {
				if err != nil {
					return err
				}
				if f == filepath.Join(p.state, tc.rootOwns) {
					return os.Lchown(f, 0, 0)
				}
				return os.Lchown(f, 65534, 65534)
			}); err != nil {
				t.Fatal(err)
			}
			c := stdioClient(t, p, protocol)
			res := mustFail(t, c, tc.call, tc.args, tc.said, "sudo chown -R 65534 "+vars.Quote(p.state), "Tell the user")
			if got := text(res); strings.Contains(got, "writable") {
				t.Errorf("the model is told to have a directory made writable, not the chown: %s", got)
			}
		})
	}
}

// TestReportOfAnotherUsersJournalGivesTheChown: with the journal root's (cairn run with sudo)
// and no snapshot, the report's next step said "ask the user to run the sudo chown command the
// warning gives", while the warning, cut to its length in the report, had lost the command.
// The next step gives the command itself.
func TestReportOfAnotherUsersJournalGivesTheChown(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run the server as another user")
	}
	p := nobodysProject(t)
	if _, err := p.other(t, "seed").Start(engine.StartRequest{Type: "apex", Context: "sudo"}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(p.state, "workflow-state.json")); err != nil {
		t.Fatal(err)
	}
	if err := filepath.Walk(filepath.Dir(p.root), func(f string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if f == filepath.Join(p.state, "journal") {
			return os.Lchown(f, 0, 0)
		}
		return os.Lchown(f, 65534, 65534)
	}); err != nil {
		t.Fatal(err)
	}
	got := text(mustOK(t, stdioClient(t, p, protocol), "resume_check", `{}`))
	_, next, _ := strings.Cut(got, "\nNext: ")
	if want := "ask the user to run sudo chown -R 65534 " + vars.Quote(p.state) + ", then call"; !strings.Contains(next, want) {
		t.Errorf("the report's next step does not give the chown (%q):\n%s", want, got)
	}
}

// nobodysProject is newProject in a directory the user nobody may enter, with the server's
// binary copied there and run as nobody; the caller gives the files to nobody.
func nobodysProject(t *testing.T) *project {
	t.Helper()
	base, err := os.MkdirTemp("", "cairn-mcp-other")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	p := newProject(t)
	for _, d := range []*string{&p.root, &p.memory, &p.home} {
		*d = filepath.Join(base, filepath.Base(*d))
		if err := os.MkdirAll(*d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	p.state = filepath.Join(p.root, ".claude", "cairn")
	p.bin = filepath.Join(base, "cairn-mcp")
	copyBinary(t, p.bin)
	p.asUser = func(cmd *exec.Cmd) {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	return p
}
