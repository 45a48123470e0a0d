package roomstest

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// hookStore wraps a store to count and slow down writes and to replace the next write's
// answer, e.g. by an unknown outcome after the write was applied. It hides the optional
// interfaces of the store it wraps (activation lock, notifications).
type hookStore struct {
	rooms.Store
	delay  time.Duration
	writes atomic.Int64

	mu   sync.Mutex
	next func(write func() (lease.Version, error)) (lease.Version, error)
}

// once makes hook answer the next write (create or update) instead of the store; hook gets the
// real write to call, or not.
func (h *hookStore) once(hook func(write func() (lease.Version, error)) (lease.Version, error)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next = hook
}

func (h *hookStore) intercept(write func() (lease.Version, error)) (lease.Version, error) {
	h.writes.Add(1)
	if h.delay > 0 {
		time.Sleep(h.delay)
	}
	h.mu.Lock()
	hook := h.next
	h.next = nil
	h.mu.Unlock()
	if hook != nil {
		return hook(write)
	}
	return write()
}

// CreateShard implements rooms.Store through intercept.
func (h *hookStore) CreateShard(ctx context.Context, key rooms.ShardKey, data []byte) (lease.Version, error) {
	return h.intercept(func() (lease.Version, error) { return h.Store.CreateShard(ctx, key, data) })
}

// UpdateShard implements rooms.Store through intercept.
func (h *hookStore) UpdateShard(ctx context.Context, key rooms.ShardKey, data []byte, expected lease.Version) (lease.Version, error) {
	return h.intercept(func() (lease.Version, error) { return h.Store.UpdateShard(ctx, key, data, expected) })
}
