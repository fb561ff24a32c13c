// Package alloctest measures what a call allocates, for tests that bound a read's or a
// refusal's cost by counting bytes rather than timing it.
package alloctest

import "runtime"

// Bytes returns the bytes f allocates (the heap's running total, before and after: other
// goroutines' allocations count too, so budgets leave room for them).
func Bytes(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
