//go:build windows

package fsx_test

import "errors"

func mkfifo(p string) error { return errors.New("no FIFOs on Windows") }
