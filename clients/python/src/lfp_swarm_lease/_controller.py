"""SwarmLeaseController: the Swarm lease from Python, through the bundled binary's one-shot
commands (``try-acquire``, ``renew``, ``release``, ``inspect``, ``init``, ``destroy``, each with
``--json``), so that the election's rules, stores and settings are the binary's own."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Callable
from typing import Any

from ._binary import find_binary
from ._controller_hold import ControllerHold
from ._controller_options import ControllerOptions
from ._errors import BinaryNotFoundError, LeaseError, ProtocolError, controller_error
from ._grant import ElectionSnapshot, Grant, TryAcquireResult
from ._term import in_background
from ._timeout import within
from ._wire import decode

#: Bounds what a command prints: its JSON is well under 4 KiB.
MAX_OUTPUT = 1 << 20
#: Bounds what is kept of its standard error (warnings, the error line).
MAX_STDERR = 64 << 10
#: How long past its own ``--timeout`` a command may take before it is stopped.
GRACE = 10.0
#: How long a command stopped on a cancellation has to end after SIGTERM before SIGKILL.
STOP_WAIT = 5.0
#: try-acquire's exit status when another contender holds the lease (EX_TEMPFAIL).
EXIT_HELD = 75


class SwarmLeaseController:
    """One election's contender, for a process that holds the Swarm lease itself::

        controller = await SwarmLeaseController.connect(
            ControllerOptions(namespace="consul-controllers", holder_id="manager-a"))
        result = await controller.try_acquire()
        if result.grant is not None:
            await reconcile(fencing_token=result.grant.fence)
            grant = await controller.renew(result.grant)
            await controller.release(grant)

    Each call runs one command of the lfp-swarm-lease binary (the one the platform wheel
    bundles, or ``LFP_SWARM_LEASE_BIN``), which settles the election in the store: swarm (the
    default), etcd or file. A failed command raises :class:`ControllerError`
    (:class:`ConfigurationError`, :class:`NotHolderError`, :class:`StoreUnavailableError`);
    a lease held by another is a result, not an error. Nothing renews a grant by itself:
    renew it before ``ttl_ms`` passes — or use :meth:`hold`, or better the binary's ``run``,
    which also stops the leader's work on time.
    """

    def __init__(self, options: ControllerOptions, binary: str) -> None:
        """Use :meth:`connect`."""
        self._options = options
        self._binary = binary

    @classmethod
    async def connect(cls, options: ControllerOptions | None = None) -> SwarmLeaseController:
        """A controller of the election that ``options``, the environment and the Swarm task
        name. It reads the election once, so that a setting the binary refuses
        (:class:`ConfigurationError`) or a store it cannot reach (:class:`StoreUnavailableError`)
        fails here rather than at the first acquisition. Raises :class:`BinaryNotFoundError`
        when this installation has no binary."""
        controller = cls(options or ControllerOptions(), find_binary())
        await controller.inspect()
        return controller

    @property
    def options(self) -> ControllerOptions:
        """The controller's settings."""
        return self._options

    def __repr__(self) -> str:
        return f"SwarmLeaseController(binary={self._binary!r})"

    async def try_acquire(self, *, wait: float = 0) -> TryAcquireResult:
        """Tries once to become the holder: ``result.grant`` is the new term (a new fence, also
        when this process held the lease already), or ``None`` with ``result.current_holder_id``
        naming the holder. With ``wait`` (seconds), keeps trying until the lease is won or
        ``wait`` has passed; a release or expiry wakes it at once. This process is the caller
        of its terms (``--caller-pid``): a controller restarted under the same holder ID takes
        its predecessor's live term once that process has exited, with nothing left in its
        process group, on this host; elsewhere when the term expires."""
        if not isinstance(wait, (int, float)) or isinstance(wait, bool) or not 0 <= wait < 1e9:
            raise ValueError(f"lfp-swarm-lease: try_acquire: wait ({wait!r}) must be 0 or a "
                             "positive number of seconds")
        args = [f"--caller-pid={os.getpid()}"]
        if wait:
            args.append(f"--wait={round(wait * 1000)}ms")
        out = await self._run("try-acquire", *args, longer=wait, interrupted=self._hand_back)
        result = decode(TryAcquireResult, out, "try-acquire --json")
        if result.acquired != (result.grant is not None):
            raise ProtocolError("try-acquire --json: acquired and grant disagree")
        return result

    async def renew(self, grant: Grant) -> Grant:
        """Extends the lease of ``grant``'s term by the TTL from now; the fence stays.
        Raises :class:`NotHolderError` when this identity no longer holds it with that fence
        (the term is over: stop the leader's work)."""
        out = await self._run("renew", str(_fence(grant)))
        renewed = decode(Grant, out, "renew --json")
        if renewed.fence != grant.fence:
            raise ProtocolError(f"renew --json: fence {renewed.fence}, want {grant.fence}")
        return renewed

    async def release(self, grant: Grant) -> None:
        """Gives up ``grant``'s term, so that another contender takes over at once (the next
        term gets a higher fence). Raises :class:`NotHolderError` when this identity does not
        hold the lease with that fence."""
        await self._run("release", str(_fence(grant)))

    async def inspect(self) -> ElectionSnapshot:
        """Reads the election; never writes."""
        return decode(ElectionSnapshot, await self._run("inspect"), "inspect --json")

    async def init(self) -> ElectionSnapshot:
        """Creates the election's record (on Swarm, its anchor service) if there is none, and
        returns it. Optional: the first acquisition creates it too."""
        return decode(ElectionSnapshot, await self._run("init"), "init --json")

    async def destroy(self) -> None:
        """Removes the election; a holder's next renewal fails. A re-created election's fences
        start above every fence issued before."""
        await self._run("destroy")

    def hold(self, *, stop_before: float = 0.0,
             renew_interval: float | None = None) -> ControllerHold:
        """Acquires the lease, waiting for it, and holds it for the body of an ``async with``
        block::

            async with controller.hold() as leadership:
                await reconcile(fencing_token=leadership.fence)

        See :class:`ControllerHold`."""
        return ControllerHold(self, stop_before=stop_before, renew_interval=renew_interval)

    # --- plumbing ---

    def _hand_back(self, out: bytes) -> None:
        """Releases the term of a try-acquire that was cancelled after it had won."""
        try:
            result = decode(TryAcquireResult, json.loads(out), "try-acquire --json")
        except (ValueError, LeaseError):
            return
        if result.grant is not None:
            in_background(self.release(result.grant))

    async def _run(self, command: str, *args: str, longer: float = 0,
                   interrupted: Callable[[bytes], None] | None = None) -> dict[str, Any]:
        """Runs ``command`` with ``args``, ``--json`` and the options' flags, and returns its
        JSON object; a failure raises the exception of its exit status. A command that takes
        its ``--timeout`` (plus ``longer``) and :data:`GRACE`, or whose caller is cancelled, is
        stopped; ``interrupted`` then receives what it printed if it had finished."""
        opts = self._options
        try:
            proc = await asyncio.create_subprocess_exec(
                self._binary, command, *args, "--json", *opts.flags(),
                env=opts.environment(os.environ), stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        except OSError as e:
            raise BinaryNotFoundError(f"cannot run {self._binary}: {e.strerror or e}") from e
        assert proc.stdout is not None and proc.stderr is not None
        stdout = asyncio.ensure_future(_read(proc.stdout, MAX_OUTPUT))
        stderr = asyncio.ensure_future(_read(proc.stderr, MAX_STDERR))
        finished = asyncio.gather(stdout, stderr, proc.wait())
        bound = opts.timeout + longer + GRACE
        try:
            await within(asyncio.shield(finished), bound)
        except BaseException as e:
            await asyncio.shield(_stop(proc, finished))
            if interrupted is not None and proc.returncode == 0 and not stdout.cancelled():
                interrupted(stdout.result()[0])
            if isinstance(e, asyncio.TimeoutError):
                raise LeaseError(f"lfp-swarm-lease {command}: no answer within {bound:g} s; the "
                                 "command was stopped") from None
            raise
        (out, overflow), (err, _) = stdout.result(), stderr.result()
        code = proc.returncode
        assert code is not None
        if overflow:
            raise ProtocolError(f"{command} --json: more than {MAX_OUTPUT} bytes of output")
        obj: object = None
        if out.strip():
            try:
                obj = json.loads(out)
            except ValueError:
                raise ProtocolError(f"{command} --json: the output is not JSON") from None
        if code == 0 or (code == EXIT_HELD and command == "try-acquire"):
            for line in err.decode(errors="replace").splitlines():
                if line.strip():
                    opts.logger.warning("lfp-swarm-lease %s: %s", command, line.strip())
            if not isinstance(obj, dict):
                raise ProtocolError(f"{command} --json: want a JSON object")
            return obj
        if isinstance(obj, dict) and isinstance(obj.get("error"), str):
            raise controller_error(command, code, str(obj.get("code") or ""), obj["error"])
        # No JSON error: a crash, or a signal. Its last lines of stderr say what happened.
        last = err.decode(errors="replace").strip().splitlines()[-3:]
        why = f"killed by signal {-code}" if code < 0 else "no JSON error"
        raise controller_error(command, code, "", "; ".join([why, *last]))


def _fence(grant: Grant) -> int:
    if not isinstance(grant, Grant):
        raise TypeError(f"lfp-swarm-lease: want a Grant, got {type(grant).__name__}")
    return grant.fence


async def _read(stream: asyncio.StreamReader, limit: int) -> tuple[bytes, bool]:
    """Everything the stream delivers, of which the first ``limit`` bytes are kept (and
    whether there was more): read to the end, so that the writer never blocks."""
    kept = bytearray()
    overflow = False
    while chunk := await stream.read(1 << 16):
        room = limit - len(kept)
        if len(chunk) > room:
            overflow = True
        kept += chunk[:max(room, 0)]
    return bytes(kept), overflow


async def _stop(proc: asyncio.subprocess.Process, finished: asyncio.Future[Any]) -> None:
    """Stops a command: SIGTERM (it gives up its store operation), then SIGKILL if it has not
    ended within :data:`STOP_WAIT`."""
    if proc.returncode is None:
        try:
            proc.send_signal(signal.SIGTERM)
            await within(proc.wait(), STOP_WAIT)
        except ProcessLookupError:
            pass
        except asyncio.TimeoutError:
            proc.kill()
    await asyncio.gather(finished, return_exceptions=True)
