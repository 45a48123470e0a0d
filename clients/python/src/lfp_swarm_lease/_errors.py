"""The exceptions of the client.

Every exception the client raises for a failed call, watch or term is a :class:`LeaseError`;
a server's answer other than the expected one is always a :class:`LeaseApiError`. None of them
ever contains a leader token: the server never echoes one, and the client never puts one in a
URL or a message.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from ._models import State

#: How much of an error answer is read: enough for the server's JSON, not a proxy's whole page.
MAX_ERROR_BODY = 64 << 10


class LeaseError(Exception):
    """The base of every exception of lfp-swarm-lease."""


class LeaseApiError(LeaseError):
    """A response other than the expected one: a non-2xx answer, or an answer other than an
    event stream.

    Its fields come from the server's error body (``{"error", "code", "details",
    "request_id", "retry_after_ms"}``); an answer of a proxy in front of the server leaves
    ``code`` empty.
    """

    status: int
    """The HTTP status."""
    code: str
    """The server's stable, machine-readable code (``"lease_not_current"``,
    ``"rate_limited"``, …); ``""`` when the answer did not come from the server."""
    error: str
    """What went wrong, for people."""
    details: str
    """Specifics, when any."""
    request_id: str
    """The request's id in the server's logs (from the body, else the ``X-Request-Id``
    header)."""
    retry_after: float
    """How long the server asked the client to wait, in seconds: the longer of
    ``retry_after_ms`` and the ``Retry-After`` header (0: it did not say)."""

    def __init__(
        self,
        status: int,
        *,
        code: str = "",
        error: str = "",
        details: str = "",
        request_id: str = "",
        retry_after: float = 0.0,
    ) -> None:
        self.status = status
        self.code = code
        self.error = error
        self.details = details
        self.request_id = request_id
        self.retry_after = retry_after
        text = f"HTTP {status}"
        if code:
            text += f" {code}"
        if error:
            text += f": {error}"
        if details:
            text += f" ({details})"
        if request_id:
            text += f" [request {request_id}]"
        super().__init__(text)

    @classmethod
    def from_answer(cls, status: int, reason: str, headers: Mapping[str, str], body: bytes,
                    ) -> LeaseApiError:
        """The error of an answer: its status, headers and (at most 64 KiB of) its body."""
        code = error = details = request_id = ""
        retry_after = 0.0
        text = body[:MAX_ERROR_BODY].decode("utf-8", errors="replace")
        wire: object = None
        try:
            wire = json.loads(text)
        except ValueError:
            pass
        if isinstance(wire, dict) and isinstance(wire.get("code"), str):
            code = wire["code"]
            error = _text(wire.get("error"))
            details = _text(wire.get("details"))
            request_id = _text(wire.get("request_id"))
            ms = wire.get("retry_after_ms")
            if (isinstance(ms, (int, float)) and not isinstance(ms, bool) and math.isfinite(ms)
                    and ms > 0):
                retry_after = ms / 1000
        elif text.strip() and len(text.strip()) <= 200:
            error = text.strip()  # a proxy's short answer ("Bad Gateway") is still worth showing
        if not error:
            error = reason
        if not request_id:
            request_id = headers.get("x-request-id", "")
        # Seconds only: an HTTP date from a proxy is rare enough to ignore.
        header = headers.get("retry-after", "").strip()
        if header.isdigit() and header.isascii():
            retry_after = max(retry_after, float(int(header)))
        return cls(status, code=code, error=error, details=details, request_id=request_id,
                   retry_after=retry_after)

    @property
    def temporary(self) -> bool:
        """Whether the same request may succeed later: rate and capacity limits, timeouts,
        server failures, and answers without the server's code (a proxy in front of it, a
        replica starting). Every other answer — a refused input, disabled elections, an
        unknown route — stays the same however often it is asked."""
        return (
            self.code == ""
            or self.status in (408, 429)
            or self.code == "capacity_exceeded"
            or self.status >= 500
        )

    @property
    def lease_not_current(self) -> bool:
        """``lease_not_current``: the token's term no longer holds the room (see
        :attr:`vacant` and :attr:`held_by_other`)."""
        return self.code == "lease_not_current"

    @property
    def vacant(self) -> bool:
        """404 ``lease_not_current``: the room is vacant, or the lease expired."""
        return self.lease_not_current and self.status == 404

    @property
    def held_by_other(self) -> bool:
        """400 ``lease_not_current``: another term holds the room now."""
        return self.lease_not_current and self.status != 404


class LeaseConnectionError(LeaseError, ConnectionError):
    """No answer: the connection failed, broke, or the answer did not come within the request
    timeout. The message names the operation and the URL (which never holds a token)."""


class ProtocolError(LeaseError):
    """An answer that is not the contract's: a body or an event that is not the object the
    contract names (``data: null``, a missing or mistyped field), an event stream line or event
    over the size bound, a malformed HTTP response. The message names what was read (the
    operation, or the event) and what was wrong; it never quotes a token."""


class InitialTimeoutError(LeaseError, TimeoutError):
    """A watch received no state within its initial timeout. ``__cause__`` is the last
    failure, when there was one."""

    timeout: float
    """The initial timeout that passed, in seconds."""

    def __init__(self, timeout: float, last: BaseException | None = None) -> None:
        self.timeout = timeout
        text = f"no state within the initial timeout ({timeout:g} s)"
        if last is not None:
            text += f"; last error: {last}"
        super().__init__(text)


class NoHolderError(LeaseError, TimeoutError):
    """``wait_for_holder`` received states, but none with a live holder within its timeout."""

    last_state: State
    """The last state received."""

    def __init__(self, timeout: float | None, last_state: State) -> None:
        self.last_state = last_state
        super().__init__(f"no holder within the timeout ({timeout:g} s): the last state has none"
                         if timeout is not None else "no holder: the last state has none")


#: Why a term ended: see :class:`LeadershipEndedError`.
EndReason = Literal["lost", "deadline", "resigned"]


class LeadershipEndedError(LeaseError):
    """Why a term of ``hold`` ended.

    ``reason`` is ``"lost"`` (the server says the term is over, or refuses to renew it for
    good; ``__cause__`` is its :class:`LeaseApiError`), ``"deadline"`` (the safety deadline, less
    ``stop_before``, came without a successful renewal: ``__cause__`` is the last failed
    renewal's error) or ``"resigned"``. ``hold`` raises it from the ``async with`` block whose
    body it cancelled.
    """

    reason: EndReason
    """``"lost"``, ``"deadline"`` or ``"resigned"``."""

    def __init__(self, reason: EndReason, message: str) -> None:
        self.reason = reason
        super().__init__(f"leadership ended ({reason}): {message}")


def _text(v: object) -> str:
    return v if isinstance(v, str) else ""
