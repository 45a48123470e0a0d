package rooms

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease"
)

type opKind int

const (
	opCampaign opKind = iota
	opRenew
	opResign
)

// op is one caller's operation on a room, waiting in its shard's queue.
type op struct {
	ctx       context.Context
	kind      opKind
	room      string
	candidate string
	metadata  string
	ttl       time.Duration
	// token is, for a campaign, the fresh token of the term it may win — the same across
	// retries, so that a campaign whose write landed although it looked lost recognises its own
	// term by the hash. For renew it is the caller's token, echoed back.
	token string
	hash  tokenHash
	// resigned is the term a resign removed in a write whose outcome stayed unknown: if the room
	// no longer holds the token when it is decided again, that write did land (or the term ended
	// by itself meanwhile) and the resignation is reported done.
	resigned uint64
	// unsettled is the error of a write that carried this campaign or renewal and whose outcome
	// stayed unknown: it may have landed, also when the decision on a later read refuses (the
	// term it won or extended may have ended since and the room moved on). Such a refusal or
	// failure is reported wrapping it (lease.ErrAmbiguous), never as a plain answer.
	unsettled error

	// out is the op's decision on the current attempt's state; it is answered (res, prev,
	// err) once the attempt's write, if any, is done.
	out outcome

	res  Result
	prev uint64
	err  error
	// done receives one value when the op is answered. It is buffered, so that answering
	// never waits, and kept when the op is recycled (ops).
	done chan struct{}
}

// ops recycles the ops of answered calls: an op and its done channel were two of the engine's
// allocations per operation. An op whose caller stopped waiting is never recycled: it may
// still be in a batch.
var ops = sync.Pool{New: func() any { return &op{done: make(chan struct{}, 1)} }}

func newOp() *op { return ops.Get().(*op) }

// recycle returns an answered op, whose answer the caller has taken, for reuse.
func (o *op) recycle() {
	done := o.done
	*o = op{done: done}
	ops.Put(o)
}

// answer tells the waiting caller that o's res, prev and err are set.
func (o *op) answer() { o.done <- struct{}{} }

// outcome is an op's decision on one attempt's state.
type outcome struct {
	res     Result
	prev    uint64
	err     error
	changed bool // the op changed the document: the attempt must write
	refused bool // a refusal or a follower answer: never to be decided on remembered state
}

// shardQueue group-commits the operations of one shard within this Manager: whoever holds sem
// takes every queued op and applies them all in one conditional write; ops queued meanwhile
// wait for the next holder. This keeps a process from conflicting with itself and turns many
// concurrent renewals into one Raft proposal.
type shardQueue struct {
	key ShardKey
	sem chan struct{}

	mu      sync.Mutex
	pending []*op
	// spare is the storage of the batch taken last, cleared, for the queue after the next
	// take; only the sem holder touches it.
	spare []*op
}

// submit queues o and returns once it is decided (its res/err set), or with ctx's error if ctx
// ends first — the op may then still be applied.
func (m *Manager) submit(ctx context.Context, o *op) error {
	q := m.queues[m.ShardOf(o.room)]
	o.ctx = ctx
	q.mu.Lock()
	q.pending = append(q.pending, o)
	q.mu.Unlock()
	for {
		select {
		case <-o.done:
			return nil
		default:
		}
		// A free queue is taken without waiting, and then without asking ctx for its Done
		// channel: a request's context makes that channel when first asked, an allocation on
		// every operation for a wait that most never need.
		select {
		case q.sem <- struct{}{}:
			m.hold(q)
			continue
		default:
		}
		select {
		case <-o.done:
			return nil
		case q.sem <- struct{}{}:
			m.hold(q)
		case <-ctx.Done():
			q.remove(o)
			return ctx.Err()
		}
	}
}

// hold runs the queue's batch while holding its sem, which the caller has just taken: a
// previous holder has finished, so the caller's op is either done or still queued, and then
// this batch takes it.
func (m *Manager) hold(q *shardQueue) {
	if batch := q.take(); len(batch) > 0 {
		m.flush(q, batch)
		clear(batch) // no op outlives its answer in the spare storage
	}
	<-q.sem
}

// take empties the queue, finishing ops whose caller has gone: a campaign nobody waits for
// would win a term whose token nobody knows.
func (q *shardQueue) take() []*op {
	q.mu.Lock()
	batch := q.pending
	q.pending = q.spare[:0]
	q.mu.Unlock()
	q.spare = batch
	return slices.DeleteFunc(batch, func(o *op) bool {
		if err := o.ctx.Err(); err != nil {
			o.err = err
			o.answer()
			return true
		}
		return false
	})
}

func (q *shardQueue) remove(o *op) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pending = slices.DeleteFunc(q.pending, func(p *op) bool { return p == o })
}

