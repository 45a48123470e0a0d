#!/usr/bin/env bash
# Installs a release tool at its pinned version, once, and prints the directory that holds it:
#
#   PATH="$(scripts/release-tools.sh goreleaser):$PATH"
#
# goreleaser takes minutes to build from source, so each version lives in its own directory
# under RELEASE_TOOLS_DIR (default ~/.cache/lfp-swarm-lease/tools), which CI caches; a version
# change here installs the new one next to the old.
set -euo pipefail

GORELEASER_VERSION=v2.17.0
ACTIONLINT_VERSION=v1.7.12

tools_dir=${RELEASE_TOOLS_DIR:-$HOME/.cache/lfp-swarm-lease/tools}
case "${1:-}" in
  goreleaser) pkg=github.com/goreleaser/goreleaser/v2 version=$GORELEASER_VERSION ;;
  actionlint) pkg=github.com/rhysd/actionlint/cmd/actionlint version=$ACTIONLINT_VERSION ;;
  *) echo "usage: $0 goreleaser|actionlint" >&2; exit 2 ;;
esac
dir="$tools_dir/$1-$version"
if [ ! -x "$dir/$1" ]; then
  echo "release-tools: installing $1 $version into $dir (goreleaser takes minutes)" >&2
  mkdir -p "$dir"
  # The tools are installed outside the workspace, with their own go.mod requirements.
  (cd "$dir" && GOWORK=off GOBIN="$dir" go install "$pkg@$version") >&2
fi
echo "$dir"
