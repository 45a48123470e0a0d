"""The lfp-swarm-lease binary: the one a platform wheel bundles, or the one
``LFP_SWARM_LEASE_BIN`` names; and the ``lfp-swarm-lease`` console command, which becomes it."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NoReturn

from ._errors import BinaryNotFoundError

#: Names a binary to use instead of the bundled one (a build of your own, another version).
BINARY_ENV = "LFP_SWARM_LEASE_BIN"

#: Where a platform wheel puts the binary, next to this package's modules.
BUNDLED = Path(__file__).resolve().parent / "_bin" / "lfp-swarm-lease"

#: What to do without a binary: said by the console command and by the controller alike.
HOW_TO_GET_ONE = (
    "this installation of lfp-swarm-lease has no binary: it is the pure-Python wheel or the "
    "sdist, which carry only the observer and the rooms client. Platform wheels with the binary "
    "exist for Linux (x86_64, aarch64; glibc or musl) and macOS 12+ (x86_64, arm64): on one of "
    "those, `pip install --force-reinstall --only-binary lfp-swarm-lease lfp-swarm-lease` "
    "installs one. Elsewhere, take the binary of the same version from "
    "https://github.com/regbo/lfp-swarm-lease/releases (or `go install "
    "github.com/regbo/lfp-swarm-lease/cli/cmd/lfp-swarm-lease@vX.Y.Z`) and set "
    f"{BINARY_ENV} to its path")


def find_binary() -> str:
    """The binary to run: ``LFP_SWARM_LEASE_BIN`` when set, else the bundled one; raises
    :class:`BinaryNotFoundError`, saying how to get one, when there is none."""
    given = os.environ.get(BINARY_ENV)
    if given:
        if not os.path.isfile(given) or not os.access(given, os.X_OK):
            raise BinaryNotFoundError(f"{BINARY_ENV}={given} is not an executable file: point it "
                                      "at an lfp-swarm-lease binary, or unset it to use the "
                                      "bundled one")
        return given
    if BUNDLED.is_file() and os.access(BUNDLED, os.X_OK):
        return str(BUNDLED)
    raise BinaryNotFoundError(HOW_TO_GET_ONE)


def main() -> NoReturn:
    """The ``lfp-swarm-lease`` console command: replaces this Python process with the binary,
    so that the binary is the process signals reach (``run``'s SIGTERM and SIGINT) and its exit
    status is the command's."""
    try:
        binary = find_binary()
    except BinaryNotFoundError as e:
        print(f"lfp-swarm-lease: {e}", file=sys.stderr)
        sys.exit(127)  # the shell's "command not found"
    os.execv(binary, ["lfp-swarm-lease", *sys.argv[1:]])
