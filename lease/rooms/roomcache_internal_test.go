package rooms

import (
	"fmt"
	"testing"
)

// TestSeenRoomsAreNeverGuessedAbsent: a room found stored once is in the filter for good, and
// a campaign in it is then decided on a read, never on the guess that it is not stored.
func TestSeenRoomsAreNeverGuessedAbsent(t *testing.T) {
	seen := new(seenRooms)
	c := roomCache{valid: true, head: []byte(`{}`), headVersion: 7}
	if _, ok := c.read([]string{"new-room"}, true, seen); !ok {
		t.Fatal("a campaign in a room never seen, on a known head, is not decided from memory")
	}
	if _, ok := c.read([]string{"new-room"}, false, seen); ok {
		t.Fatal("a renewal of a room not remembered is decided from memory")
	}
	seen.add("found-stored")
	if _, ok := c.read([]string{"found-stored"}, true, seen); ok {
		t.Fatal("a campaign in a room found stored before is guessed not stored")
	}
	// False positives only cost a read; they stay rare at the sizes the filter is for.
	for i := range 100_000 {
		seen.add(fmt.Sprintf("stored-%d", i))
	}
	positives := 0
	for i := range 100_000 {
		if seen.has(fmt.Sprintf("other-%d", i)) {
			positives++
		}
	}
	if positives > 100 {
		t.Fatalf("%d false positives in 100,000 rooms never seen, with 100,000 seen", positives)
	}
}
