// Package rooms is the engine of the elections ("rooms") API: many small, independent elections
// (rooms) identified by an id, each with a leader holding a bearer token for one term. It keeps
// room state on the same stores as the Swarm lease (Swarm labels, a host-local directory,
// memory) and has no HTTP in it; the server maps its results and errors to the wire contract of
// docs/elections-api.md.
//
// Rooms of a namespace are spread over a fixed number of shards by a hash of the room id; each
// shard is one JSON document written by compare-and-swap — or, on a store that keeps every room
// under a key of its own (RoomStore: etcd), a head and its rooms' keys. A shard keeps a term
// floor (the highest term it ever issued), so terms strictly increase per room and are never
// reused, also after a room was garbage-collected, resigned or created again. Leader tokens are
// 256 random bits returned once; only their SHA-256 hash is stored.
//
// Expiry is decided by the wall clock of the process running the Manager — the service is the
// authority — with a configurable allowance for clock skew between the server's replicas.
// docs/rooms.md has the design, the rules and the measured Swarm limits.
package rooms
