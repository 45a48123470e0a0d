package leasetest

// The concurrency suite: many contenders hammer one election with try-acquire, renew and release,
// every call is recorded with its start and end time, and the merged history is checked twice —
// by porcupine against a sequential model of the lease (linearizability), and by direct checks of
// the three promises the issue names: fences strictly increase, there are never two holders at
// once, and no renewal from a stale fence is accepted. The direct checks duplicate part of what
// porcupine proves, on purpose: their messages name the offending operations, and they would
// still catch a model that was too permissive.
//
// The lease TTL is an hour, so no lease expires during a run: expiry depends on clocks and would
// make the model nondeterministic. Expiry has its own deterministic tests (RunElectionSuite).

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/timing"
)

// Settings every contender of a concurrency run uses.
const (
	// ConcurrencyTTL is far longer than any run, so that no lease expires while the history is
	// recorded and the model needs no notion of time.
	ConcurrencyTTL = time.Hour
	// ConcurrencyMaxCASRetries is high so that a mutation almost never gives up on conflicts;
	// one that does (lease.ErrTooManyConflicts) wrote nothing and is left out of the history.
	ConcurrencyMaxCASRetries = 1000
	// DefaultContenders and DefaultOpsPerContender are the size the issue asks for.
	DefaultContenders      = 8
	DefaultOpsPerContender = 200
	// DefaultCheckTimeout bounds porcupine's search; running out of time fails the test, it is
	// never taken as a pass.
	DefaultCheckTimeout = 30 * time.Second
	// SeedEnv overrides the random seed of a concurrency run, to replay a failure's choice of
	// operations (the interleaving itself cannot be replayed).
	SeedEnv = "LEASETEST_SEED"
)

// OpKind names an operation of the lease.
type OpKind string

// The operations the concurrency suite records.
const (
	OpTryAcquire OpKind = "try-acquire"
	OpRenew      OpKind = "renew"
	OpRelease    OpKind = "release"
)

// Op is one completed call of one contender, as recorded for the linearizability check. It is
// both porcupine's input and output, and the JSON line a contender process writes.
type Op struct {
	// Client is the contender's index, from 0; porcupine's client ID.
	Client int `json:"client"`
	// Contender is the caller's identity, see IdentityKey.
	Contender string `json:"contender"`
	// Kind is the operation.
	Kind OpKind `json:"kind"`
	// Fence is the fence passed to renew or release; zero for try-acquire.
	Fence uint64 `json:"fence,omitempty"`
	// Call and Return are timestamps (nanoseconds) taken just before the call and just after
	// it returned, on a clock shared by all contenders of the history.
	Call   int64 `json:"call"`
	Return int64 `json:"return"`
	// OK reports that the try-acquire won, or that the renew or release was accepted; false
	// means "held by another" for try-acquire and lease.ErrNotHolder for renew and release.
	OK bool `json:"ok"`
	// ResultFence is, for a try-acquire, the fence of the term it won or, when refused, the
	// fence of the term it found; for an accepted renew, the fence of the renewed grant.
	ResultFence uint64 `json:"result_fence,omitempty"`
	// CurrentHolder is the holder a refused try-acquire reported (see IdentityKey).
	CurrentHolder string `json:"current_holder,omitempty"`
}

// IdentityKey is the identity of a contender as the model sees it: holder ID and task ID, which
// together identify a contender (docs/safety.md §1). Holder IDs in this suite never contain '/'.
func IdentityKey(id lease.Identity) string { return id.HolderID + "/" + id.TaskID }

// ContenderIdentity is the identity of contender client. Contenders 2k and 2k+1 share a holder
// ID (a Swarm node). For even k they differ in task ID — two tasks on one node, two contenders —
// so that the suite checks that the task ID is part of the identity. For odd k they share the
// task ID too — one contender that runs twice, as a restarted controller whose predecessor is
// still alive, or a one-shot command beside the supervisor — so that the suite checks that a
// new term by the same identity supersedes the old one for both.
func ContenderIdentity(client int) lease.Identity {
	node := fmt.Sprintf("node-%d", client/2)
	task := client
	if client%4 == 3 {
		task = client - 1
	}
	return lease.Identity{HolderID: node, NodeID: node, TaskID: fmt.Sprintf("task-%d", task)}
}

