//go:build windows

package engine

import "os"

// writable reports whether dir exists; Windows has no cheap access(2), and a failed write
// reports itself anyway.
func writable(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir()
}
