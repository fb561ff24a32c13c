//go:build unix

package cli

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// readerGone returns, when out is a pipe or socket, a check that its reading end has been
// closed (POLLERR or POLLHUP on the writing end, with no write); nil for anything else.
func readerGone(out io.Writer) func() bool {
	f, ok := stream(out).(*os.File)
	if !ok {
		return nil
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	return func() bool {
		gone := false
		_ = rc.Control(func(fd uintptr) {
			p := []unix.PollFd{{Fd: int32(fd)}}
			n, err := unix.Poll(p, 0)
			gone = err == nil && n > 0 && p[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
		})
		return gone
	}
}
