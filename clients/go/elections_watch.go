package swarmlease

import (
	"context"
	"iter"
	"log/slog"
	"strconv"
	"time"
)

// WatchRoom returns the states of a room from GET /elections/{id}/watch: first the current
// state, then every change of leader, term, metadata or expiry (a renewal moves the expiry). A
// frame equal to the one yielded before — the snapshot a reconnect starts with, or a duplicate
// the server sends — yields nothing.
//
// The server ends streams routinely (after their maximum lifetime, when a client lags, on a
// store failure), so WatchRoom reconnects whenever a stream ends or fails, after a jittered
// exponential back-off (WithBackoff) or the server's Retry-After when it is longer. It waits up
// to the initial timeout (WithInitialTimeout) for the first state, then yields one error
// wrapping ErrInitialTimeout and stops. An answer that retrying cannot change — an invalid room
// id (ErrInvalidInput), disabled elections (ErrForbidden), a server without the elections API —
// is yielded as an *APIError at once, and stops the watch too. An error is always the last
// value; the iteration ends without one when ctx ends or the consumer stops ranging.
func (c *Client) WatchRoom(ctx context.Context, roomID string) iter.Seq2[RoomState, error] {
	return func(yield func(RoomState, error) bool) {
		if err := checkRoomID(roomID); err != nil {
			yield(RoomState{}, err)
			return
		}
		w := c.newRoomWatch(roomID, c.cfg.initialTimeout, func(s RoomState) bool { return yield(s, nil) })
		if err := w.run(ctx); err != nil {
			yield(RoomState{}, err)
		}
	}
}

// newRoomWatch returns one run of WatchRoom or of Hold's follower on the room's watch stream,
// emitting each new state. initial is its initial timeout (0: none).
func (c *Client) newRoomWatch(roomID string, initial time.Duration, emit func(RoomState) bool) *streamWatch[RoomState] {
	return &streamWatch[RoomState]{
		url:            c.base.JoinPath("elections", roomID, "watch").String(),
		cfg:            &c.cfg,
		sleep:          c.sleep,
		initialTimeout: initial,
		server:         "a server of the elections API",
		stateEvents:    []string{"state", "message"},
		decode:         roomFrameDecoder(roomID),
		same:           sameRoomState,
		emit:           emit,
		// An invalid room id, disabled elections or a server without the API stay so however
		// often they are asked.
		endOnPermanentAnswer: true,
		// The server's Retry-After says when its rate or watch-stream limits let this client in
		// again, as for Hold's campaigns: reconnecting earlier only earns another 429.
		capRetryAfter: false,
		// The server ends streams routinely (their lifetime, a lagging client): no warning.
		reconnectLevel: slog.LevelDebug,
		reconnectMsg:   "swarmlease: room watch ended; reconnecting",
	}
}

// roomFrameDecoder returns the decoder of the frames of roomID's watch stream: a WatchFrame of
// schema version 1, of that room, whose leader is an object when the status is leader and null
// when it is vacant.
func roomFrameDecoder(roomID string) func(data []byte) (RoomState, error) {
	return func(data []byte) (RoomState, error) {
		o, err := parseObject(data)
		if err != nil {
			return RoomState{}, err
		}
		o.check("schema_version", o.uint("schema_version") == 1, "1")
		id := o.str("election_id")
		// A proxy that mixed up its routes would show another room's leader as this one's.
		o.check("election_id", id == roomID, strconv.Quote(roomID))
		status := RoomStatus(o.str("status"))
		o.check("status", status == StatusLeader || status == StatusVacant, `"leader" or "vacant"`)
		var leader *Leader
		if l := o.objectOrNull("leader"); l != nil {
			leader = &Leader{
				CandidateID: l.str("candidate_id"),
				Term:        l.uint("term"),
				ExpiresAt:   l.time("expires_at"),
				Metadata:    l.optionalStr("metadata"),
			}
		}
		if o.ok() && (status == StatusLeader) != (leader != nil) {
			if leader == nil {
				o.failed("status %q without a leader", status)
			} else {
				o.failed("status %q with a leader", status)
			}
		}
		s := RoomState{ElectionID: id, Status: status, Leader: leader, RetryAfter: millis(o.int("retry_after_ms")),
			ObservedAt: o.time("observed_at")}
		if !o.ok() {
			return RoomState{}, *o.err
		}
		return s, nil
	}
}

// sameRoomState reports whether b shows what a showed: the same status and leader (candidate,
// metadata, term, expiry). The time left and the observation time are not compared.
func sameRoomState(a, b RoomState) bool {
	if a.Status != b.Status || (a.Leader == nil) != (b.Leader == nil) {
		return false
	}
	if a.Leader == nil {
		return true
	}
	x, y := a.Leader, b.Leader
	return x.CandidateID == y.CandidateID && x.Metadata == y.Metadata && x.Term == y.Term && x.ExpiresAt.Equal(y.ExpiresAt)
}
