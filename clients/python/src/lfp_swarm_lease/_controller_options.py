"""The settings of :class:`SwarmLeaseController`: the binary's settings, passed to it as flags,
and this process's own (timeouts, back-off, logger)."""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields

from ._options import LOGGER

#: The binary's settings that the options can set, each passed as its flag (``ttl_ms`` as
#: ``--ttl-ms``), which outranks the environment, the Swarm task's labels and the defaults.
_TEXT_SETTINGS = ("namespace", "holder_id", "node_id", "task_id", "store", "etcd_ca_file",
                  "etcd_cert_file", "etcd_key_file", "etcd_username")
_NUMBER_SETTINGS = ("ttl_ms", "max_cas_retries", "max_clock_skew_ms", "etcd_dial_timeout_ms",
                    "etcd_request_timeout_ms")

#: The variables' prefix unless ``env_prefix`` changes it.
DEFAULT_ENV_PREFIX = "SWARM_LEASE"


@dataclass(frozen=True)
class ControllerOptions:
    """Settings of :class:`SwarmLeaseController`.

    The first group are the binary's settings: a field left ``None`` is not passed, so the
    binary takes it from the environment (``SWARM_LEASE_*``, or the prefix of ``env_prefix``,
    each also as ``*_FILE``), then the current Swarm task's labels — the namespace from the
    service's name, the holder id from the node's id, the task id —, then its defaults; a
    field that is set is passed as its flag and wins. The binary checks every value and names
    the setting and its source when one is wrong (:class:`ConfigurationError`). The etcd
    password never travels on a command line: set ``etcd_password_file``, or the variable
    ``SWARM_LEASE_ETCD_PASSWORD`` or ``SWARM_LEASE_ETCD_PASSWORD_FILE``.

    The rest are this process's: durations in seconds. Invalid types raise ``ValueError``
    naming the option, before anything runs.
    """

    namespace: str | None = None
    """The election (default: the Swarm service's name, in a Swarm task)."""
    holder_id: str | None = None
    """This contender's id (default: the Swarm node's id in a Swarm task, else the
    hostname)."""
    node_id: str | None = None
    """The Swarm node id recorded with a term (default: discovered)."""
    task_id: str | None = None
    """The Swarm task id recorded with a term, part of the identity (default: discovered)."""
    store: str | None = None
    """Where the election lives: ``swarm`` (the default: a Swarm manager's Docker API),
    ``etcd://HOST:PORT[,HOST:PORT…][/PREFIX]``, or ``file:///abs/dir`` (one host only)."""
    ttl_ms: int | None = None
    """The lease duration in milliseconds (default 30000)."""
    max_cas_retries: int | None = None
    """Conflicting writes retried within one command (default 8)."""
    max_clock_skew_ms: int | None = None
    """The wall-clock difference between hosts tolerated, in milliseconds (default 1000, at
    most a tenth of the TTL)."""
    etcd_ca_file: str | None = None
    """The CA bundle of an etcd store's TLS."""
    etcd_cert_file: str | None = None
    """The client certificate for an etcd store."""
    etcd_key_file: str | None = None
    """The client certificate's key."""
    etcd_username: str | None = None
    """The etcd user (its password: ``etcd_password_file``)."""
    etcd_password_file: str | None = None
    """A file holding the etcd password, handed to the binary as
    ``SWARM_LEASE_ETCD_PASSWORD_FILE`` (under the prefix) in its environment."""
    etcd_dial_timeout_ms: int | None = None
    """Bound on connecting to an etcd member (default 5000)."""
    etcd_request_timeout_ms: int | None = None
    """Bound on one etcd request (default 5000)."""
    env_prefix: str | None = None
    """The prefix of every variable the binary reads (default ``SWARM_LEASE``)."""

    timeout: float = 60.0
    """Bounds each command (the binary's ``--timeout``): a Swarm write can block 20 s while
    the Raft leader changes."""
    min_backoff: float = 0.25
    """``hold``: the shortest wait before a failed attempt is tried again."""
    max_backoff: float = 30.0
    """``hold``: the longest wait before a failed attempt is tried again."""
    logger: logging.Logger = field(default=LOGGER)
    """Receives the binary's warnings and ``hold``'s transitions."""
    jitter: Callable[[], float] = field(default=random.random)
    """The random source of back-off and renewal jitter, in [0, 1)."""

    def __post_init__(self) -> None:
        for name in (*_TEXT_SETTINGS, "etcd_password_file", "env_prefix"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value or "\0" in value):
                raise ValueError(f"lfp-swarm-lease: option {name} ({value!r}) must be a "
                                 "non-empty string, or None to leave it to the environment")
        for name in _NUMBER_SETTINGS:
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                raise ValueError(f"lfp-swarm-lease: option {name} ({value!r}) must be a whole "
                                 "number, or None to leave it to the environment")
        for name in ("timeout", "min_backoff", "max_backoff"):
            value = getattr(self, name)
            if (not isinstance(value, (int, float)) or isinstance(value, bool)
                    or not value > 0 or not math.isfinite(value)):
                raise ValueError(f"lfp-swarm-lease: option {name} ({value!r}) must be a "
                                 "positive number of seconds")
        if self.max_backoff < self.min_backoff:
            raise ValueError(f"lfp-swarm-lease: option max_backoff ({self.max_backoff:g}) must be "
                             f"at least min_backoff ({self.min_backoff:g})")

    def flags(self) -> list[str]:
        """The binary's flags for the settings that are set, as ``--name=value`` (so that a
        value starting with ``-`` is not taken for a flag)."""
        out = [f"--timeout={round(self.timeout * 1000)}ms"]
        if self.env_prefix is not None:
            out.append(f"--env-prefix={self.env_prefix}")
        for f in fields(self):
            if f.name in _TEXT_SETTINGS or f.name in _NUMBER_SETTINGS:
                value = getattr(self, f.name)
                if value is not None:
                    out.append(f"--{f.name.replace('_', '-')}={value}")
        return out

    def environment(self, base: Mapping[str, str]) -> dict[str, str]:
        """The binary's environment: ``base`` (this process's), with ``etcd_password_file``
        as the variable that names it — which then outranks a password in the environment."""
        env = dict(base)
        if self.etcd_password_file is not None:
            var = f"{self.env_prefix or DEFAULT_ENV_PREFIX}_ETCD_PASSWORD"
            env.pop(var, None)
            env[f"{var}_FILE"] = self.etcd_password_file
        return env
