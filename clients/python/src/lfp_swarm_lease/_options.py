"""The settings of an observer or a client, their defaults and their checks."""

from __future__ import annotations

import logging
import math
import random
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import SplitResult, urlsplit

#: Where the client logs when no logger is given. Nothing it logs contains a token.
LOGGER = logging.getLogger("lfp_swarm_lease")


@dataclass(frozen=True)
class Options:
    """Settings of :class:`RemoteLeaseObserver` and :class:`LeaseClient`; durations are in
    seconds. The defaults are the Go and TypeScript clients'. Invalid values raise
    ``ValueError`` naming the option."""

    request_timeout: float = 10.0
    """Bounds each request other than a watch, from connecting to the end of the answer."""
    initial_timeout: float = 60.0
    """How long a watch waits for its first state before it raises
    :class:`InitialTimeoutError`: long enough for a controller starting together with its
    observers."""
    min_backoff: float = 0.25
    """The shortest wait before a reconnect (or, for ``hold``, before a failed campaign is
    retried)."""
    max_backoff: float = 30.0
    """The longest wait before a reconnect. A server's ``retry:`` field raises the shortest
    wait up to this."""
    idle_timeout: float = 45.0
    """How long a stream may deliver nothing, not even a keep-alive comment, before it is
    dropped and reopened (three of the server's 15 s keep-alives; 0 disables it). Keep it above
    the server's ``keep_alive_ms``."""
    logger: logging.Logger = field(default=LOGGER)
    """Receives connection failures, reconnects and ``hold``'s transitions; never a token."""
    jitter: Callable[[], float] = field(default=random.random)
    """The random source of back-off and renewal jitter, in [0, 1)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Extra request headers, e.g. the authentication a reverse proxy in front asks for."""
    ssl_context: ssl.SSLContext | None = None
    """For ``https://`` URLs (default: the system's trust store)."""

    def __post_init__(self) -> None:
        for name in ("request_timeout", "initial_timeout", "min_backoff"):
            _positive(name, getattr(self, name))
        _positive("max_backoff", self.max_backoff)
        if self.max_backoff < self.min_backoff:
            raise ValueError(f"lfp-swarm-lease: option max_backoff ({self.max_backoff:g}) must be "
                             f"at least min_backoff ({self.min_backoff:g})")
        if not (isinstance(self.idle_timeout, (int, float)) and self.idle_timeout >= 0
                and math.isfinite(self.idle_timeout)):
            raise ValueError(f"lfp-swarm-lease: option idle_timeout ({self.idle_timeout!r}) must "
                             "be 0 (off) or a positive number of seconds")
        for k, v in self.headers.items():
            if not isinstance(k, str) or not isinstance(v, str) or "\n" in k + v or "\r" in k + v:
                raise ValueError("lfp-swarm-lease: option headers: names and values are strings "
                                 "without line breaks")


def _positive(name: str, value: object) -> None:
    if (not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0
            or not math.isfinite(value)):
        raise ValueError(f"lfp-swarm-lease: option {name} ({value!r}) must be a positive number "
                         "of seconds")


def base_url_of(base_url: str) -> SplitResult:
    """The parsed base URL (``http://`` or ``https://`` and a host; a path prefix of a reverse
    proxy is kept, a trailing slash dropped)."""
    problem = "want http:// or https:// and a host"
    try:
        u = urlsplit(base_url)
        u.port  # noqa: B018 - raises ValueError for a port that is not a number
    except (ValueError, TypeError, AttributeError):
        raise ValueError(f"lfp-swarm-lease: invalid base URL {base_url!r}: {problem}") from None
    if u.scheme not in ("http", "https") or not u.hostname:
        raise ValueError(f"lfp-swarm-lease: invalid base URL {base_url!r}: {problem}")
    if u.query or u.fragment:
        raise ValueError(f"lfp-swarm-lease: invalid base URL {base_url!r}: no query or fragment")
    if u.username is not None or u.password is not None:
        # Credentials in a URL end up in messages and logs: they belong in Options.headers.
        raise ValueError("lfp-swarm-lease: invalid base URL: no user info; pass credentials in "
                         "Options(headers=...)")
    return u._replace(path=u.path.rstrip("/"))


def safe_jitter(jitter: Callable[[], float]) -> float:
    """``jitter()`` when it is in [0, 1), else 0: a broken random source must not break the
    bounds."""
    j = jitter()
    return j if isinstance(j, float | int) and 0 <= j < 1 else 0.0
