#!/usr/bin/env bash
# Compares the elections API with etcd on this machine (BENCHMARKS.md, "Compared with etcd"):
# builds `lfp-swarm-lease`, the bench-peers program, the etcd-run supervisor and the testchild
# child, installs Debian's etcd-server and strace when they are missing (as root, with
# apt-get), and runs bench-peers, which starts a serve process (file store, memory store) and a
# single-node etcd on loopback in turn, each in a fresh temporary data directory, for every
# round; then three `run -- testchild` processes on a file store and three `etcd-run --
# testchild` processes on a fresh etcd in turn, for the handover and failover figures.
# Arguments go to bench-peers:
#
#   scripts/bench-peers.sh                       # 3 rounds, 64 clients, 20,000 operations a run
#   scripts/bench-peers.sh -rounds 5 -ops 40000
#   scripts/bench-peers.sh -serve-env SWARM_LEASE_MAX_ACTIVE_ROOMS=0   # a non-default setting
#   scripts/bench-peers.sh -rounds 3 -only run,etcd-run -handovers 10 -failovers 5
#   scripts/bench-peers.sh -rounds 5 -only run,etcd-run -interleave -handovers 20   # side by side
#
# Everything it starts listens on 127.0.0.1 and is stopped, and its directories removed, when a
# run ends; the built binaries are removed at exit.
set -euo pipefail
cd "$(dirname "$0")/.."

need() { # need COMMAND PACKAGE
  command -v "$1" >/dev/null && return
  if [ "$(id -u)" != 0 ]; then
    echo "bench-peers.sh: $1 is missing: install Debian's $2 (apt-get install -y $2) or run as root" >&2
    exit 1
  fi
  apt-get install -y "$2" >/dev/null
}
need etcd etcd-server
need strace strace
case "$(etcd --version | head -1)" in
  *" 3.4."*) ;;
  *) echo "bench-peers.sh: warning: $(etcd --version | head -1); the comparison was written for etcd 3.4" >&2 ;;
esac

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
(cd cli && go build -o "$bin/lfp-swarm-lease" ./cmd/lfp-swarm-lease)
(cd cli && CGO_ENABLED=0 go build -o "$bin/testchild" ./internal/testchild)
(cd bench && go build -o "$bin/bench-peers" ./cmd/bench-peers && go build -o "$bin/etcd-run" ./cmd/etcd-run)
"$bin/bench-peers" -serve "$bin/lfp-swarm-lease" -etcd "$(command -v etcd)" \
  -etcd-run "$bin/etcd-run" -testchild "$bin/testchild" "$@"
