package filestore_test

import (
	"testing"

	"github.com/regbo/lfp-swarm-lease/lease/filestore"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/lease/rooms/roomstest"
)

// TestRoomsSuite runs the rooms suite on one directory; every handle is a new Store on it, as
// another process would open it.
func TestRoomsSuite(t *testing.T) {
	dir := t.TempDir()
	roomstest.RunSuite(t, func(t *testing.T) rooms.Store {
		s, err := filestore.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
