package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// A handover is a holder stepping down that writes its successor's term in the same write that
// ends its own: one store write instead of two (a release, then the successor's acquisition
// once it has seen the release). On a store where each write is a consensus round (etcd), that
// halves the time between the old leader's work stopping and the new leader's starting.
//
// The successor did not make the write, so it cannot count its deadline from the write's start
// as a holder does. It counts it from the start of its own last read of the record that the
// handover replaced: that read saw the old record, so the handover was applied after the read
// began, and every other contender counts the new term's expiry from when it first saw the new
// record — later still. docs/safety.md §3b has the argument in full.

// Handover marks a term written by its predecessor's holder for a registered successor. The zero
// value marks none: a term its holder acquired itself.
type Handover struct {
	// From is the version of the record the handover replaced: the predecessor's last write.
	From Version
	// To is the token of the successor's registration (Successor.Token).
	To string
}

// Successor is a contender registered as waiting for an election's lease.
type Successor struct {
	// Identity is the successor's; the term handed to it is written under it.
	Identity Identity
	// TTL is the successor's lease duration; the term handed to it carries it.
	TTL time.Duration
	// Token identifies this registration of this process, so that a handover is accepted by the
	// process it was written for even when two processes share an identity.
	Token string
	// Incarnation is the successor's (Incarnation.String): the term handed to it records it,
	// and a witness may prove it gone.
	Incarnation string
}

// SuccessorRegistry is implemented by stores where contenders that follow an election can
// register as its successors, so that a holder stepping down hands the lease over in one write.
type SuccessorRegistry interface {
	// RegisterSuccessor registers s as waiting for namespace's lease until ctx ends (or the
	// registration lapses: a process that stops renewing it, stopped or killed, is dropped
	// within about its TTL). It returns when ctx ends — the registration removed — when the
	// registration lapses, or when it fails.
	RegisterSuccessor(ctx context.Context, namespace string, s Successor) error
	// Successors lists namespace's registered successors, the longest registered first, at most
	// a store-defined bound of them.
	Successors(ctx context.Context, namespace string) ([]Successor, error)
	// HandOver writes rec — a term whose Handover names its successor's token — if namespace's
	// record is still at expected and that successor is still registered; otherwise
	// ErrConflict, or ErrSuccessorGone when the record was unchanged. Its errors are Update's.
	HandOver(ctx context.Context, rec Record, expected Version, to Successor) (Version, error)
}

// ErrSuccessorGone: a handover was refused because its successor's registration is gone (the
// record itself was unchanged). It wraps ErrConflict.
var ErrSuccessorGone = fmt.Errorf("%w: the successor's registration is gone", ErrConflict)

// NewSuccessorToken returns a fresh random registration token.
func NewSuccessorToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go ≥ 1.24)
	return hex.EncodeToString(b)
}

// read is one of this contender's reads of the record: the version it returned and when
// (Clock.Monotonic) the latest read that returned it began.
type read struct {
	ver   Version
	start time.Duration
}

// noteRead records that a read begun at start returned ver. The last two versions read are
// kept: a handover is recognised on the read that returns it, and it replaced the one before.
func (e *Election) noteRead(ver Version, start time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.newest = max(e.newest, ver)
	switch ver {
	case e.reads[0].ver:
		e.reads[0].start = max(e.reads[0].start, start)
	default:
		e.reads[1], e.reads[0] = e.reads[0], read{ver: ver, start: start}
	}
}

// readStart returns when this contender's latest read that returned ver began.
func (e *Election) readStart(ver Version) (time.Duration, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range e.reads {
		if r.ver == ver && ver != 0 {
			return r.start, true
		}
	}
	return 0, false
}

// SetSuccessorToken sets the token of this contender's successor registration: a handover
// record naming it is this contender's term. reserve is how long before a term's deadline its
// work must be told to stop (a Contender's StopBefore): a handed term is taken without a write
// only when more than a third of its TTL is left beyond that.
func (e *Election) SetSuccessorToken(token string, reserve time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.successorToken, e.handoverReserve = token, reserve
}

// handedOver returns the grant of cur, read at ver, when cur is a term handed over to this
// contender — its identity, its registration token — and replaced a record this contender read:
// its deadline is then counted from that read's start. ok is false otherwise, or when the
// deadline so counted leaves less than a third of the TTL beyond the reserve
// (SetSuccessorToken): the contender then acquires as usual, with a write of its own that dates
// its deadline afresh.
func (e *Election) handedOver(cur Record, ver Version) (g Grant, ok bool) {
	e.mu.Lock()
	token, reserve := e.successorToken, e.handoverReserve
	e.mu.Unlock()
	if token == "" || cur.Handover.To != token || !e.id.holds(cur) || cur.TTL <= 0 {
		return Grant{}, false
	}
	start, ok := e.readStart(cur.Handover.From)
	if !ok {
		return Grant{}, false
	}
	mono, now := e.clock.Monotonic(), e.clock.Now()
	// The record's wall-clock expiry bounds the term too: other contenders take over once their
	// wall clocks pass it by the maximum skew, as for any term.
	end := min(start+cur.TTL, mono+cur.ExpiresAt.Sub(now))
	g = Grant{Record: cur, Version: ver, Deadline: end - SafetyMargin(cur.TTL)}
	if g.Deadline-mono-reserve < cur.TTL/3 {
		return Grant{}, false
	}
	return g, true
}

