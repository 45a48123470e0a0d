"""Real lfp-swarm-lease processes (``serve`` and ``run`` on a file store, the one-shot
commands), a scripted HTTP server for the edge cases a real server does not produce on demand,
and a TCP proxy that plays a Swarm VIP in front of replicas. Never a mock of the server: the
scripted server plays only misbehaving peers."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import urllib.request
import uuid
import venv
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

#: The binary under test (set by conftest.py once it is built).
BINARY = ""

_LISTENING = re.compile(r"msg=listening addr=(\S+)")


def namespace(prefix: str = "py") -> str:
    """A unique election (namespace) name."""
    return f"{prefix}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


async def poll_until(timeout: float, what: str, cond: Callable[[], bool | Awaitable[bool]],
                     ) -> None:
    """Calls ``cond`` until it holds; fails naming ``what`` after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        result = cond()
        if not isinstance(result, bool):
            result = await result
        if result:
            return
        if loop.time() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        await asyncio.sleep(0.02)  # the poll interval, not a synchronisation


async def sleep_until_cancelled(cancelled_at: list[float], bound: float = 30) -> None:
    """A held term's work: sleeps ``bound`` seconds, which a test that expects the term to
    cancel it never sees pass, and notes when it was cancelled."""
    try:
        await asyncio.sleep(bound)
    except asyncio.CancelledError:
        cancelled_at.append(asyncio.get_running_loop().time())
        raise


@dataclass
class ServerProcess:
    """A running server process."""

    base: str
    addr: str
    proc: asyncio.subprocess.Process
    out: list[str] = field(default_factory=list)
    drain: asyncio.Task[None] | None = None

    def output(self) -> str:
        return "".join(self.out)

    @property
    def running(self) -> bool:
        return self.proc.returncode is None

    async def stop(self, sig: int = signal.SIGKILL) -> None:
        """Sends ``sig`` (default SIGKILL: most tests need no graceful stop) and waits."""
        if self.proc.returncode is None:
            self.proc.send_signal(sig)
        await self.proc.wait()
        if self.drain is not None:
            await self.drain