// NewContenderElection returns contender client's Election on namespace, with the settings of
// the concurrency suite (ConcurrencyTTL, ConcurrencyMaxCASRetries, the system clock).
func NewContenderElection(store lease.Store, namespace string, client int) (*lease.Election, error) {
	return lease.New(store, namespace, ContenderIdentity(client),
		lease.WithTTL(ConcurrencyTTL), lease.WithMaxCASRetries(ConcurrencyMaxCASRetries))
}

var timestampOrigin = time.Now()

// InProcessTimestamp reads Go's monotonic clock, in nanoseconds since this package was loaded.
// It orders the calls of goroutines of one process; contenders in several processes need a
// clock shared by all of them instead (see ContenderConfig.Now).
func InProcessTimestamp() int64 { return int64(time.Since(timestampOrigin)) }

// ContenderConfig describes one contender's run.
type ContenderConfig struct {
	// Client is the contender's index, from 0.
	Client int
	// Ops is how many operations it performs.
	Ops int
	// Seed drives its choice of operations; each client derives its own stream from it.
	Seed uint64
	// Now returns the timestamps of the history, in nanoseconds. Every contender of one history
	// must read the same clock, one that never goes backwards; nil means InProcessTimestamp.
	Now func() int64
	// RefusedPause is the longest think time after a refused try-acquire (a random time up to
	// it), as a real contender waits before trying again. Where a refusal (a read) is much
	// cheaper than the holder's writes, contenders without it use up their operations on
	// refusals while the holder makes a few writes, and the lease rarely changes hands. It
	// only shapes the load: no check depends on any timing. Zero: no pause.
	RefusedPause time.Duration
}

// RunContender performs cfg.Ops pseudo-random operations with e and returns what happened.
//
// A contender that believes it holds the lease mostly renews with its fence, sometimes releases
// or acquires again (a new term for the same identity); any contender also renews and releases
// with fences that are not, or no longer, its own: its superseded terms, other contenders'
// terms, and a fence from the future. Only lease.ErrTooManyConflicts is tolerated (the
// operation wrote nothing and is left out); any other error ends the run and is returned with
// the operations recorded so far.
func RunContender(ctx context.Context, e *lease.Election, cfg ContenderConfig) ([]Op, error) {
	now := cfg.Now
	if now == nil {
		now = InProcessTimestamp
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(cfg.Client)))
	me := IdentityKey(e.Identity())
	var (
		holding bool
		mine    uint64   // fence of this contender's latest term, 0 before its first
		seen    []uint64 // every fence this contender has learnt of: stale candidates
	)
	// staleFence picks a fence this contender does not (or no longer) hold the lease with.
	staleFence := func() uint64 {
		switch r := rng.IntN(10); {
		case r < 6 && len(seen) > 0:
			return seen[rng.IntN(len(seen))]
		case r < 8 && mine > 0 && !holding:
			return mine
		default:
			return max(mine, lastOf(seen)) + 1 // probably nobody's yet; 1, below the floor, at first
		}
	}
	ops := make([]Op, 0, cfg.Ops)
	for range cfg.Ops {
		op := Op{Client: cfg.Client, Contender: me}
		r := rng.IntN(100)
		switch {
		case holding && r < 35:
			op.Kind, op.Fence = OpRenew, mine
		case holding && r < 60:
			op.Kind, op.Fence = OpRelease, mine // often enough that the lease changes hands
		case holding && r < 70, !holding && r < 60:
			op.Kind = OpTryAcquire
		case r%2 == 0:
			op.Kind, op.Fence = OpRenew, staleFence()
		default:
			op.Kind, op.Fence = OpRelease, staleFence()
		}

		var err error
		op.Call = now()
		switch op.Kind {
		case OpTryAcquire:
			var res lease.TryAcquireResult
			res, err = e.TryAcquire(ctx)
			op.OK, op.ResultFence = res.Acquired, res.Current.Fence
			if !res.Acquired {
				op.CurrentHolder = IdentityKey(res.Current.Identity())
			}
		case OpRenew:
			var g lease.Grant
			g, err = e.Renew(ctx, op.Fence)
			op.OK, op.ResultFence = err == nil, g.Fence
		case OpRelease:
			err = e.Release(ctx, op.Fence)
			op.OK = err == nil
		}
		op.Return = now()

		switch {
		case errors.Is(err, lease.ErrAmbiguous):
			// The store could not settle a write of this call (it may have landed, also
			// under a refusal or a conflict that followed): the suite's stores never do that.
			return ops, fmt.Errorf("%s %s: %w", me, op.Kind, err)
		case errors.Is(err, lease.ErrTooManyConflicts):
			// Every attempt lost its compare-and-swap, so the call wrote nothing and has no
			// effect to check. Should the engine ever report this for a write that did land
			// (an ambiguous write misjudged as a conflict), leaving the call out makes the
			// others' history inexplicable and the check fails: the error is on the strict side.
			continue
		case errors.Is(err, lease.ErrNotHolder):
			// A refusal is an outcome like any other.
		case err != nil:
			return ops, fmt.Errorf("%s %s: %w", me, op.Kind, err)
		}
		ops = append(ops, op)

		switch {
		case op.Kind == OpTryAcquire && op.OK:
			if mine > 0 {
				seen = append(seen, mine)
			}
			holding, mine = true, op.ResultFence
		case op.Kind == OpTryAcquire:
			holding = false
			seen = append(seen, op.ResultFence)
			if cfg.RefusedPause > 0 {
				if err := timing.Sleep(ctx, time.Duration(rng.Int64N(int64(cfg.RefusedPause)))); err != nil {
					return ops, err
				}
			}
		case op.Fence == mine && !op.OK:
			holding = false // superseded by its twin (same identity), or a bug the checks report
		case op.Kind == OpRelease && op.Fence == mine:
			holding = false
		}
	}
	return ops, nil
}

