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


class BinaryNotFoundError(LeaseError, FileNotFoundError):
    """No lfp-swarm-lease binary to run: this installation has none (the pure-Python wheel or
    the sdist), or ``LFP_SWARM_LEASE_BIN`` names no executable. The message says how to get
    one."""


class ControllerError(LeaseError):
    """A command of the lfp-swarm-lease binary failed: its exit status and its ``--json``
    error. The message is the binary's, which names the setting and where its value came from
    when a setting is wrong; it never contains a secret.

    The exit statuses (and ``code``): 1 an unexpected failure (``internal``), 2 an invalid
    setting or argument (``invalid_configuration``, :class:`ConfigurationError`), 3 the
    identity and fence do not hold the lease (``not_holder``, :class:`NotHolderError`), 4 the
    stored election cannot be read (``corrupt_state``), 5 the store cannot be reached
    (``store_unreachable``, :class:`StoreUnavailableError`), 6 the Docker engine is not a
    Swarm manager (``not_swarm_manager``), 7 the store's cluster has no quorum (``no_quorum``,
    :class:`StoreUnavailableError`), 8 a write's outcome is unknown (``outcome_unknown``), 9
    conflicting writes won every attempt (``too_many_conflicts``), 11 the store refuses access
    (``permission_denied``), 12 the store is full (``store_full``).
    """

    command: str
    """The command that failed (``try-acquire``, ``renew``, …)."""
    exit_code: int
    """The binary's exit status."""
    code: str
    """The binary's stable, machine-readable code (``""`` when it printed none)."""
    error: str
    """The binary's message."""

    def __init__(self, command: str, exit_code: int, code: str, error: str) -> None:
        self.command = command
        self.exit_code = exit_code
        self.code = code
        self.error = error
        super().__init__(f"lfp-swarm-lease {command}: {error} (exit {exit_code}"
                         + (f", {code})" if code else ")"))

    @property
    def temporary(self) -> bool:
        """Whether the same command may succeed later: the store unreachable or without
        quorum, an unknown outcome, conflicting writes."""
        return self.exit_code in (5, 7, 8, 9)


class ConfigurationError(ControllerError, ValueError):
    """Exit 2: a setting or argument is invalid. The message names the setting and where its
    value came from (``flag --ttl-ms`` for a :class:`ControllerOptions` field,
    ``environment variable SWARM_LEASE_TTL_MS``, a ``_FILE``, a container label)."""


class NotHolderError(ControllerError):
    """Exit 3: this identity does not hold the lease with that fence (another holder, or the
    term is over): renewing or releasing it cannot succeed."""


class StoreUnavailableError(ControllerError, ConnectionError):
    """Exit 5 or 7: the store (the Docker engine, etcd) cannot be reached, or its cluster has
    no quorum for writes."""


def controller_error(command: str, exit_code: int, code: str, error: str) -> ControllerError:
    """The exception of a failed command, by its exit status."""
    cls: type[ControllerError] = {2: ConfigurationError, 3: NotHolderError,
                                  5: StoreUnavailableError,
                                  7: StoreUnavailableError}.get(exit_code, ControllerError)
    return cls(command, exit_code, code, error)
