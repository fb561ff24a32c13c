package gitremote_test

import (
	"context"
	"fmt"
	"math/rand/v2"
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
				h, err := c.Append(ctx, "wf-bench", head, remote.Slice(fmt.Appendf(nil, `{"rev":%d}`, head+1)))
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
// Watch seeing it. The watcher polls continuously; the writer appends at a random moment of
// its cycle. Reported also as a fraction of the poll interval (200 ms here), which scales to
// the targets' 10 s poll (p50 at most 6 s, p99 at most 12 s: 0.6 and 1.2). At short polls the
// fetch itself (~0.1 s on a busy machine) weighs more in the fraction;
// CAIRN_REMOTE_BENCH_POLL sets a longer interval.
func BenchmarkPropagation(b *testing.B) {
	poll := 200 * time.Millisecond
	if d, err := time.ParseDuration(os.Getenv("CAIRN_REMOTE_BENCH_POLL")); err == nil && d > 0 {
		poll = d
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bare := bareRepo(b)
	url := "git://" + daemon(b, filepath.Dir(bare)) + "/" + filepath.Base(bare)
	w := clone(b, url, gitremote.Refs)
	dir := b.TempDir()
	git(b, dir, "init", "-q")
	watcher, err := gitremote.New(gitremote.Config{Dir: dir, Remote: url, Poll: poll})
	if err != nil {
		b.Fatal(err)
	}
	seen := make(chan int64, 1024)
	go func() {
		known := remote.Heads{}
		for {
			h, err := watcher.Watch(ctx, known)
			if err != nil {
				return
			}
			seen <- h["wf-prop"]
			known = h
		}
	}()
	rng := rand.New(rand.NewPCG(1, 2))
	var head int64
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		time.Sleep(time.Duration(rng.Int64N(int64(poll))))
		h, err := w.Append(ctx, "wf-prop", head, remote.Slice(fmt.Appendf(nil, "r%d", head+1)))
		if err != nil {
			b.Fatal(err)
		}
		done := time.Now()
		for rev := int64(0); rev < h; rev = <-seen {
		}
		lat = append(lat, time.Since(done))
		head = h
	}
	reportPercentiles(b, lat, "ms", time.Millisecond)
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
