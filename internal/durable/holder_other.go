//go:build !linux

package durable

// holderStopped is false where no cheap look tells a stopped process (see holder_linux.go).
func holderStopped(*Holder) bool { return false }
