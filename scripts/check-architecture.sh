#!/usr/bin/env bash
# Holds the map of the modules in docs/architecture.md against the code: for every module of the
# Go workspace, the other workspace modules its non-test Go files import (go list, on this
# machine's platform) must be the ones its line of the map names, no more and no fewer; every
# module has one line, and imports only modules on lines below it. scripts/test.sh runs it in
# both lanes.
#
# The map is the code block that follows the line `<!-- module imports: … -->`, one module a
# line: `MODULE ─► IMPORTED IMPORTED …` (nothing after the arrow: it imports none of the others).
set -euo pipefail
cd "$(dirname "$0")/.."

doc=docs/architecture.md
prefix=github.com/regbo/lfp-swarm-lease/

map=$(awk '/^<!-- module imports/ {found = 1; next}
  found && /^```/ {if (open) exit; open = 1; next}
  open {print}' "$doc")
if [ -z "$map" ]; then
  echo "$doc: no module map (a code block after a line <!-- module imports: … -->)" >&2
  exit 1
fi

# The modules, by name (the module path without the repository's prefix) and directory.
mods=$(go list -m -f '{{.Path}} {{.Dir}}' | sed "s#^$prefix##")
names=$(printf '%s\n' "$mods" | awk '{print $1}')

# drawn MODULE: the modules the map's line of MODULE names, one a line, sorted.
drawn() {
  printf '%s\n' "$map" | awk -v m="$1" '$1 == m {for (i = 3; i <= NF; i++) print $i}' | sort -u
}

# imported MODULE DIR: the other workspace modules that MODULE's non-test packages import.
imported() {
  go -C "$2" list -f '{{join .Imports "\n"}}' ./... | sed -n "s#^$prefix##p" |
    while read -r pkg; do
      for name in $names; do
        case "$pkg" in "$name" | "$name"/*) [ "$name" != "$1" ] && echo "$name" ;; esac
      done
    done | sort -u
}

failed=0
for line in $(printf '%s\n' "$map" | awk '{print $1}' | sort | uniq -d); do
  echo "$doc: the module map draws $line on more than one line" >&2; failed=1
done
for line in $(printf '%s\n' "$map" | awk '{print $1}'); do
  if ! printf '%s\n' "$names" | grep -qxF "$line"; then
    echo "$doc: the module map draws $line, which is not a module of go.work" >&2; failed=1
  fi
done
# Drawn as layers: a module's imports stand on lines below its own, so the map has no circle.
upward=$(printf '%s\n' "$map" | awk '{line[$1] = NR; for (i = 3; i <= NF; i++) imp[NR, i] = $i; n[NR] = NF}
  END {for (r in n) for (i = 3; i <= n[r]; i++) if ((imp[r, i] in line) && line[imp[r, i]] <= r + 0) print imp[r, i]}')
for up in $upward; do
  echo "$doc: the module map draws an import of $up from a line below it (or its own): draw it lower" >&2; failed=1
done
while read -r name dir; do
  if ! printf '%s\n' "$map" | awk -v m="$name" '$1 == m {found = 1} END {exit !found}'; then
    echo "$doc: the module map has no line for $name" >&2; failed=1; continue
  fi
  want=$(drawn "$name")
  got=$(imported "$name" "$dir")
  if [ "$want" != "$got" ]; then
    echo "$doc: $name imports [$(paste -sd ' ' <<<"$got")] outside its tests, and the module map draws [$(paste -sd ' ' <<<"$want")]" >&2
    failed=1
  fi
done <<<"$mods"
if [ "$failed" != 0 ]; then
  echo "Make the map in $doc say what the code does (or the code what the map says)." >&2
  exit 1
fi
echo "the module map of $doc matches the imports of $(printf '%s\n' "$names" | wc -l) modules"
