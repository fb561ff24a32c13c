//go:build windows

package store_test

import (
	"errors"
	"time"
)

func mkfifo(p string) error { return errors.New("no FIFOs on Windows") }

func timeout() <-chan time.Time { return time.After(10 * time.Second) }
