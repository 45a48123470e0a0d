"""The binary the tests run against (built from the repository, or LFP_SWARM_LEASE_BIN), the
processes and temporary stores of each test, and the CI rule: under CI=true a test that
cannot run fails instead of being skipped."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import AsyncIterator, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

import support

REPO = Path(__file__).resolve().parents[3]
CI = os.environ.get("CI") == "true"


def unavailable(why: str) -> None:
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
