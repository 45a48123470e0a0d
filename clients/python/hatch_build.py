"""The build hook of the platform wheels: with LFP_SWARM_LEASE_WHEEL_BINARY (a static
lfp-swarm-lease binary) and LFP_SWARM_LEASE_WHEEL_PLATFORM (the platform tags it runs on, e.g.
``manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64``), the wheel carries the
binary as ``lfp_swarm_lease/_bin/lfp-swarm-lease`` and is tagged ``py3-none-PLATFORM``. Without
them it is the pure ``py3-none-any`` wheel. scripts/build-wheels.sh sets both, once per
platform, and checks each wheel's tags against its binary."""

from __future__ import annotations

import os
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

BINARY = "LFP_SWARM_LEASE_WHEEL_BINARY"
PLATFORM = "LFP_SWARM_LEASE_WHEEL_PLATFORM"


class BinaryHook(BuildHookInterface[Any]):
    """Puts the binary into a platform wheel."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        binary, platform = os.environ.get(BINARY, ""), os.environ.get(PLATFORM, "")
        if not binary and not platform:
            return
        if not binary or not platform:
            raise ValueError(f"{BINARY} and {PLATFORM} are set together or not at all")
        if not os.path.isfile(binary) or not os.access(binary, os.X_OK):
            raise ValueError(f"{BINARY}={binary} is not an executable file")
        build_data["tag"] = f"py3-none-{platform}"
        build_data["pure_python"] = False
        build_data["force_include"][binary] = "lfp_swarm_lease/_bin/lfp-swarm-lease"
