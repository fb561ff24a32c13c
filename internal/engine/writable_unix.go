//go:build !windows

package engine

import (
	"os"

	"github.com/cairn-dev/cairn/internal/store"
	"golang.org/x/sys/unix"
)

// writable reports whether this process may create files in dir.
func writable(dir string) bool { return unix.Access(dir, unix.W_OK) == nil }

// readOnlyFS reports whether dir cannot be written because its file system is mounted
// read-only, where no chmod helps.
func readOnlyFS(dir string) bool { return unix.Access(dir, unix.W_OK) == unix.EROFS }

// euid is os.Geteuid, which a test replaces.
var euid = os.Geteuid

// otherOwner reports the uid of the user who owns fi when that is another user than this
// process's, which then cannot chmod it nor, mostly, write in it. Root can do both.
func otherOwner(fi os.FileInfo) (uid int, other bool) {
	uid, ok := store.OwnerUID(fi)
	me := euid()
	return uid, ok && me != 0 && uid != me
}
