package remotesync

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/durable/durabletest"
)

// TestSpoolOnAFullTemporaryDirectory: a remote line too long for the temporary directory failed
// the sync with the file system's error alone ("write /tmp/…: no space left on device"), its
// file already gone, so nothing said where or what to do. It names the directory and the step.
func TestSpoolOnAFullTemporaryDirectory(t *testing.T) {
	dir := t.TempDir()
	durabletest.Mount(t, "tmpfs", dir, "tmpfs", 0, "size=256k,mode=0700", false)
	t.Setenv("TMPDIR", dir)
	var s spool
	defer s.close()
	var err error
	for i := 0; i < 8 && err == nil; i++ {
		err = s.add(bytes.Repeat([]byte{'a'}, 300<<10))
	}
	if err == nil {
		err = s.each(func([]byte) error { return nil })
	}
	if err == nil {
		t.Fatal("2.4 MiB of records were spooled into a temporary directory of 256 KiB")
	}
	for _, want := range []string{"temporary file in " + dir, "no space left on device", "set TMPDIR to a directory with room"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the spool's error = %q; want it to say %q", err, want)
		}
	}
}
