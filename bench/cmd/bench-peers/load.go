package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// cycleOps is the workload's cycle of operations, the same on every target.
var cycleOps = []string{"campaign", "renew", "renew", "resign"}

// client is one client of a target, owning one election.
type client interface {
	// do runs operation cycleOps[k] of the client's cycle.
	do(ctx context.Context, k int) error
	close()
}

// drive runs ops operations from clients concurrent clients made by newClient, cycling
// through cycleOps, and measures them and the CPU time of the server processes ps (etcd's
// members and serve's replicas alike).
func drive(ctx context.Context, ps []*proc, clients, ops int, newClient func(i int) (client, error)) (measurement, error) {
	cs := make([]client, clients)
	for i := range cs {
		c, err := newClient(i)
		if err != nil {
			return measurement{}, fmt.Errorf("client %d: %w", i, err)
		}
		defer c.close()
		cs[i] = c
	}
	lat := make([][]time.Duration, clients)
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	cpu0, err := cpuOf(ps)
	if err != nil {
		return measurement{}, err
	}
	start := time.Now()
	for i, c := range cs {
		wg.Go(func() {
			// Every client ends its cycle (resigns) before it stops, so that no election stays
			// held; the run counts what it did.
			for k := 0; next.Add(1) <= int64(ops) || k%len(cycleOps) != 0; k++ {
				if ctx.Err() != nil {
					failed.CompareAndSwap(nil, ctx.Err())
					return
				}
				t0 := time.Now()
				if err := c.do(ctx, k%len(cycleOps)); err != nil {
					failed.CompareAndSwap(nil, fmt.Errorf("client %d, %s: %w", i, cycleOps[k%len(cycleOps)], err))
					return
				}
				lat[i] = append(lat[i], time.Since(t0))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu1, err := cpuOf(ps)
	if err != nil {
		return measurement{}, err
	}
	if err, _ := failed.Load().(error); err != nil {
		return measurement{}, err
	}
	all := sortLatencies(lat)
	return measurement{ops: len(all), elapsed: elapsed, latency: all, cpu: cpu1 - cpu0}, nil
}

// cpuOf is the sum of the processes' CPU time.
func cpuOf(ps []*proc) (time.Duration, error) {
	var sum time.Duration
	for _, p := range ps {
		d, err := p.cpu()
		if err != nil {
			return 0, err
		}
		sum += d
	}
	return sum, nil
}
