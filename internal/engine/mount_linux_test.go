//go:build linux

package engine_test

import (
	"syscall"
	"testing"
)

// mount mounts src on dst, or skips the test saying why the machine does not allow it; with
// readOnly a bind mount is made read-only. The returned function unmounts it (once; the
// test's end does it otherwise).
func mount(t *testing.T, src, dst, fstype string, flags uintptr, data string, readOnly bool) (unmount func()) {
	t.Helper()
	if err := syscall.Mount(src, dst, fstype, flags, data); err != nil {
		t.Skipf("mounting is not allowed here (%v); run as root or under `unshare -rm` to exercise this", err)
	}
	mounted := true
	unmount = func() {
		if mounted {
			mounted = false
			noErr(t, syscall.Unmount(dst, syscall.MNT_DETACH))
		}
	}
	t.Cleanup(unmount)
	if readOnly {
		noErr(t, syscall.Mount("", dst, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""))
	}
	return unmount
}
