#!/usr/bin/env bash
# The whole test suite: formatting, vet, staticcheck, then every module's tests (race detector
# on) against a private single-node Swarm that this script starts and stops.
#
#   scripts/test.sh                 # everything
#   SWARM_LEASE_TEST_DOCKER_HOST=unix:///path.sock scripts/test.sh   # use a Swarm you started
#   scripts/test.sh --fast          # the fast lane: a few minutes, no Docker, browser or etcd
#
# Without a Docker engine (and not root to install one) the Swarm tests are skipped with a
# message; with CI=true they fail instead, so CI can never pass without them.
#
# The fast lane (--fast) is gofmt, the module hygiene and map, every module's unit tests with
# `go test -short` (no race detector) and the Python client's tests: under 3 minutes on two
# cores. -short skips what leasetest.Long marks (images has the same rule):
# the tests that need a Docker engine or the Swarm (the fault campaign starts engines of its
# own), a browser or etcd processes, and those that take long — builds of whole programs (the
# release pipeline's goreleaser release, go install from a module proxy, npm publish, the image
# recipe's multi-platform builds, the README run from a fresh copy), and real supervisors and
# servers through several TTLs (most of cli/e2e). The whole suite runs them all: it never
# passes -short, and a Long test run with -short under CI=true fails instead of skipping, so
# -short cannot make CI pass without them; --fast refuses CI=true for the same reason.
set -euo pipefail
cd "$(dirname "$0")/.."

fast=0
case "${1:-}" in
  "") ;;
  --fast) fast=1 ;;
  *) echo "usage: $0 [--fast]" >&2; exit 2 ;;
esac

STATICCHECK_VERSION=v0.7.0
modules=$(go list -m -f '{{.Dir}}' | sed "s|^$PWD/||")

step() { printf '\n== %s\n' "$*"; }

if [ "$fast" = 1 ]; then
  if [ "${CI:-}" = true ]; then
    echo "test.sh: --fast skips the Docker, browser, etcd and long tests, and CI=true runs every test: run scripts/test.sh" >&2
    exit 2
  fi
  # No engine, even one the shell points at: the fast lane is the same on every machine.
  unset SWARM_LEASE_TEST_DOCKER_HOST SWARM_LEASE_TEST_PLAIN_DOCKER_HOST
fi

stop_swarm=0
if [ "$fast" = 0 ] && [ -z "${SWARM_LEASE_TEST_DOCKER_HOST:-}" ]; then
  step "private Swarm"
  if scripts/test-swarm.sh start; then
    stop_swarm=1
    set -a
    eval "$(scripts/test-swarm.sh env)"
    set +a
  elif [ "${CI:-}" = true ]; then
    echo "test.sh: could not start the test Swarm and CI=true" >&2
    exit 1
  else
    echo "test.sh: no test Swarm: the Swarm tests will be skipped" >&2
  fi
fi
cleanup() { if [ "$stop_swarm" = 1 ]; then scripts/test-swarm.sh stop; fi; }
trap cleanup EXIT

step "gofmt"
unformatted=$(gofmt -l $modules)
if [ -n "$unformatted" ]; then
  echo "gofmt would change:" >&2; echo "$unformatted" >&2; exit 1
fi

# The modules link through go.work only: a replace directive or a v0.0.0 requirement in a
# committed go.mod would make `go install …@vX.Y.Z` refuse the tagged module, and every module
# states the same go version.
step "module hygiene"
hygiene_failed=0
for m in $modules; do
  if grep -nE '^[[:space:]]*replace\b|^replace[[:space:]]*\(' "$m/go.mod" >&2; then
    echo "$m/go.mod: replace directives belong in go.work, not in a module's go.mod" >&2; hygiene_failed=1
  fi
  if grep -nE '[[:space:]]v0\.0\.0([[:space:]]|$)' "$m/go.mod" >&2; then
    echo "$m/go.mod: require the workspace's modules at the version in go.work's replace lines, not v0.0.0" >&2; hygiene_failed=1
  fi
