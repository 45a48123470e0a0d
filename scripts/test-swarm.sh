#!/usr/bin/env bash
# Starts or stops a private, throwaway Docker engine with a single-node Swarm for the test suite.
# It never touches the machine's own Docker engine: everything lives under $SWARM_TEST_DIR.
#
#   scripts/test-swarm.sh start   # installs docker.io if missing (root only), starts dockerd, swarm init
#   scripts/test-swarm.sh stop    # stops that dockerd and removes its state
#   scripts/test-swarm.sh env     # prints the DOCKER_HOST line for the tests
set -euo pipefail

dir=${SWARM_TEST_DIR:-/tmp/lfp-swarm-test}
sock="$dir/docker.sock"
host="unix://$sock"

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
    rm -f "$dir/dockerd.pid"
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
}

stop() {
  if [ -f "$dir/dockerd.pid" ]; then
    local pid
    pid=$(cat "$dir/dockerd.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  # The engine's mounts must go before its directories can.
  grep " $dir/" /proc/mounts | awk '{print $2}' | sort -r | xargs -r umount -l 2>/dev/null || true
  rm -rf "$dir"
  echo "test-swarm: stopped" >&2
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  env) echo "DOCKER_HOST=$host" ;;
  *) echo "usage: $0 start|stop|env" >&2; exit 2 ;;
esac
