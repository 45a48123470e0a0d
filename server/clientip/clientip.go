package clientip

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
)

// Key names the client of r: its peer address, or — only when the peer is one of proxies — the
// nearest address in X-Forwarded-For that is not itself a trusted proxy (read from the right,
// since only the hops appended by trusted proxies can be believed; whatever the client wrote
// itself is further left).
func Key(r *http.Request, proxies []netip.Prefix) string {
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

// PeerKey names the client of a connection from remoteAddr, or is "" when the peer is one of
// proxies: a trusted proxy's connections carry many clients, and no header has been read yet.
func PeerKey(remoteAddr string, proxies []netip.Prefix) string {
	addr, ok := parseHop(remoteAddr)
	if !ok {
		return remoteAddr
	}
	if trusted(addr, proxies) {
		return ""
	}
	return addrKey(addr)
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
	return slices.ContainsFunc(proxies, func(p netip.Prefix) bool { return p.Contains(addr) })
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
