package rooms_test

import (
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/lease/rooms/roomstest"
)

func TestSuiteMemory(t *testing.T) {
	store := rooms.NewMemoryStore() // one instance: every handle must see the same shards
	roomstest.RunSuite(t, func(*testing.T) rooms.Store { return store })
}
