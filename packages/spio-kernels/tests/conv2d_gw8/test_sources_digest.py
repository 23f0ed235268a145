"""sources_digest: a short fingerprint, per pass, of what a pass compiles from."""

from __future__ import annotations

import re
import shutil
import string
from collections.abc import Iterator
from pathlib import Path

import pytest

from spio.kernels.conv2d_gw8 import sources_digest as module
from spio.kernels.conv2d_gw8.sources_digest import (
    DIGEST_LENGTH,
    GENERATOR_FILES_LEFT_OUT,
    PASS_FILES,
    SHARED_FILES,
    pass_files,
    sources_digest,
)

PASSES = ("fprop", "dgrad", "wgrad")
PACKAGE = Path(module.__file__).parent


@pytest.fixture
def package_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of the kernels' folder that sources_digest reads instead of the package."""
    copy = tmp_path / "conv2d_gw8"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(module.resources, "files", lambda _package: copy)
    sources_digest.cache_clear()
    yield copy
    sources_digest.cache_clear()


def _digests() -> dict[str, str]:
    sources_digest.cache_clear()
    return {name: sources_digest(name) for name in PASSES}


def _touch(path: Path) -> None:
    path.write_text(path.read_text() + "\n// changed\n")


def test_digest_is_short_hex_and_stable() -> None:
    for name in PASSES:
        digest = sources_digest(name)
        assert len(digest) == DIGEST_LENGTH
        assert set(digest) <= set(string.hexdigits.lower())
        sources_digest.cache_clear()
        assert sources_digest(name) == digest


def test_the_passes_have_digests_of_their_own() -> None:
    assert len(set(_digests().values())) == len(PASSES)


def test_an_unknown_pass_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"pass_name must be one of .*'conv'"):
        sources_digest("conv")


def test_a_copy_of_the_same_files_digests_the_same(package_copy: Path) -> None:
    original = {name: sources_digest(name) for name in PASSES}
    sources_digest.cache_clear()
    assert _digests() == original


def test_a_wgrad_change_leaves_fprop_and_dgrad_alone(package_copy: Path) -> None:
    before = _digests()
    _touch(package_copy / "conv2d_gw8_wgrad.cu")
    after = _digests()
    assert after["wgrad"] != before["wgrad"]
    assert (after["fprop"], after["dgrad"]) == (before["fprop"], before["dgrad"])


def test_an_fprop_kernel_change_reaches_dgrad_too(package_copy: Path) -> None:
    before = _digests()
    _touch(package_copy / "conv2d_gw8_fprop.cu")
    after = _digests()
    assert after["fprop"] != before["fprop"]
    assert after["dgrad"] != before["dgrad"]
    assert after["wgrad"] == before["wgrad"]


def test_a_shared_file_changes_every_digest(package_copy: Path) -> None:
    before = _digests()
    _touch(package_copy / "conv2d_gw8_ring.cuh")
    after = _digests()
    assert all(after[name] != before[name] for name in PASSES)


def test_every_kernel_source_and_spec_belongs_to_a_pass() -> None:
    # A new source or spec left out of PASS_FILES would change kernels without changing
    # any digest, and models of the old kernels would keep being used.
    listed = {*SHARED_FILES, *(name for files in PASS_FILES.values() for name in files)}
    shaping = {
        path.name
        for path in PACKAGE.iterdir()
        if path.suffix in (".cu", ".cuh") or path.name.endswith("_spec.py")
    }
    assert shaping <= listed
    assert all((PACKAGE / name).is_file() for name in listed)


@pytest.mark.parametrize("pass_name", PASSES)
def test_a_pass_digests_every_local_header_its_source_includes(pass_name: str) -> None:
    names = {path.name for path in pass_files(pass_name)}
    sources = [PACKAGE / name for name in names if name.endswith((".cu", ".cuh"))]
    for source in sources:
        for include in re.findall(r'#include\s+"([^"]+)"', source.read_text()):
            if include == "types.h":  # generated from the pass's spec, which is digested
                continue
            if (PACKAGE / include).is_file():
                assert include in names, f"{source.name} includes {include}"


@pytest.fixture
def dims_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of spio-dims' package that sources_digest reads instead of the installed one."""
    import spio.dims

    installed = Path(spio.dims.__file__).parent
    copy = tmp_path / "dims"
    shutil.copytree(installed, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(spio.dims, "__file__", str(copy / "__init__.py"))
    monkeypatch.setattr(spio.dims, "include_dir", lambda: str(copy / "include"))
    sources_digest.cache_clear()
    yield copy
    sources_digest.cache_clear()


def test_a_generator_module_change_changes_every_digest(dims_copy: Path) -> None:
    before = _digests()
    _touch_python(dims_copy / "_emit.py")
    after = _digests()
    assert all(after[name] != before[name] for name in PASSES)


def test_a_header_change_changes_every_digest(dims_copy: Path) -> None:
    before = _digests()
    _touch(dims_copy / "include" / "spio" / "dim.h")
    after = _digests()
    assert all(after[name] != before[name] for name in PASSES)


@pytest.mark.parametrize("name", sorted(GENERATOR_FILES_LEFT_OUT))
def test_spio_dims_modules_that_generate_nothing_leave_the_digests(
    dims_copy: Path, name: str
) -> None:
    # A spio-dims release that only touches its command line (or version, errors, parser)
    # must not switch the shipped latency models off.
    assert (dims_copy / name).is_file(), f"{name} is listed but spio-dims has no such module"
    before = _digests()
    _touch_python(dims_copy / name)
    assert _digests() == before


def test_the_generator_does_not_use_the_modules_left_out() -> None:
    # The kernels' headers come from spio.dims.generate over Python specs; were a digested
    # module to import the @spio parser or the command line, they could shape a header unseen.
    import spio.dims

    package = Path(spio.dims.__file__).parent
    shaping = [path for path in package.glob("*.py") if path.name not in GENERATOR_FILES_LEFT_OUT]
    for path in shaping:
        for left_out in ("_cli", "_parse"):
            assert f"from .{left_out} import" not in path.read_text(), (path.name, left_out)


def _touch_python(path: Path) -> None:
    path.write_text(path.read_text() + "\n# changed\n")
