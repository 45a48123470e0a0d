package lease

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/regbo/lfp-swarm-lease/timing"
)

// succession is a Contender's part in handovers (handover.go) on a store that keeps successor
// registrations: it keeps the contender registered while it contends, and lists the successors
// when a term ends so that the leader can hand the lease over instead of releasing it.
type succession struct {
	reg       SuccessorRegistry
	namespace string
	election  *Election
	self      Successor
	log       *slog.Logger
}

// newSuccession returns the succession of c's election, or nil when its store keeps no
// registrations. It gives the election its registration token.
func newSuccession(c *Contender) *succession {
	e := c.Election
	reg, ok := e.Store().(SuccessorRegistry)
	if !ok {
		return nil
	}
	s := &succession{reg: reg, namespace: e.Namespace(), election: e,
		self: Successor{Identity: e.id, TTL: e.ttl, Token: NewSuccessorToken(), Incarnation: e.incarnation},
		log:  c.Logger.With("namespace", e.Namespace())}
	e.SetSuccessorToken(s.self.Token, c.StopBefore)
	return s
}

// keepRegistered keeps the contender registered until ctx ends, registering again (every
// retry, at most) when a registration fails or lapses. A contender that is not registered is
// never handed a term: it acquires as usual once the lease is released or expires.
func (s *succession) keepRegistered(ctx context.Context, retry time.Duration) {
	var lastErr string
	for ctx.Err() == nil {
		err := s.reg.RegisterSuccessor(ctx, s.namespace, s.self)
		if ctx.Err() != nil {
			return
		}
		if err != nil && err.Error() != lastErr { // one line per distinct failure
			s.log.Warn("successor registration failed; retrying (a release then hands over in two writes instead of one)", "err", err)
			lastErr = err.Error()
		}
		_ = timing.Sleep(ctx, retry)
	}
}

// eligible reports whether a term can be handed to to: a registration of another identity —
// one of this contender's own identity is its predecessor's, left behind until it lapses, or a
// twin's —, with what a term needs.
func (s *succession) eligible(to Successor) bool {
	own := to.Identity.HolderID == s.self.Identity.HolderID && to.Identity.TaskID == s.self.Identity.TaskID
	return !own && to.TTL > 0 && to.Token != "" && to.Identity.HolderID != ""
}

// alive reports whether no witness proves to's incarnation gone: a registration outlives its
// process until it lapses, and a term handed to a process that is gone waits out its TTL.
func (s *succession) alive(ctx context.Context, to Successor) bool {
	if to.Incarnation == "" || len(s.election.witnesses) == 0 {
		return true
	}
	rec := Record{Namespace: s.namespace, HolderID: to.Identity.HolderID, NodeID: to.Identity.NodeID, TaskID: to.Identity.TaskID,
		TTL: to.TTL, Incarnation: to.Incarnation}
	return s.election.gone(ctx, rec) == ""
}

// successorsTimeout bounds a read of the successors.
const successorsTimeout = 2 * time.Second

// candidates keeps the successors of a term's election as read after each of its renewals, off
// the path of its end: the handover then waits for no read.
type candidates struct {
	mu      sync.Mutex
	list    []Successor
	read    bool // list is a read's answer
	done    chan struct{}
	renewed chan struct{}
}

// watchCandidates reads the successors after each renewal (renewed) until termCtx ends — not
// as the term starts, where the read would compete with the start of the term's work.
func (s *succession) watchCandidates(termCtx context.Context) *candidates {
	c := &candidates{done: make(chan struct{}), renewed: make(chan struct{}, 1)}
	go func() {
		defer close(c.done)
		for {
			select {
			case <-termCtx.Done():
				return
			case <-c.renewed:
			}
			rctx, cancel := context.WithTimeout(termCtx, successorsTimeout)
			list, err := s.reg.Successors(rctx, s.namespace)
			cancel()
			if err == nil {
				c.mu.Lock()
				c.list, c.read = list, true
				c.mu.Unlock()
			}
		}
	}()
	return c
}

// renewal asks for the successors to be read again: the term was renewed.
func (c *candidates) renewal() {
	if c != nil {
		Signal(c.renewed)
	}
}

// cached returns the successors last read, if that read named one other than this contender.
func (c *candidates) cached(s *succession) ([]Successor, bool) {
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.list, c.read && slices.ContainsFunc(c.list, s.eligible)
}

// read reads the successors now; nil when the read fails.
func (s *succession) read(ctx context.Context) []Successor {
	rctx, cancel := context.WithTimeout(ctx, successorsTimeout)
	defer cancel()
	list, err := s.reg.Successors(rctx, s.namespace)
	if err != nil {
		return nil
	}
	return list
}

// handOver hands the term with fence to the longest-registered other successor: of those read
// after the term's last renewal, or read now when those name none. A handover refused because
// the renewal's list named a successor that has left since is tried once more on a list read now.
// It reports whether the term was handed over; when it was not (no successor, the record or the
// successor changed, a store error), the caller releases.
func (s *succession) handOver(ctx context.Context, e *Election, fence uint64, c *candidates) (Successor, bool) {
	list, cached := c.cached(s)
	if !cached {
		list = s.read(ctx)
	}
	to, err := s.handOverToFirst(ctx, e, fence, list, "")
	if cached && errors.Is(err, ErrSuccessorGone) {
		to, err = s.handOverToFirst(ctx, e, fence, s.read(ctx), to.Token)
	}
	if err != nil && !errors.Is(err, ErrConflict) && !errors.Is(err, ErrNotHolder) && !errors.Is(err, errNoSuccessor) {
		s.log.Warn("handover failed; releasing", "successor_holder_id", to.Identity.HolderID, "err", err)
	}
	return to, err == nil
}

// errNoSuccessor: no registration a term can be handed to.
var errNoSuccessor = errors.New("lease: no successor registered")

// handOverToFirst hands the term to the first eligible successor in list other than the
// registration skip.
func (s *succession) handOverToFirst(ctx context.Context, e *Election, fence uint64, list []Successor, skip string) (Successor, error) {
	for _, to := range list {
		if s.eligible(to) && to.Token != skip && s.alive(ctx, to) {
			return to, e.HandOver(ctx, fence, to)
		}
	}
	return Successor{}, errNoSuccessor
}
