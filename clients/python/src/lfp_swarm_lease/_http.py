"""A small HTTP/1.1 client on asyncio streams: one request per connection, every read bounded.

The standard library's ``http.client`` blocks a thread and cannot be cancelled; a watch must
end the moment its consumer stops, and a renewal the moment its term's deadline comes, so the
client speaks HTTP/1.1 itself — only what the server and a reverse proxy in front of it use:
``Content-Length``, chunked and close-delimited bodies.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Mapping
from urllib.parse import SplitResult, quote

from ._errors import LeaseConnectionError, ProtocolError

#: Bounds a status line, a header line and a chunk-size line; also the stream buffer's limit.
MAX_LINE = 64 << 10
#: Bounds the number of header lines of an answer.
MAX_HEADERS = 200
#: The largest piece of a body handed out at once.
READ_SIZE = 64 << 10


def url_of(base: SplitResult, *segments: str) -> SplitResult:
    """``base`` with path segments appended (each percent-escaped)."""
    path = base.path + "".join("/" + quote(s, safe="") for s in segments)
    return base._replace(path=path)


def user_agent() -> str:
    """The User-Agent of every request: the client and its version."""
    from . import __version__

    return f"lfp-swarm-lease-python/{__version__}"


def show(url: SplitResult) -> str:
    """The URL for messages (it never holds a token: tokens travel in bodies only)."""
    return url.geturl()


class Response:
    """An answer whose head has been read; the body is read on demand."""

    def __init__(self, status: int, reason: str, headers: dict[str, str],
                 reader: asyncio.StreamReader, writer: asyncio.StreamWriter, bodyless: bool,
                 what: str) -> None:
        self.status = status
        self.reason = reason
        self.headers = headers
        self._reader = reader
        self._writer = writer
        self._what = what
        self._done = bodyless
        self._chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        self._remaining: int | None = None  # bytes left of the body (or of the current chunk)
        if not self._chunked and "content-length" in headers:
            try:
                self._remaining = int(headers["content-length"])
            except ValueError:
                raise ProtocolError(f"{what}: invalid Content-Length") from None
            if self._remaining < 0:
                raise ProtocolError(f"{what}: invalid Content-Length")
            self._done = self._done or self._remaining == 0

    @property
    def media_type(self) -> str:
        """The Content-Type without parameters, lower case."""
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    async def read_chunk(self) -> bytes:
        """The next piece of the body (at most 64 KiB); ``b""`` at its end."""
        try:
            return await self._read_chunk()
        except asyncio.IncompleteReadError:
            raise LeaseConnectionError(
                f"{self._what}: the connection closed inside the body") from None
        except asyncio.LimitOverrunError:
            raise ProtocolError(f"{self._what}: a chunk-size line over {MAX_LINE} bytes") from None
        except OSError as e:
            raise LeaseConnectionError(f"{self._what}: {e or type(e).__name__}") from e

    async def _read_chunk(self) -> bytes:
        if self._done:
            return b""
        if self._chunked:
            if not self._remaining:
                line = await self._reader.readuntil(b"\n")
                try:
                    size = int(line.split(b";")[0].strip(), 16)
                except ValueError:
                    raise ProtocolError(f"{self._what}: invalid chunk size") from None
                if size == 0:
                    while (await self._reader.readuntil(b"\n")).strip():
                        pass  # trailers
                    self._done = True
                    return b""
                self._remaining = size
            data = await self._reader.read(min(self._remaining, READ_SIZE))
            if not data:
                raise asyncio.IncompleteReadError(b"", self._remaining)
            self._remaining -= len(data)
            if self._remaining == 0:
                if await self._reader.readexactly(2) != b"\r\n":
                    raise ProtocolError(f"{self._what}: a chunk not followed by CRLF")
            return data
        if self._remaining is not None:
            data = await self._reader.read(min(self._remaining, READ_SIZE))
            if not data:
                raise asyncio.IncompleteReadError(b"", self._remaining)
            self._remaining -= len(data)
            self._done = self._remaining == 0
            return data
        data = await self._reader.read(READ_SIZE)  # close-delimited
        self._done = not data
        return data

    async def read_body(self, limit: int) -> bytes | None:
        """The whole body, or ``None`` when it is longer than ``limit`` bytes (then only that
        much was read)."""
        body = bytearray()
        while chunk := await self.read_chunk():
            body += chunk
            if len(body) > limit:
                return None
        return bytes(body)

    async def read_prefix(self, limit: int) -> bytes:
        """At most ``limit`` bytes of the body; a connection that breaks ends it early."""
        body = bytearray()
        try:
            while len(body) < limit and (chunk := await self.read_chunk()):
                body += chunk
        except (LeaseConnectionError, ProtocolError):
            pass  # a body cut short still leaves the status and headers
        return bytes(body[:limit])

    def close(self) -> None:
        """Closes the connection (at once, without waiting for the peer)."""
        self._writer.close()


async def request(url: SplitResult, method: str, *, body: bytes | None = None,
                  headers: Mapping[str, str] | None = None,
                  ssl_context: ssl.SSLContext | None = None, what: str = "") -> Response:
    """Sends one request on a new connection and returns the answer once its head is read. The
    caller bounds the time it takes and must close the answer."""
    what = what or f"{method} {show(url)}"
    host = url.hostname or ""
    tls = url.scheme == "https"
    port = url.port or (443 if tls else 80)
    try:
        reader, writer = await asyncio.open_connection(
            host, port, limit=MAX_LINE,
            ssl=(ssl_context or ssl.create_default_context()) if tls else None)
    except OSError as e:
        raise LeaseConnectionError(f"{what}: {e or type(e).__name__}") from e
    try:
        host_header = f"[{host}]" if ":" in host else host
        if url.port is not None:
            host_header += f":{url.port}"
        lines = [f"{method} {url.path or '/'} HTTP/1.1", f"Host: {host_header}",
                 "Connection: close"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        if body is not None:
            lines.append(f"Content-Length: {len(body)}")
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b""))
        await writer.drain()
        while True:
            status, reason, head = await _read_head(reader, what)
            if not 100 <= status < 200:
                break  # interim answers (100 Continue) are skipped
        bodyless = method == "HEAD" or status in (204, 304)
        return Response(status, reason, head, reader, writer, bodyless, what)
    except BaseException as e:
        writer.close()
        if isinstance(e, asyncio.IncompleteReadError):
            raise LeaseConnectionError(f"{what}: the connection closed before an answer") from None
        if isinstance(e, asyncio.LimitOverrunError):
            raise ProtocolError(f"{what}: an answer's header line over {MAX_LINE} bytes") from None
        if isinstance(e, OSError):
            raise LeaseConnectionError(f"{what}: {e or type(e).__name__}") from e
        raise


async def _read_head(reader: asyncio.StreamReader, what: str) -> tuple[int, str, dict[str, str]]:
    line = (await reader.readuntil(b"\n")).decode("latin-1").rstrip("\r\n")
    parts = line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise ProtocolError(f"{what}: not an HTTP/1.x answer")
    status, reason = int(parts[1]), parts[2] if len(parts) > 2 else ""
    headers: dict[str, str] = {}
    for _ in range(MAX_HEADERS + 1):
        raw = (await reader.readuntil(b"\n")).decode("latin-1").rstrip("\r\n")
        if not raw:
            return status, reason, headers
        name, sep, value = raw.partition(":")
        if not sep:
            raise ProtocolError(f"{what}: a malformed header line")
        key = name.strip().lower()
        headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
    raise ProtocolError(f"{what}: more than {MAX_HEADERS} header lines")
