"""lfp-swarm-lease: the Python package of lfp-swarm-lease, standard library only.

Three parts:

- :class:`SwarmLeaseController` holds the Swarm lease itself, through the lfp-swarm-lease
  binary that the platform wheels bundle (also the ``lfp-swarm-lease`` command, with ``run``)::

      controller = await SwarmLeaseController.connect(ControllerOptions(namespace="jobs"))
      result = await controller.try_acquire()
      if result.grant is not None:
          await reconcile(fencing_token=result.grant.fence)

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
from ._controller import SwarmLeaseController
from ._controller_hold import ControllerHold, ControllerLeadership
from ._controller_options import ControllerOptions
from ._errors import (
    BinaryNotFoundError,
    ConfigurationError,
    ControllerError,
    InitialTimeoutError,
    LeadershipEndedError,
    LeaseApiError,
    LeaseConnectionError,
    LeaseError,
    NoHolderError,
    NotHolderError,
    ProtocolError,
    StoreUnavailableError,
)
from ._grant import ElectionSnapshot, ElectionState, Grant, TryAcquireResult
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
    "BinaryNotFoundError",
    "CampaignResult",
    "ConfigurationError",
    "ControllerError",
    "ControllerHold",
    "ControllerLeadership",
    "ControllerOptions",
    "CreatedElection",
    "ElectionLeader",
    "ElectionSnapshot",
    "ElectionState",
    "ElectionStatus",
    "Grant",
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
    "NotHolderError",
    "Options",
    "ProtocolError",
    "RemoteLeaseObserver",
    "ResignResult",
    "State",
    "StoreUnavailableError",
    "SwarmLeaseController",
    "TryAcquireResult",
    "WatchFrame",
    "Watcher",
    "safety_margin",
    "__version__",
]
