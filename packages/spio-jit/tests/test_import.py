"""Importing spio.jit has no side effects, and the public API is what __all__ says."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import spio.jit as jit

_PROBE = textwrap.dedent(
    """
    import sys, threading
    before = set(sys.modules)  # site hooks (cuda-bindings 12 has a .pth) may import cuda
    import spio.jit
    heavy = sorted(
        m for m in set(sys.modules) - before
        if m.split(".")[0] in ("cuda", "torch", "cupy", "numpy", "tqdm", "filelock")
        or m in ("concurrent.futures.process", "multiprocessing.pool")
    )
    mapped = open("/proc/self/maps").read() if sys.platform.startswith("linux") else ""
    print("modules", heavy)
    print("threads", threading.active_count())
    print("libnvrtc", "libnvrtc" in mapped)
    print("libcuda", "libcuda.so" in mapped)
    """
)


def test_import_loads_no_cuda_no_nvrtc_no_pools() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True
    ).stdout
    assert "modules []" in out
    assert "threads 1" in out
    assert "libnvrtc False" in out
    assert "libcuda False" in out


def test_public_names_resolve() -> None:
    for name in jit.__all__:
        assert hasattr(jit, name), name
    assert callable(jit.compile)
    assert jit.__version__


def test_spio_jit_stands_alone() -> None:
    """spio-jit is used by other projects on its own: it never imports spio.dims."""
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, spio.jit, spio.jit._cli, spio.jit.bench_launch; "
            "print([m for m in sys.modules if m.startswith('spio.') and not "
            "m.startswith('spio.jit')])",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == "[]"
