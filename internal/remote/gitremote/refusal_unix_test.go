//go:build unix

package gitremote_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
)

// refuser is a git on PATH whose push the host refuses with $CAIRN_TEST_REASON, as a server's
// "ng <ref> <reason>" (a proc-receive hook, a forge) words it: any text, up to a pkt-line.
const refuser = `#!/bin/sh
for a in "$@"; do
  if [ "$a" = push ]; then
    for last in "$@"; do :; done
    printf 'To host\n!\t%s\t[remote rejected] (%s)\nDone\n' "$last" "$CAIRN_TEST_REASON"
    exit 1
  fi
done
exec "$CAIRN_REAL_GIT" "$@"
`

// TestHostsRefusalReasonIsBounded: the reason a host gives for refusing a push is its own
// text, as a hook's words are, which are one short line: a 60 KB reason was repeated whole in
// the refusal cairn sync prints, and in what the model reads of it.
func TestHostsRefusalReasonIsBounded(t *testing.T) {
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	b := clone(t, "file://"+bareRepo(t), gitremote.Refs)
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(refuser), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CAIRN_REAL_GIT", realGit)
	t.Setenv("CAIRN_TEST_REASON", "frozen "+strings.Repeat("x", 60<<10))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	_, err = b.Append(bg(t), "wf-1", 0, remote.Slice([]byte("x")))
	if !errors.Is(err, gitremote.ErrRefused) || !strings.Contains(err.Error(), "frozen") || len(err.Error()) > 1000 {
		t.Fatalf("Append refused with a 60 KB reason = %d bytes: %.200v; want a refusal with the reason's start, under 1000 bytes", len(err.Error()), err)
	}
}