func lastOf(s []uint64) uint64 {
	if len(s) == 0 {
		return 0
	}
	return s[len(s)-1]
}

// WriteOps writes ops as JSON lines, the format contender processes hand their history over in.
func WriteOps(w io.Writer, ops []Op) error {
	enc := json.NewEncoder(w)
	for _, op := range ops {
		if err := enc.Encode(op); err != nil {
			return err
		}
	}
	return nil
}

// ReadOps reads the JSON lines WriteOps wrote. Unknown fields are an error, so that a contender
// built from other code cannot pass unnoticed.
func ReadOps(r io.Reader) ([]Op, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var ops []Op
	for {
		var op Op
		err := dec.Decode(&op)
		if errors.Is(err, io.EOF) {
			return ops, nil
		}
		if err != nil {
			return ops, fmt.Errorf("history line %d: %w", len(ops)+1, err)
		}
		ops = append(ops, op)
	}
}

// leaseState is the model's state: who holds the lease (IdentityKey, empty for nobody) and the
// fence counter. It is comparable, so porcupine's default equality applies.
type leaseState struct {
	Holder string
	Fence  uint64
}

// LeaseModel is the sequential specification of one election without expiry (docs/safety.md §1), for
// porcupine. floor is the fence counter the election starts with (its Init snapshot's fence).
//
//   - try-acquire by the holder, or when nobody holds the lease, wins with fence+1;
//     otherwise it is refused and reports the current holder and fence;
//   - renew is accepted exactly when the caller holds the lease with that fence, and keeps
//     the fence;
//   - release is accepted under the same condition; it clears the holder and keeps the fence.
func LeaseModel(floor uint64) porcupine.Model {
	rel := func(f uint64) string { return relFence(floor, f) }
	return porcupine.Model{
		Init: func() any { return leaseState{Fence: floor} },
		Step: func(state, input, _ any) (bool, any) {
			st, op := state.(leaseState), input.(Op)
			switch op.Kind {
			case OpTryAcquire:
				if st.Holder == "" || st.Holder == op.Contender {
					next := leaseState{Holder: op.Contender, Fence: st.Fence + 1}
					return op.OK && op.ResultFence == next.Fence, next
				}
				return !op.OK && op.CurrentHolder == st.Holder && op.ResultFence == st.Fence, st
			case OpRenew:
				if st.Holder == op.Contender && st.Fence == op.Fence {
					return op.OK && op.ResultFence == op.Fence, st
				}
				return !op.OK, st
			case OpRelease:
				if st.Holder == op.Contender && st.Fence == op.Fence {
					return op.OK, leaseState{Fence: st.Fence}
				}
				return !op.OK, st
			}
			return false, st
		},
		DescribeOperation: func(input, _ any) string { return describeCall(floor, input.(Op)) },
		DescribeState: func(state any) string {
			st := state.(leaseState)
			if st.Holder == "" {
				return "free, fence " + rel(st.Fence)
			}
			return fmt.Sprintf("held by %s, fence %s", st.Holder, rel(st.Fence))
		},
	}
}

