// Package electionstest is the conformance suite of the elections ("rooms") API: every
// behaviour of the wire contract (docs/elections-api.md), including the seed service's own tests,
// checked over real HTTP against servers on a store under test. Run it once per store.
package electionstest
