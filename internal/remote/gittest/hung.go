package gittest

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// HungServer is a server on 127.0.0.1 that takes every connection and never answers, as a
// host behind a half-open link does: a git talking to it waits until its own time runs out.
type HungServer struct {
	Addr             string // host:port
	accepted, closed atomic.Int64
}

// Hung starts a HungServer; it closes every connection it holds when the test ends.
func Hung(t testing.TB) *HungServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &HungServer{Addr: l.Addr().String()}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			h.accepted.Add(1)
			wg.Go(func() {
				io.Copy(io.Discard, c) // until the client closes it, or the test ends
				h.closed.Add(1)
			})
		}
	})
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return h
}

// Accepted counts the connections taken so far.
func (h *HungServer) Accepted() int64 { return h.accepted.Load() }

// Closed counts the connections whose client has closed them (or that the test's end closed).
func (h *HungServer) Closed() int64 { return h.closed.Load() }