done
go_versions=$(for m in $modules; do sed -n 's/^go //p' "$m/go.mod"; done | sort -u)
if [ "$(printf '%s\n' "$go_versions" | wc -l)" != 1 ]; then
  echo "the modules state different go versions: $(echo $go_versions); use one" >&2; hygiene_failed=1
fi
# One version of every dependency that several modules require, so that a module tested alone
# builds what the workspace tested.
split=$(for m in $modules; do awk '/^require|^\t/ && NF >= 2 && $2 ~ /^v/ {print $1, $2}' "$m/go.mod" | sed 's/^require //'; done |
  sort -u | awk '{n[$1]++; v[$1] = v[$1] " " $2} END {for (d in n) if (n[d] > 1) print d ":" v[d]}')
if [ -n "$split" ]; then
  echo "modules require different versions of:" >&2; echo "$split" >&2; hygiene_failed=1
fi
[ "$hygiene_failed" = 0 ] || exit 1

step "the module map (docs/architecture.md) against the imports"
scripts/check-architecture.sh

if [ "$fast" = 1 ]; then
  step "go test -short (the fast lane)"
  failed=0
  for m in $modules; do
    (cd "$m" && go test -short -count=1 -timeout 5m ./...) || failed=1
  done
  # The wheels' tests need scripts/build-wheels.sh (minutes of cross-compiling): the whole
  # suite runs them; here they skip.
  step "Python: the package's tests against the binary built here"
  PY=/usr/bin/python3
  if ! "$PY" -c 'import pytest, pytest_asyncio' 2>/dev/null; then
    echo "test.sh: no pytest for $PY: the Python client's tests are skipped (apt-get install python3-pytest python3-pytest-asyncio)" >&2
  else
    pytmp=$(mktemp -d)
    trap 'rm -rf "$pytmp"' EXIT
    go build -o "$pytmp/lfp-swarm-lease" ./cli/cmd/lfp-swarm-lease
    (cd clients/python && LFP_SWARM_LEASE_BIN="$pytmp/lfp-swarm-lease" "$PY" -m pytest -q -p no:cacheprovider) || failed=1
  fi
  exit "$failed"
fi

step "go vet"
for m in $modules; do (cd "$m" && go vet ./...); done

step "staticcheck $STATICCHECK_VERSION"
pkgs=$(for m in $modules; do printf './%s/... ' "$m"; done)
# shellcheck disable=SC2086
go run "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION" $pkgs

# bun before the Go tests: the release pipeline's tests (deployer/) build and pack the npm
# client with it.
# bun comes from npm at a pinned version, like every other tool of the suite: a fresh machine
# with Node.js gets it here.
BUN_VERSION=1.4.5
if [ "$(bun --version 2>/dev/null)" != "$BUN_VERSION" ]; then
  echo "test.sh: installing bun $BUN_VERSION through npm" >&2
  npm i -g "bun@$BUN_VERSION"
  # npm may skip the package's install script, which puts the platform binary in place.
  bun --version >/dev/null 2>&1 || node "$(npm root -g)/bun/install.js"
fi

