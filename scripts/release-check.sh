#!/usr/bin/env bash
# The release tests, which `bun run release` runs after it has rewritten the version files and
# before it commits them: the files agree on the new version, and the release pipeline's own
# tests pass (the release command, goreleaser check and build, actionlint, go install from a
# module proxy, npm publish --dry-run, the Python sdist and wheel).
#
#   scripts/release-check.sh X.Y.Z
#
# Every go test has an explicit timeout: go test's default, 10 minutes per package, is shorter
# than the release pipeline's tests take on a busy machine (goreleaser alone builds every binary
# for six platforms). Those run last, as a package of their own with -v, so that go test streams
# each test's progress, goreleaser's included, while they run.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 X.Y.Z" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
scripts/verify-release-version.sh "v$1"
cd release
mapfile -t packages < <(go list ./... | grep -v '/internal/pipeline$')
echo "release-check: the release module's tests" >&2
go test -count=1 -timeout 30m "${packages[@]}"
echo "release-check: the release pipeline's tests (several minutes; their progress follows)" >&2
go test -count=1 -v -timeout 60m ./internal/pipeline
