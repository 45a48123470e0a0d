"""SwarmLeaseController against the real binary: the file store for the lease's outcomes, a real
etcd that is killed for a store that goes down, and the settings the binary refuses, named with
their source."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from lfp_swarm_lease import (
    BinaryNotFoundError,
    ConfigurationError,
    ControllerError,
    ControllerOptions,
    Grant,
    NotHolderError,
    StoreUnavailableError,
    SwarmLeaseController,
)
from support import Etcd, free_port, namespace


def options(store: str, holder: str, ns: str, **over: object) -> ControllerOptions:
    return ControllerOptions(store=store, holder_id=holder, namespace=ns, **over)  # type: ignore


async def test_acquire_renew_release_and_held_by_another(controller_binary: str,
                                                         store: str) -> None:
    ns = namespace()
    a = await SwarmLeaseController.connect(options(store, "manager-a", ns))
    b = await SwarmLeaseController.connect(options(store, "manager-b", ns))
    won = await a.try_acquire()
    assert won.acquired and won.grant is not None
    grant = won.grant
    assert (grant.holder_id, grant.namespace) == ("manager-a", ns)
    assert won.current_holder_id == "manager-a" and won.available_at is None

    held = await b.try_acquire()
    assert not held.acquired and held.grant is None
    assert held.current_holder_id == "manager-a"
    assert held.current.fence == grant.fence
    assert held.available_at is not None and held.available_at > grant.expires_at

    renewed = await a.renew(grant)
    assert renewed.fence == grant.fence and renewed.expires_at > grant.expires_at
    snap = await b.inspect()
    assert (snap.state, snap.holder_id, snap.fence) == ("held", "manager-a", grant.fence)
    assert "file store" in snap.store

    await a.release(renewed)
    assert (await a.inspect()).state == "vacant"
    next_term = await b.try_acquire()
    assert next_term.grant is not None and next_term.grant.fence > grant.fence


async def test_release_with_the_wrong_fence_raises_not_holder(controller_binary: str,
                                                              store: str) -> None:
    ns = namespace()
    a = await SwarmLeaseController.connect(options(store, "manager-a", ns))
    b = await SwarmLeaseController.connect(options(store, "manager-b", ns))
    grant = (await a.try_acquire()).grant
    assert grant is not None
    for controller, g in ((a, dataclasses.replace(grant, fence=grant.fence + 1)), (b, grant)):
        with pytest.raises(NotHolderError) as e:
            await controller.release(g)
        assert (e.value.exit_code, e.value.code, e.value.command) == (3, "not_holder", "release")
        assert f"fence {g.fence} does not hold the lease" in str(e.value)
        assert not e.value.temporary
    with pytest.raises(NotHolderError):
        await b.renew(grant)
    snap = await a.inspect()
    assert (snap.state, snap.holder_id, snap.fence) == ("held", "manager-a", grant.fence)


async def test_a_store_that_is_down(controller_binary: str, etcd: Etcd,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    ns = namespace()
    opts = options(etcd.store, "manager-a", ns, timeout=3.0, etcd_dial_timeout_ms=1000)
    controller = await SwarmLeaseController.connect(opts)
    grant = (await controller.try_acquire()).grant
    assert grant is not None
    await etcd.kill()
    for call in (controller.renew(grant), controller.try_acquire(), controller.inspect()):
        with pytest.raises(StoreUnavailableError) as e:
            await call
        assert isinstance(e.value, ConnectionError)
        assert (e.value.exit_code, e.value.code) == (5, "store_unreachable")
        assert e.value.temporary
    # connect reads the election, so that a store that is down fails it too.
    with pytest.raises(StoreUnavailableError):
        await SwarmLeaseController.connect(opts)
    # So does a Docker engine that is not there (the swarm store, the default).
    monkeypatch.setenv("DOCKER_HOST", f"tcp://127.0.0.1:{free_port()}")
    with pytest.raises(StoreUnavailableError) as e:
        await SwarmLeaseController.connect(ControllerOptions(namespace=ns, timeout=3.0))
    assert e.value.exit_code == 5


async def test_a_bad_setting_is_named_with_its_source(controller_binary: str, store: str,
                                                      tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    ns = namespace()
    monkeypatch.setenv("SWARM_LEASE_TTL_MS", "thirty")
    with pytest.raises(ConfigurationError) as e:
        await SwarmLeaseController.connect(options(store, "manager-a", ns))
    assert isinstance(e.value, ValueError) and e.value.exit_code == 2
    assert e.value.code == "invalid_configuration"
    assert 'invalid ttl_ms "thirty" (from environment variable SWARM_LEASE_TTL_MS)' in str(e.value)

    # An option outranks the environment, and is named as the flag it is passed as.
    with pytest.raises(ConfigurationError) as e:
        await SwarmLeaseController.connect(options(store, "manager-a", ns, ttl_ms=100))
    assert "ttl_ms" in str(e.value) and "(from flag --ttl-ms)" in str(e.value)
    monkeypatch.delenv("SWARM_LEASE_TTL_MS")

    # The environment's prefix follows env_prefix, _FILE included.
    (tmp_path / "ns").write_text("")
    monkeypatch.setenv("POSTGRES_NAMESPACE_FILE", str(tmp_path / "ns"))
    with pytest.raises(ConfigurationError) as e:
        await SwarmLeaseController.connect(ControllerOptions(store=store, env_prefix="POSTGRES"))
    assert "POSTGRES_NAMESPACE_FILE" in str(e.value) and str(tmp_path / "ns") in str(e.value)

    # The etcd password travels as a file the binary reads, never as a flag; a file it cannot
    # read is named, its content never.
    secret = "hunter2-never-shown"
    (tmp_path / "password").write_text(secret + "\n" + "x" * (70 << 10))
    opts = options("etcd://127.0.0.1:2379", "manager-a", ns, etcd_username="root",
                   etcd_password_file=str(tmp_path / "password"))
    assert not any(secret in f or "password" in f for f in opts.flags())
    with pytest.raises(ConfigurationError) as e:
        await SwarmLeaseController.connect(opts)
    assert "SWARM_LEASE_ETCD_PASSWORD_FILE" in str(e.value) and secret not in str(e.value)

    with pytest.raises(ValueError, match="option ttl_ms"):
        ControllerOptions(ttl_ms="30000")  # type: ignore[arg-type]


async def test_without_a_binary_connect_says_how_to_get_one(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LFP_SWARM_LEASE_BIN", str(tmp_path / "missing"))
    with pytest.raises(BinaryNotFoundError) as e:
        await SwarmLeaseController.connect(ControllerOptions(namespace="jobs"))
    assert "LFP_SWARM_LEASE_BIN" in str(e.value) and isinstance(e.value, FileNotFoundError)
    monkeypatch.delenv("LFP_SWARM_LEASE_BIN")
    import lfp_swarm_lease._binary as b
    monkeypatch.setattr(b, "BUNDLED", tmp_path / "none")
    with pytest.raises(BinaryNotFoundError, match="releases"):
        await SwarmLeaseController.connect(ControllerOptions(namespace="jobs"))


async def test_init_inspect_destroy(controller_binary: str, store: str) -> None:
    ns = namespace()
    controller = await SwarmLeaseController.connect(options(store, "manager-a", ns))
    before = await controller.inspect()
    assert (before.exists, before.state, before.fence) == (False, "vacant", 0)
    created = await controller.init()
    assert created.exists and created.state == "vacant"
    grant = (await controller.try_acquire()).grant
    assert grant is not None
    await controller.destroy()
    assert not (await controller.inspect()).exists
    with pytest.raises(NotHolderError):
        await controller.renew(grant)
    again = (await controller.try_acquire()).grant
    assert again is not None and again.fence > grant.fence, "a re-created election starts above"


async def test_a_command_that_fails_without_json_is_a_controller_error(
        controller_binary: str, store: str) -> None:
    controller = await SwarmLeaseController.connect(options(store, "manager-a", namespace()))
    with pytest.raises(TypeError):
        await controller.renew("17")  # type: ignore[arg-type]
    forged = Grant(namespace="x", holder_id="manager-a", node_id="", task_id="", fence=0,
                   acquired_at=None, renewed_at=None, expires_at=None,  # type: ignore[arg-type]
                   ttl_ms=0, version=0)
    with pytest.raises(ControllerError) as e:
        await controller.release(forged)  # fence 0 is a usage error of the binary
    assert e.value.exit_code == 2 and "invalid fence" in str(e.value)