// flush decides and writes one batch on the Manager's layout and answers its ops. A batch
// longer than the layout writes at once is written in parts.
func (m *Manager) flush(q *shardQueue, batch []*op) {
	for len(batch) > m.maxBatch {
		m.flush(q, batch[:m.maxBatch])
		batch = batch[m.maxBatch:]
	}
	m.layout.begin(q.key, batch)
	defer m.layout.end(q.key)
	if err := m.try(m.batches.get(), q.key, batch); err != nil {
		m.layout.forget(q.key)
		fail(batch, err)
		return
	}
	deliver(batch)
}

// try is the write loop: read (or take what is remembered), decide every op in order, write
// once if anything changed, and on a conflict pause and try again.
func (m *Manager) try(ctx context.Context, key ShardKey, batch []*op) error {
	l := m.layout
	for conflicts := 0; ; {
		now := m.now()
		doc, err := l.read(ctx, key, now)
		write := false
		if err == nil {
			// Garbage collection runs on every attempt, but only a write that is made anyway
			// stores the result: it never writes alone.
			m.collect(doc, now) // shardedit.go
			write, err = l.decide(ctx, key, batch, doc, now)
		}
		switch {
		case errors.Is(err, errDecideOnRead):
			continue
		case err != nil || !write:
			return err
		}
		maybe, err := l.write(ctx, key, doc)
		if err == nil {
			return nil
		}
		l.forget(key)
		switch {
		case errors.Is(err, errDecideOnRead):
			continue
		case !errors.Is(err, lease.ErrConflict):
			return err
		case maybe:
			unsettle(batch, err)
		}
		if conflicts++; conflicts > m.maxCASRetries {
			return fmt.Errorf("%w (%d attempts)", ErrTooManyConflicts, conflicts)
		}
		if err := pause(ctx, conflicts); err != nil {
			return err
		}
	}
}

// applyAll decides every op of batch on doc, in order (apply): whether any changed the
// document, whether any was refused, and how many campaigns won a room.
func (m *Manager) applyAll(batch []*op, doc *shardDoc, now time.Time, caps *capacity) (changed, refused bool, won int) {
	for _, o := range batch {
		m.apply(o, doc, now, caps)
		changed, refused = changed || o.out.changed, refused || o.out.refused
		if o.kind == opCampaign && o.out.changed {
			won++
		}
	}
	return changed, refused, won
}

// deliver answers every op of batch with its decision.
func deliver(batch []*op) {
	for _, o := range batch {
		o.res, o.prev, o.err = o.out.res, o.out.prev, o.out.err
		if o.out.refused && o.err == nil && o.unsettled != nil {
			// A follower answer after a write of this campaign that may have won.
			o.err = fmt.Errorf("rooms: campaign in %s: the room has another leader now", o.room)
		}
		o.err = o.qualify(o.err)
		o.answer()
	}
}

// fail answers every op of batch with err.
func fail(batch []*op, err error) {
	for _, o := range batch {
		o.err = o.qualify(err)
		o.answer()
	}
}

// unsettle records, in the ops whose change it carried, that a write may have landed although
// it failed with err: a resignation is then recognised as done, and any other answer says so.
func unsettle(batch []*op, err error) {
	for _, o := range batch {
		switch {
		case !o.out.changed:
		case o.kind == opResign:
			o.resigned = o.out.prev
		default:
			o.unsettled = err
		}
	}
}

// settle brings a write's outcome to the write loop's terms: an unknown outcome (err wraps
// lease.ErrAmbiguous) is read back (readBack, on a fresh deadline: the batch's may be what cut
// the write short) and the write landed if the read shows what it wrote; otherwise, and when
// the shard was created or removed meanwhile, it is lease.ErrConflict, to decide again — maybe
// reports that the write may have landed all the same.
func settle(ctx context.Context, v lease.Version, err error, readBack func(context.Context) (bool, lease.Version, error)) (_ lease.Version, maybe bool, _ error) {
	switch {
	case err == nil:
		return v, false, nil
	case errors.Is(err, lease.ErrAmbiguous):
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
		defer cancel()
		landed, v, rerr := readBack(rctx)
		switch {
		case rerr != nil:
			return 0, true, fmt.Errorf("%w; reading it back failed too: %w", err, rerr)
		case landed:
			return v, false, nil
		}
		return 0, true, fmt.Errorf("%w: %w", lease.ErrConflict, err)
	case errors.Is(err, lease.ErrExists), errors.Is(err, lease.ErrNotFound):
		return 0, false, fmt.Errorf("%w: %w", lease.ErrConflict, err)
	}
	return 0, false, err
}

// every reports whether p holds for every op of batch.
func every(batch []*op, p func(*op) bool) bool {
	for _, o := range batch {
		if !p(o) {
			return false
		}
	}
	return true
}

// qualify returns err, wrapped together with the op's unsettled write when there is one and err
// does not say so already.
func (o *op) qualify(err error) error {
	if err == nil || o.unsettled == nil || errors.Is(err, lease.ErrAmbiguous) {
		return err
	}
	return fmt.Errorf("%w; an earlier write of this call may have been applied: %w", err, o.unsettled)
}

