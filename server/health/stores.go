package health

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// Metrics is what the health checks record.
type Metrics interface {
	// StoreDamaged counts damaged stored state that a store found and worked around.
	StoreDamaged()
	// StoreRequest records one request a store sent to a server of its own
	// (lease.RequestReporter): the store's kind ("etcd"), the operation, how long it took and
	// its error (nil on success).
	StoreRequest(store, op string, took time.Duration, err error)
	// Ready records the outcome of a readiness check.
	Ready(ready bool)
}

// storeHealth is what the stores reported about themselves beyond answering calls: damaged
// state they worked around (rooms.DamageReporter: the rooms store's, and the election's store's
// — a file store's repaired election file or recreated directory), and whether the rooms store
// can write at all (rooms.WriteChecker). /readyz shows both; damage is also logged and counted.
type storeHealth struct {
	metrics Metrics
	log     *slog.Logger
	// rooms is the elections API's store, whose writes /readyz checks; nil without the API.
	rooms rooms.Store
	// watched are the stores whose damage reports are subscribed to, each once.
	watched []any

	mu      sync.Mutex
	damages int
	last    rooms.Damage
}

// newStoreHealth returns a storeHealth that counts damage in m and logs it to log.
func newStoreHealth(m Metrics, log *slog.Logger) *storeHealth {
	return &storeHealth{metrics: m, log: log}
}

// watch subscribes to what store reports about itself — damage (rooms.DamageReporter), and
// every request it sends (lease.RequestReporter) — unless it already did: an election and the
// elections API on one store (serve on etcd) report each damage and each request once.
func (h *storeHealth) watch(store interface{ Describe() string }) {
	// Stores are pointers; a store of a type that is not comparable is never the same as
	// another (comparing it would panic).
	if reflect.TypeOf(store).Comparable() && slices.Contains(h.watched, any(store)) {
		return
	}
	h.watched = append(h.watched, store)
	if r, ok := store.(lease.RequestReporter); ok {
		kind := storeKind(store)
		r.OnRequest(func(op string, took time.Duration, err error) {
			h.metrics.StoreRequest(kind, op, took, err)
		})
	}
	r, ok := store.(rooms.DamageReporter)
	if !ok {
		return
	}
	r.OnDamage(func(d rooms.Damage) {
		h.metrics.StoreDamaged()
		h.log.Error("store: damaged state found; serving what survived", "file", d.Where, "reason", d.Reason, "store", store.Describe())
		h.mu.Lock()
		h.damages++
		h.last = d
		h.mu.Unlock()
	})
}

// storeKind is the store's kind for a metric label: the first word of its description ("etcd",
// "swarm", "file", "memory"), never its addresses.
func storeKind(store interface{ Describe() string }) string {
	kind, _, _ := strings.Cut(store.Describe(), " ")
	return kind
}

// watchRooms watches the elections API's store, and checks its writes in /readyz.
func (h *storeHealth) watchRooms(store rooms.Store) {
	h.rooms = store
	h.watch(store)
}

// checkWritable reports why the rooms store cannot write, or nil (also for stores that cannot
// tell, and without the elections API).
func (h *storeHealth) checkWritable(ctx context.Context) error {
	if c, ok := h.rooms.(rooms.WriteChecker); ok {
		return c.CheckWritable(ctx)
	}
	return nil
}

// details describes the damage found since the process started, "" when there was none.
func (h *storeHealth) details() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.damages == 0 {
		return ""
	}
	return fmt.Sprintf("the store found damaged state %d time(s) since this server started and served what survived; last at %s: %s: %s",
		h.damages, wire.Time(h.last.At), h.last.Where, h.last.Reason)
}
