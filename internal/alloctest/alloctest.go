// Package alloctest measures what a call allocates or holds, for tests that bound a read's or a
// refusal's cost by counting bytes rather than timing it.
package alloctest

import (
	"runtime"
	"sync"
)

// Bytes returns the bytes f allocates (the heap's running total, before and after: other
// goroutines' allocations count too, so budgets leave room for them).
func Bytes(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// InUse returns the heap in use once a collection has run: what is still reachable.
func InUse() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// PeakHeap runs f and returns the most heap it kept in use while it ran beyond what was in use
// before, and f's result: collected over and over, what each collection kept less what was
// allocated meanwhile (kept by it whether still used or not) is what f held when it began.
func PeakHeap[T any](f func() T) (int64, T) {
	base, peak := int64(InUse()), int64(0)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var before, after runtime.MemStats
		for {
			runtime.ReadMemStats(&before)
			runtime.GC()
			runtime.ReadMemStats(&after)
			peak = max(peak, int64(after.HeapAlloc)-int64(after.TotalAlloc-before.TotalAlloc)-base)
			select {
			case <-done:
				return
			default:
			}
		}
	})
	out := f()
	close(done)
	wg.Wait()
	return peak, out
}
