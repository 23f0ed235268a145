"""The runnable example of docs/jit/example.md compiles here and runs on a GPU."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

import spio.jit as jit

_EXAMPLE = Path(__file__).resolve().parents[3] / "docs" / "jit" / "example" / "saxpy_demo.py"


@pytest.fixture(scope="module")
def saxpy_demo() -> ModuleType:
    if not _EXAMPLE.is_file():
        pytest.skip("the documentation is not part of this checkout")
    spec = importlib.util.spec_from_file_location("saxpy_demo", _EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_compiles_without_a_gpu(saxpy_demo: ModuleType) -> None:
    code = saxpy_demo.build("sm_90")
    assert set(code.lowered_names) == {"saxpy<float>", "saxpy<__half>"}
    assert saxpy_demo.build("sm_90").from_cache


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_example_runs_on_a_gpu(saxpy_demo: ModuleType, dtype: str) -> None:
    torch = pytest.importorskip("torch")
    x = torch.randn(100_000, device="cuda", dtype=getattr(torch, dtype))
    y = torch.randn(100_000, device="cuda", dtype=getattr(torch, dtype))
    expected = 2.0 * x + y
    saxpy_demo.saxpy(2.0, x, y)
    torch.cuda.synchronize()
    torch.testing.assert_close(y, expected)
    assert jit.device_count() >= 1
