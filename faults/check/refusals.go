package check

import (
	"errors"
	"fmt"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// StaleReadWindow is how long before its call a refusal may see the lease as it was.
//
// A refusal is decided on a read, and Swarm answers reads from the answering manager's
// in-memory copy, without a quorum round: a manager that has just become Raft leader answers
// before it has applied the entries it inherited, and a cut-off leader answers until it steps
// down. After a quorum loss of two TTLs plus a restart, a new leader refused try-acquires for
// 1.2 s naming a term superseded 16.5–18.1 s before. Writes are not affected: a
// leader refuses proposals until it has applied its log, and a write decided on an old record
// expects an old version, which fails. A minute covers the longest stretch a scenario keeps a
// manager without a leader (two TTLs, then a restart that can take 26 s to restore writes).
const StaleReadWindow = time.Minute

// Staleness describes the refusals of a history: how many there were, and how many were
// decided on a state that had already ended when the call started.
type Staleness struct {
	// Refusals is the number of refused try-acquires, renewals and releases.
	Refusals int
	// Stale is the number of refused try-acquires that named a term which had been superseded
	// or released before the call started.
	Stale int
	// Oldest is, for the stalest of those, how long before its call the named term had ended.
	Oldest time.Duration
}

func (s Staleness) String() string {
	if s.Stale == 0 {
		return fmt.Sprintf("%d refusals, none stale", s.Refusals)
	}
	return fmt.Sprintf("%d refusals, %d of them stale, the stalest by %v", s.Refusals, s.Stale, s.Oldest.Round(time.Millisecond))
}

// refused reports whether op is a refusal the check takes apart from the linearizability check:
// a known outcome that wrote nothing (a refused try-acquire, or a renewal or release refused
// with lease.ErrNotHolder).
func refused(op LeaseOp) bool { return !op.OK && !op.Unknown }

// checkRefusals checks the refusals of ops directly, allowing each to be decided on the lease
// as it was up to window before its call (StaleReadWindow):
//
//   - a refused try-acquire names a term that was won, by the holder it names, before the call
//     returned, and that had not ended (superseded or released) more than window before the
//     call;
//   - a refused renewal or release names a term that may not have been the caller's at some
//     instant from window before the call to its return.
//
// A call whose outcome is unknown may have won or ended a term at any time after it started, so
// it can explain a refusal; only known outcomes prove one wrong.
func checkRefusals(floor uint64, ops []LeaseOp, window time.Duration) (Staleness, error) {
	var (
		errs     []error
		st       Staleness
		won      = map[uint64]LeaseOp{}   // fence → the known try-acquire that won it
		released = map[uint64][]LeaseOp{} // fence → known accepted and unknown releases of it
		unknown  []LeaseOp                // try-acquires whose outcome is unknown
	)
	for _, op := range ops {
		switch {
		case op.Kind == leasetest.OpTryAcquire && op.Unknown:
			unknown = append(unknown, op)
		case op.Kind == leasetest.OpTryAcquire && op.OK:
			won[op.ResultFence] = op
		case op.Kind == leasetest.OpRelease && (op.OK || op.Unknown):
			released[op.Fence] = append(released[op.Fence], op)
		}
	}
	show := func(op LeaseOp) string {
		if op.Unknown {
			return fmt.Sprintf("[%d..%d] client %d: %s %s → outcome unknown", op.Call, op.Return, op.Client, op.Contender, op.Kind)
		}
		return fmt.Sprintf("[%d..%d] client %d: %s %s fence %d → ok=%t found %d (%s)", op.Call, op.Return,
			op.Client, op.Contender, op.Kind, op.Fence, op.OK, op.ResultFence, op.CurrentHolder)
	}
	// ended is when term f certainly ended: the earliest return of a known win of f+1 or a
	// known accepted release of f (0: not known to have ended).
	ended := func(f uint64) int64 {
		var at int64
		if next, ok := won[f+1]; ok {
			at = next.Return
		}
		for _, r := range released[f] {
			if r.OK && (at == 0 || r.Return < at) {
				at = r.Return
			}
		}
		return at
	}
	// mayHaveEnded reports whether anything called before until may have ended term f: a win
	// of f+1 or a release of f, known or unknown, or an unknown try-acquire (which may have won
	// f+1).
	mayHaveEnded := func(f uint64, until int64) bool {
		if next, ok := won[f+1]; ok && next.Call <= until {
			return true
		}
		for _, r := range released[f] {
			if r.Call <= until {
				return true
			}
		}
		for _, u := range unknown {
			if u.Call <= until {
				return true
			}
		}
		return false
	}
	for _, op := range ops {
		if !refused(op) {
			continue
		}
		st.Refusals++
		if op.Kind != leasetest.OpTryAcquire {
			w, ok := won[op.Fence]
			if ok && w.Contender == op.Contender && w.Return < op.Call-int64(window) && !mayHaveEnded(op.Fence, op.Return) {
				errs = append(errs, fmt.Errorf("refused although the caller's term was current for %v before the call and throughout it: %s, the term of %s",
					window, show(op), show(w)))
			}
			continue
		}
		f := op.ResultFence
		w, ok := won[f]
		switch {
		case f <= floor:
			errs = append(errs, fmt.Errorf("refused although no term was ever won: %s", show(op)))
		case !ok:
			// Only an unknown try-acquire of the named holder can have won it.
			explained := false
			for _, u := range unknown {
				explained = explained || (u.Contender == op.CurrentHolder && u.Call <= op.Return)
			}
			if !explained {
				errs = append(errs, fmt.Errorf("refused by a term that was never won: %s", show(op)))
			}
		case w.Call > op.Return:
			errs = append(errs, fmt.Errorf("refused by a term won only later: %s, by %s", show(op), show(w)))
		case w.Contender != op.CurrentHolder:
			errs = append(errs, fmt.Errorf("refused naming the wrong holder: %s, but %s", show(op), show(w)))
		default:
			end := ended(f)
			if end == 0 || end >= op.Call {
				break
			}
			age := time.Duration(op.Call - end)
			st.Stale++
			st.Oldest = max(st.Oldest, age)
			if age > window {
				errs = append(errs, fmt.Errorf("refused by a term that had ended %v before the call, longer than a stale read can explain (%v): %s",
					age.Round(time.Millisecond), window, show(op)))
			}
		}
	}
	return st, errors.Join(errs...)
}
