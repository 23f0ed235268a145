"""spio.perfmodel loads its model libraries lazily: import must stay cheap and CUDA-free."""

import subprocess
import sys


def test_import_loads_no_heavy_or_cuda_module() -> None:
    code = (
        "import sys, spio.perfmodel; "
        "heavy = ('torch', 'xgboost', 'sklearn', 'cuda.core', 'cuda.bindings.driver'); "
        "print(','.join(m for m in heavy if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""


def test_declared_dependencies_follow_the_layering() -> None:
    import re
    from importlib.metadata import requires

    names = {
        re.split(r"[\s<>=!~\[;]", req, maxsplit=1)[0] for req in requires("spio-perfmodel") or []
    }
    assert {"spio-kernels", "xgboost-cpu", "scikit-learn", "numpy"} <= names
    assert "torch" not in names
    assert "spio-torch" not in names
