#!/bin/sh
# scripts/exec-go.sh PACKAGE [ARGS...]: builds the repository's Go program PACKAGE (e.g.
# ./deployer/cmd/deployer) into a cache and runs it in place of this script, so that its exit
# code and its messages reach the caller unchanged — `go run` would exit 1 for every failure and
# add "exit status N". package.json's scripts run the repository's programs through it
# (bun run demo …, bun run release …); a build that is up to date takes half a second.
set -eu
pkg=$1
shift
# One cache per clone: two clones' programs differ.
clone=$(printf '%s' "$PWD" | cksum | cut -d ' ' -f 1)
bin=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/lfp-swarm-lease/bin/$clone/$(basename "$pkg")
go build -o "$bin" "$pkg"
exec "$bin" "$@"
