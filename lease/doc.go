// Package lease is the election engine of lfp-swarm-lease: the lease record, fencing tokens,
// contender identity, compare-and-swap mutations and the expiry rules.
//
// An [Election] binds one namespace, one contender [Identity] and one [Store]. Every mutation is
// read → check → conditional write on the store's version; a conflicting write is retried up to
// the configured number of times and an ambiguous write (timeout, lost Swarm leader) is resolved
// by reading the record again.
//
// Trust model: safety never depends on synchronised wall clocks alone. A holder stops leader work
// at its own monotonic deadline (the start of its last successful write plus the TTL, minus a
// margin). A contender treats a lease as expired when the record has not changed for a full TTL
// of its own monotonic time, or — the fast path for fresh processes — when its wall clock is past
// the recorded expiry by more than the configured maximum clock skew. docs/safety.md has the
// whole argument.
//
// The stores live in sub-packages: swarmstore (labels on a zero-replica Swarm service, the
// production store), filestore (processes on one host sharing a directory) and memstore.
package lease
