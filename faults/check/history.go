package check

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// LeaseOp is one one-shot lease call of a fault run: the concurrency suite's record, plus
// whether its outcome is unknown (the call failed in a way that may or may not have written:
// a timeout, an ambiguous write, a lost Raft leader). An unknown call may take effect at any
// time after it started, also after it returned (a write that commits late), so its return is
// taken as the end of time.
type LeaseOp struct {
	leasetest.Op
	Unknown bool
}

// LeaseModel extends the concurrency suite's sequential model of the lease
// (leasetest.LeaseModel) to calls whose outcome is unknown: such a call either had no effect or
// had the effect an accepted call has in that state. Known calls are judged by the suite's
// model unchanged.
func LeaseModel(floor uint64) porcupine.Model {
	base := leasetest.LeaseModel(floor)
	nm := porcupine.NondeterministicModel{
		Init: func() []any { return []any{base.Init()} },
		Step: func(state, input, _ any) []any {
			op := input.(LeaseOp)
			if !op.Unknown {
				if ok, next := base.Step(state, op.Op, nil); ok {
					return []any{next}
				}
				return nil
			}
			// The base model computes the next state of an accepted call whatever the output it
			// is asked to judge: ask it with the call marked accepted.
			applied := op.Op
			applied.OK = true
			if _, next := base.Step(state, applied, nil); next != state {
				return []any{state, next}
			}
			return []any{state}
		},
		DescribeOperation: func(input, output any) string {
			op := input.(LeaseOp)
			s := base.DescribeOperation(op.Op, nil)
			if op.Unknown {
				s = fmt.Sprintf("%s %s(fence %d) → outcome unknown", op.Contender, op.Kind, op.Fence)
			}
			return s
		},
		DescribeState: base.DescribeState,
	}
	return nm.ToModel()
}

// LeaseHistory checks ops against LeaseModel(floor) with porcupine (Unknown after timeout is a
// failure, never a pass), and directly: no fence is won twice. Refusals are reads, and a read
// through a Swarm manager may be stale (StaleReadWindow): they are left out of the porcupine
// check, which they cannot affect (a refusal leaves the lease as it was), and checked on their
// own by checkRefusals. When no outcome is unknown it also runs the concurrency suite's direct
// checks (leasetest.CheckInvariants) on the rest, whose messages name the offending calls.
func LeaseHistory(floor uint64, ops []LeaseOp, timeout time.Duration) (porcupine.CheckResult, Staleness, error) {
	var errs []error
	history := make([]porcupine.Operation, 0, len(ops))
	known := make([]leasetest.Op, 0, len(ops))
	won := map[uint64]LeaseOp{}
	unknown := 0
	for _, op := range ops {
		if op.Kind == leasetest.OpTryAcquire && op.OK && !op.Unknown {
			if prev, dup := won[op.ResultFence]; dup {
				errs = append(errs, fmt.Errorf("fence %d won twice: by %s and by %s", op.ResultFence, prev.Contender, op.Contender))
			}
			won[op.ResultFence] = op
		}
		if refused(op) {
			continue
		}
		ret := op.Return
		if op.Unknown {
			ret = math.MaxInt64
			unknown++
		} else {
			known = append(known, op.Op)
		}
		history = append(history, porcupine.Operation{ClientId: op.Client, Input: op, Output: op, Call: op.Call, Return: ret})
	}
	if unknown == 0 {
		if err := leasetest.CheckInvariants(floor, known); err != nil {
			errs = append(errs, err)
		}
	}
	stale, err := checkRefusals(floor, ops, StaleReadWindow)
	if err != nil {
		errs = append(errs, err)
	}
	res := porcupine.CheckOperationsTimeout(LeaseModel(floor), history, timeout)
	switch res {
	case porcupine.Illegal:
		errs = append(errs, fmt.Errorf("the history of %d lease operations (%d refusals apart) is not linearizable", len(ops), stale.Refusals))
	case porcupine.Unknown:
		errs = append(errs, fmt.Errorf("porcupine could not decide within %v whether %d lease operations are linearizable", timeout, len(history)))
	}
	return res, stale, errors.Join(errs...)
}
