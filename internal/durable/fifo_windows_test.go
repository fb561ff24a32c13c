//go:build windows

package durable_test

import "errors"

func mkfifo(p string) error { return errors.New("no FIFOs on Windows") }
