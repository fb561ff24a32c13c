package durable_test

import (
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/durable"
)

// BenchmarkLockHandoff is how long a waiter takes to get a lock after its holder lets it go
// (held 20 ms, so that a waiter backing off would be well into its steps).
func BenchmarkLockHandoff(b *testing.B) {
	d, _ := durable.OpenDir(b.TempDir())
	var total time.Duration
	for b.Loop() {
		unlock, _ := d.Lock(".lock-h", time.Second)
		got := make(chan time.Time, 1)
		go func() {
			u, err := d.Lock(".lock-h", 10*time.Second)
			if err != nil {
				b.Error(err)
			}
			got <- time.Now()
			u()
		}()
		time.Sleep(20 * time.Millisecond)
		rel := time.Now()
		unlock()
		total += (<-got).Sub(rel)
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "handoff-us")
}
