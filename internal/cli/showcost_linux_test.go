package cli_test

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// TestShowAndHistoryReadTheArchiveIndexOnce: cairn show and cairn history of an archived
// workflow read archive/index.jsonl, which holds up to 16 MiB, once, counted by the opens
// inotify sees. Each read it three times: to find the archive, then twice more for the reason
// it was archived, which the first read had already found.
func TestShowAndHistoryReadTheArchiveIndexOnce(t *testing.T) {
	t.Parallel()
	m := newMachine(t, "file:///no-remote")
	m.must("start", "apex", "first", "--id", "apex-old")
	m.must("archive")
	m.must("start", "apex", "second", "--id", "apex-new")
	index := filepath.Join(m.dir, ".claude", "cairn", "archive", "index.jsonl")
	for _, args := range [][]string{{"show", "apex-old"}, {"history", "apex-old"}} {
		fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
		if err != nil {
			t.Skipf("inotify: %v", err)
		}
		// Its closes too: inotify merges an event into the same one queued just before it.
		if _, err := syscall.InotifyAddWatch(fd, index, syscall.IN_OPEN|syscall.IN_CLOSE); err != nil {
			t.Fatal(err)
		}
		out := m.must(args...)
		if !strings.Contains(out, "archive") {
			t.Fatalf("cairn %s:\n%s", strings.Join(args, " "), out)
		}
		opens := 0
		buf := make([]byte, 64<<10)
		for {
			n, err := syscall.Read(fd, buf)
			if n <= 0 || err != nil {
				break
			}
			for off := 0; off < n; {
				ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
				if ev.Mask&syscall.IN_OPEN != 0 {
					opens++
				}
				off += syscall.SizeofInotifyEvent + int(ev.Len)
			}
		}
		syscall.Close(fd)
		if opens != 1 {
			t.Errorf("cairn %s opened archive/index.jsonl %d times, want once", strings.Join(args, " "), opens)
		}
	}
}
