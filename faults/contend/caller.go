package contend

import (
	"context"
	"errors"
	"maps"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/client"

	"github.com/regbo/lfp-swarm-lease/faults/check"
	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/etcdstore"
	"github.com/regbo/lfp-swarm-lease/lease/leasetest"
	"github.com/regbo/lfp-swarm-lease/lease/swarmstore"
	"github.com/regbo/lfp-swarm-lease/timing"
)

// CallTimeout bounds one one-shot call: above the ~20 s a Swarm write can block while the Raft
// leader changes, so that most calls end with the store's own answer.
const CallTimeout = 30 * time.Second

// Caller is a one-shot lease client attached to one manager: it calls try-acquire, renew and
// release in a seeded random mix, with the concurrency suite's identities and settings (an hour's
// TTL, so nothing expires and the model needs no clock), and records every call.
type Caller struct {
	client   int
	election *lease.Election
	close    func() error
	rng      *rand.Rand
	// notSent tells the store's failures that certainly wrote nothing.
	notSent func(error) bool

	mu     sync.Mutex
	ops    []check.LeaseOp
	counts Counts
	errors map[string]int // ErrorClass → calls
}

// Counts sums a caller's outcomes.
type Counts struct {
	// Calls is every call made; Errors those that failed with a store error (not a refusal).
	Calls, Errors int
	// Unknown is the failed calls whose outcome is unknown (they may have written).
	Unknown int
}

// Add returns the sum of c and d.
func (c Counts) Add(d Counts) Counts {
	return Counts{Calls: c.Calls + d.Calls, Errors: c.Errors + d.Errors, Unknown: c.Unknown + d.Unknown}
}

// NewCaller returns contender index (leasetest.ContenderIdentity) on namespace through the
// manager at host.
func NewCaller(host, namespace string, index int, seed uint64) (*Caller, error) {
	store, err := swarmstore.NewFromEnv(client.WithHost(host))
	if err != nil {
		return nil, err
	}
	e, err := leasetest.NewContenderElection(store, namespace, index)
	if err != nil {
		return nil, err
	}
	return &Caller{client: index, election: e, close: store.Close, notSent: notSent, rng: rand.New(rand.NewPCG(seed, uint64(index)))}, nil
}

// NewEtcdCaller returns contender index on namespace through an etcd store, which Close closes.
// A failure the etcd store does not report as ambiguous wrote nothing: every write that may
// have been proposed wraps lease.ErrAmbiguous (docs/safety.md §7c).
func NewEtcdCaller(store *etcdstore.Store, namespace string, index int, seed uint64) (*Caller, error) {
	e, err := leasetest.NewContenderElection(store, namespace, index)
	if err != nil {
		return nil, err
	}
	return &Caller{client: index, election: e, close: store.Close, notSent: etcdNotSent, rng: rand.New(rand.NewPCG(seed, uint64(index)))}, nil
}

// etcdNotSent reports whether a failed call on the etcd store certainly wrote nothing: a store
// failure (no quorum, unreachable) that is not ambiguous.
func etcdNotSent(err error) bool {
	return !errors.Is(err, lease.ErrAmbiguous) && (errors.Is(err, lease.ErrNoQuorum) || errors.Is(err, lease.ErrUnavailable))
}

// Election is the caller's election (for Init and Inspect).
func (c *Caller) Election() *lease.Election { return c.election }

// Close releases the caller's store connections.
func (c *Caller) Close() error { return c.close() }

