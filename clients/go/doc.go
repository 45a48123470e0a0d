// Package swarmlease is the Go observer of an lfp-swarm-lease election: it follows the
// election's state through the controller's server-sent events (GET /v1/events) of any
// replica, using only the standard library.
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
// Trust model: states are what a controller observed in the store. The timestamps in a State
// come from the holder's clock and are informational; a consumer that must act safely on
// leadership compares fences, never times.
package swarmlease
