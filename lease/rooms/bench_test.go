package rooms_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
)

// BenchmarkCycle measures the engine alone on the memory store under the load of the
// throughput benchmark (bench/cmd/bench-peers): every goroutine owns one room and repeats
// campaign → renew → renew → resign, so a quarter of the operations are activations (counted
// against the active-room limit) and three quarters are writes of a room that stays live. One
// b.N is one operation. Besides the cycling rooms, the shards hold none or 5,000 other live
// rooms (about 80 per shard), whose documents every write copies and every count sums up.
func BenchmarkCycle(b *testing.B) {
	for _, held := range []int{0, 5000} {
		b.Run(fmt.Sprintf("held=%d", held), func(b *testing.B) { benchmarkCycle(b, held) })
	}
}

func benchmarkCycle(b *testing.B, held int) {
	m, err := rooms.New(rooms.NewMemoryStore(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for i := range held {
		if _, err := m.Campaign(ctx, fmt.Sprintf("held-room-%05d", i), "holder", 300*time.Second, ""); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(32) // with GOMAXPROCS 2: 64 rooms, as bench-peers' 64 clients
	b.RunParallel(func(pb *testing.PB) {
		room := fmt.Sprintf("bench-room-%04d", next.Add(1))
		// A room left held when the operations run out is never used again.
		for pb.Next() {
			res, err := m.Campaign(ctx, room, "worker", 30*time.Second, "")
			if err != nil || res.Status != rooms.StatusLeader {
				b.Errorf("campaign: %v, %v", res.Status, err)
				return
			}
			for range 2 {
				if !pb.Next() {
					return
				}
				if _, err := m.Renew(ctx, room, res.Token, 30*time.Second); err != nil {
					b.Errorf("renew: %v", err)
					return
				}
			}
			if !pb.Next() {
				return
			}
			if _, err := m.Resign(ctx, room, res.Token); err != nil {
				b.Errorf("resign: %v", err)
				return
			}
		}
	})
}
