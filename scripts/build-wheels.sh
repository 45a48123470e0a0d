#!/usr/bin/env bash
# Builds the Python package's distributions into clients/python/dist/, offline, with Debian's
# python3-build and python3-hatchling (no package index): one wheel per platform carrying the
# static lfp-swarm-lease binary, the pure py3-none-any wheel and the sdist (neither carries a
# binary), all at the version of clients/python/pyproject.toml. Then it checks every wheel's tags
# against its binary's format and architecture (`file -b`), and that the linux/amd64 wheel's
# binary reports that version (clients/python/check_wheels.py).
#
#   scripts/build-wheels.sh                      # the binaries cross-compiled from this tree
#   scripts/build-wheels.sh --from-release DIST  # the binaries of a goreleaser release: DIST's
#                                                # archives, each matched against checksums.txt
set -euo pipefail
cd "$(dirname "$0")/.."

release=""
case "${1:-}" in
  "") ;;
  --from-release) release=${2:?--from-release needs goreleaser\'s dist directory}; release=$(cd "$release" && pwd) ;;
  *) echo "usage: $0 [--from-release DIST]" >&2; exit 2 ;;
esac

PY=${PYTHON:-/usr/bin/python3}
if ! "$PY" -c 'import build, hatchling' 2>/dev/null; then
  echo "build-wheels: $PY lacks build or hatchling: apt-get install python3-build python3-hatchling" >&2
  exit 1
fi
if ! command -v file >/dev/null 2>&1; then
  echo "build-wheels: the checks need file(1): apt-get install file" >&2
  exit 1
fi

pkg=clients/python
dist=$pkg/dist
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$pkg/pyproject.toml")
[ -n "$version" ] || { echo "build-wheels: no version = \"X.Y.Z\" in $pkg/pyproject.toml" >&2; exit 1; }

# Each platform (GOOS/GOARCH) and the wheel platform tags its binary runs on. The Linux binaries
# are static (CGO_ENABLED=0): one wheel serves glibc (manylinux2014 and later) and musl
# (musllinux_1_1 and later) alike. Go 1.26's macOS binaries need macOS 12.
platforms=(
  "linux/amd64 manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64"
  "linux/arm64 manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_1_aarch64"
  "darwin/amd64 macosx_12_0_x86_64"
  "darwin/arm64 macosx_12_0_arm64"
)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The binary of GOOS/GOARCH, at $work/GOOS_GOARCH/lfp-swarm-lease.
binary() {
  local goos=${1%/*} goarch=${1#*/}
  local dir=$work/${goos}_$goarch
  mkdir -p "$dir"
  if [ -n "$release" ]; then
    local archive=lfp-swarm-lease_${version}_${goos}_${goarch}.tar.gz
    # The release's own binary: its archive must be the one checksums.txt names.
    if ! grep -q "  $archive\$" "$release/checksums.txt"; then
      echo "build-wheels: $release/checksums.txt does not list $archive" >&2; exit 1
    fi
    (cd "$release" && grep "  $archive\$" checksums.txt | sha256sum --check --quiet -)
    tar -xzf "$release/$archive" -C "$dir" lfp-swarm-lease
  else
    # As the release builds it (.goreleaser.yaml, images/recipe.go's BuildInfoPackage): static,
    # trimmed, stamped with the version, which check_wheels.py then asks the binary for.
    local bi=github.com/regbo/lfp-swarm-lease/images/buildinfo
    CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -o "$dir/lfp-swarm-lease" \
      -ldflags "-s -w -X $bi.Version=$version -X $bi.Commit=$(git rev-parse HEAD) -X $bi.Date=$(git log -1 --format=%cI)" \
      ./cli/cmd/lfp-swarm-lease
  fi
  echo "$dir/lfp-swarm-lease"
}

# pybuild ARGS...: python -m build, offline, into $dist; its output only when it fails.
pybuild() {
  if ! "$PY" -m build --no-isolation --skip-dependency-check --outdir "$dist" "$@" "$pkg" >"$work/build.log" 2>&1; then
    cat "$work/build.log" >&2
    echo "build-wheels: python -m build $* failed" >&2
    exit 1
  fi
}

rm -rf "$dist"
mkdir -p "$dist"
pybuild --sdist
pybuild --wheel
for p in "${platforms[@]}"; do
  goplatform=${p%% *} tags=${p#* }
  echo "build-wheels: $goplatform → py3-none-$tags" >&2
  bin=$(binary "$goplatform")
  LFP_SWARM_LEASE_WHEEL_BINARY=$bin LFP_SWARM_LEASE_WHEEL_PLATFORM=$tags pybuild --wheel
done
"$PY" "$pkg/check_wheels.py" "$dist" "$version"
