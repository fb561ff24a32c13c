//go:build !windows

package hook

import "syscall"

// execLauncher replaces this process with sh running the launcher: stdin is still unread.
func execLauncher(launch, name string, env []string) error {
	return syscall.Exec("/bin/sh", []string{"sh", launch, name}, env)
}
