// Package faults is the fault campaign of lfp-swarm-lease: its tests run `run` supervisors and
// one-shot lease callers spread over a real three-manager Swarm (faults/cluster), inject manager
// crashes, quorum loss, partitions, engine restarts and frozen holders, and check that there are
// never two leaders (faults/check). docs/reliability.md lists the scenarios and their figures.
package faults
