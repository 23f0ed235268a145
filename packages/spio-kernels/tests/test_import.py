"""spio.kernels is framework-agnostic: importing it loads no torch, matplotlib or CUDA."""

import subprocess
import sys

_HEAVY = ("torch", "matplotlib", "cuda.core", "cuda.bindings.driver")


def _modules_loaded_by(module: str) -> str:
    code = (
        f"import sys, {module}; "
        f"loaded = [m for m in {_HEAVY!r} if m in sys.modules]; "
        "print(','.join(loaded))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_import_loads_neither_torch_nor_matplotlib_nor_a_driver() -> None:
    assert _modules_loaded_by("spio.kernels") == ""


def test_bench_modules_import_torch_and_matplotlib_lazily() -> None:
    assert _modules_loaded_by("spio.kernels.conv2d_gw8.bench") == ""
    assert _modules_loaded_by("spio.kernels.conv2d_gw8.bench_results") == ""


def test_version_is_the_distribution_version() -> None:
    from importlib.metadata import version

    import spio.kernels

    assert spio.kernels.__version__ == version("spio-kernels")
