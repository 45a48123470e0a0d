// Package timeline keeps the election's recent transitions as `demo serve` follows them — each
// new term and each vacancy — so that a page loaded after a failover shows what happened, not
// only the leader of the moment. It lives in memory: after a restart of `demo serve` it starts
// again from the election's current state.
package timeline

import (
	"context"
	"log/slog"
	"sync"
	"time"

	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"
)

// Max is how many transitions a Timeline keeps.
const Max = 50

// Kind is what a transition started.
type Kind string

const (
	// Term is a new holder, or a new term of the same one: a new fence.
	Term Kind = "term"
	// Vacancy is the election without a live holder: the last one's lease expired or was
	// released, and nobody holds it yet.
	Vacancy Kind = "vacancy"
)

// Transition is one change of the election.
type Transition struct {
	// Kind is a Term or a Vacancy.
	Kind Kind `json:"kind"`
	// Fence is the term's fence; for a vacancy, the fence of the term that ended.
	Fence uint64 `json:"fence"`
	// HolderID, NodeID and TaskID name the term's holder (empty for a vacancy).
	HolderID string `json:"holder_id,omitempty"`
	NodeID   string `json:"node_id,omitempty"`
	TaskID   string `json:"task_id,omitempty"`
	// At is a term's start (the holder's clock), or when `demo serve` saw the vacancy.
	At time.Time `json:"at"`
}

// Timeline is the bounded list of transitions. Its methods are safe for concurrent use.
type Timeline struct {
	mu    sync.Mutex
	items []Transition // oldest first, at most Max
	now   func() time.Time
}

// New returns an empty Timeline.
func New() *Timeline { return &Timeline{now: time.Now} }

// Observe records s if it starts a transition: a live holder with another fence or holder than
// the last term, or no live holder after one.
func (t *Timeline) Observe(s swarmlease.State) {
	if !s.Exists {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var last *Transition
	if n := len(t.items); n > 0 {
		last = &t.items[n-1]
	}
	var next Transition
	if s.HasHolder() {
		if last != nil && last.Kind == Term && last.Fence == s.Fence && last.HolderID == s.HolderID {
			return
		}
		next = Transition{Kind: Term, Fence: s.Fence, HolderID: s.HolderID, NodeID: s.NodeID, TaskID: s.TaskID}
		if s.AcquiredAt != nil {
			next.At = s.AcquiredAt.UTC()
		} else {
			next.At = t.now().UTC()
		}
	} else {
		if last != nil && last.Kind == Vacancy {
			return
		}
		next = Transition{Kind: Vacancy, Fence: s.Fence, At: t.now().UTC()}
	}
	t.items = append(t.items, next)
	if len(t.items) > Max {
		t.items = append(t.items[:0:0], t.items[len(t.items)-Max:]...)
	}
}

// Recent returns the transitions, newest first.
func (t *Timeline) Recent() []Transition {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Transition, len(t.items))
	for i, tr := range t.items {
		out[len(t.items)-1-i] = tr
	}
	return out
}

// idleTimeout drops a stream that delivered nothing for this long: above the stack's 2 s
// keep-alive, so a stalled controller (a paused leader's replica) is left soon.
const idleTimeout = 6 * time.Second

// Follow observes the election through the controller's event stream at controller until ctx
// ends, reconnecting whenever the stream fails.
func (t *Timeline) Follow(ctx context.Context, controller string, log *slog.Logger) {
	obs := swarmlease.Connect(controller,
		swarmlease.WithInitialTimeout(365*24*time.Hour), // no first state yet is no reason to stop
		swarmlease.WithIdleTimeout(idleTimeout),
		swarmlease.WithBackoff(250*time.Millisecond, 3*time.Second),
		swarmlease.WithLogger(log.With("follower", "timeline")))
	for s, err := range obs.Watch(ctx) {
		if err != nil {
			log.Error("timeline: cannot follow the election", "err", err)
			return
		}
		t.Observe(s)
	}
}
