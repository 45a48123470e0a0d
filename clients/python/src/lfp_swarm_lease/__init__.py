"""lfp-swarm-lease: the Python client of lfp-swarm-lease, standard library only.

Two parts:

- :class:`RemoteLeaseObserver` follows a Swarm election through a controller's event stream
  (``GET /v1/events`` of any ``run`` replica, or ``serve`` with a namespace)::

      watcher = RemoteLeaseObserver.connect("http://controllers:8080").watch()
      async for state in watcher:
          print(state.holder_id, state.fence)

- :class:`LeaseClient` speaks every endpoint of the contract, including the elections
  ("rooms") API, with which any process — no Docker access needed — elects a leader::

      client = LeaseClient("http://elect:8080")
      async with client.hold("nightly-report", "worker-a", ttl=15) as leadership:
          await run_report(fence=leadership.fence)

Leader tokens (:class:`LeaderToken`) travel only in request bodies and print as
``[redacted]``. Every exception is a :class:`LeaseError`.
"""

from importlib.metadata import PackageNotFoundError, version

from ._client import LeaseClient
from ._errors import (
    InitialTimeoutError,
    LeadershipEndedError,
    LeaseApiError,
    LeaseConnectionError,
    LeaseError,
    NoHolderError,
    ProtocolError,
)
from ._hold import Hold
from ._leadership import Leadership
from ._models import (
    CampaignResult,
    CreatedElection,
    ElectionLeader,
    ElectionStatus,
    Health,
    Info,
    ResignResult,
    State,
    WatchFrame,
)
from ._observer import RemoteLeaseObserver
from ._options import Options
from ._timing import safety_margin
from ._token import LeaderToken
from ._watcher import Watcher

try:
    __version__ = version("lfp-swarm-lease")
except PackageNotFoundError:  # run from a source tree (PYTHONPATH), not installed
    __version__ = "0+unknown"

__all__ = [
    "CampaignResult",
    "CreatedElection",
    "ElectionLeader",
    "ElectionStatus",
    "Health",
    "Hold",
    "Info",
    "InitialTimeoutError",
    "LeaderToken",
    "LeadershipEndedError",
    "Leadership",
    "LeaseApiError",
    "LeaseClient",
    "LeaseConnectionError",
    "LeaseError",
    "NoHolderError",
    "Options",
    "ProtocolError",
    "RemoteLeaseObserver",
    "ResignResult",
    "State",
    "WatchFrame",
    "Watcher",
    "safety_margin",
    "__version__",
]
