package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"reflect"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/go-chi/chi/v5"

	"github.com/regbo/lfp-swarm-lease/lease"
	"github.com/regbo/lfp-swarm-lease/lease/rooms"
	"github.com/regbo/lfp-swarm-lease/server/clientip"
	"github.com/regbo/lfp-swarm-lease/server/connlimit"
	"github.com/regbo/lfp-swarm-lease/server/sse"
	"github.com/regbo/lfp-swarm-lease/server/wire"
)

// WatchFrame is the data of every event of GET /elections/{id}/watch.
type WatchFrame struct {
	SchemaVersion int             `json:"schema_version" enum:"1" doc:"The frame's schema version: 1."`
	ElectionID    string          `json:"election_id"`
	Status        string          `json:"status" enum:"leader,vacant"`
	Leader        *ElectionLeader `json:"leader" doc:"The live leader, or null when vacant. Never the token."`
	RetryAfterMS  int64           `json:"retry_after_ms" doc:"Milliseconds until the leader's lease can be taken over; 0 when vacant."`
	ObservedAt    string          `json:"observed_at" format:"date-time" doc:"When this server read the state (RFC 3339, UTC)."`
}

// roomWatches shares store reads between the watch streams of the elections API. One loop per
// shard with watched rooms reads that shard once per change notification, poll tick or lease
// expiry — however many rooms and streams it has — and passes each watched room's state to its
// streams, as one frame for all of them, when it changed. Per-client and global limits bound
// the streams.
type roomWatches struct {
	rooms        *rooms.Manager
	poll         time.Duration
	maxTotal     int
	maxPerClient int
	// frame encodes a room's state read at a time.
	frame   func(rooms.RoomState, time.Time) []byte
	metrics *Metrics
	log     *slog.Logger

	mu        sync.Mutex
	total     int
	perClient map[string]int
	shards    map[int]*shardWatch
}

// shardWatch is the loop of one shard. Its rooms map is guarded by roomWatches.mu.
type shardWatch struct {
	rooms  map[string]map[*roomStream]struct{}
	wake   chan struct{} // capacity 1: a room was added, read now
	cancel context.CancelFunc
}

// roomStream is one watch stream: its queue of frames, which ends when it lags behind or the
// store fails. Every frame it gets comes from its shard's loop, in the order the loop read the
// states — the first one too, so that a stream never sees an older state after a newer one.
type roomStream struct {
	*sse.Stream
	room, client string
	// fresh: the stream has had no state yet; the loop sends it the next one it reads even if
	// unchanged. Guarded by roomWatches.mu.
	fresh bool
}

// streamBuffer is how many states a stream may lag behind before it is closed.
const streamBuffer = 8

var (
	errWatchLimit = errors.New("watch limit reached")
	errLagged     = errors.New("the stream fell behind")
)

func newRoomWatches(m *rooms.Manager, poll time.Duration, maxTotal, maxPerClient int, metrics *Metrics, log *slog.Logger) *roomWatches {
	return &roomWatches{rooms: m, poll: poll, maxTotal: maxTotal, maxPerClient: maxPerClient, frame: watchFrame, metrics: metrics, log: log,
		perClient: map[string]int{}, shards: map[int]*shardWatch{}}
}

// subscribe registers a stream of room for client, within the limits.
func (w *roomWatches) subscribe(ctx context.Context, client, room string) (*roomStream, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.total >= w.maxTotal {
		return nil, fmt.Errorf("%w: %d streams on this server", errWatchLimit, w.maxTotal)
	}
	if w.perClient[client] >= w.maxPerClient {
		return nil, fmt.Errorf("%w: %d streams per client", errWatchLimit, w.maxPerClient)
	}
	s := &roomStream{Stream: sse.NewStream(streamBuffer), room: room, client: client, fresh: true}
	index := w.rooms.ShardOf(room)
	sw := w.shards[index]
	if sw == nil {
		loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		sw = &shardWatch{rooms: map[string]map[*roomStream]struct{}{}, wake: make(chan struct{}, 1), cancel: cancel}
		w.shards[index] = sw
		go w.loop(loopCtx, sw, room)
	}
	if sw.rooms[room] == nil {
		sw.rooms[room] = map[*roomStream]struct{}{}
	}
	sw.rooms[room][s] = struct{}{}
	select { // read now: the new stream waits for its first state
	case sw.wake <- struct{}{}:
	default:
	}
	w.total++
	w.perClient[client]++
	w.metrics.electionWatches.Inc()
	return s, nil
}

// unsubscribe removes a stream; the shard's loop stops with its last stream.
func (w *roomWatches) unsubscribe(s *roomStream) {
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
	w.metrics.electionWatches.Dec()
}

