//go:build unix

package hook

import "syscall"

// execInPlace replaces this process with path: same pid, same stdin, stdout and stderr, so
// Claude Code never sees the difference. It returns only on failure.
func execInPlace(path string, argv, env []string) error {
	return syscall.Exec(path, argv, env)
}
