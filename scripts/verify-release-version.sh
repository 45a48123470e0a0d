#!/usr/bin/env bash
# Release CI's first step: the tag being released (vX.Y.Z) must equal the version in every
# version file, or nothing is built or published.
#
#   scripts/verify-release-version.sh v1.2.3
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 vX.Y.Z" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
exec scripts/exec-go.sh ./release/cmd/release verify-version "$1"
