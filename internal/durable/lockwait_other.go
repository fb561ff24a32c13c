//go:build !linux

package durable

import "os"

// watchRelease backs off: only Linux's inotify is used to wake on a release.
func watchRelease(*os.File) releaseWait { return newBackoff() }
