package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/regbo/lfp-swarm-lease/timing"
)

// The rooms-scale measurement (-scale-rooms): many active rooms on one etcd cluster
// (-etcd-members), one `serve`. It creates rooms — one campaign each, by -clients concurrent
// clients, the longest lease the API allows (5 minutes) — up to each count in turn, and at each
// count measures serve's resident memory, the latency of campaigns that activate a new room
// (each counts the live rooms, docs/rooms.md §3) and of campaigns answered as a follower, and
// the members' memory. Then it restarts serve and measures the time to ready (/readyz 200) and
// the first campaigns after it. Every room is still live when it is measured as long as the
// whole run stays within the lease (the table says how long it took).

// scaleTTL is the rooms' lease: the longest the elections API allows.
const scaleTTL = 300

// scaleRow is what one count measured.
type scaleRow struct {
	rooms              int
	createdIn, elapsed time.Duration
	rate               float64 // rooms created per second during this step
	serveRSS, etcdRSS  int64   // bytes; etcdRSS summed over the members
	activate, follow   []time.Duration
	load               string
}

func runScale(ctx context.Context, c config, w io.Writer) error {
	dir, err := os.MkdirTemp("", "bench-peers-scale-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	members, endpoints, err := startEtcdCluster(ctx, c, dir, false)
	if err != nil {
		return err
	}
	defer stopAll(members)
	last := c.scaleRooms[len(c.scaleRooms)-1]
	// The limit above every room the run creates, so that each activation counts the live
	// rooms as it does below the default limit (the count is what grows with them).
	c.serveEnv = append(slices.Clone(c.serveEnv), "SWARM_LEASE_MAX_ACTIVE_ROOMS="+strconv.Itoa(2*(last+2*c.scaleSample*len(c.scaleRooms))))
	serve, addrs, err := startServeReplicas(ctx, c, dir, endpoints, 1)
	if err != nil {
		return err
	}
	defer func() { stopAll(serve) }()
	addr := addrs[0]
	var rows []scaleRow
	created, began := 0, time.Now()
	next := func() string { created++; return fmt.Sprintf("scale-%09d", created) }
	for _, target := range c.scaleRooms {
		t0 := time.Now()
		before := created
		if _, err := campaigns(ctx, addr, c.clients, max(target-created, 0), next, "c"); err != nil {
			return fmt.Errorf("creating rooms up to %d: %w", target, err)
		}
		row := scaleRow{rooms: created, createdIn: time.Since(t0), elapsed: time.Since(began), load: loadAverage()}
		row.rate = float64(created-before) / row.createdIn.Seconds()
		if row.serveRSS, err = rss(serve[0].pid); err != nil {
			return err
		}
		for _, m := range members {
			r, err := rss(m.pid)
			if err != nil {
				return err
			}
			row.etcdRSS += r
		}
		// Activations: new rooms, at 16 clients; follower answers: campaigns of another
		// candidate in rooms created above.
		if row.activate, err = campaigns(ctx, addr, 16, c.scaleSample, next, "c"); err != nil {
			return err
		}
		k := 0
		existing := func() string { k++; return fmt.Sprintf("scale-%09d", 1+(k*7919)%created) }
		if row.follow, err = campaigns(ctx, addr, 16, c.scaleSample, existing, "other"); err != nil {
			return err
		}
		rows = append(rows, row)
		fmt.Fprintf(os.Stderr, "%d rooms: created in %v (%.0f/s), serve RSS %.1f MB, etcd RSS %.0f MB, activation p50 %.2f p99 %.2f ms, follower p50 %.2f p99 %.2f ms, load %s\n",
			row.rooms, row.createdIn.Round(time.Millisecond), row.rate, mb(row.serveRSS), mb(row.etcdRSS),
			ms(nearestRank(row.activate, 50)), ms(nearestRank(row.activate, 99)), ms(nearestRank(row.follow, 50)), ms(nearestRank(row.follow, 99)), row.load)
	}
	// A restart: SIGTERM, a new process, and the time until /readyz answers 200 and until the
	// first activation answers.
	stopAll(serve)
	t0 := time.Now()
	serve, addrs, err = startServeReplicas(ctx, c, dir, endpoints, 1)
	if err != nil {
		return err
	}
	listening := time.Since(t0)
	if err := waitReady(ctx, addrs[0]); err != nil {
		return err
	}
	ready := time.Since(t0)
	first, err := campaigns(ctx, addrs[0], 1, 1, next, "c")
	if err != nil {
		return err
	}
	rss0, _ := rss(serve[0].pid)
	after, err := campaigns(ctx, addrs[0], 16, c.scaleSample, next, "c")
	if err != nil {
		return err
	}
	rss1, _ := rss(serve[0].pid)
	fmt.Fprintf(w, "\nrooms-scale: %d-member etcd, one serve; rooms created by %d clients, lease %d s; %d campaigns of each kind timed by 16 clients at each count\n\n",
		len(members), c.clients, scaleTTL, c.scaleSample)
	fmt.Fprintln(w, "| active rooms | created in (rooms/s) | since the first room | serve RSS MB | etcd RSS MB (all members) | activation p50 / p99 ms | follower p50 / p99 ms | load |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %d | %v (%.0f/s) | %v | %.1f | %.0f | %.2f / %.2f | %.2f / %.2f | %s |\n", r.rooms, r.createdIn.Round(time.Second), r.rate,
			r.elapsed.Round(time.Second), mb(r.serveRSS), mb(r.etcdRSS), ms(nearestRank(r.activate, 50)), ms(nearestRank(r.activate, 99)),
			ms(nearestRank(r.follow, 50)), ms(nearestRank(r.follow, 99)), r.load)
	}
	fmt.Fprintf(w, "\nrestart of serve at %d active rooms: listening after %v, /readyz 200 after %v, first activation %.2f ms; then %d activations p50 %.2f p99 %.2f ms; RSS %.1f MB after the first, %.1f MB after them\n",
		created-1-c.scaleSample, listening.Round(time.Millisecond), ready.Round(time.Millisecond), ms(first[0]),
		c.scaleSample, ms(nearestRank(after, 50)), ms(nearestRank(after, 99)), mb(rss0), mb(rss1))
	return nil
}

