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
