package rooms_test

import (
	"context"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// roomInShard returns a new room id of shard.
func roomInShard(m *rooms.Manager, shard int) string {
	for {
		if id := rooms.NewRoomID(); m.ShardOf(id) == shard {
			return id
		}
	}
}

// writeShards writes each of shards once and leaves it without a live room, so that later
// campaigns there are updates, not creations.
func writeShards(t *testing.T, m *rooms.Manager, shards ...int) {
	t.Helper()
	ctx := context.Background()
	for _, shard := range shards {
		r := roomInShard(m, shard)
		res, err := m.Campaign(ctx, r, "warm", 5*time.Second, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Resign(ctx, r, res.Token); err != nil {
			t.Fatal(err)
		}
	}
}

// campaignInBackground campaigns for room in a goroutine; the channel gets the outcome.
func campaignInBackground(ctx context.Context, m *rooms.Manager, room, candidate string) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := m.Campaign(ctx, room, candidate, 30*time.Second, "")
		done <- err
	}()
	return done
}

// awaitSignal waits up to 5 s for a value on ch, else fails the test with what did not happen.
func awaitSignal[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatalf("%s within 5 s", what)
		panic("unreachable")
	}
}
