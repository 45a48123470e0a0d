"""LeaseClient: every endpoint of the contract — the controller endpoints and the elections
("rooms") API — as single calls, plus the room watch and ``hold``."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any, Callable, TypeVar
from urllib.parse import SplitResult

from . import _http
from ._errors import LeaseApiError, LeaseConnectionError, ProtocolError
from ._hold import Hold, check_ttl
from ._models import (
    CampaignRequest,
    CampaignResult,
    CreatedElection,
    ElectionStatus,
    Health,
    Info,
    RenewRequest,
    ResignRequest,
    ResignResult,
    State,
    WatchFrame,
    same_room_state,
)
from ._observer import RemoteLeaseObserver
from ._options import Options, base_url_of
from ._stream import StreamSpec, watch_stream
from ._timeout import within
from ._token import LeaderToken
from ._watcher import Watcher
from ._wire import decode, encode

T = TypeVar("T")

#: Bounds a successful answer: every answer of the contract is well under 4 KiB.
MAX_BODY = 1 << 20

_ROOM_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")


def check_room_id(room_id: str) -> None:
    """Refuses, before anything is sent, what the server would refuse (``invalid_input``)."""
    if not isinstance(room_id, str) or not _ROOM_ID.fullmatch(room_id):
        raise ValueError(f"lfp-swarm-lease: election id {room_id!r}: want 8 to 64 letters, digits, "
                         "'_' or '-' (nothing was sent)")


class LeaseClient:
    """A client of one lfp-swarm-lease server (``run``'s controller API, ``serve``, or any
    server of the same contract at ``base_url``, e.g. ``"http://elect:8080"``; a path prefix of
    a reverse proxy is kept). It holds only configuration; every call opens its own connection.

    Calls raise :class:`LeaseApiError` for any answer other than the expected one,
    :class:`LeaseConnectionError` when no answer came within ``request_timeout``, and
    :class:`ProtocolError` for an answer that is not the contract's; all are
    :class:`LeaseError`. Invalid arguments raise ``ValueError`` before anything is sent.
    """

    def __init__(self, base_url: str, options: Options | None = None) -> None:
        self._base = base_url_of(base_url)
        self._options = options or Options()

    @property
    def base_url(self) -> str:
        """The base URL the client talks to."""
        return self._base.geturl()

    @property
    def options(self) -> Options:
        """The client's settings."""
        return self._options

    def __repr__(self) -> str:
        return f"LeaseClient({self.base_url!r})"

    # --- the controller endpoints ---

    async def healthz(self) -> Health:
        """``GET /healthz``: process liveness."""
        return await self._call("healthz", "GET", ("healthz",), None, 200, Health)

    async def readyz(self) -> Health:
        """``GET /readyz``: store readiness; an unready server raises :class:`LeaseApiError`
        with status 503."""
        return await self._call("readyz", "GET", ("readyz",), None, 200, Health)

    async def info(self) -> Info:
        """``GET /v1/info``: the bound election, the process's identity, store and version."""
        return await self._call("info", "GET", ("v1", "info"), None, 200, Info)

    async def state(self) -> State:
        """``GET /v1/state``: the election's current state."""
        return await self._call("state", "GET", ("v1", "state"), None, 200, State)

    def observer(self) -> RemoteLeaseObserver:
        """An observer of ``GET /v1/events`` on this server, with this client's options."""
        return RemoteLeaseObserver(self.base_url, self._options)

    # --- the elections API ---

    async def create_room(self) -> CreatedElection:
        """``POST /elections``: a new room id. It stores nothing; a room of one's own choosing
        (8 to 64 of ``[A-Za-z0-9_-]``) works as well."""
        return await self._call("create", "POST", ("elections",), None, 201, CreatedElection)

    async def campaign(self, room_id: str, candidate_id: str, *, ttl: int | None = None,
                       metadata: str | None = None) -> CampaignResult:
        """``POST /elections/{id}/campaign``, once: a vacant room makes the caller the leader of
        a new term, with a token; otherwise the answer is a follower's, naming the leader and
        when to retry. ``ttl`` is whole seconds, 5 to 300 (``None``: the server's 30); the range
        is the server's to check, so that its answer (``invalid_ttl``) is the one seen."""
        check_room_id(room_id)
        body = CampaignRequest(candidate_id=candidate_id, ttl_seconds=check_ttl(ttl, "campaign"),
                               metadata=metadata)
        return await self._leader_call("campaign", room_id, body)

    async def renew(self, room_id: str, token: LeaderToken | str, ttl: int | None = None,
                    ) -> CampaignResult:
        """``POST /elections/{id}/renew``: extends the token's term for ``ttl`` seconds from now
        (``None``: the server's 30, not the campaign's TTL), keeping the term. A term that is
        over raises :class:`LeaseApiError` ``lease_not_current`` (:attr:`~LeaseApiError.vacant`
        or :attr:`~LeaseApiError.held_by_other`)."""
        check_room_id(room_id)
        body = RenewRequest(leader_token=_token(token), ttl_seconds=check_ttl(ttl, "renew"))
        return await self._leader_call("renew", room_id, body)

    async def resign(self, room_id: str, token: LeaderToken | str) -> ResignResult:
        """``POST /elections/{id}/resign``: ends the token's term at once, so that another
        candidate wins the room without waiting for the lease to expire. Errors as for
        :meth:`renew`."""
        check_room_id(room_id)
        body = encode(ResignRequest(leader_token=_token(token)))
        return await self._call("resign", "POST", ("elections", room_id, "resign"), body, 200,
                                ResignResult)

    async def status(self, room_id: str) -> ElectionStatus:
        """``GET /elections/{id}``: the room's leader, never its token; a room nobody campaigned
        in is vacant."""
        check_room_id(room_id)
        return await self._call("status", "GET", ("elections", room_id), None, 200, ElectionStatus)

    def watch_room(self, room_id: str, *, initial_timeout: float | None = None,
                   ) -> Watcher[WatchFrame]:
        """The states of a room from ``GET /elections/{id}/watch``: the current state, then every
        change of leader, term, metadata or expiry (a renewal moves the expiry); a frame equal
        to the one before (a reconnect's snapshot, a duplicate) yields nothing.

        The server ends streams routinely (their lifetime, a lagging client, a store failure),
        so the watch reconnects after a jittered back-off, or the server's ``Retry-After`` when
        longer. Without a first state within ``initial_timeout`` (default: the client's) it
        raises :class:`InitialTimeoutError`; an answer that retrying cannot change (an invalid
        room, disabled elections, a server without the elections API) raises
        :class:`LeaseApiError` at once.
        """
        check_room_id(room_id)
        if initial_timeout is None:
            initial_timeout = self._options.initial_timeout
        elif not initial_timeout > 0:
            raise ValueError(f"lfp-swarm-lease: watch_room: initial_timeout {initial_timeout!r} "
                             "must be positive")
        spec = self._room_spec(room_id, initial_timeout)
        return Watcher(lambda: watch_stream(spec))

    def hold(self, room_id: str, candidate_id: str, *, ttl: int = 30,
             metadata: str | None = None, stop_before: float = 0.0,
             renew_interval: float | None = None) -> Hold:
        """Campaigns in the room until it wins and holds the term for the body of an ``async
        with`` block::

            async with client.hold("nightly-report", "worker-a", ttl=15) as leadership:
                await run_report(fence=leadership.fence)

        See :class:`Hold`. The arguments are checked here, before any request: the room id,
        ``ttl`` (whole seconds from 5 to 300) and the timing rule (``renew_interval`` — default
        a third of the TTL — plus ``stop_before`` below the TTL minus its safety margin).
        """
        check_room_id(room_id)
        return Hold(self, room_id, candidate_id, ttl=ttl, metadata=metadata,
                    stop_before=stop_before, renew_interval=renew_interval)

    # --- plumbing ---

    def _room_spec(self, room_id: str, initial_timeout: float | None) -> StreamSpec[WatchFrame]:
        return StreamSpec(
            url=_http.url_of(self._base, "elections", room_id, "watch"),
            options=self._options,
            initial_timeout=initial_timeout,
            server="a server of the elections API",
            state_events=frozenset({"state", "message"}),
            decode=lambda data, where: decode(WatchFrame, data, f"{where}: not a WatchFrame"),
            same=same_room_state,
            # An invalid room id, disabled elections or a server without the API stay so
            # however often they are asked.
            end_on_permanent_answer=True,
            # The server's Retry-After says when its limits let this client in again: earlier
            # only earns another 429.
            cap_retry_after=False,
            # The server ends streams routinely (their lifetime, a lagging client): no warning.
            reconnect_level=logging.DEBUG,
            reconnect_message="lfp-swarm-lease: room watch ended",
        )

    async def _leader_call(self, op: str, room_id: str, body: CampaignRequest | RenewRequest,
                           ) -> CampaignResult:
        result = await self._call(op, "POST", ("elections", room_id, op), encode(body), 200,
                                  CampaignResult)
        if result.is_leader and result.leader_token is None:
            raise ProtocolError(f"lfp-swarm-lease: {op} {room_id}: a leader answer without a "
                                "leader token")
        return result

    async def _call(self, op: str, method: str, path: tuple[str, ...], body: dict[str, Any] | None,
                    want: int, model: Callable[..., T]) -> T:
        """Sends one request within the request timeout and decodes a ``want`` answer into
        ``model``; any other answer is a :class:`LeaseApiError`."""
        url = _http.url_of(self._base, *path)
        timeout = self._options.request_timeout
        try:
            return await within(self._send(op, url, method, body, want, model), timeout)
        except asyncio.TimeoutError:
            raise LeaseConnectionError(f"lfp-swarm-lease: {op} {_http.show(url)}: no answer within "
                                       f"the request timeout ({timeout:g} s)") from None

    async def _send(self, op: str, url: SplitResult, method: str, body: dict[str, Any] | None,
                    want: int, model: Callable[..., T]) -> T:
        what = f"lfp-swarm-lease: {op} {_http.show(url)}"
        headers = {"Accept": "application/json", "User-Agent": _http.user_agent(),
                   **self._options.headers}
        data = None
        if body is not None:
            headers["Content-Type"] = "application/json"
            data = json.dumps(body).encode()
        response = await _http.request(url, method, body=data, headers=headers,
                                       ssl_context=self._options.ssl_context, what=what)
        try:
            if response.status != want:
                raise LeaseApiError.from_answer(response.status, response.reason, response.headers,
                                                await response.read_prefix(64 << 10))
            raw = await response.read_body(MAX_BODY)
        finally:
            response.close()
        request_id = response.headers.get("x-request-id", "")
        answer = f"{what}: the answer (HTTP {response.status}, request {request_id or '?'})"
        if raw is None:
            raise ProtocolError(f"{answer} is over {MAX_BODY} bytes")
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError):
            raise ProtocolError(f"{answer} is not JSON") from None
        return decode(model, obj, answer)


def _token(token: LeaderToken | str) -> LeaderToken:
    return token if isinstance(token, LeaderToken) else LeaderToken(token)
