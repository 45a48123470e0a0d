package check

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

// StaleReadWindow bounds the confirmed writes a stale read may lack: from the end of the term
// a refusal names to the last write confirmed before the refusal's call.
//
// A refusal is decided on a read, and Swarm answers reads from the answering manager's
// in-memory copy, without a quorum round: a manager that has just become Raft leader answers
// before it has applied the entries it inherited, and a cut-off leader answers until it steps
// down. After a quorum loss of two TTLs plus a restart, a new leader refused try-acquires for
// 1.2 s naming a term superseded 16.5–18.1 s before — by the last write before the Swarm lost
// its leader, so the copy lacked no more than that one write. Writes are not affected: a leader
// refuses proposals until it has applied its log, and a write decided on an old record expects
// an old version, which fails. How old a copy is in time depends on how long the Swarm had no
// leader, which no bound covers (one run had none for 67 s); what it lacks is the tail of the
// writes before that, a second or two of them, and a minute leaves a wide margin.
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
	// Lacked is the longest stretch of confirmed writes one of them lacked: from the end of
	// the term it named to the last write confirmed before its call.
	Lacked time.Duration
}

func (s Staleness) String() string {
	if s.Stale == 0 {
		return fmt.Sprintf("%d refusals, none stale", s.Refusals)
	}
	return fmt.Sprintf("%d refusals, %d of them stale, the stalest by %v, lacking at most %v of confirmed writes",
		s.Refusals, s.Stale, s.Oldest.Round(time.Millisecond), s.Lacked.Round(time.Millisecond))
}

// refused reports whether op is a refusal the check takes apart from the linearizability check:
// a known outcome that wrote nothing (a refused try-acquire, or a renewal or release refused
// with lease.ErrNotHolder).
func refused(op LeaseOp) bool { return !op.OK && !op.Unknown }

// checkRefusals checks the refusals of ops directly, allowing each to be decided on a stale
// read (StaleReadWindow):
//
//   - a refused try-acquire names a term that was won, by the holder it names, before the call
//     returned, and that had not ended (superseded or released) more than window before the
//     last write confirmed before the call;
//   - a refused renewal or release names a term that may not have been the caller's at some
//     instant of the call, or that was won less than window before the last write confirmed
//     before the call (a stale copy may not show it yet).
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
		writes   []int64                  // the returns of accepted calls
	)
	for _, op := range ops {
		if op.OK && !op.Unknown {
			writes = append(writes, op.Return)
		}
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
	// endAt says that every term below fence had ended by at: a known call returned at at
	// having seen term fence (its win, an accepted renewal, a refusal naming it), or having
	// released term fence-1.
	type endAt struct {
		fence uint64
		at    int64
	}
	var ends []endAt
	for g, w := range won {
		ends = append(ends, endAt{g, w.Return})
	}
	for _, op := range ops {
		switch {
		case op.Unknown:
		case op.Kind == leasetest.OpRenew && op.OK:
			ends = append(ends, endAt{op.Fence, op.Return}) // term op.Fence was current
		case op.Kind == leasetest.OpTryAcquire && !op.OK && op.ResultFence > floor:
			ends = append(ends, endAt{op.ResultFence, op.Return}) // term op.ResultFence had been won
		}
	}
	for g, rs := range released {
		for _, r := range rs {
			if r.OK {
				ends = append(ends, endAt{g + 1, r.Return})
			}
		}
	}
	slices.SortFunc(ends, func(a, b endAt) int { return cmp.Compare(a.fence, b.fence) })
	for i := len(ends) - 2; i >= 0; i-- { // suffix minima: ends[i].at is the earliest from ends[i].fence on
		ends[i].at = min(ends[i].at, ends[i+1].at)
	}
	// ended is when term f certainly ended: the earliest end among those of terms above f
	// (0: not known to have ended).
	ended := func(f uint64) int64 {
		i, _ := slices.BinarySearchFunc(ends, f+1, func(e endAt, t uint64) int { return cmp.Compare(e.fence, t) })
		if i == len(ends) {
			return 0
		}
		return ends[i].at
	}
	// mayHaveEnded reports whether anything called before until may have ended contender's
	// term f: a known win of a later term, a release of f (known or unknown), or an unknown
	// try-acquire of the same identity (a holder's try-acquire starts a new term). Another
	// identity's try-acquire can win only after a release of f: no term expires in an hour.
	mayHaveEnded := func(f uint64, contender string, until int64) bool {
		for g, w := range won {
			if g > f && w.Call <= until {
				return true
			}
		}
		for _, r := range released[f] {
			if r.Call <= until {
				return true
			}
		}
		for _, u := range unknown {
			if u.Contender == contender && u.Call <= until {
				return true
			}
		}
		return false
	}
	slices.Sort(writes)
	// lastWrite is the return of the last accepted call that returned before t (0: none).
	lastWrite := func(t int64) int64 {
		i, _ := slices.BinarySearch(writes, t)
		if i == 0 {
			return 0
		}
		return writes[i-1]
	}
	for _, op := range ops {
		if !refused(op) {
			continue
		}
		st.Refusals++
		if op.Kind != leasetest.OpTryAcquire {
			w, ok := won[op.Fence]
			// A stale copy lacks at most window of the writes confirmed before the call, so it
			// shows every term won before that.
			if ok && w.Contender == op.Contender && w.Return < lastWrite(op.Call)-int64(window) && !mayHaveEnded(op.Fence, op.Contender, op.Return) {
				errs = append(errs, fmt.Errorf("refused although the caller's term was won %v of confirmed writes before the call and current throughout it: %s, the term of %s",
					time.Duration(lastWrite(op.Call)-w.Return).Round(time.Millisecond), show(op), show(w)))
			}
			continue
		}
		f := op.ResultFence
		w, ok := won[f]
		switch {
		case f <= floor:
			errs = append(errs, fmt.Errorf("refused although no term was ever won: %s", show(op)))
			continue
		case op.CurrentHolder == op.Contender:
			// Even a stale read cannot do this: a try-acquire that finds its own identity
			// holding starts a new term.
			errs = append(errs, fmt.Errorf("refused naming the caller itself: %s", show(op)))
			continue
		case f > floor+uint64(len(won)+len(unknown)):
			errs = append(errs, fmt.Errorf("refused by a term beyond every term that can have been won: %s", show(op)))
			continue
		case !ok:
			// Only an unknown try-acquire of the named holder can have won it.
			explained := false
			for _, u := range unknown {
				explained = explained || (u.Contender == op.CurrentHolder && u.Call <= op.Return)
			}
			if !explained {
				errs = append(errs, fmt.Errorf("refused by a term that was never won: %s", show(op)))
				continue
			}
		case w.Call > op.Return:
			errs = append(errs, fmt.Errorf("refused by a term won only later: %s, by %s", show(op), show(w)))
			continue
		case w.Contender != op.CurrentHolder:
			errs = append(errs, fmt.Errorf("refused naming the wrong holder: %s, but %s", show(op), show(w)))
			continue
		}
		if end := ended(f); end != 0 && end < op.Call {
			lacked := time.Duration(max(lastWrite(op.Call)-end, 0))
			st.Stale++
			st.Oldest = max(st.Oldest, time.Duration(op.Call-end))
			st.Lacked = max(st.Lacked, lacked)
			if lacked > window {
				errs = append(errs, fmt.Errorf("refused by a term that had ended %v before the last write confirmed before the call, more than a stale read can lack (%v): %s",
					lacked.Round(time.Millisecond), window, show(op)))
			}
		}
	}
	return st, errors.Join(errs...)
}
