package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Group commit of the rooms' transactions (docs/rooms.md §2). Every request to etcd costs each
// member a gRPC exchange, and every write a Raft entry, replication and an apply, whatever it
// carries; under load the rooms' requests are small and many — one per shard batch. A
// coalescer merges the transactions that callers start while earlier ones are on their way:
//
//   - writes into one etcd transaction of nested transactions (etcd ≥ 3.3), each with its own
//     conditions and outcome: one Raft entry, and each caller learns whether its own conditions
//     held;
//   - reads, which have no conditions, into one flat read-only transaction whose ranges are
//     handed back to their callers in order: etcd serves a flat read-only transaction from a
//     linearizable read index, and would take one with nested transactions for a write
//     through Raft.
//
// Nothing waits for company: a transaction goes at once when no merged one is outstanding, so
// an idle store answers as fast as without merging. A caller whose context ends while its
// transaction is still queued takes it back, unsent.
//
// etcd checks a merged transaction as a whole: the merged count plus the largest nested one's
// operations must stay within its operation limit (128 by default; maxTxnOps here) — for a
// flat read, all the ranges together — and no two nested transactions may put the same key, or
// put one the other deletes. A transaction that touches a key of one left for later waits for
// a later merge too, so that two transactions on one key keep their order. A merged request
// that etcd refuses as malformed is sent again one transaction at a time, so that one caller's
// bad request (a read at a compacted revision) fails that caller alone.

// One merged transaction is outstanding at a time — the fewest, largest merges, measured best
// (BENCHMARKS.md) — unless the last one sent has been out for longer than stallAfter (a member
// that stopped answering, a leader election): then up to maxInFlight go, so that requests that
// another member would answer do not all wait behind the stalled one until it times out.
const (
	maxInFlight = 4
	stallAfter  = 200 * time.Millisecond
)

// maxMergedBytes bounds the keys and values of one merged transaction, well inside etcd's
// default request limit of 1.5 MiB.
const maxMergedBytes = 512 << 10

// errNotSent is the error of a transaction whose caller gave up before it was sent: it never
// reached etcd.
var errNotSent = errors.New("not sent: the request ended while it waited for its turn")

// txnResult is one caller's transaction's outcome within a merged one.
type txnResult struct {
	Succeeded bool
	Responses []*pb.ResponseOp
	Revision  int64 // the revision of the store after the (merged) transaction
	// Unsettled: another copy of the (merged) write may have applied or may yet apply (send),
	// so that neither a refusal nor a failure is sure (refused, classify).
	Unsettled bool
}

// pendingTxn is a caller's transaction waiting to be sent.
type pendingTxn struct {
	cmps       []clientv3.Cmp
	then, els  []clientv3.Op
	keys       []string // every key put or deleted, in both branches
	size, cost int      // operations (the largest branch or the conditions); bytes of keys and values
	done       chan struct{}
	res        txnResult
	err        error
}

// coalescer merges concurrent transactions of one kind: reads (read true: no conditions, no
// writes) or writes.
type coalescer struct {
	members *members
	timeout time.Duration
	read    bool

	mu       sync.Mutex
	queue    []*pendingTxn
	inFlight int
	lastSent time.Time // when the last merged transaction went
}

func newPendingTxn(cmps []clientv3.Cmp, then, els []clientv3.Op) *pendingTxn {
	p := &pendingTxn{cmps: cmps, then: then, els: els, done: make(chan struct{})}
	p.size = max(len(cmps), len(then), len(els))
	for _, branch := range [][]clientv3.Op{then, els} {
		for _, op := range branch {
			p.cost += len(op.KeyBytes()) + len(op.ValueBytes()) + 16
			if op.IsPut() || op.IsDelete() {
				p.keys = append(p.keys, string(op.KeyBytes()))
			}
		}
	}
	for _, c := range cmps {
		p.cost += len(c.KeyBytes()) + 16
	}
	return p
}

// do sends the transaction, merged with others when some are waiting, and waits for its
// outcome or for ctx to end. A transaction still queued when ctx ends is taken back
// (errNotSent beside ctx's error); one already sent goes on for the others, and a write's
// result is then Unsettled.
func (c *coalescer) do(ctx context.Context, cmps []clientv3.Cmp, then, els []clientv3.Op) (txnResult, error) {
	p := newPendingTxn(cmps, then, els)
	c.mu.Lock()
	c.queue = append(c.queue, p)
	if c.inFlight == 0 || (c.inFlight < maxInFlight && time.Since(c.lastSent) > stallAfter) {
		c.inFlight++
		go c.send()
	}
	c.mu.Unlock()
	select {
	case <-p.done:
		return p.res, p.err
	case <-ctx.Done():
	}
	c.mu.Lock()
	if i := slices.Index(c.queue, p); i >= 0 {
		c.queue = slices.Delete(c.queue, i, i+1)
		c.mu.Unlock()
		return txnResult{}, fmt.Errorf("%w: %w", errNotSent, ctx.Err())
	}
	c.mu.Unlock()
	return txnResult{Unsettled: !c.read}, ctx.Err() // sent: a write's outcome is unknown
}

