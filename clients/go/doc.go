// Package swarmlease is the Go client of lfp-swarm-lease. It uses the standard library and one
// module of the project's own, timing (the lease's timing rule and safety margin, written once
// for the client and the engine; itself the standard library only) — so that it adds no
// third-party module to its users' builds. It has two parts: an Observer that follows a Swarm election through a controller's event stream,
// and a Client of the elections ("rooms") API, with which any process — no Docker
// access needed — can elect a leader.
//
// # Observing a Swarm election
//
// An Observer follows the election's state through the controller's server-sent events
// (GET /v1/events) of any replica:
//
//	obs := swarmlease.Connect("http://leases:8080")
//	for st, err := range obs.Watch(ctx) {
//		if err != nil {
//			return err // the first state never came (ErrInitialTimeout), or a bad configuration
//		}
//		fmt.Println(st.HolderID, st.Fence)
//	}
//
// Watch waits up to the initial timeout (60 s by default) for the first state, because a
// client usually starts together with the controllers it observes. Once it has a state, the
// observer reconnects forever, with jittered exponential back-off, because a controller
// restart or a Swarm VIP moving the client to another replica is routine, not an error.
//
// Every connection starts with the complete current state, so nothing has to be resumed after
// a reconnect; instead the observer yields a state only when it differs from the last one it
// yielded in existence, holder (ID, node, task), the lease being held, or the fence. A replica
// replaying the state the observer already has is therefore invisible to the consumer.
//
// An event that is not a state of the contract (clients/openapi.json) — not a JSON object with
// every field the contract requires, each of its type; for a room, a frame of another room or
// schema version — or that grows past 1 MiB is a protocol error: the watch yields nothing of it,
// drops the connection and reconnects after the back-off, as after any failure. The error names
// the event and what was wrong; like other failures it goes to the logger, or, before the first
// state, is the last error that ErrInitialTimeout wraps.
//
// Trust model: states are what a controller observed in the store. The timestamps in a State
// come from the holder's clock and are informational; a consumer that must act safely on
// leadership compares fences, never times.
//
// # Electing a leader through the elections API
//
// Client speaks the wire contract of the elections API (POST /elections, campaign, renew,
// resign, status, watch) of `lfp-swarm-lease serve` or of any service with the same contract.
// CreateRoom, Campaign, Renew, Resign and Status are single requests; WatchRoom follows a room
// and reconnects like Watch. Hold is the loop a leader-only worker needs (a RoomContender, from
// NewRoomContender, holds one room term after term):
//
//	el, err := swarmlease.NewClient("http://elect:8080")
//	...
//	l, err := el.Hold(ctx, "nightly-report", swarmlease.CampaignRequest{CandidateID: host, TTL: 15 * time.Second})
//	if err != nil {
//		return err // ctx ended, or an input the server refuses
//	}
//	defer l.Resign(context.WithoutCancel(ctx))
//	work(l.Context(), l.Fence()) // the fence of every write
//
// Hold campaigns until it wins (following the room while another candidate leads), renews
// the term in the background, and ends it — Done, Context, Cause — when the server says it is
// over or when its safety deadline passes without a successful renewal. The deadline is measured
// by this process's monotonic clock from the start of the last request that succeeded, never
// from the server's expires_at, so a leader that cannot reach the server stops in time on its
// own. Fence is the term's number, which the elections API calls `term` (Leader.Term): it
// strictly increases within a room.
//
// Errors of the API are *APIError values carrying the contract's code, request id and
// Retry-After; errors.Is matches them against ErrLeaseNotCurrent (and its two cases ErrVacant
// and ErrHeldByOther), ErrRateLimited, ErrCapacityExceeded, ErrInvalidInput, ErrInvalidTTL and
// ErrForbidden. Leader tokens (type LeaderToken) travel only in request bodies and print redacted:
// they never appear in a URL, an error or a log line.
package swarmlease
