// Package timeline keeps the election's recent transitions as `demo serve` follows them — each
// new term and each vacancy — so that a page loaded after a failover shows what happened, not
// only the leader of the moment, and the highest fence the election has issued, which the
// ledger checks every write's fence against (Issued). It lives in memory: after a restart of
// `demo serve` it starts again from the election's current state.
package timeline

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	swarmlease "github.com/regbo/lfp-swarm-lease/clients/go"
	"github.com/regbo/lfp-swarm-lease/demo/internal/controllers"
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
	// At is a term's start (the holder's clock); for a vacancy when `demo serve` saw it, or,
	// when it saw only the next term, when the last term's lease expired (the holder's clock).
	At time.Time `json:"at"`
}

// Timeline is the bounded list of transitions. Its methods are safe for concurrent use.
type Timeline struct {
	mu    sync.Mutex
	items []Transition // oldest first, at most Max
	// live is the latest state of the current term while it has a live holder: its expires_at
	// moves with every renewal that Observe sees.
	live *swarmlease.State
	// termFence is the fence of the latest term recorded (0 before the first).
	termFence uint64
	now       func() time.Time
	// issued is the highest fence any state showed: issued for good, fences are never taken
	// back.
	issued uint64
	// readAt is when the latest read of the state that succeeded began.
	readAt time.Time
	// changed is closed, and replaced, when issued or readAt moves: Issued's waiters look again.
	changed chan struct{}
	// hurry asks the follower for a read of the state now (Issued waits for one).
	hurry chan struct{}
}

// New returns an empty Timeline.
func New() *Timeline {
	return &Timeline{now: time.Now, changed: make(chan struct{}), hurry: make(chan struct{}, 1)}
}

// Observe records s if it starts a transition: a live holder with another fence or holder than
// the last term, or no live holder after one. A term that follows another without a vacancy
// seen in between — the stream told of the next holder only, as when a crashed leader's lease
// lapses and a follower takes over at once — gets the vacancy it followed: from the last
// term's expiry, as the latest of its states Observe saw gives it, if that precedes the new
// term's start.
func (t *Timeline) Observe(s swarmlease.State) {
	if !s.Exists {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if s.Fence > t.issued {
		t.issued = s.Fence
		t.notify()
	}
	if s.Fence < t.termFence {
		return // older than a term already recorded: a late answer of a poll
	}
	var last *Transition
	if n := len(t.items); n > 0 {
		last = &t.items[n-1]
	}
	if !s.HasHolder() {
		t.live = nil
		if last == nil || last.Kind != Vacancy {
			t.add(Transition{Kind: Vacancy, Fence: s.Fence, At: t.now().UTC()})
		}
		return
	}
	if t.termFence != 0 && s.Fence == t.termFence {
		// The current term again: a renewal moves its expiry. (After its vacancy, or from
		// another holder, it is a late answer: fences are never reused.)
		if last.Kind == Term && last.HolderID == s.HolderID && t.live != nil && later(s.ExpiresAt, t.live.ExpiresAt) {
			t.live = &s
		}
		return
	}
	next := Transition{Kind: Term, Fence: s.Fence, HolderID: s.HolderID, NodeID: s.NodeID, TaskID: s.TaskID}
	if s.AcquiredAt != nil {
		next.At = s.AcquiredAt.UTC()
	} else {
		next.At = t.now().UTC()
	}
	if prev := t.live; prev != nil && last != nil && last.Kind == Term && prev.ExpiresAt != nil && prev.ExpiresAt.Before(next.At) {
		t.add(Transition{Kind: Vacancy, Fence: prev.Fence, At: prev.ExpiresAt.UTC()})
	}
	t.add(next)
	t.live, t.termFence = &s, s.Fence
}

// later reports whether a is after b (a missing time is never later).
func later(a, b *time.Time) bool { return a != nil && (b == nil || a.After(*b)) }

func (t *Timeline) add(tr Transition) {
	t.items = append(t.items, tr)
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

// statePoll is how often Follow reads GET /v1/state besides the stream: the stream leaves out
// routine renewals, and a term's latest expiry is what dates a vacancy the stream did not show.
const statePoll = time.Second

// maxStateBody bounds a read of GET /v1/state: a state is a few hundred bytes.
const maxStateBody = 64 << 10

// Follow observes the election through the controller at controller, reached through
// transport, until ctx ends: its event stream, reconnecting whenever it fails, and its state
// every statePoll.
func (t *Timeline) Follow(ctx context.Context, controller string, transport http.RoundTripper, log *slog.Logger) {
	client := &http.Client{Transport: transport}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); t.pollState(ctx, controller, client) }()
	defer wg.Wait()
	obs := swarmlease.Connect(controller,
		swarmlease.WithHTTPClient(client),
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

// pollState reads the controller's GET /v1/state every statePoll, and at once (but at most
// every readSpacing) when Issued asks for a read, until ctx ends; failures are left to the
// stream's logging.
func (t *Timeline) pollState(ctx context.Context, controller string, client *http.Client) {
	url := strings.TrimSuffix(controller, "/") + "/v1/state"
	tick := time.NewTicker(statePoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-t.hurry:
		}
		began := t.now()
		if s, ok := readState(ctx, client, url); ok {
			t.Observe(s)
			t.read(began)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(readSpacing):
		}
	}
}

// statePollTimeout bounds one read of the state, body included: the transport's three tries fit
// in it when the controllers' name is one address (a VIP), each a dial and a wait for headers of
// 2 s at most. With several (DNS round robin) a try that dials stalled addresses one after
// another may be cut short; the next poll starts again, trying the stalled ones last.
const statePollTimeout = 3 * (controllers.DialTimeout + controllers.HeaderTimeout)

// readState reads one state from url.
func readState(ctx context.Context, client *http.Client, url string) (swarmlease.State, bool) {
	ctx, cancel := context.WithTimeout(ctx, statePollTimeout)
	defer cancel()
	var s swarmlease.State
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return s, false
	}
	resp, err := client.Do(req)
	if err != nil {
		return s, false
	}
	defer resp.Body.Close()
	err = json.NewDecoder(io.LimitReader(resp.Body, maxStateBody)).Decode(&s)
	return s, err == nil && resp.StatusCode == http.StatusOK
}