// CheckLinearizable checks the history against LeaseModel(floor) with porcupine, giving up after
// timeout (porcupine.Unknown). The info can be visualized with porcupine.VisualizePath.
func CheckLinearizable(floor uint64, ops []Op, timeout time.Duration) (porcupine.CheckResult, porcupine.LinearizationInfo) {
	history := make([]porcupine.Operation, len(ops))
	for i, op := range ops {
		history[i] = porcupine.Operation{ClientId: op.Client, Input: op, Output: op, Call: op.Call, Return: op.Return}
	}
	return porcupine.CheckOperationsVerbose(LeaseModel(floor), history, timeout)
}

// CheckInvariants checks the history directly for the promises of docs/safety.md §1–2, without searching for
// a linearization; it returns every violation it finds. Timestamps compare as porcupine's closed
// intervals: a precedes b only when a.Return < b.Call.
//
//   - fences: every won term has a fence above floor; the won fences are floor+1, floor+2, …
//     without gap or repetition; a try-acquire that started after another won returned wins
//     a higher fence.
//   - no two holders at once: a term won by another identity than the previous term's holder
//     requires that holder's accepted release of the previous term, started before the win
//     returned.
//   - no stale fence accepted: an accepted renew or release names a term of its own caller, won
//     before it returned, neither superseded by a newer win nor released before it started.
//   - no holder loses its lease unasked: a renew or release is refused only if the caller's
//     term may have ended before or during the call.
//   - a refused try-acquire names the holder of a term that was current at some point of its
//     call.
func CheckInvariants(floor uint64, ops []Op) error {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	show := func(op Op) string { return describeOp(floor, op) }

	var wins []Op
	won := map[uint64]Op{}        // fence → the try-acquire that won it
	released := map[uint64][]Op{} // fence → accepted releases of it
	for _, op := range ops {
		switch {
		case op.Kind == OpTryAcquire && op.OK:
			if op.ResultFence <= floor {
				fail("fence not above the floor %d: %s", floor, show(op))
			}
			if prev, dup := won[op.ResultFence]; dup {
				fail("one fence won twice: %s and %s", show(prev), show(op))
			}
			won[op.ResultFence] = op
			wins = append(wins, op)
		case op.Kind == OpRelease && op.OK:
			released[op.Fence] = append(released[op.Fence], op)
		}
	}

	// Fences follow the counter: floor+1 … floor+len(wins), each once.
	for f := floor + 1; f <= floor+uint64(len(wins)); f++ {
		if _, ok := won[f]; !ok {
			fail("fence %s was never won although %d terms were: the counter skipped or went back", relFence(floor, f), len(wins))
		}
	}

	// Real-time order: sweep the wins by call time, knowing the highest fence among the wins
	// that returned before each call.
	byCall := slices.SortedFunc(slices.Values(wins), func(a, b Op) int { return cmp.Compare(a.Call, b.Call) })
	byReturn := slices.SortedFunc(slices.Values(wins), func(a, b Op) int { return cmp.Compare(a.Return, b.Return) })
	var best Op
	i := 0
	for _, op := range byCall {
		for ; i < len(byReturn) && byReturn[i].Return < op.Call; i++ {
			if byReturn[i].ResultFence > best.ResultFence {
				best = byReturn[i]
			}
		}
		if best.OK && op.ResultFence <= best.ResultFence {
			fail("fence went backwards: %s started after %s returned", show(op), show(best))
		}
	}

	// One holder at a time: a new holder needs the previous holder's release.
	for _, op := range wins {
		prev, ok := won[op.ResultFence-1]
		if !ok || prev.Contender == op.Contender {
			continue // the first term, or the holder itself starting a new term
		}
		if !slices.ContainsFunc(released[prev.ResultFence], func(r Op) bool {
			return r.Contender == prev.Contender && r.Call <= op.Return
		}) {
			fail("two holders at once: %s while %s was never released before", show(op), show(prev))
		}
	}
	for f, rs := range released {
		if len(rs) > 1 {
			fail("term %s released %d times: %s and %s", relFence(floor, f), len(rs), show(rs[0]), show(rs[1]))
		}
	}

	// current reports whether term f can have been current at some instant of op's call.
	current := func(op Op, f uint64) (bool, string) {
		w, ok := won[f]
		switch {
		case !ok:
			return false, "that term was never won"
		case w.Call > op.Return:
			return false, "that term was won only later, by " + show(w)
		}
		if next, ok := won[f+1]; ok && next.Return < op.Call {
			return false, "that term had been superseded by " + show(next)
		}
		for _, r := range released[f] {
			if r.Return < op.Call {
				return false, "that term had been released by " + show(r)
			}
		}
		return true, ""
	}
	// certain reports whether op's caller held term f throughout op's call: won before the call,
	// neither superseded nor released before it returned.
	certain := func(op Op, f uint64) bool {
		w, ok := won[f]
		if !ok || w.Contender != op.Contender || w.Return >= op.Call {
			return false
		}
		if next, ok := won[f+1]; ok && next.Call <= op.Return {
			return false
		}
		return !slices.ContainsFunc(released[f], func(r Op) bool { return r.Call <= op.Return })
	}
	for _, op := range ops {
		switch {
		case op.Kind == OpTryAcquire && !op.OK:
			if op.ResultFence == floor {
				fail("refused although no term was ever won: %s", show(op))
				continue
			}
			if ok, why := current(op, op.ResultFence); !ok {
				fail("refused by a term that was not current: %s: %s", show(op), why)
			} else if w := won[op.ResultFence]; w.Contender != op.CurrentHolder {
				fail("refused naming the wrong holder: %s, but %s", show(op), show(w))
			}
		case op.Kind != OpTryAcquire && !op.OK:
			if certain(op, op.Fence) {
				fail("refused although the caller's term was current throughout: %s", show(op))
			}
		case op.Kind != OpTryAcquire && op.OK:
			w, ok := won[op.Fence]
			if ok && w.Contender != op.Contender {
				fail("accepted from another contender's fence: %s, the term of %s", show(op), show(w))
			} else if ok, why := current(op, op.Fence); !ok {
				fail("accepted from a stale fence: %s: %s", show(op), why)
			}
			if op.Kind == OpRenew && op.ResultFence != op.Fence {
				fail("renew changed the fence: %s returned fence %d", show(op), op.ResultFence)
			}
		}
	}
	return errors.Join(errs...)
}

