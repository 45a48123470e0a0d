package lease

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/internal/ctxsleep"
)

// succession is a Contender's part in handovers (handover.go) on a store that keeps successor
// registrations: it keeps the contender registered while it contends, and lists the successors
// when a term ends so that the leader can hand the lease over instead of releasing it.
type succession struct {
	reg  SuccessorRegistry
	self Successor
	log  *slog.Logger
}

// newSuccession returns the succession of c's election, or nil when its store keeps no
// registrations. It gives the election its registration token.
func newSuccession(c *Contender) *succession {
	e := c.Election
	reg, ok := e.Store().(SuccessorRegistry)
	if !ok {
		return nil
	}
	s := &succession{reg: reg, self: Successor{Identity: e.id, TTL: e.ttl, Token: NewSuccessorToken()},
		log: c.Logger.With("namespace", e.Namespace())}
	e.SetSuccessorToken(s.self.Token)
	return s
}

// keepRegistered keeps the contender registered until ctx ends, registering again (every
// retry, at most) when a registration fails or lapses. A contender that is not registered is
// never handed a term: it acquires as usual once the lease is released or expires.
func (s *succession) keepRegistered(ctx context.Context, namespace string, retry time.Duration) {
	var lastErr string
	for ctx.Err() == nil {
		err := s.reg.RegisterSuccessor(ctx, namespace, s.self)
		if ctx.Err() != nil {
			return
		}
		if err != nil && err.Error() != lastErr { // one line per distinct failure
			s.log.Warn("successor registration failed; retrying (a release then hands over in two writes instead of one)", "err", err)
			lastErr = err.Error()
		}
		_ = ctxsleep.Sleep(ctx, retry)
	}
}

// eligible reports whether a term can be handed to to: another registration, with what a term
// needs.
func (s *succession) eligible(to Successor) bool {
	return to.Token != s.self.Token && to.TTL > 0 && to.Token != "" && to.Identity.HolderID != ""
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
func (s *succession) watchCandidates(termCtx context.Context, namespace string) *candidates {
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
			list, err := s.reg.Successors(rctx, namespace)
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

// latest returns the successors last read, or reads them now if that read named none but this
// contender (one may have registered since) or no read has answered.
func (c *candidates) latest(ctx context.Context, s *succession, namespace string) []Successor {
	<-c.done
	c.mu.Lock()
	list, read := c.list, c.read
	c.mu.Unlock()
	if read && slices.ContainsFunc(list, s.eligible) {
		return list
	}
	rctx, cancel := context.WithTimeout(ctx, successorsTimeout)
	defer cancel()
	list, err := s.reg.Successors(rctx, namespace)
	if err != nil {
		return nil
	}
	return list
}

// handOver hands the term with fence to the longest-registered other successor in list. It
// reports whether it did; when it did not (no successor, the record or the successor changed —
// list may be a renewal old — a store error), the caller releases.
func (s *succession) handOver(ctx context.Context, e *Election, fence uint64, list []Successor) (Successor, bool) {
	for _, to := range list {
		if !s.eligible(to) {
			continue
		}
		err := e.HandOver(ctx, fence, to)
		if err != nil && !errors.Is(err, ErrConflict) && !errors.Is(err, ErrNotHolder) {
			s.log.Warn("handover failed; releasing", "successor_holder_id", to.Identity.HolderID, "err", err)
		}
		return to, err == nil
	}
	return Successor{}, false
}
