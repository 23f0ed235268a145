"""The one-way package layering holds, and its checker catches each kind of violation."""

from __future__ import annotations

from pathlib import Path

import pytest
from tool_module import ROOT, load_tool

checker = load_tool("check_layering")


def _tree(tmp_path: Path, package: str, module: str, source: str) -> Path:
    path = tmp_path / f"packages/spio-{package}/src/spio/{module}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    return tmp_path


def test_the_repository_respects_the_layering() -> None:
    assert checker.violations(ROOT) == []


@pytest.mark.parametrize(
    ("package", "module", "source"),
    [
        ("dims", "dims/_emit.py", "import spio.jit\n"),
        ("kernels", "kernels/conv.py", "from spio.torch import ops\n"),
        ("perfmodel", "perfmodel/x.py", "from spio import torch\n"),
        ("kernels", "kernels/lazy.py", "def f():\n    import spio.perfmodel.select\n"),
        ("jit", "jit/_compile.py", "from spio.dims import generate\n"),
    ],
)
def test_upward_imports_are_reported(
    package: str, module: str, source: str, tmp_path: Path
) -> None:
    problems = checker.violations(_tree(tmp_path, package, module, source))
    assert len(problems) == 1
    assert f"spio.{package} imports" in problems[0]


@pytest.mark.parametrize(
    ("package", "module", "source"),
    [
        ("torch", "torch/ops.py", "import spio.kernels\nfrom spio.perfmodel import select\n"),
        ("kernels", "kernels/x.py", "from spio.dims import Tensor\nimport spio.jit\n"),
        ("torch", "functional/__init__.py", "from spio.torch import conv2d_gw8\n"),
        ("jit", "jit/_cache.py", "from . import _env\nimport spio.jit._env\n"),
    ],
)
def test_downward_and_internal_imports_pass(
    package: str, module: str, source: str, tmp_path: Path
) -> None:
    assert checker.violations(_tree(tmp_path, package, module, source)) == []
