package claimsync

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/remote/gitremote"
)

// TestUnreachedSaysARefLock: a ref of the clone's copy of the remote's refs locked past git's
// wait by another git (the user's, perhaps stopped) made a claim's warning say origin "could
// not be reached", which git fetch origin shows is not so, and lost the step. It now says what
// git said of the lock, and its step; the next sync still retries it (the lock is a git's that
// runs on, not one every sync fails on).
func TestUnreachedSaysARefLock(t *testing.T) {
	err := fmt.Errorf("claims: %w", &gitremote.GitError{Op: "fetch", Err: errors.New("exit status 1"),
		Stderr: "error: cannot lock ref 'refs/cairn-mirror/origin/claims': Unable to create '/p/.git/refs/cairn-mirror/origin/claims.lock': File exists. (a git running in this repository holds it, or one that was killed left it: try again once no git runs here; one stopped with Ctrl-Z holds it until it is resumed)"})
	got := unreached(err)
	if strings.Contains(got, "could not be reached") || !strings.Contains(got, "cannot lock ref") || !strings.Contains(got, "try again once no git runs here") {
		t.Errorf("unreached = %q, want git's words on the lock and their step", got)
	}
	if nameable(err) {
		t.Error("a ref lock a running git holds is said to fail every sync alike")
	}
}
