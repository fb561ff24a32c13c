//go:build unix

package cli_test

import (
	"syscall"
	"testing"
)

func TestUninstallOverAnIndexThatIsAFIFO(t *testing.T) {
	t.Parallel()
	uninstallOverOddIndex(t, func(t *testing.T, index string) {
		if err := syscall.Mkfifo(index, 0o600); err != nil {
			t.Fatal(err)
		}
	}, "a FIFO")
}
