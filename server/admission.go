package server

import (
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"golang.org/x/time/rate"

	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// admission is the per-client budget shared by room creation and campaigns. Each client (see
// clientKey) has a token bucket holding a minute's budget that refills continuously; the table
// of clients is an LRU of bounded size, so an address flood costs bounded memory (the evicted,
// least recently seen client starts again with a full budget when it returns).
type admission struct {
	perMinute int
	proxies   []netip.Prefix

	mu      sync.Mutex
	clients *simplelru.LRU[string, *rate.Limiter]
}

func newAdmission(perMinute, maxClients int, proxies []netip.Prefix) (*admission, error) {
	clients, err := simplelru.NewLRU[string, *rate.Limiter](maxClients, nil)
	if err != nil {
		return nil, fmt.Errorf("server: tracked clients %d: %w", maxClients, err)
	}
	return &admission{perMinute: perMinute, proxies: proxies, clients: clients}, nil
}

// limited reports whether clients have a budget at all.
func (a *admission) limited() bool { return a.perMinute > 0 }

// allow spends one request of client's budget at now. When the budget is spent it returns how
// long until one request is available again, rounded up to whole seconds (the unit of
// Retry-After) and at least one second.
func (a *admission) allow(client string, now time.Time) (ok bool, retryAfter time.Duration) {
	if !a.limited() {
		return true, 0
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	lim, found := a.clients.Get(client)
	if !found {
		lim = rate.NewLimiter(rate.Every(time.Minute/time.Duration(a.perMinute)), a.perMinute)
		a.clients.Add(client, lim)
	}
	if lim.AllowN(now, 1) {
		return true, 0
	}
	r := lim.ReserveN(now, 1)
	wait := r.DelayFrom(now)
	r.CancelAt(now) // only asking: the refused request spends nothing
	return false, wire.WholeSeconds(wait)
}