// CheckFinalRecord checks the record left after the history: its fence is the last term's, and
// its holder is that term's holder unless the term was released.
func CheckFinalRecord(floor uint64, ops []Op, rec lease.Record) error {
	last := Op{ResultFence: floor}
	for _, op := range ops {
		if op.Kind == OpTryAcquire && op.OK && op.ResultFence > last.ResultFence {
			last = op
		}
	}
	wantHolder := last.Contender
	for _, op := range ops {
		if op.Kind == OpRelease && op.OK && op.Fence == last.ResultFence {
			wantHolder = ""
		}
	}
	gotHolder := ""
	if rec.Held() {
		gotHolder = IdentityKey(rec.Identity())
	}
	if rec.Fence != last.ResultFence || gotHolder != wantHolder {
		return fmt.Errorf("final record: holder %q fence %s; the history ends with holder %q fence %s",
			gotHolder, relFence(floor, rec.Fence), wantHolder, relFence(floor, last.ResultFence))
	}
	return nil
}

// VerifyHistory fails t unless the history passes CheckInvariants and porcupine finds it
// linearizable within timeout (zero: DefaultCheckTimeout). On a porcupine failure it writes the
// visualization (an HTML page) and the history (JSON lines) and names their paths: under
// t.ArtifactDir with go test's -artifacts flag, otherwise in a directory of its own under
// os.TempDir that is left in place.
func VerifyHistory(t *testing.T, floor uint64, ops []Op, timeout time.Duration) {
	t.Helper()
	timeout = cmp.Or(timeout, DefaultCheckTimeout)
	if err := CheckInvariants(floor, ops); err != nil {
		t.Errorf("the history of %d operations breaks the lease's promises:\n%v", len(ops), err)
	}
	start := time.Now()
	res, info := CheckLinearizable(floor, ops, timeout)
	t.Logf("porcupine: %s for %d operations in %v", res, len(ops), time.Since(start).Round(time.Millisecond))
	if res == porcupine.Ok {
		return
	}
	dir, err := visualizationDir(t)
	if err != nil {
		t.Errorf("porcupine: %s; cannot write the visualization: %v", res, err)
		return
	}
	// The raw history too, for a look by hand: one JSON line per call (WriteOps).
	raw := filepath.Join(dir, "lease-history.jsonl")
	if f, err := os.Create(raw); err == nil {
		err = errors.Join(WriteOps(f, ops), f.Close())
		if err == nil {
			t.Logf("the history (floor %d): %s", floor, raw)
		}
	}
	path := filepath.Join(dir, "lease-history.html")
	if err := porcupine.VisualizePath(LeaseModel(floor), info, path); err != nil {
		t.Errorf("porcupine: %s; writing the visualization to %s: %v", res, path, err)
		return
	}
	if res == porcupine.Unknown {
		t.Errorf("porcupine could not decide within %v whether the history is linearizable; partial result: %s", timeout, path)
		return
	}
	t.Errorf("the history is not linearizable; porcupine's visualization: %s", path)
}

