"""The documentation's Python examples, taken from the pages themselves so that they cannot
drift, run as written — only the server's URL is the test's — as separate processes: the
watch of docs/clients.md against live ``run`` replicas, the package page's hold against a live
``serve``, its controller on the file store from the source tree. And the clients' READMEs show
one table."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from pathlib import Path

from support import Processes, Proxy, namespace, run_controller_snippet

REPO = Path(__file__).resolve().parents[3]
SRC = Path(__file__).resolve().parents[1] / "src"
#: The URLs the examples name: docs/clients.md's watch runs against a `run` on 8083, next to the
#: Quickstart's `serve` on 8080; the package README's hold against that `serve`.
RUN_URL = "http://127.0.0.1:8083"
SERVE_URL = "http://127.0.0.1:8080"


def snippet(readme: Path, heading: str, marker: str, url: str) -> str:
    """The first ```python block after ``heading`` that contains ``marker``, which must name
    ``url``."""
    text = readme.read_text()
    start = text.index(heading)
    for block in re.findall(r"```python\n(.*?)```", text[start:], re.DOTALL):
        if marker in block:
            assert url in block, f"the example in {readme.name} no longer uses {url}"
            return str(block)
    raise AssertionError(f"{readme.name}: no python block with {marker!r} after {heading!r}")


def controller_snippet() -> str:
    """The package README's controller example: the seed's, with a function of its own in
    place of the reconciler."""
    return snippet(REPO / "clients/python/README.md", "## Hold the Swarm lease from Python",
                   "SwarmLeaseController.connect(", "")


async def start_script(code: str, url: str, base: str, tmp: Path) -> asyncio.subprocess.Process:
    script = tmp / "example.py"
    script.write_text(code.replace(url, base))
    return await asyncio.create_subprocess_exec(
        sys.executable, str(script), stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        # The package from this tree, as the README's PYTHONPATH line does; unbuffered, so that
        # each line arrives when it is printed.
        env={**os.environ, "PYTHONPATH": str(SRC), "PYTHONUNBUFFERED": "1"})


async def line(proc: asyncio.subprocess.Process, timeout: float = 20) -> str:
    assert proc.stdout is not None
    out = await asyncio.wait_for(proc.stdout.readline(), timeout)
    if not out:
        assert proc.stderr is not None
        raise AssertionError(f"the example ended: {(await proc.stderr.read()).decode()}")
    return out.decode().strip()


async def test_the_readme_watch_example_against_run(procs: Processes, store: str,
                                                    tmp_path: Path) -> None:
    code = snippet(REPO / "docs/clients.md", "## From Python", "RemoteLeaseObserver.connect",
                   RUN_URL)
    ns = namespace()
    a = await procs.run(store, ns, "replica-a")
    vip = await Proxy([a]).start()  # the service's VIP: replica-b joins it below
    proc = await start_script(code, RUN_URL, vip.base, tmp_path)
    try:
        leads = await line(proc)
        m = re.fullmatch(r"replica-a leads with fence (\d+)", leads)
        assert m, leads
        fence = int(m.group(1))
        assert await line(proc) == f"replica-a {fence}", "then the current state"
        b = await procs.run(store, ns, "replica-b")
        vip.upstreams.append(b)
        await a.stop(signal.SIGTERM)  # a releases the lease; b takes over at once
        seen: list[str] = []
        while not seen or not seen[-1].startswith("replica-b "):
            seen.append(await line(proc))
        assert seen[:-1] in ([], [f"no holder {fence}"]), seen
        assert int(seen[-1].split()[1]) > fence
    finally:
        proc.kill()
        await proc.wait()
        await vip.close()


async def test_the_package_readme_hold_example_against_serve(procs: Processes, store: str,
                                                             tmp_path: Path) -> None:
    code = snippet(REPO / "clients/python/README.md", "## Hold a room", "client.hold(", SERVE_URL)
    srv = await procs.serve(store)
    proc = await start_script(code, SERVE_URL, srv.base, tmp_path)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 30)
    finally:
        if proc.returncode is None:
            proc.kill()
    assert proc.returncode == 0, err.decode()
    lines = out.decode().splitlines()
    assert len(lines) == 2, lines
    assert re.fullmatch(r"leading room [A-Za-z0-9_-]{32} with term \d+", lines[0]), lines
    assert lines[1] == "vacant", "leaving the block resigned the term"


async def test_the_package_readme_controller_runs_on_the_file_store_from_the_source_tree(
        controller_binary: str, store: str, tmp_path: Path) -> None:
    script = tmp_path / "controller.py"
    script.write_text(controller_snippet())
    # As the README runs it from a clone: the package's source on the path, a binary built
    # from the tree, the store from the environment.
    env = {**os.environ, "PYTHONPATH": str(SRC), "SWARM_LEASE_STORE": store}
    await run_controller_snippet(sys.executable, script, env, store)


def test_the_clients_readmes_show_one_table() -> None:
    tables = {}
    for readme in ("README.md", "clients/go/README.md", "clients/typescript/README.md",
                   "clients/python/README.md"):
        text = (REPO / readme).read_text()
        assert "## What each client can do" in text, readme
        section = text.split("## What each client can do", 1)[1].split("\n## ", 1)[0]
        tables[readme] = section.strip()
    assert len(set(tables.values())) == 1, "the READMEs show different tables"
    table = next(iter(tables.values()))
    for capability in ("observe an election", "rooms of the elections API", "hold a room",
                       "hold the Swarm lease"):
        assert capability in table
