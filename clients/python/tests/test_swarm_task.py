"""The README's controller example in a real Swarm task, with the namespace and the holder left
to discovery, as the README says to run it there: in an image that is a Python installation
with the Linux x86_64 wheel installed by pip — the image ``FROM python`` a user builds. No
registry here has a Python image, so the test makes one from this machine's own Python (its
interpreter, standard library and the libraries they load) and a virtual environment with the
wheel, and hands it to the test Swarm with ``docker import``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from conftest import unavailable
from support import install, namespace
from test_readme import controller_snippet
from test_wheels import VERSION

#: Appended to the example: the identity and election the task discovered, read back through
#: the controller itself.
IDENTITY = '''

async def identity() -> None:
    controller = await SwarmLeaseController.connect(ControllerOptions())
    grant = (await controller.try_acquire()).grant
    assert grant is not None
    print("grant", grant.namespace, grant.holder_id, grant.node_id, grant.task_id)
    await controller.release(grant)


asyncio.run(identity())
'''


def docker(host: str, *args: str, stdin: bytes | None = None) -> str:
    out = subprocess.run(["docker", "-H", host, *args], input=stdin, capture_output=True,
                         timeout=300)
    if out.returncode != 0:
        raise AssertionError(f"docker {' '.join(args)}: {out.stderr.decode()}")
    return out.stdout.decode().strip()


class Rootfs:
    """A tarball of files of this machine, each with the symbolic links on its way (``/lib`` →
    ``usr/lib``, ``/usr/bin/python3`` → ``python3.11``) and their targets."""

    def __init__(self, tar: tarfile.TarFile) -> None:
        self.tar = tar
        self.added: set[str] = set()

    def add(self, path: str) -> None:
        parts = Path(path).parts
        for i in range(2, len(parts) + 1):
            prefix = str(Path(*parts[:i]))
            if prefix in self.added:
                continue
            if os.path.islink(prefix):
                self.added.add(prefix)
                self.tar.add(prefix, arcname=prefix.lstrip("/"), recursive=False)
                target = os.path.join(os.path.dirname(prefix), os.readlink(prefix))
                self.add(os.path.normpath(os.path.join(target, *parts[i:])))
                return
            if i < len(parts):
                continue
            self.added.add(prefix)
            self.tar.add(prefix, arcname=prefix.lstrip("/"), recursive=False,
                         filter=lambda ti: _root(ti))
            if os.path.isdir(prefix) and not os.path.islink(prefix):
                for name in sorted(os.listdir(prefix)):
                    self.add(os.path.join(prefix, name))


def _root(ti: tarfile.TarInfo) -> tarfile.TarInfo:
    ti.uid = ti.gid = 0
    ti.uname = ti.gname = "root"
    return ti


def libraries(*files: str) -> set[str]:
    """The shared libraries ``files`` load, as ``ldd`` resolves them, and those the C library
    opens by itself later, which ``ldd`` cannot see: ``libgcc_s``, which glibc loads to unwind
    a thread that ends by ``pthread_exit`` — as the interpreter ends a thread still running when
    it exits (the threads that wait for a subprocess's end do). Without it that process dies of
    SIGSEGV as it exits, in about one run in four here; every ``FROM python`` image has it."""
    found: set[str] = set()
    for f in files:
        out = subprocess.run(["ldd", f], capture_output=True, text=True).stdout
        found.update(re.findall(r"(/\S+) \(0x", out))
    for lib in list(found):
        if os.path.basename(lib).startswith("libc.so."):
            unwinder = os.path.join(os.path.dirname(lib), "libgcc_s.so.1")
            assert os.path.exists(unwinder), f"no {unwinder} beside {lib}"
            found.add(unwinder)
    return found


def python_image(host: str, tag: str, venv_dir: Path, script: Path, tmp: Path) -> None:
    """Loads into the engine at ``host`` an image of this machine's Python with ``venv_dir``
    (at the same path) and ``script`` at /controller.py."""
    interpreter = os.path.realpath(sys.executable)
    stdlib = os.path.dirname(os.__file__)
    dynload = [str(p) for p in Path(stdlib, "lib-dynload").glob("*.so")]
    tar_path = tmp / "rootfs.tar"
    with tarfile.open(tar_path, "w") as tar:
        fs = Rootfs(tar)
        for path in sorted({sys.executable, interpreter, stdlib, str(venv_dir),
                            *libraries(interpreter, *dynload)}):
            fs.add(path)
        info = tar.gettarinfo(str(script), arcname="controller.py")
        with open(script, "rb") as f:
            tar.addfile(_root(info), f)
    docker(host, "import", str(tar_path), tag)
    tar_path.unlink()


def test_the_readme_controller_discovers_its_swarm_task(wheels: Path, tmp_path: Path) -> None:
    host = os.environ.get("SWARM_LEASE_TEST_DOCKER_HOST", "")
    if not host:
        unavailable("SWARM_LEASE_TEST_DOCKER_HOST is not set: start the test Swarm "
                    "(scripts/test-swarm.sh start; eval \"$(scripts/test-swarm.sh env)\")")
    if (os.uname().sysname, os.uname().machine) != ("Linux", "x86_64"):
        pytest.skip("the image is made of this machine's Linux x86_64 Python")
    venv_dir = tmp_path / "venv"
    install(wheels, f"lfp_swarm_lease-{VERSION}-py3-none-manylinux_2_17_x86_64.*.whl", venv_dir)
    explicit = 'ControllerOptions(namespace="consul-controllers", holder_id="manager-a")'
    example = controller_snippet()
    assert explicit in example
    # In a Swarm task the README leaves both to discovery.
    script = tmp_path / "controller.py"
    script.write_text(example.replace(explicit, "ControllerOptions()") + IDENTITY)
    service = "py-" + namespace("task")
    tag = f"lfp-swarm-lease-py-test:{service}"
    python_image(host, tag, venv_dir, script, tmp_path)
    socket = host.removeprefix("unix://")
    try:
        docker(host, "service", "create", "-d", "--name", service, "--restart-condition", "none",
               "--no-resolve-image", "--mount",
               f"type=bind,source={socket},target=/var/run/docker.sock",
               tag, str(venv_dir / "bin" / "python"), "/controller.py")
        deadline = time.monotonic() + 120
        while True:
            state = docker(host, "service", "ps", "--format", "{{.CurrentState}}", service)
            if state.startswith(("Complete", "Failed", "Rejected")):
                break
            if time.monotonic() > deadline:
                raise AssertionError(f"task {service} did not end within 120 s: {state}")
            time.sleep(0.5)  # the poll interval of the task's state
        logs = docker(host, "service", "logs", "--raw", service)
        assert state.startswith("Complete"), f"{state}\n{logs}"
        node = docker(host, "info", "--format", "{{.Swarm.NodeID}}")
        task = docker(host, "service", "ps", "-q", "--no-trunc", service)
        lines = logs.splitlines()
        assert len(lines) == 2, logs
        assert re.fullmatch(r"reconciled with fence \d+", lines[0]), logs
        assert lines[1] == f"grant {service} {node} {node} {task}", logs
        # The election is the service's: its anchor holds the released term.
        fence = docker(host, "service", "inspect", "--format",
                       '{{index .Spec.Labels "lfp-swarm-lease.fence"}}', f"{service}-lease")
        assert int(fence) > int(lines[0].split()[-1])
    finally:
        for name in (service, f"{service}-lease"):
            subprocess.run(["docker", "-H", host, "service", "rm", name], capture_output=True)
        # The image goes once the task's container has: poll, as the engine removes it.
        for _ in range(100):
            if subprocess.run(["docker", "-H", host, "image", "rm", tag],
                              capture_output=True).returncode == 0:
                break
            time.sleep(0.2)