// Run calls until ctx ends or max calls were made (0: no limit).
func (c *Caller) Run(ctx context.Context, max int) {
	var (
		holding bool
		mine    uint64
		seen    []uint64
	)
	stale := func() uint64 {
		if len(seen) > 0 && c.rng.IntN(4) > 0 {
			return seen[c.rng.IntN(len(seen))]
		}
		return mine + 1
	}
	for n := 0; ctx.Err() == nil && (max == 0 || n < max); n++ {
		op := check.LeaseOp{Op: leasetest.Op{Client: c.client, Contender: leasetest.IdentityKey(c.election.Identity())}}
		r := c.rng.IntN(100)
		switch {
		case holding && r < 45:
			op.Kind, op.Fence = leasetest.OpRenew, mine
		case holding && r < 75:
			op.Kind, op.Fence = leasetest.OpRelease, mine
		case holding && r < 85, !holding && r < 65:
			op.Kind = leasetest.OpTryAcquire
		case r%2 == 0:
			op.Kind, op.Fence = leasetest.OpRenew, stale()
		default:
			op.Kind, op.Fence = leasetest.OpRelease, stale()
		}
		callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CallTimeout)
		var err error
		op.Call = check.Monotonic()
		switch op.Kind {
		case leasetest.OpTryAcquire:
			var res lease.TryAcquireResult
			res, err = c.election.TryAcquire(callCtx)
			op.OK, op.ResultFence = res.Acquired, res.Current.Fence
			if !res.Acquired {
				op.CurrentHolder = leasetest.IdentityKey(res.Current.Identity())
			}
		case leasetest.OpRenew:
			var g lease.Grant
			g, err = c.election.Renew(callCtx, op.Fence)
			op.OK, op.ResultFence = err == nil, g.Fence
		case leasetest.OpRelease:
			err = c.election.Release(callCtx, op.Fence)
			op.OK = err == nil
		}
		op.Return = check.Monotonic()
		cancel()

		counts := Counts{Calls: 1}
		record := true
		switch {
		// Ambiguous first: an engine error after a write it could not settle wraps the
		// refusal or conflict that followed, and the write may have landed all the same.
		case errors.Is(err, lease.ErrAmbiguous):
			counts.Errors, counts.Unknown, op.Unknown = 1, 1, true
		case err == nil, errors.Is(err, lease.ErrNotHolder):
		case errors.Is(err, lease.ErrTooManyConflicts):
			record = false // every compare-and-swap lost: nothing written
		case c.notSent(err):
			// Refused before anything was written. Should one of these ever have written, the
			// history becomes inexplicable and the check fails: leaving it out is the strict side.
			counts.Errors, record = 1, false
		default:
			// Anything else may have written: a timeout, a lost Raft leader, a broken
			// connection.
			counts.Errors, counts.Unknown, op.Unknown = 1, 1, true
		}
		c.mu.Lock()
		c.counts = c.counts.Add(counts)
		if err != nil && (op.Unknown || !errors.Is(err, lease.ErrNotHolder)) {
			if c.errors == nil {
				c.errors = map[string]int{}
			}
			c.errors[ErrorClass(err)]++
		}
		if record {
			c.ops = append(c.ops, op)
		}
		c.mu.Unlock()

		switch {
		case op.Unknown || !record:
			holding = false // it may or may not hold: it finds out by acquiring again
			if mine > 0 {
				seen = append(seen, mine)
			}
			_ = timing.Sleep(ctx, time.Duration(c.rng.IntN(200))*time.Millisecond) // do not spin on a dead manager
		case op.Kind == leasetest.OpTryAcquire && op.OK:
			if mine > 0 {
				seen = append(seen, mine)
			}
			holding, mine = true, op.ResultFence
		case op.Kind == leasetest.OpTryAcquire:
			holding = false
			seen = append(seen, op.ResultFence)
			_ = timing.Sleep(ctx, time.Duration(c.rng.IntN(50))*time.Millisecond) // think time, as a real contender
		case op.Fence == mine && !op.OK, op.Kind == leasetest.OpRelease && op.Fence == mine:
			holding = false
		}
	}
}

// Ops returns the calls recorded so far.
func (c *Caller) Ops() []check.LeaseOp {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]check.LeaseOp(nil), c.ops...)
}

// Errors returns how many calls failed with each ErrorClass.
func (c *Caller) Errors() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.errors)
}

// notSent reports whether a failed call certainly wrote nothing: the engine could not be
// dialled (the store reports a connection that broke after sending as ErrAmbiguous, and only a
// failed dial as ErrUnavailable), or Swarm refused the request for want of a Raft leader
// before it reached Raft (the store's ErrNoQuorum, unless ambiguous, says no more than that,
// so the text decides).
func notSent(err error) bool {
	if errors.Is(err, lease.ErrAmbiguous) {
		return false
	}
	return errors.Is(err, lease.ErrNotManager) || errors.Is(err, lease.ErrUnavailable) ||
		(errors.Is(err, lease.ErrNoQuorum) && strings.Contains(err.Error(), "does not have a leader"))
}

// ErrorClass reduces a store error to its kind, for the error-rate summary: the lease sentinel
// and the last words of the Docker error, without socket paths.
func ErrorClass(err error) string {
	class := "other"
	for _, s := range []error{lease.ErrAmbiguous, lease.ErrNoQuorum, lease.ErrUnavailable, lease.ErrTooManyConflicts, lease.ErrNotManager} {
		if errors.Is(err, s) {
			class = s.Error()
			break
		}
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	if len(msg) > 60 {
		msg = msg[:60]
	}
	return class + " (" + msg + ")"
}

// Counts returns the caller's outcome counts so far.
func (c *Caller) Counts() Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts
}
