package server

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// storeHealth is what the rooms store reported about itself beyond answering calls: damaged
// state it worked around (rooms.DamageReporter), and whether it can write at all
// (rooms.WriteChecker). /readyz shows both; damage is also logged and counted.
type storeHealth struct {
	store rooms.Store

	mu      sync.Mutex
	damaged int
	last    rooms.Damage
}

// watchStoreHealth subscribes to the damage reports of the rooms store, if it makes any.
func watchStoreHealth(store rooms.Store, damaged prometheus.Counter, log *slog.Logger) *storeHealth {
	h := &storeHealth{store: store}
	if r, ok := store.(rooms.DamageReporter); ok {
		r.OnDamage(func(d rooms.Damage) {
			damaged.Inc()
			log.Error("rooms store: damaged state found; serving what survived", "file", d.Where, "reason", d.Reason, "store", store.Describe())
			h.mu.Lock()
			h.damaged++
			h.last = d
			h.mu.Unlock()
		})
	}
	return h
}

// checkWritable reports why the store cannot write, or nil (also for stores that cannot tell).
func (h *storeHealth) checkWritable(ctx context.Context) error {
	if c, ok := h.store.(rooms.WriteChecker); ok {
		return c.CheckWritable(ctx)
	}
	return nil
}

// details describes the damage found since the process started, "" when there was none.
func (h *storeHealth) details() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.damaged == 0 {
		return ""
	}
	return fmt.Sprintf("the rooms store found %d damaged slot(s) since this server started and served the surviving ones; last at %s: %s: %s",
		h.damaged, wireTime(h.last.At), h.last.Where, h.last.Reason)
}
