package durabletest

import (
	"syscall"
	"testing"
)

// Mount mounts src on dst for the test (read-only when readOnly), or skips the test where
// mounting is not allowed; it returns the unmount, which the test's cleanup also runs.
func Mount(t testing.TB, src, dst, fstype string, flags uintptr, data string, readOnly bool) (unmount func()) {
	t.Helper()
	if err := syscall.Mount(src, dst, fstype, flags, data); err != nil {
		t.Skipf("mounting is not allowed here (%v); run as root or under `unshare -rm` to exercise this", err)
	}
	mounted := true
	unmount = func() {
		if mounted {
			mounted = false
			if err := syscall.Unmount(dst, syscall.MNT_DETACH); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(unmount)
	if readOnly {
		if err := syscall.Mount("", dst, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
			t.Fatal(err)
		}
	}
	return unmount
}