// campaigns runs n campaigns from clients concurrent clients in the rooms room() names, as
// candidate, and returns their latencies, sorted. Each must answer 200 (leader or follower).
func campaigns(ctx context.Context, addr string, clients, n int, room func() string, candidate string) ([]time.Duration, error) {
	var (
		mu      sync.Mutex
		lat     = make([]time.Duration, 0, n)
		left    atomic.Int64
		failed  atomic.Value
		wg      sync.WaitGroup
		roomsMu sync.Mutex
	)
	left.Store(int64(n))
	body := []byte(`{"candidate_id":"` + candidate + `","ttl_seconds":` + strconv.Itoa(scaleTTL) + `}`)
	for range min(clients, max(n, 1)) {
		conn, err := dialRawHTTP(addr)
		if err != nil {
			return nil, err
		}
		wg.Go(func() {
			defer conn.conn.Close()
			for left.Add(-1) >= 0 {
				if ctx.Err() != nil {
					failed.CompareAndSwap(nil, ctx.Err())
					return
				}
				roomsMu.Lock()
				id := room()
				roomsMu.Unlock()
				t0 := time.Now()
				if _, err := conn.post("/elections/"+id+"/campaign", body); err != nil {
					failed.CompareAndSwap(nil, fmt.Errorf("campaign in %s: %w", id, err))
					return
				}
				d := time.Since(t0)
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		return nil, err
	}
	slices.Sort(lat)
	return lat, nil
}

// waitReady polls serve's /readyz until it answers 200.
func waitReady(ctx context.Context, addr string) error {
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if err := timing.Sleep(ctx, 5*time.Millisecond); err != nil { // poll interval
			return err
		}
	}
	return fmt.Errorf("serve on %s not ready within 2 minutes", addr)
}

// rss is a process's resident set size (VmRSS).
func rss(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			kb, err := strconv.ParseInt(f[0], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no VmRSS", pid)
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }
