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
	r := &Regexp{Expr: expr}
	return r.Get
}

// Regexp is an expression compiled on its first Get, once, held by value in the struct that
// uses it: New's function costs two allocations (the Regexp and its method value), and the
// secret scanner's rule list, laid out by the first scan of a hook process, holds dozens. Expr must be valid: the first Get panics
// otherwise, as regexp.MustCompile does. A Regexp must not be copied after first use.
type Regexp struct {
	Expr string
	once sync.Once
	re   *regexp.Regexp
}

// Get returns the compiled expression, compiling it on the first call.
func (r *Regexp) Get() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.Expr) })
	return r.re
}