func visualizationDir(t *testing.T) (string, error) {
	if f := flag.Lookup("test.artifacts"); f != nil && f.Value.String() == "true" {
		return t.ArtifactDir(), nil
	}
	// t.TempDir and a non-kept t.ArtifactDir vanish when the test ends, with the evidence.
	return os.MkdirTemp("", "lease-linearizability-")
}

// ConcurrencyConfig sizes a concurrency run; zero fields take the defaults.
type ConcurrencyConfig struct {
	// Contenders is how many contenders run at once (DefaultContenders).
	Contenders int
	// Ops is how many operations each performs (DefaultOpsPerContender).
	Ops int
	// Seed drives the choice of operations (ConcurrencySeed).
	Seed uint64
	// CheckTimeout bounds porcupine (DefaultCheckTimeout).
	CheckTimeout time.Duration
	// RefusedPause is the contenders' think time after a refusal (ContenderConfig); zero for
	// none. Stores whose writes are much slower than their reads need one.
	RefusedPause time.Duration
}

func (c ConcurrencyConfig) withDefaults(t testing.TB) ConcurrencyConfig {
	t.Helper()
	c.Contenders = cmp.Or(c.Contenders, DefaultContenders)
	c.Ops = cmp.Or(c.Ops, DefaultOpsPerContender)
	if c.Seed == 0 {
		c.Seed = ConcurrencySeed(t)
	}
	c.CheckTimeout = cmp.Or(c.CheckTimeout, DefaultCheckTimeout)
	return c
}

// ConcurrencySeed returns the seed of a concurrency run: SeedEnv's value if set, else a new one
// per run, so that repeated runs explore different operation mixes. It logs the seed.
func ConcurrencySeed(t testing.TB) uint64 {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(SeedEnv); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", SeedEnv, s, err)
		}
	}
	t.Logf("seed %d (replay the operation mix with %s=%d)", seed, SeedEnv, seed)
	return seed
}

// RunConcurrencySuite runs cfg.Contenders goroutines of this process against one election,
// each with its own Election and a store from newStore (called once per contender and once more
// to set up and inspect the election; the stores must share their records, like the memory
// store's one instance or several clients of one Swarm). Then it checks the merged history
// (VerifyHistory) and the final record, and destroys the election.
func RunConcurrencySuite(t *testing.T, newStore NewStore, cfg ConcurrencyConfig) {
	t.Helper()
	cfg = cfg.withDefaults(t)
	ctx := t.Context()
	ns := Namespace(t)
	admin, err := NewContenderElection(newStore(t), ns, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Destroy with a fresh context: t.Context is already cancelled when cleanups run.
	t.Cleanup(func() { _ = admin.Destroy(context.Background()) })
	initial, err := admin.Init(ctx)
	if err != nil {
		t.Fatal(err)
	}

	elections := make([]*lease.Election, cfg.Contenders)
	for i := range elections {
		if elections[i], err = NewContenderElection(newStore(t), ns, i); err != nil {
			t.Fatal(err)
		}
	}
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		results = make([][]Op, cfg.Contenders)
		errs    = make([]error, cfg.Contenders)
	)
	for i, e := range elections {
		wg.Go(func() {
			<-start // all at once, so that the contenders really overlap
			results[i], errs[i] = RunContender(ctx, e, ContenderConfig{
				Client: i, Ops: cfg.Ops, Seed: cfg.Seed, RefusedPause: cfg.RefusedPause,
			})
		})
	}
	began := time.Now()
	close(start)
	wg.Wait()
	t.Logf("%d contenders × %d operations on %s in %v", cfg.Contenders, cfg.Ops, admin.Store().Describe(), time.Since(began).Round(time.Millisecond))
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("a contender failed: %v", err)
	}

	ops := slices.Concat(results...)
	final, err := admin.Inspect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if admin.ClockFences() {
		// Fences that follow the clock are increasing but not contiguous: the checks run on
		// their ranks, which the model's fence + 1 describes.
		var rank func(uint64) uint64
		ops, rank = RankFences(initial.Fence, ops)
		final.Fence = rank(final.Fence)
	}
	t.Log(Summary(initial.Fence, ops))
	VerifyHistory(t, initial.Fence, ops, cfg.CheckTimeout)
	if err := CheckFinalRecord(initial.Fence, ops, final.Record); err != nil {
		t.Error(err)
	}
}

