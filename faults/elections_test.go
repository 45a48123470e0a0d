package faults_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"
	"github.com/regbo/lfp-swarm-lease/faults/check"
	"github.com/regbo/lfp-swarm-lease/faults/cluster"
	"github.com/regbo/lfp-swarm-lease/faults/contend"
)

// roomTTL is the rooms' lease, the shortest the elections API allows.
const roomTTL = 5 * time.Second

// TestElectionsUnderFaults runs three `serve` replicas, one per manager, and in each of two rooms
// one holder per replica (clients/go's Hold) that works a random while, then resigns. Meanwhile
// a follower manager crashes and restarts, the Raft leader is partitioned and healed, and quorum
// is lost and regained. A holder's work runs from Hold's return until it resigns or its
// Leadership ends; the terms of one room never overlap — the server's expiry decides takeover,
// the holder stops at its own earlier deadline — and a room's term only grows.
func TestElectionsUnderFaults(t *testing.T) { electionsUnderFaults(t, 8) }

// electionsUnderFaults is TestElectionsUnderFaults; the long variant runs it with its own seed,
// which times the faults at random points of the rooms' renewal cycle.
func electionsUnderFaults(t *testing.T, seed uint64) {
	c := cluster.ForTest(t)
	timing := rand.New(rand.NewPCG(seed, 0))
	jitter := func() {
		if *long {
			time.Sleep(time.Duration(timing.Int64N(int64(roomTTL)))) // randomized fault timing, seeded
		}
	}
	bins, err := contend.Build()
	if err != nil {
		t.Fatal(err)
	}
	servers := make([]*contend.Server, cluster.Nodes)
	for n := 1; n <= cluster.Nodes; n++ {
		if servers[n-1], err = contend.StartServer(t.Context(), bins, c.Host(n), "faults-rooms"); err != nil {
			t.Fatal(err)
		}
		defer servers[n-1].Stop()
	}
	rooms := []string{"faults-room-a", "faults-room-b"}
	ctx, stop := context.WithCancel(context.Background())
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		terms  = map[string][]check.Term{}
		causes = map[string]int{}
		seq    int
	)
	for ri, room := range rooms {
		for n, srv := range servers {
			el, err := swarmlease.NewClient(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			candidate := fmt.Sprintf("holder%d", n+1)
			rng := rand.New(rand.NewPCG(uint64(n), uint64(ri)))
			wg.Go(func() {
				for ctx.Err() == nil {
					l, err := el.Hold(ctx, room, swarmlease.CampaignRequest{CandidateID: candidate, TTL: roomTTL},
						swarmlease.WithStopBefore(200*time.Millisecond))
					if err != nil {
						if ctx.Err() == nil {
							t.Errorf("%s in %s: Hold: %v", candidate, room, err)
						}
						return
					}
					began := check.Monotonic()
					work := time.NewTimer(time.Duration(500+rng.IntN(2500)) * time.Millisecond)
					cause := "resigned"
					select {
					case <-l.Done(): // lost or past its deadline: work stops now
						cause = "ended"
						if errors.Is(l.Cause(), swarmlease.ErrDeadline) {
							cause = "deadline"
						}
					case <-work.C:
					case <-ctx.Done():
					}
					ended := check.Monotonic()
					work.Stop()
					if cause == "resigned" {
						rctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
						_, _ = l.Resign(rctx)
						cancel()
					}
					mu.Lock()
					seq++
					terms[room] = append(terms[room], check.Term{Fence: l.Fence(), Holder: candidate, PID: seq, Start: began, Stop: ended})
					causes[cause]++
					mu.Unlock()
				}
			})
		}
	}
	defer func() { stop(); wg.Wait() }()
	settle := func(what string, from int64) {
		for n := 1; n <= cluster.Nodes; n++ {
			if err := c.WaitManagers(t.Context(), n, 2*time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("figure: %s to all managers reachable %v", what, since(from))
	}
	time.Sleep(roomTTL) // rooms change hands under no fault first: time passing is tested
	leader, err := c.Leader(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	f := other(leader)
	jitter()
	if err := c.Kill(f); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * roomTTL) // the fault lasts two TTLs
	t0 := check.Monotonic()
	if err := c.StartNode(t.Context(), f); err != nil {
		t.Fatal(err)
	}
	settle("follower restart", t0)
	jitter()
	if err := c.Partition(leader); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * roomTTL) // the majority elects a new Raft leader and rooms move on
	t0 = check.Monotonic()
	if err := c.Heal(leader); err != nil {
		t.Fatal(err)
	}
	settle("leader heal", t0)
	down := []int{1, 2}
	jitter()
	for _, n := range down {
		if err := c.Kill(n); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2 * roomTTL) // no quorum: no room may change hands
	t0 = check.Monotonic()
	for _, n := range down {
		if err := c.StartNode(t.Context(), n); err != nil {
			t.Fatal(err)
		}
	}
	settle("quorum back", t0)
	time.Sleep(roomTTL) // normal operation after the faults
	stop()
	wg.Wait()

	total := 0
	for _, room := range rooms {
		ts := terms[room]
		total += len(ts)
		if err := check.Children(ts, nil, 0); err != nil {
			t.Errorf("room %s: %v", room, err)
		}
	}
	if total < 2*len(rooms) {
		t.Errorf("only %d terms in %d rooms: the rooms did not change hands", total, len(rooms))
	}
	t.Logf("summary %s: %d terms in %d rooms, ends %v", t.Name(), total, len(rooms), causes)
	if t.Failed() {
		for n, s := range servers {
			t.Logf("serve on node%d:\n%s", n+1, s.Output())
		}
	}
}
