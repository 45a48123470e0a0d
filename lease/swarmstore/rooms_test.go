package swarmstore_test

import (
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/lease/rooms/roomstest"
)

// TestRoomsSuite runs the rooms suite on the test Swarm; every handle has its own Docker client,
// as another replica of the server would.
func TestRoomsSuite(t *testing.T) {
	newStore(t) // skips (or, with CI=true, fails) before anything when there is no test Swarm
	roomstest.RunSuite(t, func(t *testing.T) rooms.Store { return newStore(t) })
}
