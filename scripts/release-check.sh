#!/usr/bin/env bash
# The release tests, which `bun run release` runs after it has rewritten the version files and
# before it commits them: the files agree on the new version, and the release pipeline's own
# tests pass (the release command, goreleaser check and build, actionlint, go install from a
# module proxy, npm publish --dry-run, the Python sdist and wheel).
#
#   scripts/release-check.sh X.Y.Z
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 X.Y.Z" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
scripts/verify-release-version.sh "v$1"
(cd deployer && go test -count=1 ./...)
