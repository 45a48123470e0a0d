package server

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
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

// clientKey names the client of r for budgets and watch limits: its peer address, or — only
// when the peer is a configured trusted proxy — the nearest address in X-Forwarded-For that is
// not itself a trusted proxy (read from the right, since only the hops appended by trusted
// proxies can be believed; whatever the client wrote itself is further left). An IPv6 client
// is its /64: one host commonly holds a whole /64, and keying single addresses would give it
// unlimited budgets.
func clientKey(r *http.Request, proxies []netip.Prefix) string {
	peer, ok := parseHop(r.RemoteAddr)
	if !ok {
		return r.RemoteAddr
	}
	client := peer
	if trusted(peer, proxies) {
		hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
		for i := len(hops) - 1; i >= 0; i-- {
			addr, ok := parseHop(hops[i])
			if !ok {
				break // a garbled hop: trust nothing beyond it
			}
			client = addr
			if !trusted(client, proxies) {
				break
			}
		}
	}
	return addrKey(client)
}

// addrKey is the key of a client address: the address, or an IPv6 address's /64.
func addrKey(client netip.Addr) string {
	if client.Is6() {
		return netip.PrefixFrom(client, 64).Masked().String()
	}
	return client.String()
}

// parseHop reads an address as peers and proxies write it: "203.0.113.7", "203.0.113.7:5555",
// "2001:db8::9", "[2001:db8::9]" or "[2001:db8::9]:443". IPv4-mapped IPv6 addresses are unmapped.
func parseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if addr, err := netip.ParseAddr(s); err == nil {
		return addr.Unmap(), true
	}
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	addr, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
	if err != nil {
		return netip.Addr{}, false
	}
	return addr.Unmap(), true
}

func trusted(addr netip.Addr, proxies []netip.Prefix) bool {
	for _, p := range proxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// ParseTrustedProxies parses a comma-separated list of addresses and CIDR prefixes
// ("10.0.0.0/8, 192.168.1.10"); an empty string trusts no proxy.
func ParseTrustedProxies(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if strings.Contains(item, "/") {
			p, err := netip.ParsePrefix(item)
			if err != nil {
				return nil, fmt.Errorf("trusted proxy %q: want an address or a CIDR prefix such as 10.0.0.0/8", item)
			}
			if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
				// Peers are compared unmapped: ::ffff:10.0.0.0/104 means 10.0.0.0/8.
				p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(item)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q: want an address or a CIDR prefix such as 10.0.0.0/8", item)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}
