"""Checks the distributions scripts/build-wheels.sh made, before anything installs or publishes
them:

    check_wheels.py DIST VERSION

- every platform the package ships is there once: Linux x86_64 and aarch64 (each wheel tagged
  manylinux and musllinux: the binary is static), macOS x86_64 and arm64, the pure wheel and
  the sdist, all at VERSION;
- each wheel's WHEEL file states exactly the tags of its file name, and is purelib only when
  pure;
- each platform wheel carries one executable binary whose format and architecture (``file -b``)
  are those of every platform tag of the wheel; the pure wheel and the sdist carry none;
- the binary of the wheel for this machine (Linux x86_64 here) reports VERSION.

It prints one line per distribution (name, size, what ``file -b`` says) and exits 1 naming
every problem.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

NAME = "lfp_swarm_lease"
BINARY = f"{NAME}/_bin/lfp-swarm-lease"

#: What ``file -b`` must say of the binary for a platform tag, by the tag's pattern.
FORMATS = [
    (re.compile(r"(manylinux_\d+_\d+|manylinux2014|musllinux_\d+_\d+)_x86_64"),
     ["ELF 64-bit LSB executable, x86-64,", "statically linked"]),
    (re.compile(r"(manylinux_\d+_\d+|manylinux2014|musllinux_\d+_\d+)_aarch64"),
     ["ELF 64-bit LSB executable, ARM aarch64,", "statically linked"]),
    (re.compile(r"macosx_\d+_\d+_x86_64"), ["Mach-O 64-bit x86_64 executable"]),
    (re.compile(r"macosx_\d+_\d+_arm64"), ["Mach-O 64-bit arm64 executable"]),
]

#: The platforms every release ships: each needs a wheel whose tags include one of each set.
REQUIRED = {
    "Linux x86_64 (glibc)": r"manylinux_\d+_\d+_x86_64",
    "Linux x86_64 (musl)": r"musllinux_\d+_\d+_x86_64",
    "Linux aarch64 (glibc)": r"manylinux_\d+_\d+_aarch64",
    "Linux aarch64 (musl)": r"musllinux_\d+_\d+_aarch64",
    "macOS x86_64": r"macosx_\d+_\d+_x86_64",
    "macOS arm64": r"macosx_\d+_\d+_arm64",
    "any platform (no binary)": r"any",
}

#: The platform tag whose binary this machine can run, to ask it for its version.
NATIVE = {("Linux", "x86_64"): "manylinux_2_17_x86_64",
          ("Linux", "aarch64"): "manylinux_2_17_aarch64"}.get((platform.system(),
                                                               platform.machine()))


def expected_format(tag: str) -> list[str] | None:
    """What ``file -b`` must say for the platform tag ``tag``; None for an unknown tag."""
    for pattern, words in FORMATS:
        if pattern.fullmatch(tag):
            return words
    return None


def check_wheel(path: Path, version: str, tmp: Path) -> tuple[list[str], list[str], str]:
    """The problems of one wheel, its platform tags, and what ``file -b`` said."""
    problems: list[str] = []
    m = re.fullmatch(rf"{NAME}-(?P<v>[^-]+)-py3-none-(?P<plat>[^-]+)\.whl", path.name)
    if m is None:
        return [f"{path.name}: not a py3-none-PLATFORM wheel of {NAME}"], [], ""
    if m["v"] != version:
        problems.append(f"{path.name}: version {m['v']}, want {version}")
    tags = m["plat"].split(".")
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        wheel = z.read(f"{NAME}-{m['v']}.dist-info/WHEEL").decode()
        entry_points = z.read(f"{NAME}-{m['v']}.dist-info/entry_points.txt").decode()
        stated = sorted(line.split(": ", 1)[1] for line in wheel.splitlines()
                        if line.startswith("Tag: "))
        if stated != sorted(f"py3-none-{t}" for t in tags):
            problems.append(f"{path.name}: WHEEL states {stated}, the file name {tags}")
        pure = tags == ["any"]
        if f"Root-Is-Purelib: {'true' if pure else 'false'}" not in wheel:
            problems.append(f"{path.name}: Root-Is-Purelib must be {str(pure).lower()}")
        if "lfp-swarm-lease = lfp_swarm_lease._binary:main" not in entry_points:
            problems.append(f"{path.name}: no lfp-swarm-lease console command")
        binaries = [n for n in names if "/_bin/" in n]
        if pure:
            if binaries:
                problems.append(f"{path.name}: the pure wheel carries {binaries}")
            return problems, tags, "no binary"
        if binaries != [BINARY]:
            return problems + [f"{path.name}: want exactly {BINARY}, has {binaries}"], tags, ""
        info = z.getinfo(BINARY)
        if (info.external_attr >> 16) & 0o777 != 0o755:
            problems.append(f"{path.name}: {BINARY} has mode "
                            f"{oct((info.external_attr >> 16) & 0o777)}, want 0o755")
        out = tmp / path.name
        out.write_bytes(z.read(BINARY))
    out.chmod(0o755)
    described = subprocess.run(["file", "-b", str(out)], check=True, capture_output=True,
                               text=True).stdout.strip()
    for tag in tags:
        words = expected_format(tag)
        if words is None:
            problems.append(f"{path.name}: unknown platform tag {tag}")
        elif not all(w in described for w in words):
            problems.append(f"{path.name}: tag {tag} wants a binary that is "
                            f"{' and '.join(words)}; file -b says: {described}")
    if NATIVE in tags:
        said = subprocess.run([str(out), "version"], capture_output=True, text=True, timeout=30)
        if said.returncode != 0 or not said.stdout.startswith(f"lfp-swarm-lease {version} "):
            problems.append(f"{path.name}: `lfp-swarm-lease version` says {said.stdout!r} "
                            f"{said.stderr!r}, want lfp-swarm-lease {version}")
    return problems, tags, described


def check_sdist(path: Path) -> list[str]:
    """The problems of the sdist: it builds a pure wheel, so it must carry no binary, and it
    needs its build hook."""
    with tarfile.open(path) as t:
        names = t.getnames()
    problems = [f"{path.name}: carries {n}" for n in names if "/_bin/" in n]
    if not any(n.endswith("/hatch_build.py") for n in names):
        problems.append(f"{path.name}: lacks hatch_build.py")
    return problems


def main(dist: Path, version: str) -> int:
    problems: list[str] = []
    covered: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted(dist.glob("*.whl")):
            found, tags, described = check_wheel(path, version, Path(tmp))
            problems += found
            covered += tags
            print(f"{path.name}  {os.path.getsize(path):,} bytes  {described}")
    sdist = dist / f"{NAME}-{version}.tar.gz"
    if sdist.is_file():
        problems += check_sdist(sdist)
        print(f"{sdist.name}  {os.path.getsize(sdist):,} bytes  no binary")
    else:
        problems.append(f"no sdist {sdist.name}")
    twice = sorted({t for t in covered if covered.count(t) > 1})
    if twice:
        problems.append(f"several wheels are tagged {twice}")
    for platform_name, pattern in REQUIRED.items():
        if not any(re.fullmatch(pattern, t) for t in covered):
            problems.append(f"no wheel for {platform_name}")
    for p in problems:
        print(f"check_wheels: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: check_wheels.py DIST VERSION", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(Path(sys.argv[1]), sys.argv[2]))