step "go test"
# One go test for all the modules: it runs as many test binaries at once as there are cores,
# whichever module they are in, as it does within one module — so the fault campaign (about ten
# minutes, mostly waiting out TTLs on its own engines) runs beside the rest rather than after
# them. The longest packages' modules come first, so that they start first.
first="faults cli release bench"
# shellcheck disable=SC2086 # word lists
patterns=$(printf '%s\n' $first $modules | awk -v modules="$(tr '\n' ' ' <<<"$modules")" '
  BEGIN { n = split(modules, m, " "); for (i = 1; i <= n; i++) known[m[i]] = 1 }
  known[$0] && !seen[$0]++ { print "./" $0 "/..." }')
# shellcheck disable=SC2086
go test -race -count=1 -timeout 20m $patterns

# --- TypeScript: the npm client in the bun workspace (clients/typescript) ---
step "TypeScript: bun install, drift, build, lint, typecheck, node:test"
bun install --frozen-lockfile
bun run clients:drift # before the build, which regenerates the types
bun run clients:build
bun run lint
bun run typecheck
bun run node:test
# --- end TypeScript ---

# --- Python: the PyPI package (clients/python), with Debian's tools for Debian's interpreter ---
# (the python3 first on PATH may be another one without them; .ci/run installs them). Its tests
# run against real processes of the binary built here (serve, run, the one-shot commands under
# the controller, etcd) and against the wheels scripts/build-wheels.sh builds: the Linux x86_64
# one installed into fresh virtual environments, run through a SIGKILL failover, and in a task
# of the test Swarm.
step "Python: flake8, mypy --strict, every wheel and the sdist (scripts/build-wheels.sh), pytest, the pure wheel in a fresh venv"
PY=/usr/bin/python3
if ! "$PY" -c 'import build, hatchling, pytest, pytest_asyncio, mypy, flake8, ensurepip' 2>/dev/null || ! command -v file >/dev/null; then
  if [ "${CI:-}" = true ]; then
    echo "test.sh: Debian's Python tools or file(1) are missing and CI=true (.ci/run installs them)" >&2
    exit 1
  fi
  echo "test.sh: no Python tools: the Python package is not checked (apt-get install python3-hatchling" \
    "python3-build python3-pytest python3-pytest-asyncio mypy flake8 python3-venv file)" >&2
else
  pytmp=$(mktemp -d)
  go build -o "$pytmp/lfp-swarm-lease" ./cli/cmd/lfp-swarm-lease
  (cd clients/python && "$PY" -m flake8 src tests hatch_build.py check_wheels.py && "$PY" -m mypy)
  scripts/build-wheels.sh
  (
    cd clients/python
    LFP_SWARM_LEASE_BIN="$pytmp/lfp-swarm-lease" LFP_SWARM_LEASE_WHEELS="$PWD/dist" "$PY" -m pytest -q -p no:cacheprovider
    version=$(sed -n 's/^version = "\(.*\)"$/\1/p' pyproject.toml)
    # The pure wheel alone, offline, in a fresh environment: it needs nothing from the package
    # index.
    "$PY" -m venv "$pytmp/venv"
    "$pytmp/venv/bin/pip" install --quiet --no-index "dist/lfp_swarm_lease-$version-py3-none-any.whl"
    (cd "$pytmp" && venv/bin/python -c '
import sys, importlib.resources, lfp_swarm_lease as m
assert m.__version__ == sys.argv[1], (m.__version__, sys.argv[1])
assert importlib.resources.files(m).joinpath("py.typed").is_file(), "no py.typed"
assert m.RemoteLeaseObserver and m.LeaseClient and m.SwarmLeaseController
print("installed lfp-swarm-lease", m.__version__, "from the pure wheel")' "$version")
  )
  rm -rf "$pytmp"
fi
# --- end Python ---

# --- The demo (demo/, deploy/stack.yml): the committed page bundle, then the stack in Chromium ---
step "demo: build (the committed bundle must match), typecheck, the stack in a real browser"
bun run demo:build
if ! git diff --quiet -- demo/site/static; then
  echo "demo/site/static differs from what bun run demo:build makes: commit the rebuilt page" >&2
  git diff --stat -- demo/site/static >&2; exit 1
fi
bun run demo:typecheck
bun run demo:test
# --- end demo ---

# Each fuzz target runs briefly on top of its seed corpus (which `go test` above already ran);
# FUZZTIME=1m scripts/test.sh fuzzes longer.
step "fuzz (${FUZZTIME:-10s} each)"
for target in lease/rooms:FuzzRoomID lease/rooms:FuzzToken server:FuzzElectionBodies; do
  pkg=${target%%:*} name=${target##*:}
  mod=${pkg%%/*} rel=${pkg#"$mod"}
  (cd "$mod" && go test -run '^$' -fuzz "^$name\$" -fuzztime "${FUZZTIME:-10s}" "./${rel#/}")
done