// loop reads the shard's watched rooms whenever they may have changed: on a store
// notification (when the store has them), at every poll tick, and when a watched lease can
// expire (expiry changes the state without any write).
func (w *roomWatches) loop(ctx context.Context, sw *shardWatch, anyRoom string) {
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
		ids := make([]string, 0, len(sw.rooms))
		for id := range sw.rooms {
			ids = append(ids, id)
		}
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

// watchFrame is the SSE event of a room's state st, read at at.
func watchFrame(st rooms.RoomState, at time.Time) []byte {
	body := statusBody(st)
	data, err := json.Marshal(WatchFrame{SchemaVersion: 1, ElectionID: st.RoomID, Status: body.Status, Leader: body.Leader,
		RetryAfterMS: body.RetryAfterMS, ObservedAt: wire.Time(at)})
	if err != nil { // plain fields only: cannot happen
		panic("server: encode watch frame: " + err.Error())
	}
	return sse.Event("state", watchRetry, data)
}

// watchRetry is the reconnection delay every watch frame asks for.
const watchRetry = time.Second

// serveWatch is GET /elections/{id}/watch: a snapshot frame, then a frame per change, a
// keep-alive comment every keep-alive interval, until the client leaves, the stream lags, the
// store fails, the server shuts down or the stream's lifetime ends.
func (e *elections) serveWatch(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	if !e.gate(w, r, wire.RequestID(r.Context()), opWatch, id) || sse.Head(w, r) {
		return
	}
	ctx := r.Context()
	sub, err := e.watches.subscribe(ctx, clientip.Key(r, e.opts.TrustedProxies), id)
	if err != nil {
		body := wire.NewError(ctx, http.StatusTooManyRequests, "rate_limited", "too many watch streams", err.Error())
		body.SetRetry(time.Second)
		e.metrics.electionRequest(string(opWatch), body.Code)
		wire.WriteErrorBody(w, body)
		return
	}
	defer e.watches.unsubscribe(sub)
	// The first state comes from the shard's loop like every later one (see roomStream).
	var first []byte
	wait := time.NewTimer(sse.FirstFrameWait)
	defer wait.Stop()
	select {
	case first = <-sub.Frames():
	case <-sub.Done():
		wire.WriteErrorBody(w, e.fail(wire.RequestID(ctx), opWatch, sub.Err()))
		return
	case <-wait.C:
		wire.WriteErrorBody(w, e.fail(wire.RequestID(ctx), opWatch, fmt.Errorf("no read of the room within %v: %w", sse.FirstFrameWait, lease.ErrUnavailable)))
		return
	case <-ctx.Done():
		return
	}
	e.metrics.electionRequest(string(opWatch), "ok")
	connlimit.MarkStream(ctx) // at the connection bound, a stream may be shed for a new connection

	stream := sse.Open(w)
	if stream.Write(first) != nil {
		return
	}
	// Streams opened together would all end together and reconnect in one burst: each lives
	// its lifetime minus up to a tenth, at random.
	ctx, cancel := context.WithTimeout(ctx, e.opts.WatchLifetime-rand.N(e.opts.WatchLifetime/10+1))
	defer cancel()
	stream.Pump(ctx, sub.Stream, e.keepAlive, e.closing)
}

// documentWatch adds GET /elections/{id}/watch to the contract; like /v1/events it is a plain
// handler whose contract comes from the WatchFrame type.
func (s *Server) documentWatch() {
	oapi := s.api.OpenAPI()
	frameSchema := oapi.Components.Schemas.Schema(reflect.TypeFor[WatchFrame](), true, "WatchFrame")
	errorSchema := oapi.Components.Schemas.Schema(reflect.TypeFor[wire.ErrorBody](), true, "ErrorBody")
	errResp := func(desc string) *huma.Response {
		return &huma.Response{Description: desc, Content: map[string]*huma.MediaType{"application/json": {Schema: errorSchema}}}
	}
	oapi.AddOperation(&huma.Operation{
		OperationID: "watchElection", Method: http.MethodGet, Path: "/elections/{id}/watch", Tags: []string{"elections"},
		Summary: "Server-sent events of a room",
		Description: "`text/event-stream`. Every event is `event: state` with `retry: 1000` and a WatchFrame as data. The first " +
			"frame is the current snapshot; later frames follow changes (duplicates are possible). No event ids; `Last-Event-ID` " +
			"is ignored. A comment line is sent every keep-alive interval (15 s). The stream closes when the client lags, on a " +
			"store failure, and after the server's maximum stream lifetime (900 s by default); clients reconnect.",
		Parameters: []*huma.Param{{Name: "id", In: "path", Required: true, Description: "Room id: 8–64 characters of [A-Za-z0-9_-].",
			Schema: &huma.Schema{Type: huma.TypeString}}},
		Responses: map[string]*huma.Response{
			"200": {Description: "The event stream; each event's data is a WatchFrame.", Content: map[string]*huma.MediaType{
				"text/event-stream": {Schema: frameSchema},
			}},
			"400": errResp("Invalid room id (invalid_input)."),
			"403": errResp("Public elections are disabled (forbidden)."),
			"429": errResp("Too many watch streams from this client or on this server (rate_limited, with Retry-After)."),
			"503": errResp("The store is unavailable."),
		},
	})
}
