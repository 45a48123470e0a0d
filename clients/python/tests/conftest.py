"""The binary the tests run against (built from the repository, or LFP_SWARM_LEASE_BIN), the
wheels scripts/build-wheels.sh built (LFP_SWARM_LEASE_WHEELS), the processes, etcd servers and
temporary stores of each test, and the CI rule: under CI=true a test that cannot run fails
instead of being skipped."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import AsyncIterator, Generator, Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

import support

REPO = Path(__file__).resolve().parents[3]
CI = os.environ.get("CI") == "true"


def unavailable(why: str) -> NoReturn:
    """Skips the test, or fails it under CI=true: CI must not pass without it."""
    if CI:
        pytest.fail(f"{why}, and CI=true", pytrace=False)
    pytest.skip(why)


@pytest.fixture(scope="session")
def binary() -> Iterator[str]:
    """The lfp-swarm-lease binary: LFP_SWARM_LEASE_BIN, else built from the repository."""
    given = os.environ.get("LFP_SWARM_LEASE_BIN")
    if given:
        if not os.access(given, os.X_OK):
            unavailable(f"LFP_SWARM_LEASE_BIN={given} is not an executable")
        support.BINARY = given
        yield given
        return
    go = shutil.which("go")
    if go is None:
        unavailable("go is not installed: the tests need the binary built from the repository")
    tmp = tempfile.mkdtemp(prefix="lfp-swarm-lease-py-")
    out = os.path.join(tmp, "lfp-swarm-lease")
    build = subprocess.run([str(go), "build", "-o", out, "./cli/cmd/lfp-swarm-lease"], cwd=REPO,
                           capture_output=True, text=True)
    if build.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        unavailable(f"go build ./cli/cmd/lfp-swarm-lease failed:\n{build.stderr}")
    support.BINARY = out
    yield out
    shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
async def procs(binary: str) -> AsyncIterator[support.Processes]:
    """Starts processes of the binary; every one is gone after the test."""
    p = support.Processes()
    yield p
    await p.close()


@pytest.fixture
def controller_binary(binary: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The binary as the controller finds it: LFP_SWARM_LEASE_BIN in this process's
    environment, without any SWARM_LEASE_ variable of the machine's."""
    for name in list(os.environ):
        if name.startswith("SWARM_LEASE_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("LFP_SWARM_LEASE_BIN", binary)
    return binary


@pytest.fixture
async def etcd(tmp_path: Path) -> AsyncIterator[support.Etcd]:
    """A real one-member etcd cluster (Debian's etcd-server) on free loopback ports."""
    if shutil.which("etcd") is None:
        unavailable("etcd is not installed (apt-get install etcd-server)")
    server = support.Etcd(tmp_path / "etcd")
    await server.start()
    yield server
    await server.kill()


@pytest.fixture(scope="session")
def wheels() -> Path:
    """The distributions scripts/build-wheels.sh built: LFP_SWARM_LEASE_WHEELS names their
    directory (clients/python/dist)."""
    given = os.environ.get("LFP_SWARM_LEASE_WHEELS")
    if not given:
        unavailable("LFP_SWARM_LEASE_WHEELS is not set: run scripts/build-wheels.sh and set it "
                    "to clients/python/dist")
    dist = Path(given).resolve()
    if not any(dist.glob("*.whl")):
        unavailable(f"LFP_SWARM_LEASE_WHEELS={given} holds no wheel: run scripts/build-wheels.sh")
    return dist


@pytest.fixture
def store(tmp_path: Path) -> str:
    """A new file store."""
    d = tmp_path / "store"
    d.mkdir()
    return f"file:{d}"


@pytest.hookimpl(hookwrapper=True)  # type: ignore[misc]
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None],
                              ) -> Generator[None, Any, None]:
    """Under CI=true a skipped test fails the run: CI can never pass without it."""
    outcome = yield
    report = outcome.get_result()
    if CI and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped under CI=true: {report.longrepr}"
