package cli

import (
	"errors"
	"syscall"
)

// watchLimit says which of the kernel's inotify limits err (from fsnotify) ran into, or "".
// inotify_add_watch reports the per-user watch limit as ENOSPC, which its text calls a full
// disk; inotify_init1 reports the instance limit (or the process's open files) as EMFILE.
func watchLimit(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "the system's limit on inotify watches is reached (fs.inotify.max_user_watches; the disk is not full)"
	case errors.Is(err, syscall.EMFILE):
		return "the system's limit on inotify instances (fs.inotify.max_user_instances) or on this process's open files is reached"
	}
	return ""
}
