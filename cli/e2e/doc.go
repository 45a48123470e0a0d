// Package e2e holds the process-level tests of lfp-swarm-lease: every contender, server and
// child is a separate process of the built binary, with real signals, sockets, files and — where
// SWARM_LEASE_TEST_DOCKER_HOST names one — a real Swarm; plus the benchmarks of the servers and
// of run. The commands' own behaviour is unit-tested in their packages (internal/cmd/...).
package e2e
