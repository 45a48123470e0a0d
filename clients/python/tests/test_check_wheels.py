"""check_wheels.py, the check scripts/build-wheels.sh ends with, on the wheels it built and on
copies made wrong: a wheel tagged for one architecture carrying another's binary, a missing
platform."""

from __future__ import annotations

import shutil
import sys
import zipfile
from pathlib import Path

import pytest

from test_wheels import VERSION

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import check_wheels  # noqa: E402 - the script next to the package, not a module of it


def copy(wheels: Path, tmp: Path) -> Path:
    dist = tmp / "dist"
    dist.mkdir()
    for f in [*wheels.glob("*.whl"), *wheels.glob("*.tar.gz")]:
        shutil.copy(f, dist)
    return dist


def test_the_built_wheels_pass(wheels: Path, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    assert check_wheels.main(copy(wheels, tmp_path), VERSION) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "macosx_12_0_arm64.whl" in out and "Mach-O 64-bit arm64 executable" in out


def test_a_wheel_whose_binary_is_of_another_architecture_fails(
        wheels: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dist = copy(wheels, tmp_path)
    arm = dist / f"lfp_swarm_lease-{VERSION}-py3-none-macosx_12_0_arm64.whl"
    x86 = dist / f"lfp_swarm_lease-{VERSION}-py3-none-macosx_12_0_x86_64.whl"
    x86.unlink()
    # The arm64 wheel, tagged x86_64 in its name and its WHEEL file alike.
    with zipfile.ZipFile(arm) as src, zipfile.ZipFile(x86, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith(".dist-info/WHEEL"):
                data = data.replace(b"macosx_12_0_arm64", b"macosx_12_0_x86_64")
            dst.writestr(info, data)
    arm.unlink()
    assert check_wheels.main(dist, VERSION) == 1
    err = capsys.readouterr().err
    assert "tag macosx_12_0_x86_64 wants a binary that is Mach-O 64-bit x86_64 executable" in err
    assert "Mach-O 64-bit arm64 executable" in err
    assert "no wheel for macOS arm64" in err


def test_a_wheel_of_another_version_fails(wheels: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert check_wheels.main(copy(wheels, tmp_path), "9.9.9") == 1
    err = capsys.readouterr().err
    assert "want 9.9.9" in err and "no sdist lfp_swarm_lease-9.9.9.tar.gz" in err
