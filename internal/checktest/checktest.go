// Package checktest holds Recorder, the testing.TB a check runs against on a broken input, so
// a test can show the check catches what it exists to catch.
package checktest

import "testing"

// Recorder notes the check's Error and Errorf calls instead of failing the test. Everything
// else goes to the test it wraps: Helper and Logf work, and a check that stops (Fatalf) fails
// the test, where a Recorder on no test would panic on a nil TB.
type Recorder struct {
	testing.TB
	failed bool
}

// New is a Recorder over t.
func New(t testing.TB) *Recorder { return &Recorder{TB: t} }

func (r *Recorder) Errorf(string, ...any) { r.failed = true }

func (r *Recorder) Error(...any) { r.failed = true }

// Failed reports whether the check called Error or Errorf.
func (r *Recorder) Failed() bool { return r.failed }
