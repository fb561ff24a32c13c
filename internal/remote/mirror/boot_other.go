//go:build !linux

package mirror

import "time"

// SinceBoot is not known here: times kept between calls are the wall clock's alone.
func SinceBoot() (boot string, up time.Duration, ok bool) { return "", 0, false }