// mayActivate reports whether a campaign of the batch may make a room active, the only change
// that needs the active-room count.
func (m *Manager) mayActivate(batch []*op, doc *shardDoc, now time.Time) bool {
	return slices.ContainsFunc(batch, func(o *op) bool {
		if o.kind != opCampaign {
			return false
		}
		e, ok := doc.Rooms.get(o.room)
		return !ok || !m.live(e, now)
	})
}

// apply decides op o on doc (changing doc when it succeeds) into o.out. The decision is
// written in place, field by field: returned by value, the outcomes and results made apply's
// frame a kilobyte, deep in the request's call chain, and the goroutine's stack grew for it.
func (m *Manager) apply(o *op, doc *shardDoc, now time.Time, caps *capacity) {
	out := &o.out
	*out = outcome{}
	e, ok := doc.Rooms.get(o.room)
	var old *roomEntry // the room's entry, for the document's size (shardedit.go)
	if ok {
		old = &e
	}
	live := ok && m.live(e, now)
	mine := live && e.Hash.equal(o.hash)
	switch o.kind {
	case opCampaign:
		if mine { // this campaign's own earlier write did land
			m.setLeader(&out.res, o.room, &e, o.token)
			return
		}
		if live {
			out.refused = true
			out.res.RoomID, out.res.Status, out.res.RetryAfter = o.room, StatusFollower, m.retryAfter(e, now)
			e.setLeader(&out.res.Leader)
			return
		}
		ne := roomEntry{Candidate: o.candidate, Metadata: o.metadata, Term: nextTerm(doc.Floor, m.clock.Now()),
			ExpiresMs: now.Add(o.ttl).UnixMilli(), TTLSec: int64(o.ttl / time.Second), Hash: o.hash}
		if err := m.admit(o.room, &ne, old, doc, now, caps); err != nil {
			out.refused, out.err = true, err
			return
		}
		doc.Floor = ne.Term
		doc.put(o.room, ne, old)
		out.changed = true
		m.setLeader(&out.res, o.room, &ne, o.token)
	case opRenew:
		if !mine {
			out.refused, out.err = true, m.notCurrent(live)
			return
		}
		ne := e
		ne.ExpiresMs, ne.TTLSec = now.Add(o.ttl).UnixMilli(), int64(o.ttl/time.Second)
		doc.put(o.room, ne, old)
		out.changed = true
		m.setLeader(&out.res, o.room, &ne, o.token)
	default: // opResign
		if !mine {
			if o.resigned != 0 && !(ok && e.Hash.equal(o.hash)) {
				out.prev = o.resigned
				return
			}
			out.refused, out.err = true, m.notCurrent(live)
			return
		}
		doc.remove(o.room)
		out.changed, out.prev = true, e.Term
	}
}

func (m *Manager) notCurrent(live bool) error {
	if live {
		return ErrNotCurrent
	}
	return ErrVacant
}

// setLeader makes r the answer to the leader of room e, who holds token.
func (m *Manager) setLeader(r *Result, room string, e *roomEntry, token string) {
	r.RoomID, r.Status, r.Token = room, StatusLeader, token
	r.RenewAfter = time.Duration(e.TTLSec) * time.Second / 2
	e.setLeader(&r.Leader)
}

// admit checks an activation against the shard's byte budget and the active-room limit.
func (m *Manager) admit(room string, e, old *roomEntry, doc *shardDoc, now time.Time, caps *capacity) error {
	if m.maxShardBytes > 0 && doc.sizeWith(room, e, old) > m.maxShardBytes {
		return &CapacityError{cause: ErrShardFull, RetryAfter: m.earliest(doc, now, nil)}
	}
	if caps == nil { // no limit
		return nil
	}
	// collect has left only live rooms in doc, and room is not among them.
	if active := caps.active + doc.Rooms.len(); active >= m.maxActive {
		return &CapacityError{cause: ErrCapacity, Active: active, Max: m.maxActive, RetryAfter: m.earliest(doc, now, caps)}
	}
	return nil
}

// earliest is how long until the first active room (of doc and, if given, the other shards)
// can expire, at least a second: the Retry-After of a capacity refusal.
func (m *Manager) earliest(doc *shardDoc, now time.Time, caps *capacity) time.Duration {
	var first time.Time
	if caps != nil {
		first = caps.firstEnd
	}
	for _, r := range doc.Rooms.slots {
		if end := r.entry.expiresAt().Add(m.skew); first.IsZero() || end.Before(first) {
			first = end
		}
	}
	return max(first.Sub(now), time.Second)
}

// capacity is the active rooms of the other shards, counted under the decision lock.
type capacity struct {
	active   int
	firstEnd time.Time
}

// pause waits a short, jittered, growing time before a retry, so that writers that collided do
// not collide again in lockstep (as lease.Election does).
func pause(ctx context.Context, attempt int) error {
	t := time.NewTimer(time.Duration(rand.Int64N(int64(min(attempt, 8)) * int64(2*time.Millisecond))))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