class Processes:
    """Starts processes of the binary; :meth:`close` kills what is left."""

    def __init__(self) -> None:
        self.started: list[ServerProcess] = []

    async def start(self, args: list[str], listen: str = "127.0.0.1:0") -> ServerProcess:
        """Starts the binary and returns once its ``msg=listening addr=…`` line names its
        address."""
        env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/tmp"),
               "SWARM_LEASE_LISTEN": listen}
        proc = await asyncio.create_subprocess_exec(
            BINARY, *args, env=env, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            start_new_session=True)
        out: list[str] = []
        found: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        async def drain() -> None:
            # Read everything, always: a full pipe would block the server.
            assert proc.stdout is not None
            async for line in proc.stdout:
                text = line.decode(errors="replace")
                out.append(text)
                m = _LISTENING.search(text)
                if m and not found.done():
                    found.set_result(m.group(1))
            if not found.done():
                found.set_exception(AssertionError(
                    f"{' '.join(args)} exited before it listened:\n{''.join(out)}"))

        task = asyncio.ensure_future(drain())
        try:
            addr = await asyncio.wait_for(asyncio.shield(found), 15)
        except asyncio.TimeoutError:
            proc.kill()
            raise AssertionError(f"{' '.join(args)} did not listen within 15 s:\n{''.join(out)}")
        sp = ServerProcess(f"http://{addr}", addr, proc, out, task)
        self.started.append(sp)
        return sp

    async def serve(self, store: str, *, ns: str | None = None, args: tuple[str, ...] = (),
                    listen: str = "127.0.0.1:0") -> ServerProcess:
        """``serve`` on ``store`` (``file:<dir>`` or ``memory``); with ``ns`` it also serves
        that election's ``/v1`` endpoints."""
        a = ["serve", "--store", store]
        if ns:
            a += ["--namespace", ns, "--default-poll-ms", "100"]
        return await self.start([*a, *args], listen)

    async def run(self, store: str, ns: str, holder: str, *, ttl_ms: int = 3000,
                  listen: str = "127.0.0.1:0") -> ServerProcess:
        """``run`` as ``holder`` contending for ``ns``, with a child that sleeps; it serves the
        controller API."""
        return await self.start(
            ["run", "--store", store, "--namespace", ns, "--holder-id", holder,
             "--ttl-ms", str(ttl_ms), "--default-poll-ms", "100", "--shutdown-timeout-ms", "500",
             "--", "sleep", "3600"], listen)

    async def close(self) -> None:
        for p in self.started:
            if p.running:
                # The whole session: a `run` replica's child goes with it.
                try:
                    os.killpg(p.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            await p.stop()


def free_port() -> int:
    """A loopback port nobody listens on (closed again at once, for a server to bind)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Etcd:
    """A real etcd server (one member) in ``data_dir``, on free loopback ports."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.url = ""
        self.proc: asyncio.subprocess.Process | None = None

    @property
    def store(self) -> str:
        """The store setting of this server."""
        return "etcd://" + self.url.removeprefix("http://")

    async def start(self) -> None:
        client, peer = f"http://127.0.0.1:{free_port()}", f"http://127.0.0.1:{free_port()}"
        self.url = client
        self.proc = await asyncio.create_subprocess_exec(
            "etcd", "--name", "py", "--data-dir", str(self.data_dir),
            "--listen-client-urls", client, "--advertise-client-urls", client,
            "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
            "--initial-cluster", f"py={peer}", "--logger", "zap", "--log-level", "error",
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL)

        async def healthy() -> bool:
            status, _ = await http_get(f"{client}/health")
            return status == 200

        await poll_until(30, f"etcd answers on {client}", healthy)

    async def kill(self) -> None:
        """SIGKILL: the store goes down at once."""
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()


async def cli(store: str, ns: str, holder: str, *args: str) -> str:
    """Runs a one-shot command (try-acquire, release, init, …); returns its stdout."""
    proc = await asyncio.create_subprocess_exec(
        BINARY, *args, "--store", store, "--namespace", ns, "--holder-id", holder,
        env={"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/tmp")},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    stdout, stderr = await asyncio.wait_for(proc.communicate(), 30)
    if proc.returncode != 0:
        raise AssertionError(f"{' '.join(args)} exited {proc.returncode}: {stderr.decode()}")
    return stdout.decode().strip()


async def run_controller_snippet(python: str, script: Path, env: dict[str, str],
                                 store: str) -> None:
    """Runs the README's controller example (election ``consul-controllers``, holder
    ``manager-a``) with ``python`` and ``env`` on the file ``store``: it reconciles with a new
    fence and releases it; run again while ``manager-b`` holds the lease, it says so."""
    async def example() -> str:
        proc = await asyncio.create_subprocess_exec(
            python, str(script), env=env, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, f"the example exited {proc.returncode}: {err.decode()}"
        return out.decode().strip()

    first = await example()
    m = re.fullmatch(r"reconciled with fence (\d+)", first)
    assert m, first
    after = json.loads(await cli(store, "consul-controllers", "observer", "inspect", "--json"))
    assert (after["state"], after["fence"]) == ("vacant", int(m.group(1))), "it released"
    await cli(store, "consul-controllers", "manager-b", "try-acquire")
    assert await example() == "held by manager-b"


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without the binary override and the lease's settings: what
    runs sees only the installed package."""
    env = {k: v for k, v in os.environ.items()
           if k != "LFP_SWARM_LEASE_BIN" and not k.startswith("SWARM_LEASE_")}
    return {**env, **extra}


def install(dist: Path, pattern: str, where: Path) -> Path:
    """A fresh virtual environment at ``where`` with the one wheel of ``dist`` that matches
    ``pattern``, installed offline; returns its bin directory."""
    found = sorted(dist.glob(pattern))
    assert len(found) == 1, f"want one wheel {pattern} in {dist}, found {found}"
    venv.EnvBuilder(with_pip=True).create(where)
    subprocess.run([str(where / "bin" / "pip"), "install", "--quiet", "--no-index",
                    str(found[0])], check=True, env=clean_env())
    return where / "bin"


async def http_get(url: str) -> tuple[int, str]:
    """A plain GET with the standard library (not the client under test); status 0 when
    nothing answers."""
    def get() -> tuple[int, str]:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()
        except OSError:
            return 0, ""
    return await asyncio.to_thread(get)


async def metric(base: str, name: str) -> float | None:
    """The value of a Prometheus metric without labels on ``base``'s /metrics."""
    _, text = await http_get(f"{base}/metrics")
    m = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
    return float(m.group(1)) if m else None


# --- a scripted HTTP server ---


@dataclass
class Request:
    """One request to the scripted server."""

    n: int
    """0-based arrival order."""
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    arrived: float
    """loop.time() of its arrival."""
    writer: asyncio.StreamWriter

    def write(self, data: bytes | str) -> None:
        self.writer.write(data.encode() if isinstance(data, str) else data)

    async def flush(self) -> None:
        await self.writer.drain()

    def head(self, status: int, content_type: str, extra: dict[str, str] | None = None,
             chunked: bool = False, length: int | None = None) -> None:
        lines = [f"HTTP/1.1 {status} X", f"Content-Type: {content_type}"]
        lines += [f"{k}: {v}" for k, v in (extra or {}).items()]
        if chunked:
            lines.append("Transfer-Encoding: chunked")
        elif length is not None:
            lines.append(f"Content-Length: {length}")
        lines.append("Connection: close")
        self.write("\r\n".join(lines) + "\r\n\r\n")

    def json(self, status: int, body: object, extra: dict[str, str] | None = None) -> None:
        import json as _json

        data = _json.dumps(body).encode()
        self.head(status, "application/json", extra, length=len(data))
        self.write(data)

    def events(self, extra: dict[str, str] | None = None) -> None:
        """Starts an event stream (close-delimited, as an HTTP/1.0 server would send it)."""
        self.head(200, "text/event-stream", extra)

    def close(self) -> None:
        self.writer.close()


Handler = Callable[[Request], Awaitable[None]]


class Scripted:
    """Serves ``handler(request)`` on 127.0.0.1; the handler writes the raw answer. A handler
    that returns without closing leaves the connection open (a silent stream) until
    :meth:`close`."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[Request] = []
        self.base = ""
        self._server: asyncio.base_events.Server | None = None
        self._writers: list[asyncio.StreamWriter] = []

    @property
    def arrivals(self) -> list[float]:
        return [r.arrived for r in self.requests]

    async def start(self) -> Scripted:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.base = f"http://127.0.0.1:{port}"
        return self

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.append(writer)
        try:
            line = (await reader.readline()).decode()
            method, path, _ = line.split(" ", 2)
            headers: dict[str, str] = {}
            while (h := (await reader.readline()).decode().strip()):
                k, _, v = h.partition(":")
                headers[k.strip().lower()] = v.strip()
            body = await reader.readexactly(int(headers.get("content-length", "0")))
        except (ValueError, ConnectionError, asyncio.IncompleteReadError):
            writer.close()
            return
        req = Request(len(self.requests), method, path, headers, body,
                      asyncio.get_running_loop().time(), writer)
        self.requests.append(req)
        try:
            await self.handler(req)
            await writer.drain()
        except ConnectionError:
            pass

    async def close(self) -> None:
        for w in self._writers:
            w.close()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()


# --- a TCP proxy: the Swarm VIP ---


class Proxy:
    """Forwards each connection to the first upstream (``host:port``) whose process still runs,
    byte for byte, and records what clients sent."""

    def __init__(self, upstreams: list[ServerProcess]) -> None:
        self.upstreams = upstreams
        self.served: dict[str, int] = {}
        self.sent = bytearray()
        self.base = ""
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: list[asyncio.StreamWriter] = []

    async def start(self) -> Proxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.base = f"http://127.0.0.1:{port}"
        return self

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.append(writer)
        target = next((u for u in self.upstreams if u.running), None)
        if target is None:
            writer.close()
            return
        host, _, port = target.addr.rpartition(":")
        try:
            up_reader, up_writer = await asyncio.open_connection(host, int(port))
        except OSError:
            writer.close()  # a replica just gone: the client sees a failed connection
            return
        self._writers.append(up_writer)
        self.served[target.base] = self.served.get(target.base, 0) + 1

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter, record: bool,
                       ) -> None:
            try:
                while data := await src.read(65536):
                    if record:
                        self.sent += data
                    dst.write(data)
                    await dst.drain()
            except ConnectionError:
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer, True), pipe(up_reader, writer, False))

    async def close(self) -> None:
        for w in self._writers:
            w.close()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()


def state_of(holder: str, fence: int, **over: object) -> dict[str, object]:
    """A controller State with the given holder and fence."""
    s: dict[str, object] = {
        "namespace": "demo", "exists": fence > 0, "acquired": holder != "", "holder_id": holder,
        "node_id": "", "task_id": "", "fence": fence, "acquired_at": None, "renewed_at": None,
        "expires_at": None, "ttl_ms": 30000}
    s.update(over)
    return s


def frame(event: str, data: object) -> str:
    """An SSE frame."""
    import json as _json

    return f"event: {event}\ndata: {_json.dumps(data)}\n\n"


def vacant_frame(room: str) -> dict[str, object]:
    """A watch frame of a vacant room."""
    return {"schema_version": 1, "election_id": room, "status": "vacant", "leader": None,
            "retry_after_ms": 0, "observed_at": "2026-01-01T00:00:00Z"}
