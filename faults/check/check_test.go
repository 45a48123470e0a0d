package check_test

import (
	"strings"
	"testing"
	"time"

	"github.com/regbo/lfp-swarm-lease/faults/check"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
)

const s = int64(time.Second)

func TestChildrenAcceptsHandovers(t *testing.T) {
	terms := []check.Term{
		{Fence: 10, Holder: "a", PID: 1, Start: 0, Stop: 5 * s},
		{Fence: 11, Holder: "b", PID: 2, Start: 6 * s, Stop: 9 * s},
		{Fence: 13, Holder: "a", PID: 3, Start: 9*s + 1, Stop: 12 * s},
	}
	if err := check.Children(terms, nil, time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestChildrenFindsViolations(t *testing.T) {
	for name, tc := range map[string]struct {
		terms []check.Term
		thaws []check.Thaw
		want  string
	}{
		"overlap": {
			terms: []check.Term{{Fence: 10, PID: 1, Start: 0, Stop: 5 * s}, {Fence: 11, PID: 2, Start: 4 * s, Stop: 9 * s}},
			want:  "two children at once",
		},
		"fence reused": {
			terms: []check.Term{{Fence: 10, PID: 1, Start: 0, Stop: 5 * s}, {Fence: 10, PID: 2, Start: 6 * s, Stop: 9 * s}},
			want:  "fence did not increase",
		},
		"no stop": {
			terms: []check.Term{{Fence: 10, PID: 1, Start: 0}},
			want:  "never logged its stop",
		},
		"frozen child stopped late": {
			terms: []check.Term{{Fence: 10, PID: 1, Start: 0, Stop: 20 * s}, {Fence: 11, PID: 2, Start: 8 * s, Stop: 30 * s}},
			thaws: []check.Thaw{{Child: "/1", Mono: 15 * s}},
			want:  "stopped 5s after its thaw",
		},
		"lock found held": {
			terms: []check.Term{{Fence: 10, PID: 1, Start: 0, Stop: 5 * s}, {Fence: 11, PID: 2, Start: 6 * s, Stop: 9 * s, Overlap: true}},
			want:  "found another child's lock held",
		},
		"killed child's successor found the lock held": {
			terms: []check.Term{{Fence: 10, Host: "c1", PID: 7, Start: 0, Stop: 3 * s, Killed: true}, {Fence: 11, Host: "c2", PID: 7, Start: 2 * s, Stop: 9 * s, Overlap: true}},
			want:  "found another child's lock held",
		},
		"frozen child with the higher fence": {
			terms: []check.Term{{Fence: 12, PID: 1, Start: 0, Stop: 15 * s}, {Fence: 11, PID: 2, Start: 8 * s, Stop: 30 * s}},
			thaws: []check.Thaw{{Child: "/1", Mono: 15 * s}},
			want:  "two children at once",
		},
	} {
		t.Run(name, func(t *testing.T) {
			err := check.Children(tc.terms, tc.thaws, time.Second)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// A frozen child that overlaps its successor is the exception fencing covers, when its fence is
// lower and it stops promptly after the thaw.
func TestChildrenAllowsFencedThaw(t *testing.T) {
	terms := []check.Term{{Fence: 10, PID: 1, Start: 0, Stop: 15*s + s/2}, {Fence: 11, PID: 2, Start: 8 * s, Stop: 30 * s}}
	if err := check.Children(terms, []check.Thaw{{Child: "/1", Mono: 15 * s}}, time.Second); err != nil {
		t.Fatal(err)
	}
}

// A child killed with its container logs no stop: its end is when it was seen gone, a bound,
// and a successor that started before that, on the evidence of its death, found the lock free.
// The "overlap" event of a child marks its term.
func TestChildrenTakesTheLockForAKilledChild(t *testing.T) {
	terms, err := check.Terms([]check.ChildEvent{
		{Event: "start", Fence: "10", Hostname: "c1", PID: 7, At: 0},
		{Event: "start", Fence: "11", Hostname: "c2", PID: 7, At: 2 * s},
		{Event: "stop", Fence: "11", Hostname: "c2", PID: 7, At: 9 * s},
		{Event: "overlap", Fence: "12", Hostname: "c3", PID: 7, At: 10 * s},
		{Event: "start", Fence: "12", Hostname: "c3", PID: 7, At: 10 * s},
	})
	if err != nil || len(terms) != 3 || terms[0].Overlap || terms[1].Overlap || !terms[2].Overlap {
		t.Fatalf("terms %+v, %v; want the third marked", terms, err)
	}
	terms = terms[:2]
	terms[0].Stop, terms[0].Killed = 3*s, true
	if err := check.Children(terms, nil, time.Second); err != nil {
		t.Fatal(err)
	}
	terms[0].Killed = false
	if err := check.Children(terms, nil, time.Second); err == nil || !strings.Contains(err.Error(), "two children at once") {
		t.Fatalf("the same by the clock: %v", err)
	}
}

// A successor that finds the lock of a frozen child with a lower fence held is the fenced
// exception too.
func TestChildrenAllowsTheLockOfAFencedThaw(t *testing.T) {
	terms := []check.Term{{Fence: 10, PID: 1, Start: 0, Stop: 15*s + s/2}, {Fence: 11, PID: 2, Start: 8 * s, Stop: 30 * s, Overlap: true}}
	if err := check.Children(terms, []check.Thaw{{Child: "/1", Mono: 15 * s}}, time.Second); err != nil {
		t.Fatal(err)
	}
}

func op(client int, kind leasetest.OpKind, fence uint64, call, ret int64, ok bool, result uint64) check.LeaseOp {
	return check.LeaseOp{Op: leasetest.Op{
		Client: client, Contender: leasetest.IdentityKey(leasetest.ContenderIdentity(client)),
		Kind: kind, Fence: fence, Call: call, Return: ret, OK: ok, ResultFence: result,
	}}
}

// An ambiguous try-acquire that committed explains a later fence gap and a later refusal.
func TestLeaseHistoryUnknownOutcomeMayHaveCommitted(t *testing.T) {
	const floor = 100
	lost := op(0, leasetest.OpTryAcquire, 0, 0, 10, false, 0)
	lost.Unknown = true
	refused := op(2, leasetest.OpTryAcquire, 0, 20, 30, false, floor+1)
	refused.CurrentHolder = lost.Contender
	ops := []check.LeaseOp{
		lost,
		refused,
		op(0, leasetest.OpTryAcquire, 0, 40, 50, true, floor+2), // the same identity: a new term
	}
	if _, _, err := check.LeaseHistory(floor, ops, 10*time.Second); err != nil {
		t.Fatal(err)
	}
}

// An unknown outcome does not excuse two holders.
func TestLeaseHistoryFindsTwoHolders(t *testing.T) {
	const floor = 100
	unknown := op(4, leasetest.OpRenew, floor+1, 0, 5, false, 0)
	unknown.Unknown = true
	ops := []check.LeaseOp{
		unknown,
		op(0, leasetest.OpTryAcquire, 0, 10, 20, true, floor+1),
		op(2, leasetest.OpTryAcquire, 0, 30, 40, true, floor+2),
	}
	if _, _, err := check.LeaseHistory(floor, ops, 10*time.Second); err == nil || !strings.Contains(err.Error(), "not linearizable") {
		t.Fatalf("got %v, want a linearizability failure", err)
	}
}

// Terms recorded out of start order — a holder whose resignation blocked records its term after
// its successor's — are judged in start order: no overlap, fences growing.
func TestChildrenSortsTermsByStart(t *testing.T) {
	terms := []check.Term{
		{Fence: 20, Holder: "holder1", PID: 32, Start: 26 * s, Stop: 31 * s}, // recorded first
		{Fence: 10, Holder: "holder3", PID: 33, Start: 21 * s, Stop: 24 * s}, // its resign blocked
	}
	if err := check.Children(terms, nil, 0); err != nil {
		t.Fatal(err)
	}
	terms[1].Stop = 27 * s // now they overlap
	if err := check.Children(terms, nil, 0); err == nil || !strings.Contains(err.Error(), "two children at once") {
		t.Fatalf("got %v, want an overlap", err)
	}
}
