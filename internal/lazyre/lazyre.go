// Package lazyre holds regular expressions compiled on first use. Every hook process links
// packages (secrets, memory, store/migrate) whose expressions most runs never need, and
// compiling them all at start-up was a measurable part of a hook's time.
package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function that compiles expr on its first call, once, and returns that
// *regexp.Regexp ever after. expr must be valid: the first call panics otherwise, as
// regexp.MustCompile does.
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