// send sends merged transactions until the queue is empty.
func (c *coalescer) send() {
	for {
		c.mu.Lock()
		batch := c.take()
		if len(batch) == 0 {
			c.inFlight--
			c.mu.Unlock()
			return
		}
		c.lastSent = time.Now()
		c.mu.Unlock()
		c.commit(batch)
	}
}

// take removes from the queue, in queue order, the transactions that etcd accepts as one
// request: within the operation and byte limits, no key in two of them, and none on a key of
// one left for later. The caller holds c.mu.
func (c *coalescer) take() []*pendingTxn {
	var batch, rest []*pendingTxn
	keys := map[string]bool{}
	largest, total, bytes := 0, 0, 0
	for _, p := range c.queue {
		ops := len(batch) + 1 + max(largest, p.size) // etcd's count of a merge of nested transactions
		if c.read {
			ops = total + p.size
		}
		fits := len(batch) == 0 || (ops <= maxTxnOps && bytes+p.cost <= maxMergedBytes && !anyIn(p.keys, keys))
		for _, k := range p.keys {
			keys[k] = true
		}
		if !fits {
			rest = append(rest, p)
			continue
		}
		batch = append(batch, p)
		largest, total, bytes = max(largest, p.size), total+p.size, bytes+p.cost
	}
	c.queue = rest
	return batch
}

func anyIn(keys []string, set map[string]bool) bool {
	return slices.ContainsFunc(keys, func(k string) bool { return set[k] })
}

// commit sends batch as one transaction — a plain one when it holds one — and hands every
// caller its outcome.
func (c *coalescer) commit(batch []*pendingTxn) {
	defer func() {
		for _, p := range batch {
			close(p.done)
		}
	}()
	if len(batch) == 1 {
		c.commitOne(batch[0])
		return
	}
	ctx, cancel := c.request()
	defer cancel()
	var err error
	if c.read {
		err = c.commitReads(ctx, batch)
	} else {
		err = c.commitWrites(ctx, batch)
	}
	if err != nil && kindOf(err) == nil {
		// Refused as malformed: one caller's request, most likely; each goes alone.
		for _, p := range batch {
			c.commitOne(p)
		}
		return
	}
}

// request is the context of one request: the store's request timeout, a leader required (as
// Store.request, but not bound to any one caller).
func (c *coalescer) request() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	return clientv3.WithRequireLeader(ctx), cancel
}

// commitOne sends p alone, with a request timeout of its own.
func (c *coalescer) commitOne(p *pendingTxn) {
	ctx, cancel := c.request()
	defer cancel()
	resp, unsettled, err := c.members.do(ctx, clientv3.OpTxn(p.cmps, p.then, p.els), !c.read)
	p.res.Unsettled, p.err = unsettled, err
	if err == nil {
		txn := resp.Txn()
		p.res = txnResult{Succeeded: txn.Succeeded, Responses: txn.Responses, Revision: txn.Header.Revision, Unsettled: unsettled}
	}
}

// commitWrites sends batch as one transaction of nested ones. Every nested one is conditional,
// so that copies of the merged one apply each at most once.
func (c *coalescer) commitWrites(ctx context.Context, batch []*pendingTxn) error {
	ops := make([]clientv3.Op, len(batch))
	for i, p := range batch {
		ops[i] = clientv3.OpTxn(p.cmps, p.then, p.els)
	}
	resp, unsettled, err := c.members.do(ctx, clientv3.OpTxn(nil, ops, nil), true)
	if err != nil {
		return failAll(batch, err, unsettled)
	}
	txn := resp.Txn()
	for i, p := range batch {
		sub := txn.Responses[i].GetResponseTxn()
		p.res = txnResult{Succeeded: sub.GetSucceeded(), Responses: sub.GetResponses(), Revision: txn.Header.Revision, Unsettled: unsettled}
	}
	return nil
}

// failAll gives every transaction of batch err; it returns err.
func failAll(batch []*pendingTxn, err error, unsettled bool) error {
	for _, p := range batch {
		p.err, p.res.Unsettled = err, unsettled
	}
	return err
}

// commitReads sends batch's reads as one flat read-only transaction and hands each caller its
// own ranges' responses.
func (c *coalescer) commitReads(ctx context.Context, batch []*pendingTxn) error {
	var ops []clientv3.Op
	for _, p := range batch {
		ops = append(ops, p.then...)
	}
	resp, _, err := c.members.do(ctx, clientv3.OpTxn(nil, ops, nil), false)
	if err != nil {
		return failAll(batch, err, false)
	}
	txn := resp.Txn()
	at := 0
	for _, p := range batch {
		n := len(p.then)
		p.res = txnResult{Succeeded: true, Responses: txn.Responses[at : at+n : at+n], Revision: txn.Header.Revision}
		at += n
	}
	return nil
}
