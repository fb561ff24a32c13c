package gitremote_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote/gitremote"
)

// oldGit is a git on PATH that behaves as one older than 2.29 does when given a fetch option
// it does not know: the error, then the whole usage, exit 129. Anything else runs the real git.
const oldGit = `#!/bin/sh
for a in "$@"; do
	if [ "$a" = --no-write-fetch-head ]; then
		echo "error: unknown option \` + "`" + `no-write-fetch-head'" >&2
		echo "usage: git fetch [<options>] [<repository> [<refspec>...]]" >&2
		echo "    --ipv6                use IPv6 addresses only" >&2
		exit 129
	fi
done
exec "$CAIRN_REAL_GIT" "$@"
`

// TestOldGitIsNamed: a git too old for an option Cairn passes fails every fetch; the error
// must say so, not quote the last line of git's usage text as if it were the reason.
func TestOldGitIsNamed(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs sh")
	}
	ctx := bg(t)
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	b := clone(t, "file://"+bareRepo(t), gitremote.Refs)
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(oldGit), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CAIRN_REAL_GIT", real)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	_, err = b.Heads(ctx)
	if err == nil || !strings.Contains(err.Error(), "no-write-fetch-head") || !strings.Contains(err.Error(), "git 2.29 or later") {
		t.Fatalf("Heads with an old git = %v; want the unknown option named and the git needed", err)
	}
}
