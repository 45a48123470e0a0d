// Package cmdtest holds what the command packages' unit tests share: the real HTTP server in the
// test's own process, on a loopback socket.
package cmdtest

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server"
	"github.com/regbo/lfp-swarm-lease/server/elections"
	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// StartElectionsServer runs the server with the elections API on a memory room store and no
// election namespace, until the test ends, and returns its base URL.
func StartElectionsServer(t *testing.T) string {
	t.Helper()
	m, err := rooms.New(rooms.NewMemoryStore(), "rooms")
	if err != nil {
		t.Fatal(err)
	}
	wire.InstallErrorModel() // as the commands that serve the API do
	srv, err := server.New(server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Elections: &elections.Options{Rooms: m, AdmissionPerMinute: -1}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	return "http://" + ln.Addr().String()
}
