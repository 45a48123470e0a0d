// Package etcdstore keeps elections and rooms in etcd v3.
//
// An election is one key, `<prefix>/elections/<namespace>`, holding the record as JSON; its
// version is the key's mod revision, and every write is a transaction conditional on it, so the
// conditional-write chain of docs/safety.md §2 is etcd's Raft log. Rooms are kept one key per
// room with a small head per shard for its term floor (rooms.go, docs/rooms.md §2), so that a
// campaign writes one room and never a whole shard, and nothing holds every room in memory.
//
// Reads are linearizable (never served from a member's possibly stale copy) and every request
// asks for a member that has a leader: a member cut off from the quorum answers at once with
// lease.ErrNoQuorum instead of waiting out the timeout. A request goes to another member when
// its member cannot serve it or does not answer in time (members.go), so that a frozen member
// costs it a fraction of the time it has, not all of it. A write whose answer is lost — a
// timeout, a connection dropped, the leader lost while the proposal was in flight — wraps
// lease.ErrAmbiguous, which the engines settle by reading back.
//
// Fences and terms take the clock into account on every new term (Store.ClockFences, rooms'
// nextTerm): a cluster restored from an older snapshot reads older floors, and only the clock
// keeps a new fence above the ones handed out after the snapshot (docs/safety.md §7c).
package etcdstore
