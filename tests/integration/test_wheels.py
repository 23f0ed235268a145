"""Every distribution builds a wheel, and spio-dims works from its wheel with nothing else.

spio-dims promises header users a package with no dependencies: install its wheel into an
empty environment, then generate a lesson's header and compile the lesson with g++.
"""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("spio-dims", "spio-jit", "spio-kernels", "spio-perfmodel", "spio-torch")
UV = shutil.which("uv")
pytestmark = pytest.mark.skipif(UV is None, reason="uv is not on PATH")


def _run(*command: str | Path, cwd: Path = ROOT) -> str:
    result = subprocess.run(
        [str(part) for part in command], cwd=cwd, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, f"{command}\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("dist")
    built = {}
    for package in PACKAGES:
        _run(UV or "uv", "build", "--package", package, "--wheel", "--out-dir", out)
        (wheel,) = out.glob(f"{package.replace('-', '_')}-*.whl")
        built[package] = wheel
    return built


@pytest.mark.parametrize("package", PACKAGES)
def test_each_package_builds_a_wheel_of_its_namespace(
    package: str, wheels: dict[str, Path]
) -> None:
    names = zipfile.ZipFile(wheels[package]).namelist()
    module = package.removeprefix("spio-")
    assert f"spio/{module}/__init__.py" in names
    # One namespace across distributions: no wheel may own spio/__init__.py.
    assert "spio/__init__.py" not in names


def test_spio_dims_installs_alone_and_builds_a_lesson(
    wheels: dict[str, Path], tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    _run(UV or "uv", "venv", "--quiet", venv)
    python = venv / "bin" / "python"
    _run(
        UV or "uv",
        "pip",
        "install",
        "--quiet",
        "--offline",
        "--python",
        python,
        wheels["spio-dims"],
    )
    installed = _run(UV or "uv", "pip", "list", "--python", python)
    assert "spio-dims" in installed
    assert "spio-jit" not in installed

    lesson = ROOT / "packages/spio-dims/tests/lessons/03_folding.cpp"
    harness = ROOT / "packages/spio-dims/tests/lessons/harness"
    types_h = tmp_path / "types.h"
    _run(venv / "bin" / "spio-dims", "gen", lesson, "-o", types_h)
    include = _run(venv / "bin" / "spio-dims", "include-dir").strip()
    assert include.startswith(str(venv))
    binary = tmp_path / "lesson"
    _run(
        "g++",
        "-std=c++17",
        f"-I{include}",
        f"-I{harness}",
        "-include",
        types_h,
        lesson,
        "-o",
        binary,
    )
    _run(binary)
