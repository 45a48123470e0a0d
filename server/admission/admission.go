package admission

import (
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"golang.org/x/time/rate"

	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// Budget is the per-client budget of requests per minute. Each client (a key such as
// clientip.Key's) has a token bucket holding a minute's budget that refills continuously; the
// table of clients is an LRU of bounded size, so an address flood costs bounded memory (the
// evicted, least recently seen client starts again with a full budget when it returns).
type Budget struct {
	perMinute int

	mu      sync.Mutex
	clients *simplelru.LRU[string, *rate.Limiter]
}

// New returns the budget of perMinute requests per client (0 or less: unlimited), tracking at
// most maxClients clients.
func New(perMinute, maxClients int) (*Budget, error) {
	clients, err := simplelru.NewLRU[string, *rate.Limiter](maxClients, nil)
	if err != nil {
		return nil, fmt.Errorf("admission: tracked clients %d: %w", maxClients, err)
	}
	return &Budget{perMinute: perMinute, clients: clients}, nil
}

// Limited reports whether clients have a budget at all.
func (a *Budget) Limited() bool { return a.perMinute > 0 }

// Allow spends one request of client's budget at now. When the budget is spent it returns how
// long until one request is available again, rounded up to whole seconds (the unit of
// Retry-After) and at least one second.
func (a *Budget) Allow(client string, now time.Time) (ok bool, retryAfter time.Duration) {
	if !a.Limited() {
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
