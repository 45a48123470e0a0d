#!/usr/bin/env bash
# Starts or stops the private, throwaway Docker engines of the test suite: one with a single-node
# Swarm, and one plain engine that is in no Swarm (for "not a swarm manager" tests). It never
# touches the machine's own Docker engine: everything lives under $SWARM_TEST_DIR.
#
#   scripts/test-swarm.sh start   # installs docker.io if missing (root only), starts both, swarm init;
#                                 # prints the DOCKER_HOST to export for `bun run demo:up`
#   scripts/test-swarm.sh stop    # stops both engines and removes their state
#   scripts/test-swarm.sh env     # prints the variables the tests read
set -euo pipefail

dir=${SWARM_TEST_DIR:-/tmp/lfp-swarm-test}
sock="$dir/docker.sock"
host="unix://$sock"
plain_dir="$dir/plain"
plain_host="unix://$plain_dir/docker.sock"

install_engine() {
  command -v dockerd >/dev/null 2>&1 && return 0
  if [ "$(id -u)" != 0 ]; then
    echo "test-swarm: dockerd is not installed; install Debian's docker.io (or any Docker engine) first" >&2
    exit 1
  fi
  echo "test-swarm: installing Debian's docker.io" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
}

wait_for() { # wait_for SECONDS CMD...: polls CMD until it succeeds or the deadline passes
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}

start() {
  install_engine
  mkdir -p "$dir"
  if [ -S "$sock" ] && DOCKER_HOST=$host docker info >/dev/null 2>&1; then
    echo "test-swarm: already running at $host" >&2
  else
    # Leftovers of an engine that did not stop cleanly (a killed session): start from nothing.
    cleanup_dir
    mkdir -p "$dir"
    # setsid: the engine must not hold the caller's terminal or wait on it.
    setsid dockerd --data-root "$dir/data" --exec-root "$dir/exec" -H "$host" \
      --pidfile "$dir/dockerd.pid" >"$dir/dockerd.log" 2>&1 < /dev/null &
    if ! wait_for 60 env DOCKER_HOST="$host" docker info; then
      echo "test-swarm: dockerd did not start; its log:" >&2
      tail -50 "$dir/dockerd.log" >&2
      exit 1
    fi
  fi
  local state
  state=$(DOCKER_HOST=$host docker info --format '{{.Swarm.LocalNodeState}}')
  if [ "$state" != active ]; then
    DOCKER_HOST=$host docker swarm init --advertise-addr 127.0.0.1 >/dev/null
  fi
  wait_for 30 env DOCKER_HOST="$host" docker node ls
  echo "test-swarm: Swarm ready at $host" >&2

  if ! DOCKER_HOST=$plain_host docker info >/dev/null 2>&1; then
    mkdir -p "$plain_dir"
    # In a network namespace of its own, without bridge or iptables: it must not touch the
    # Swarm engine's network (a second engine on the host's network removes its docker0).
    setsid unshare --net dockerd --data-root "$plain_dir/data" --exec-root "$plain_dir/exec" -H "$plain_host" \
      --pidfile "$plain_dir/dockerd.pid" --bridge none --iptables=false --ip6tables=false \
      >"$plain_dir/dockerd.log" 2>&1 < /dev/null &
    if ! wait_for 60 env DOCKER_HOST="$plain_host" docker info; then
      echo "test-swarm: the plain dockerd did not start; its log:" >&2
      tail -50 "$plain_dir/dockerd.log" >&2
      exit 1
    fi
  fi
  echo "test-swarm: plain engine (no Swarm) ready at $plain_host" >&2
  echo "test-swarm: for \`bun run demo:up\` and the docker CLI, use this Swarm with:" >&2
  echo "  export DOCKER_HOST=$host" >&2
}

kill_engine() { # kill_engine PIDFILE
  [ -f "$1" ] || return 0
  local pid
  pid=$(cat "$1")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}

cleanup_dir() {
  # The engine's mounts must go before its directories can.
  grep " $dir/" /proc/mounts | awk '{print $2}' | sort -r | xargs -r umount -l 2>/dev/null || true
  rm -rf "$dir"
}

stop() {
  kill_engine "$plain_dir/dockerd.pid"
  kill_engine "$dir/dockerd.pid"
  cleanup_dir
  echo "test-swarm: stopped" >&2
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  env)
    echo "SWARM_LEASE_TEST_DOCKER_HOST=$host"
    echo "SWARM_LEASE_TEST_PLAIN_DOCKER_HOST=$plain_host"
    ;;
  *) echo "usage: $0 start|stop|env" >&2; exit 2 ;;
esac
