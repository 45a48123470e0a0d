// Package faults is the fault campaign of lfp-swarm-lease: its tests run `run` supervisors — as
// processes on the host, or as the tasks of a Swarm service — and one-shot lease callers spread
// over a real three-manager Swarm (faults/cluster), inject manager crashes, quorum loss,
// partitions, engine restarts, frozen holders, and killed or paused holders' processes and
// containers, and check that there are never two leaders (faults/check) and that a holder is
// replaced before its term expires only when it is provably gone. docs/reliability.md lists the
// scenarios and their figures.
package faults
