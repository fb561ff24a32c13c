//go:build !windows

package store_test

import (
	"syscall"
	"time"
)

func mkfifo(p string) error { return syscall.Mkfifo(p, 0o600) }

func timeout() <-chan time.Time { return time.After(10 * time.Second) }
