//go:build !linux

package claimsync

import "time"

// sinceBoot is not known here: times kept between calls are the wall clock's alone.
func sinceBoot() (boot string, up time.Duration, ok bool) { return "", 0, false }
