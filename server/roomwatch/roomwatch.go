package roomwatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server/sse"
)

// Options configure the watches.
type Options struct {
	// Rooms runs the rooms watched (required).
	Rooms *rooms.Manager
	// Poll is how often a shard with watched rooms is read without a change notification.
	Poll time.Duration
	// MaxStreams and MaxStreamsPerClient bound the streams, in total and per client.
	MaxStreams          int
	MaxStreamsPerClient int
	// Frame encodes a room's state, read at a time, as a stream's frame.
	Frame func(rooms.RoomState, time.Time) []byte
	// Metrics counts the open streams.
	Metrics Metrics
	// Logger logs failed reads.
	Logger *slog.Logger
}

// Metrics is what the watches record.
type Metrics interface {
	// WatchOpened and WatchClosed count the open streams.
	WatchOpened()
	WatchClosed()
}

// Watches share store reads between the watch streams of the elections API. One loop per shard
// with watched rooms reads that shard once per change notification, poll tick or lease expiry —
// however many rooms and streams it has — and passes each watched room's state to its streams,
// as one frame for all of them, when it changed. Per-client and global limits bound the streams.
type Watches struct {
	rooms        *rooms.Manager
	poll         time.Duration
	maxTotal     int
	maxPerClient int
	frame        func(rooms.RoomState, time.Time) []byte
	metrics      Metrics
	log          *slog.Logger

	mu        sync.Mutex
	total     int
	perClient map[string]int
	shards    map[int]*shardWatch
}

// shardWatch is the loop of one shard. Its rooms map is guarded by Watches.mu.
type shardWatch struct {
	rooms  map[string]map[*Stream]struct{}
	wake   chan struct{} // capacity 1: a room was added, read now
	cancel context.CancelFunc
}

// Stream is one watch stream: its queue of frames, which ends when it lags behind or the store
// fails (Err says which). Every frame it gets comes from its shard's loop, in the order the loop
// read the states — the first one too, so that a stream never sees an older state after a newer
// one.
type Stream struct {
	*sse.Stream
	room, client string
	// fresh: the stream has had no state yet; the loop sends it the next one it reads even if
	// unchanged. Guarded by Watches.mu.
	fresh bool
}

// streamBuffer is how many states a stream may lag behind before it is closed.
const streamBuffer = 8

// Errors of the streams. Their words reach clients (in a 429's details), so they name no
// package.
var (
	// ErrLimit: Subscribe refused a stream beyond the limits.
	ErrLimit  = errors.New("watch limit reached")
	errLagged = errors.New("the stream fell behind")
)

// New returns the watches opts describe.
func New(opts Options) *Watches {
	return &Watches{rooms: opts.Rooms, poll: opts.Poll, maxTotal: opts.MaxStreams, maxPerClient: opts.MaxStreamsPerClient,
		frame: opts.Frame, metrics: opts.Metrics, log: opts.Logger, perClient: map[string]int{}, shards: map[int]*shardWatch{}}
}

// Subscribe registers a stream of room for client, within the limits (ErrLimit). Its first
// frame comes with the shard's next read.
func (w *Watches) Subscribe(ctx context.Context, client, room string) (*Stream, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.total >= w.maxTotal {
		return nil, fmt.Errorf("%w: %d streams on this server", ErrLimit, w.maxTotal)
	}
	if w.perClient[client] >= w.maxPerClient {
		return nil, fmt.Errorf("%w: %d streams per client", ErrLimit, w.maxPerClient)
	}
	s := &Stream{Stream: sse.NewStream(streamBuffer), room: room, client: client, fresh: true}
	index := w.rooms.ShardOf(room)
	sw := w.shards[index]
	if sw == nil {
		loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		sw = &shardWatch{rooms: map[string]map[*Stream]struct{}{}, wake: make(chan struct{}, 1), cancel: cancel}
		w.shards[index] = sw
		go w.loop(loopCtx, sw, room)
	}
	if sw.rooms[room] == nil {
		sw.rooms[room] = map[*Stream]struct{}{}
	}
	sw.rooms[room][s] = struct{}{}
	select { // read now: the new stream waits for its first state
	case sw.wake <- struct{}{}:
	default:
	}
	w.total++
	w.perClient[client]++
	w.metrics.WatchOpened()
	return s, nil
}

// Unsubscribe removes a stream; the shard's loop stops with its last stream.
func (w *Watches) Unsubscribe(s *Stream) {
	w.mu.Lock()
	defer w.mu.Unlock()
	index := w.rooms.ShardOf(s.room)
	sw := w.shards[index]
	if sw == nil || sw.rooms[s.room] == nil {
		return
	}
	if _, ok := sw.rooms[s.room][s]; !ok {
		return
	}
	delete(sw.rooms[s.room], s)
	if len(sw.rooms[s.room]) == 0 {
		delete(sw.rooms, s.room)
	}
	if len(sw.rooms) == 0 {
		sw.cancel()
		delete(w.shards, index)
	}
	w.total--
	if w.perClient[s.client]--; w.perClient[s.client] <= 0 {
		delete(w.perClient, s.client)
	}
	w.metrics.WatchClosed()
}

// loop reads the shard's watched rooms whenever they may have changed: on a store
// notification (when the store has them), at every poll tick, and when a watched lease can
// expire (expiry changes the state without any write).
func (w *Watches) loop(ctx context.Context, sw *shardWatch, anyRoom string) {
	notify, err := w.rooms.Notify(ctx, anyRoom)
	if err != nil {
		notify = nil // poll only
	}
	last := map[string]rooms.RoomState{}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-notify:
			if !ok {
				notify = nil
			}
		case <-sw.wake:
		case <-timer.C:
		}
		w.mu.Lock()
		ids := slices.Collect(maps.Keys(sw.rooms))
		w.mu.Unlock()
		if len(ids) == 0 {
			return
		}
		next := w.poll
		readCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		states, err := w.rooms.Statuses(readCtx, ids)
		cancel()
		readAt := time.Now()
		if ctx.Err() != nil {
			return
		}
		w.mu.Lock()
		if err != nil {
			// The contract closes streams on failure; clients reconnect (retry: 1000).
			w.log.Warn("elections watch: store read failed", "err", err)
			for _, streams := range sw.rooms {
				for s := range streams {
					s.End(err)
				}
			}
		}
		for id, st := range states {
			if st.Status == rooms.StatusLeader {
				next = min(next, st.RetryAfter+time.Millisecond)
			}
			prev, seen := last[id]
			changed := !seen || !sameRoomState(prev, st)
			last[id] = st
			var frame []byte // one for all the room's streams
			for s := range sw.rooms[id] {
				if !changed && !s.fresh {
					continue
				}
				s.fresh = false
				if frame == nil {
					frame = w.frame(st, readAt)
				}
				if !s.Offer(frame) {
					s.End(errLagged)
				}
			}
		}
		for id := range last {
			if _, watched := sw.rooms[id]; !watched {
				delete(last, id)
			}
		}
		w.mu.Unlock()
		timer.Reset(next)
	}
}

// sameRoomState reports whether two reads show the same leadership (the time left differs
// between reads by itself and is not a change).
func sameRoomState(a, b rooms.RoomState) bool {
	if a.Status != b.Status || (a.Leader == nil) != (b.Leader == nil) {
		return false
	}
	if a.Leader == nil {
		return true
	}
	x, y := a.Leader, b.Leader
	return x.CandidateID == y.CandidateID && x.Metadata == y.Metadata && x.Term == y.Term && x.ExpiresAt.Equal(y.ExpiresAt)
}