// handoverWatched decides, without reading, on a handover that the store's change feed
// delivered (WatchedRecords). A term handed over to this contender is taken (Acquired): the
// record is committed, and handedOver dates its deadline from this contender's own read of the
// record it replaced, whether or not it is still current. A term handed to another registration
// is followed: a request would only learn what the delivery says, and — sent by every follower
// at the moment the successor starts its work — it would compete with that start for the store
// and the machine. decided is false otherwise: the caller tries to acquire as usual. Each
// delivery is decided on once, and only one newer than every record this contender read or
// wrote, so that a delivery that lags behind its own writes is never taken for a new term.
func (e *Election) handoverWatched() (res TryAcquireResult, decided bool) {
	w, ok := e.store.(WatchedRecords)
	if !ok {
		return TryAcquireResult{}, false
	}
	rec, ver, ok := w.Watched(e.namespace)
	if !ok {
		return TryAcquireResult{}, false
	}
	e.mu.Lock()
	newer := ver > e.newest
	e.mu.Unlock()
	if !newer {
		return TryAcquireResult{}, false
	}
	if g, ok := e.handedOver(rec, ver); ok {
		e.observe(rec, ver)
		e.remember(rec, ver)
		return TryAcquireResult{Acquired: true, Grant: g, Current: e.snapshot(rec, ver)}, true
	}
	if _, toAnother := e.handedTo(rec); !toAnother || e.expired(rec, ver) {
		return TryAcquireResult{}, false
	}
	e.observe(rec, ver)
	e.mu.Lock()
	e.newest = max(e.newest, ver)
	e.mu.Unlock()
	return TryAcquireResult{Current: e.snapshot(rec, ver)}, true
}

// handedTo says to whom cur, a term handed over, was handed: to this contender's registration
// (toSelf), or to another one (toAnother) — another process, even under this identity. Both are
// false for a term that was not handed over.
func (e *Election) handedTo(cur Record) (toSelf, toAnother bool) {
	if cur.Handover.To == "" {
		return false, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return cur.Handover.To == e.successorToken, cur.Handover.To != e.successorToken
}

// errHandedOver stops a try-acquire's decision: the record is a term handed over to this
// contender, granted without a write.
var errHandedOver = errors.New("lease: handed over")

// HandOver ends the term with the given fence by writing to's term in its place (see Handover),
// on a store that keeps successor registrations. It fails like Release; with ErrConflict when
// the record changed since this contender's last write, or to is no longer registered. It is
// one conditional write on that last write, never retried: the caller releases when it fails.
func (e *Election) HandOver(ctx context.Context, fence uint64, to Successor) error {
	reg, ok := e.store.(SuccessorRegistry)
	if !ok {
		return fmt.Errorf("hand over %q: %s keeps no successor registrations", e.namespace, e.store.Describe())
	}
	if to.Token == "" || to.TTL <= 0 || to.Identity.HolderID == "" {
		return fmt.Errorf("hand over %q: a successor needs a token, a TTL and a holder ID", e.namespace)
	}
	cur, ver, ok := e.lastWrite()
	if !ok {
		return fmt.Errorf("hand over %q: %w: no write of this contender to hand over from", e.namespace, ErrConflict)
	}
	if err := e.checkHolder(cur, fence); err != nil {
		return fmt.Errorf("hand over %q: %w", e.namespace, err)
	}
	now := normalizeTime(e.clock.Now())
	next := Record{
		Namespace: cur.Namespace, HolderID: to.Identity.HolderID, NodeID: to.Identity.NodeID, TaskID: to.Identity.TaskID,
		Fence: e.nextFence(cur.Fence, now), AcquiredAt: now, RenewedAt: now, ExpiresAt: now.Add(to.TTL), TTL: to.TTL,
		Handover: Handover{From: ver, To: to.Token}, Incarnation: to.Incarnation,
	}
	next = normalizeRecord(next)
	newVer, err := reg.HandOver(ctx, next, ver, to)
	if err != nil {
		if !errors.Is(err, ErrConflict) && !errors.Is(err, ErrNotFound) {
			e.recorder.StoreError(ErrorKind(err))
		}
		return fmt.Errorf("hand over %q: %w", e.namespace, err)
	}
	e.observe(next, newVer)
	e.remember(Record{}, 0) // the record is the successor's now
	e.mu.Lock()
	e.newest = max(e.newest, newVer)
	e.mu.Unlock()
	return nil
}
