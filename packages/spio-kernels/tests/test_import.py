"""spio.kernels is framework-agnostic: importing it must not pull in PyTorch or CUDA."""

import subprocess
import sys


def test_import_loads_neither_torch_nor_a_driver() -> None:
    code = (
        "import sys, spio.kernels; "
        "loaded = [m for m in ('torch', 'cuda.core', 'cuda.bindings.driver') if m in sys.modules]; "
        "print(','.join(loaded))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""


def test_version_is_the_distribution_version() -> None:
    from importlib.metadata import version

    import spio.kernels

    assert spio.kernels.__version__ == version("spio-kernels")
