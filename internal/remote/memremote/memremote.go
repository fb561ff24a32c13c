// Package memremote is an in-memory remote.Backend: the reference the conformance suite is
// first checked against, and a fast fake for code built on the interface. State lives only as
// long as the value; it is shared by every goroutine that holds it.
package memremote

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/cairn-dev/cairn/internal/remote"
)

// Backend is an in-memory remote. The zero value is not usable; call New.
type Backend struct {
	mu      sync.Mutex
	lines   map[string][][]byte
	changed chan struct{} // closed and replaced on every append, to wake watchers
}

// New returns an empty remote.
func New() *Backend {
	return &Backend{lines: map[string][][]byte{}, changed: make(chan struct{})}
}

// Append implements remote.Backend: data's records are copied as they come, and land together.
func (b *Backend) Append(ctx context.Context, id string, after int64, data remote.Data) (int64, error) {
	data, err := remote.CheckAppend(id, after, data)
	if err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	b.mu.Lock()
	cur := int64(len(b.lines[id]))
	b.mu.Unlock()
	var recs [][]byte
	if cur == after { // else a conflict, whatever data holds
		if err := data(func(d []byte) error { recs = append(recs, slices.Clone(d)); return nil }); err != nil {
			return 0, err
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	line := b.lines[id]
	if cur := int64(len(line)); cur != after {
		return 0, &remote.ConflictError{Workflow: id, Expected: after, Current: cur}
	}
	line = append(line, recs...)
	b.lines[id] = line
	close(b.changed)
	b.changed = make(chan struct{})
	return int64(len(line)), nil
}

// Since implements remote.Backend.
func (b *Backend) Since(ctx context.Context, id string, rev int64) ([]remote.Record, error) {
	return remote.Records(ctx, b, id, rev)
}

// Each implements remote.Reader: each record is a copy, made as fn is called with it.
func (b *Backend) Each(ctx context.Context, id string, rev int64, fn func(remote.Record) error) error {
	if err := remote.ValidID(id); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.Lock()
	line := b.lines[id] // append-only: the records read here never change
	b.mu.Unlock()
	for i := max(rev, 0); i < int64(len(line)); i++ {
		if err := fn(remote.Record{Rev: i + 1, Data: slices.Clone(line[i])}); err != nil {
			return err
		}
	}
	return nil
}

// Heads implements remote.Backend.
func (b *Backend) Heads(ctx context.Context) (remote.Heads, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.headsLocked(), nil
}

func (b *Backend) headsLocked() remote.Heads {
	h := remote.Heads{}
	for id, line := range maps.All(b.lines) {
		h[id] = int64(len(line))
	}
	return h
}

// Watch implements remote.Backend: it wakes on the next append rather than polling.
func (b *Backend) Watch(ctx context.Context, known remote.Heads) (remote.Heads, error) {
	for {
		b.mu.Lock()
		h, ch := b.headsLocked(), b.changed
		b.mu.Unlock()
		if !h.Equal(known) {
			return h, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ch:
		}
	}
}
