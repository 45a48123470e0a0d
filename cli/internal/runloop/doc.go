// Package runloop is the one child-supervision loop of `run`, whichever engine wins the terms:
// the Swarm, etcd or file lease (lease.Contender) or a room of an elections server (the Go
// client's Contender). For every term it starts the command behind the guard (package
// supervisor), stops it when the term ends — SIGTERM, the grace period, SIGKILL — and tells the
// caller whether run contends again or exits, and with which code. The engines own the timing; this package owns
// what happens to the command.
package runloop
