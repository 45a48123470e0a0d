package server_test

import (
	"testing"

	"github.com/moby/moby/client"

	"github.com/regbo/lfp-swarm-lease/lease/filestore"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/lease/swarmstore"
	"github.com/regbo/lfp-swarm-lease/server/electionstest"
)

// The elections API's conformance suite on each store. The memory and file runs wait out
// TTLs for seconds and share nothing (a store, a server and a client each), so they run in
// parallel.

func TestElectionsMemory(t *testing.T) {
	t.Parallel()
	store := rooms.NewMemoryStore()
	electionstest.Run(t, func(*testing.T) rooms.Store { return store })
}

func TestElectionsFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	electionstest.Run(t, func(t *testing.T) rooms.Store {
		s, err := filestore.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestElectionsSwarm(t *testing.T) {
	host := leasetest.SwarmHost(t)
	electionstest.Run(t, func(t *testing.T) rooms.Store {
		s, err := swarmstore.NewFromEnv(client.WithHost(host))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
