package serve

import (
	"context"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestWriteAddressByName(t *testing.T) {
	ln, err := listenWrite(context.Background(), "localhost:0", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if ap := netip.MustParseAddrPort(ln.Addr().String()); !ap.Addr().IsLoopback() {
		t.Fatalf("localhost:0 listens on %s, want a loopback address alone", ap)
	}
}

func TestWriteAddressNotOfThisHost(t *testing.T) {
	defer func(d time.Duration) { resolveWait = d }(resolveWait)
	resolveWait = time.Second
	_, err := listenWrite(context.Background(), "demo.invalid:8081", slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "demo.invalid did not resolve to an address of this host") {
		t.Fatalf("error %v, want one naming demo.invalid", err)
	}
}
