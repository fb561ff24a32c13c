package claimsync_test

import (
	"context"
	"fmt"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/cairn-dev/cairn/internal/remote/claim"
	"github.com/cairn-dev/cairn/internal/remote/claimsync"
	"github.com/cairn-dev/cairn/internal/remote/memremote"
)

// TestRefusedOutOfReachSavesOnce: a task call refused out of reach (another machine held the
// task at the last read) after reading the line on part of the way saved the claims state
// twice, the same state each time: one durable write (and fsync) too many per call.
func TestRefusedOutOfReachSavesOnce(t *testing.T) {
	mem := &slowLine{Backend: memremote.New()}
	a := newClone(t, mem)
	for _, st := range [][2]string{{"t1", "pending"}, {"t2", "running"}} { // t2: a sync reads the line
		if _, err := a.task(st[0], st[1]); err != nil {
			t.Fatal(err)
		}
	}
	x := claim.New(mem, "wf-1", "X", time.Hour, time.Now)
	if _, err := x.TryClaim(context.Background(), "t1"); err != nil {
		t.Fatal(err)
	}
	a.sync() // a reads X's claim of t1
	for i := range 6 {
		if _, err := x.TryClaim(context.Background(), fmt.Sprintf("x%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	mem.k = 2 // the line is read on by two records, then the call's time runs out
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, a.opt.StateDir, unix.IN_MOVED_TO|unix.IN_CLOSE_WRITE); err != nil {
		t.Fatal(err)
	}
	if _, err := a.task("t1", "done"); err == nil {
		t.Fatal("marking done a task another machine holds succeeded out of reach; want it refused")
	} else {
		t.Log(err)
	}
	writes := 0
	buf := make([]byte, 1<<16)
	for {
		n, err := unix.Read(fd, buf)
		if err != nil || n <= 0 {
			break
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := string(buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)])
			if ev.Mask&unix.IN_MOVED_TO != 0 && trimNul(name) == claimsync.Doc+".json" {
				writes++
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
	if writes != 1 {
		t.Fatalf("the refused call wrote the claims state %d times; want once", writes)
	}
}

func trimNul(s string) string {
	for len(s) > 0 && s[len(s)-1] == 0 {
		s = s[:len(s)-1]
	}
	return s
}
