//go:build !linux

package memory

import "errors"

// exchange is unavailable here; replace falls back to a plain atomic rename and a read-back.
func exchange(a, b string) error { return errors.ErrUnsupported }

// writing cannot tell here; nothing is exchanged, so nothing is displaced to ask about.
var writing = func(string) (busy, sure bool) { return false, false }