// RankFences renumbers the fences of a history whose won fences increase without being
// contiguous (lease.ClockFencer): the k-th lowest fence won becomes floor + k, in every field
// that names a fence, so that LeaseModel and CheckInvariants — which expect fence + 1 — check
// the order, uniqueness and holder rules unchanged (only "no gap" is lost, which such fences
// never promise). A fence that no operation won (an unsettled write's) keeps its value, and
// fails the checks as before. rank maps any other fence, e.g. the final record's.
func RankFences(floor uint64, ops []Op) (_ []Op, rank func(uint64) uint64) {
	var won []uint64
	for _, op := range ops {
		if op.Kind == OpTryAcquire && op.OK {
			won = append(won, op.ResultFence)
		}
	}
	slices.Sort(won)
	won = slices.Compact(won)
	rank = func(f uint64) uint64 {
		if i, ok := slices.BinarySearch(won, f); ok && f > floor {
			return floor + uint64(i) + 1
		}
		return f
	}
	out := make([]Op, len(ops))
	for i, op := range ops {
		op.Fence, op.ResultFence = rank(op.Fence), rank(op.ResultFence)
		out[i] = op
	}
	return out, rank
}

// Summary counts the outcomes of a history by kind and the most calls in flight at once, so
// that a run shows it exercised what it claims to: overlapping calls, wins and refusals,
// accepted and refused renewals and releases.
func Summary(floor uint64, ops []Op) string {
	counts := map[string]int{}
	for _, op := range ops {
		outcome := "refused"
		if op.OK {
			outcome = "ok"
		}
		counts[string(op.Kind)+" "+outcome]++
	}
	// The most calls in flight at once shows that the contenders really overlapped.
	type event struct {
		at    int64
		delta int
	}
	events := make([]event, 0, 2*len(ops))
	for _, op := range ops {
		events = append(events, event{op.Call, 1}, event{op.Return, -1})
	}
	slices.SortFunc(events, func(a, b event) int {
		return cmp.Or(cmp.Compare(a.at, b.at), -cmp.Compare(a.delta, b.delta)) // closed intervals
	})
	inFlight, most := 0, 0
	for _, e := range events {
		inFlight += e.delta
		most = max(most, inFlight)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d operations, at most %d in flight:", len(ops), most)
	for i, k := range slices.Sorted(maps.Keys(counts)) {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %s %d", k, counts[k])
	}
	return b.String()
}

// relFence shows fence f relative to the floor: the floor is a Unix time in microseconds, too
// long to read, and #n is the n-th term of the run.
func relFence(floor, f uint64) string { return fmt.Sprintf("#%d", int64(f-floor)) }

// describeOp names op with its time interval, for the messages of CheckInvariants.
func describeOp(floor uint64, op Op) string {
	return fmt.Sprintf("[%d..%d] client %d: %s", op.Call, op.Return, op.Client, describeCall(floor, op))
}

// describeCall renders op for people, fences relative to the floor (#1 is the first term).
func describeCall(floor uint64, op Op) string {
	rel := func(f uint64) string { return relFence(floor, f) }
	switch {
	case op.Kind == OpTryAcquire && op.OK:
		return fmt.Sprintf("%s try-acquire → won %s", op.Contender, rel(op.ResultFence))
	case op.Kind == OpTryAcquire:
		return fmt.Sprintf("%s try-acquire → held by %s %s", op.Contender, op.CurrentHolder, rel(op.ResultFence))
	case op.OK:
		return fmt.Sprintf("%s %s(%s) → ok", op.Contender, op.Kind, rel(op.Fence))
	default:
		return fmt.Sprintf("%s %s(%s) → not holder", op.Contender, op.Kind, rel(op.Fence))
	}
}
