//go:build !linux

package cli

// watchLimit: only Linux's inotify has limits whose errors say something else.
func watchLimit(error) string { return "" }
