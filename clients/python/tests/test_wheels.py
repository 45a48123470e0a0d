"""The wheels scripts/build-wheels.sh built, installed as a user installs them: the Linux x86_64
wheel with ``pip install --no-index`` into a fresh virtual environment, whose
``lfp-swarm-lease run`` keeps a leader-only command running through a SIGKILL of its leader and
whose controller runs the README's example; the pure wheel, whose command says how to get a
binary."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from support import clean_env, install, namespace, poll_until, run_controller_snippet
from test_readme import controller_snippet

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def pyproject_version() -> str:
    m = re.search(r'^version = "(.*)"$', PYPROJECT.read_text(), re.MULTILINE)
    assert m is not None, "no version in pyproject.toml"
    return m.group(1)


VERSION = pyproject_version()


@pytest.fixture(scope="module")
def linux_amd64(wheels: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The bin directory of a fresh environment with the Linux x86_64 wheel."""
    if (os.uname().sysname, os.uname().machine) != ("Linux", "x86_64"):
        pytest.skip("the Linux x86_64 wheel runs on Linux x86_64 only")
    yield install(wheels, f"lfp_swarm_lease-{VERSION}-py3-none-manylinux_2_17_x86_64.*.whl",
                  tmp_path_factory.mktemp("venv-linux-amd64"))


def test_the_command_is_the_bundled_binary(linux_amd64: Path) -> None:
    out = subprocess.run([str(linux_amd64 / "lfp-swarm-lease"), "version", "--json"],
                         check=True, capture_output=True, text=True, env=clean_env())
    info = json.loads(out.stdout)
    assert (info["version"], info["platform"]) == (VERSION, "linux/amd64")
    where = subprocess.run(
        [str(linux_amd64 / "python"), "-c",
         "from lfp_swarm_lease._binary import find_binary; print(find_binary())"],
        check=True, capture_output=True, text=True, env=clean_env()).stdout.strip()
    assert where.startswith(str(linux_amd64.parent)) and where.endswith("/_bin/lfp-swarm-lease")


def alive(pid: int) -> bool:
    """Whether the process runs (a zombie has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def test_run_from_the_venv_survives_a_sigkill_of_the_leader(
        linux_amd64: Path, tmp_path: Path) -> None:
    store, events = tmp_path / "store", tmp_path / "events"
    store.mkdir()
    ns = namespace()
    # The leader-only command: says who runs it with which fence and its pid, then works.
    child = 'echo "$SWARM_LEASE_HOLDER_ID $SWARM_LEASE_FENCE $$" >> "$EVENTS"; exec sleep 3600'
    replicas: dict[str, asyncio.subprocess.Process] = {}
    for holder in ("replica-a", "replica-b"):
        replicas[holder] = await asyncio.create_subprocess_exec(
            str(linux_amd64 / "lfp-swarm-lease"), "run", "--store", f"file://{store}",
            "--namespace", ns, "--holder-id", holder, "--ttl-ms", "2000", "--listen", "off",
            "--shutdown-timeout-ms", "500", "--", "/bin/sh", "-c", child,
            env=clean_env(EVENTS=str(events)), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True)

    def lines() -> list[list[str]]:
        return [ln.split() for ln in events.read_text().splitlines()] if events.exists() else []

    try:
        await poll_until(20, "a leader's command started", lambda: len(lines()) >= 1)
        leader, fence, pid = lines()[0]
        assert leader in replicas and alive(int(pid))
        replicas[leader].send_signal(signal.SIGKILL)  # the leader's process dies, nothing else
        await replicas[leader].wait()
        await poll_until(20, "the other replica's command started", lambda: len(lines()) >= 2)
        # Never two commands at once: the dead leader's guard stopped its command first.
        assert not alive(int(pid)), "the old leader's command still runs"
        follower, next_fence, next_pid = lines()[1]
        assert follower != leader and int(next_fence) > int(fence)
        assert alive(int(next_pid)) and len(lines()) == 2
    finally:
        for proc in replicas.values():
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)  # stops its command and releases
                await asyncio.wait_for(proc.wait(), 10)
    assert not any(alive(int(ln[2])) for ln in lines()), "a command outlived its run"


async def test_the_readme_controller_runs_from_the_venv(linux_amd64: Path, binary: str,
                                                        store: str, tmp_path: Path) -> None:
    script = tmp_path / "controller.py"
    script.write_text(controller_snippet())
    await run_controller_snippet(str(linux_amd64 / "python"), script,
                                 clean_env(SWARM_LEASE_STORE=store), store)


def test_the_pure_wheel_says_how_to_get_a_binary(wheels: Path, tmp_path: Path) -> None:
    bin_dir = install(wheels, f"lfp_swarm_lease-{VERSION}-py3-none-any.whl", tmp_path / "venv")
    said = subprocess.run([str(bin_dir / "lfp-swarm-lease"), "run", "--", "true"],
                          capture_output=True, text=True, env=clean_env())
    assert said.returncode == 127
    for hint in ("no binary", "--only-binary", "https://github.com/regbo/lfp-swarm-lease/releases",
                 "LFP_SWARM_LEASE_BIN"):
        assert hint in said.stderr, said.stderr
    # The observer and the rooms client work without it.
    subprocess.run([str(bin_dir / "python"), "-c",
                    "from lfp_swarm_lease import RemoteLeaseObserver, LeaseClient"],
                   check=True, env=clean_env())
