package gitremote_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/remote"
	"github.com/cairn-dev/cairn/internal/remote/gitremote"
)

// BenchmarkAppend is one record pushed by one machine on loopback, the mirror already current:
// the figure behind "one push at most 150 ms p50". It reports the p50 and p99 of the calls.
func BenchmarkAppend(b *testing.B) {
	for _, over := range []string{"file", "daemon"} {
		b.Run(over, func(b *testing.B) {
			ctx := context.Background()
			bare := bareRepo(b)
			url := "file://" + bare
			if over == "daemon" {
				url = "git://" + daemon(b, filepath.Dir(bare)) + "/" + filepath.Base(bare)
			}
			c := clone(b, url, gitremote.Refs)
			var head int64
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				h, err := c.Append(ctx, "wf-bench", head, [][]byte{fmt.Appendf(nil, `{"rev":%d}`, head+1)})
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
				head = h
			}
			reportPercentiles(b, lat, "ms", time.Millisecond)
		})
	}
}

// BenchmarkPropagation is the time from one machine's append returning to another machine's
// Watch seeing it, with a 200 ms poll; reported also as a fraction of the poll interval, which
// scales to the 10 s poll of the targets (p50 at most 6 s, p99 at most 12 s: 0.6 and 1.2).
// CAIRN_REMOTE_BENCH_POLL sets another interval (the fetch itself, ~0.1 s on a busy machine,
// weighs less in the fraction at longer polls).
func BenchmarkPropagation(b *testing.B) {
	poll := 200 * time.Millisecond
	if d, err := time.ParseDuration(os.Getenv("CAIRN_REMOTE_BENCH_POLL")); err == nil && d > 0 {
		poll = d
	}
	ctx := context.Background()
	bare := bareRepo(b)
	url := "git://" + daemon(b, filepath.Dir(bare)) + "/" + filepath.Base(bare)
	w := clone(b, url, gitremote.Refs)
	dir := b.TempDir()
	git(b, dir, "init", "-q")
	watcher, err := gitremote.New(gitremote.Config{Dir: dir, Remote: url, Poll: poll})
	if err != nil {
		b.Fatal(err)
	}
	var head int64
	known := remote.Heads{}
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		// The writer appends at a random point in the watcher's poll cycle.
		seen := make(chan remote.Heads, 1)
		go func() {
			h, err := watcher.Watch(ctx, known)
			if err != nil {
				b.Error(err)
			}
			seen <- h
		}()
		time.Sleep(time.Duration(head%7) * poll / 7)
		h, err := w.Append(ctx, "wf-prop", head, [][]byte{fmt.Appendf(nil, "r%d", head+1)})
		if err != nil {
			b.Fatal(err)
		}
		done := time.Now()
		known = <-seen
		lat = append(lat, time.Since(done))
		head = h
	}
	reportPercentiles(b, lat, "ms", time.Millisecond)
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2])/float64(poll), "p50/poll")
	b.ReportMetric(float64(lat[len(lat)*99/100])/float64(poll), "p99/poll")
}

func reportPercentiles(b *testing.B, lat []time.Duration, unit string, scale time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2])/float64(scale), "p50-"+unit)
	b.ReportMetric(float64(lat[len(lat)*99/100])/float64(scale), "p99-"+unit)
}
