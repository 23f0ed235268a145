"""sources_digest: a short fingerprint of what the kernels compile from."""

from __future__ import annotations

import shutil
import string
from pathlib import Path

import pytest

from spio.kernels.conv2d_gw8 import sources_digest as module
from spio.kernels.conv2d_gw8.sources_digest import DIGEST_LENGTH, sources_digest


def test_digest_is_short_hex_and_stable() -> None:
    digest = sources_digest()
    assert len(digest) == DIGEST_LENGTH
    assert set(digest) <= set(string.hexdigits.lower())
    sources_digest.cache_clear()
    assert sources_digest() == digest


def test_a_changed_kernel_source_changes_the_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = sources_digest()
    package = Path(module.__file__).parent
    copy = tmp_path / "conv2d_gw8"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(module.resources, "files", lambda _package: copy)
    sources_digest.cache_clear()
    try:
        same = sources_digest()
        wgrad = copy / "conv2d_gw8_wgrad.cu"
        wgrad.write_text(wgrad.read_text() + "\n// changed\n")
        sources_digest.cache_clear()
        changed = sources_digest()
    finally:
        sources_digest.cache_clear()
    assert same == original  # a copy of the same files digests the same
    assert changed != same
