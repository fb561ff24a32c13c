package remotetest

import (
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Faults says what a Proxy does to the connections it relays. Each connection draws its fate
// once, from a generator seeded with Seed and the connection's number, so a run is repeatable
// as far as the scheduler allows.
type Faults struct {
	Seed      uint64
	Cut       float64       // chance a connection is closed both ways after a random number of bytes
	HalfClose float64       // chance one direction is shut (the peer reads EOF) after a random number of bytes, the other left open
	Delay     time.Duration // added before relaying each chunk, on every connection
	MaxBytes  int           // cuts and half-closes fall within the first MaxBytes bytes; > 0 when either may happen
}

// ProxyStats counts what a Proxy did.
type ProxyStats struct {
	Conns, Cut, HalfClosed int64
}

// Proxy is a TCP relay on 127.0.0.1 in front of a server (git daemon, a database) that cuts,
// delays and half-closes connections as its Faults say. It stops when the test ends.
type Proxy struct {
	Addr   string // host:port to dial instead of the server
	target string
	l      net.Listener
	mu     sync.Mutex
	faults Faults
	n      atomic.Uint64
	stats  struct{ conns, cut, half atomic.Int64 }
	wg     sync.WaitGroup
	open   map[net.Conn]struct{} // under mu; closed when the test ends
	closed bool                  // under mu
}

// NewProxy starts a proxy to target with faults.
func NewProxy(t testing.TB, target string, faults Faults) *Proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Addr: l.Addr().String(), target: target, l: l, faults: faults, open: map[net.Conn]struct{}{}}
	p.wg.Go(p.serve)
	t.Cleanup(func() {
		l.Close()
		p.mu.Lock()
		p.closed = true
		for c := range p.open {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

// SetFaults changes the faults for connections accepted from now on (a cut that heals).
func (p *Proxy) SetFaults(f Faults) {
	p.mu.Lock()
	p.faults = f
	p.mu.Unlock()
}

// Stats reports what the proxy has done so far.
func (p *Proxy) Stats() ProxyStats {
	return ProxyStats{p.stats.conns.Load(), p.stats.cut.Load(), p.stats.half.Load()}
}

func (p *Proxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		f := p.faults
		p.mu.Unlock()
		n := p.n.Add(1)
		p.wg.Go(func() { p.relay(c.(*net.TCPConn), f, n) })
	}
}

// plan is one connection's fate: after limit bytes in direction dir (0 client to server,
// 1 back), cut both ways or shut that one direction.
type plan struct {
	limit int64
	dir   int
	cut   bool
	half  bool
}

// track registers c to be closed when the test ends; false if it has ended.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.open[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.open, c)
	p.mu.Unlock()
	c.Close()
}

func (p *Proxy) relay(client *net.TCPConn, f Faults, n uint64) {
	if !p.track(client) {
		return
	}
	defer p.untrack(client)
	p.stats.conns.Add(1)
	rng := rand.New(rand.NewPCG(f.Seed, n))
	var pl plan
	switch x := rng.Float64(); {
	case x < f.Cut:
		pl = plan{limit: rng.Int64N(int64(f.MaxBytes)), dir: rng.IntN(2), cut: true}
	case x < f.Cut+f.HalfClose:
		pl = plan{limit: rng.Int64N(int64(f.MaxBytes)), dir: rng.IntN(2), half: true}
	}
	d, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		return
	}
	server := d.(*net.TCPConn)
	if !p.track(server) {
		return
	}
	defer p.untrack(server)
	var once sync.Once
	cutBoth := func() {
		once.Do(func() {
			p.stats.cut.Add(1)
			client.Close()
			server.Close()
		})
	}
	var wg sync.WaitGroup
	pipe := func(dst, src *net.TCPConn, dir int) {
		defer dst.CloseWrite() // pass on an orderly close
		var sent int64
		buf := make([]byte, 1024)
		for {
			k, err := src.Read(buf)
			if k > 0 {
				if f.Delay > 0 {
					time.Sleep(f.Delay)
				}
				chunk := buf[:k]
				if (pl.cut || pl.half) && pl.dir == dir && sent+int64(k) > pl.limit {
					chunk = buf[:pl.limit-sent]
					dst.Write(chunk)
					if pl.cut {
						cutBoth()
						return
					}
					// Half-close: the far side reads EOF; the rest of this direction
					// is read and dropped, and the other direction flows on.
					p.stats.half.Add(1)
					dst.CloseWrite()
					io.Copy(io.Discard, src)
					return
				}
				if _, err := dst.Write(chunk); err != nil {
					return
				}
				sent += int64(k)
			}
			if err != nil {
				return
			}
		}
	}
	wg.Go(func() { pipe(server, client, 0) })
	wg.Go(func() { pipe(client, server, 1) })
	wg.Wait()
}
