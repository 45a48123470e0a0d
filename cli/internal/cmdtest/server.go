// Package cmdtest holds what the command packages' unit tests share: the real HTTP server in the
// test's own process, on a loopback socket.
package cmdtest

import (
	"io"
	"log/slog"
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server"
	"github.com/regbo/lfp-swarm-lease/server/elections"
	"github.com/regbo/lfp-swarm-lease/server/electionstest"
)

// StartElectionsServer runs the server with the elections API on a memory room store and no
// election namespace, until the test ends, and returns its base URL.
func StartElectionsServer(t *testing.T) string {
	t.Helper()
	m, err := rooms.New(rooms.NewMemoryStore(), "rooms")
	if err != nil {
		t.Fatal(err)
	}
	return electionstest.Serve(t, server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Elections: &elections.Options{Rooms: m, AdmissionPerMinute: -1}})
}
