// Package roomstest holds the behavioural suite every rooms.Store must pass: the engine-level
// behaviours of the elections API (the contract's own checks included, docs/elections-api.md), run with a fake clock
// so that it runs unchanged, and fast, on the memory, file and Swarm stores.
package roomstest
