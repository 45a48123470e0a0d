package serve

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"time"
)

// resolveWait bounds how long listenWrite waits for its name to resolve to an address of this
// host: a new Swarm task's name reaches the stack's DNS some seconds after the task starts.
var resolveWait = 60 * time.Second

// listenWrite listens on addr, HOST:PORT. An IP address, or no host (every address), is
// listened on as it is. A name is resolved until it names addresses of this host, and the
// first of them is listened on alone: in the stack tasks.demo names the demo task's address on
// the stack's network, which the published port does not reach, so only the stack's services
// can write. It waits up to resolveWait for that, and fails naming the name and what it
// resolved to.
func listenWrite(ctx context.Context, addr string, log *slog.Logger) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("write address %q: want HOST:PORT (e.g. tasks.demo:8081, 127.0.0.1:8081): %w", addr, err)
	}
	if _, err := netip.ParseAddr(host); err == nil || host == "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("listen on the write address %s: %w", addr, err)
		}
		return ln, nil
	}
	ctx, cancel := context.WithTimeout(ctx, resolveWait)
	defer cancel()
	var last string
	for logged := false; ; logged = true {
		ip, seen, err := localAddrOf(ctx, host)
		switch {
		case err != nil:
			last = err.Error()
		case ip.IsValid():
			ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), port))
			if err != nil {
				return nil, fmt.Errorf("listen on the write address %s (%s): %w", addr, ip, err)
			}
			return ln, nil
		default:
			last = fmt.Sprintf("it resolves to %v, none of them an address of this host", seen)
		}
		if !logged {
			log.Info("waiting for the write address's name to resolve to this host", "name", host, "last", last)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("write address %s: %s did not resolve to an address of this host within %v (last: %s); "+
				"in the stack it is tasks.<demo service>:PORT, elsewhere an IP address such as 127.0.0.1:8081", addr, host, resolveWait, last)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// localAddrOf resolves host and returns the first of its addresses that belongs to this host
// (invalid if none does) and all of them.
func localAddrOf(ctx context.Context, host string) (netip.Addr, []netip.Addr, error) {
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return netip.Addr{}, nil, err
	}
	ifaces, err := net.InterfaceAddrs()
	if err != nil {
		return netip.Addr{}, ips, fmt.Errorf("this host's addresses: %w", err)
	}
	local := map[netip.Addr]bool{}
	for _, a := range ifaces {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			local[p.Addr()] = true
		}
	}
	for _, ip := range ips {
		if local[ip.Unmap()] {
			return ip.Unmap(), ips, nil
		}
	}
	return netip.Addr{}, ips, nil
}
