package gitremote_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote/gitremote"
	"github.com/cairn-dev/cairn/internal/remote/remotetest"
)

// TestUnreachableRemoteSaysWhy: git ends a failed connection with a paragraph whose last line,
// "and the repository exists.", was all the error said ("gitremote: git fetch: and the
// repository exists."), for a remote that is gone, an SSH host out of reach, and a daemon that
// dropped the connection. The error gives git's reason instead. A dropped connection has two:
// git reads end of file ("Could not read from remote repository.") or, when the peer reset the
// socket first, the reset; which one depends on timing, so either is the reason.
func TestUnreachableRemoteSaysWhy(t *testing.T) {
	bare := bareRepo(t)
	p := remotetest.NewProxy(t, daemon(t, filepath.Dir(bare)), remotetest.Faults{Cut: 1, MaxBytes: 1})
	refused := "ssh: connect to host 127.0.0.1 port 22: Connection refused"
	for _, tc := range []struct {
		name, url, ssh string
		want           []string
	}{
		{"gone", "file://" + filepath.Join(t.TempDir(), "gone.git"), "", []string{"gone.git' does not appear to be a git repository"}},
		{"ssh", "git@127.0.0.1:shared.git", "echo '" + refused + "' >&2; false", []string{refused}},
		{"dropped", "git://" + p.Addr + "/" + filepath.Base(bare), "", []string{"fatal: Could not read from remote repository.", "Connection reset by peer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := headsOf(t, tc.url, tc.ssh)
			if err == nil || !slices.ContainsFunc(tc.want, func(w string) bool { return strings.HasSuffix(err.Error(), w) }) {
				t.Errorf("Heads = %v; want it to end with git's reason, one of %q", err, tc.want)
			}
		})
	}
}

// headsOf is Heads' error in a fresh clone whose origin is url, with ssh, when not empty, as
// its core.sshCommand.
func headsOf(t *testing.T, url, ssh string) error {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	git(t, dir, "remote", "add", "origin", url)
	if ssh != "" {
		git(t, dir, "config", "core.sshCommand", ssh)
	}
	b, err := gitremote.New(gitremote.Config{Dir: dir, Remote: "origin"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Heads(bg(t))
	return err
}
