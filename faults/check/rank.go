package check

import (
	"slices"

	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// unranked marks a fence that names no term anyone saw: it keeps its value above every rank.
const unranked = 1 << 62

// RankFences renumbers the fences of a history on a store whose fences follow the clock
// (lease.ClockFencer: etcd's are max(fence + 1, now in µs)), so that LeaseHistory's model —
// which expects fence + 1 — checks order, uniqueness and the holder rules unchanged, as
// leasetest.RankFences does for the concurrency suite. The ranks are those of every fence that
// a call saw as a term: won by a known try-acquire, named by a refused one as the current
// term, or renewed; the k-th lowest becomes floor + k. A term that an unknown try-acquire won
// and a refusal then named is ranked too, where the concurrency suite's ranking (known wins
// only) would leave a gap the model cannot explain. Any other fence — a caller's guess of a
// stale or future fence — is set above every rank, so that it can equal no term.
func RankFences(floor uint64, ops []LeaseOp) []LeaseOp {
	var seen []uint64
	for _, op := range ops {
		switch {
		case op.Unknown:
		case op.Kind == leasetest.OpTryAcquire && op.ResultFence > floor:
			seen = append(seen, op.ResultFence) // won, or the term that refused it
		case op.Kind == leasetest.OpRenew && op.OK:
			seen = append(seen, op.Fence)
		}
	}
	slices.Sort(seen)
	seen = slices.Compact(seen)
	rank := func(f uint64) uint64 {
		if f <= floor {
			return f
		}
		if i, ok := slices.BinarySearch(seen, f); ok {
			return floor + uint64(i) + 1
		}
		return f | unranked
	}
	out := make([]LeaseOp, len(ops))
	for i, op := range ops {
		op.Fence, op.ResultFence = rank(op.Fence), rank(op.ResultFence)
		out[i] = op
	}
	return out
}
