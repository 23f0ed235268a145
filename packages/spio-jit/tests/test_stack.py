"""Proof of the installed CUDA stack (12 or 13): which NVRTC compiles, and that it works.

The nox session jit_cu12 runs this package's tests with `--extra cu12` (cuda-bindings 12,
nvidia-cuda-nvrtc-cu12, nvidia-cuda-runtime-cu12); the default sessions with CUDA 13. Set
SPIO_JIT_TEST_EXPECT_CUDA_MAJOR=12 (or 13) to make the tests fail on any other stack.
"""

from __future__ import annotations

import os

import pytest
from jit_testkit import ARCHS, TENSOR_CORE_EXPRESSIONS, TENSOR_CORE_SOURCE, TILE_HEADERS, cubin_sm

import spio.jit as jit


def _bindings_major() -> int:
    import cuda.bindings

    return int(cuda.bindings.__version__.split(".")[0])


def test_report_the_loaded_stack(
    record_property: object, capsys: pytest.CaptureFixture[str]
) -> None:
    info = jit.nvrtc_info()
    headers = jit.cuda_headers()
    line = (
        f"CUDA stack: NVRTC {info.version_string} from {info.library} ({info.origin}); "
        f"cuda-bindings {info.bindings_version}; headers {headers.origin}"
    )
    record_property("cuda_stack", line)  # type: ignore[operator]
    with capsys.disabled():
        print("\n" + line)
    assert info.version[0] == _bindings_major()
    expected = os.environ.get("SPIO_JIT_TEST_EXPECT_CUDA_MAJOR")
    if expected:
        assert info.version[0] == int(expected), line


def test_headers_come_from_the_wheels_of_the_same_major() -> None:
    headers = jit.cuda_headers()
    assert headers.found
    layout = "cu13" if jit.nvrtc_info().version[0] >= 13 else "cuda_runtime"
    if "site-packages" in headers.include_dirs[0]:
        assert f"/nvidia/{layout}/" in headers.include_dirs[0]


@pytest.mark.parametrize("arch", ARCHS)
def test_tensor_core_kernels_compile_on_this_stack(arch: str) -> None:
    code = jit.compile(
        TENSOR_CORE_SOURCE,
        headers=TILE_HEADERS,
        arch=arch,
        name_expressions=TENSOR_CORE_EXPRESSIONS,
        cache=False,
    )
    assert cubin_sm(code.cubin) == int(arch[3:])
    assert len(code.lowered_names) == len(TENSOR_CORE_EXPRESSIONS)


# A lambda with an `auto` parameter inside a kernel: NVRTC 13.2 compiles it as device code,
# while 13.0 and 12.x take its call operator for a host function ("host functions are not
# allowed in JIT mode"). -default-device makes unannotated functions device functions on
# every version: the workaround docs/jit names for kernel authors.
GENERIC_LAMBDA_SOURCE = r"""
extern "C" __global__ void add_one(float* y) {
    const auto add = [&](auto value, int i) { y[i] += value; };
    add(1.0f, static_cast<int>(threadIdx.x));
}
"""


def test_a_generic_lambda_compiles_with_default_device() -> None:
    options = jit.CompileOptions(extra_flags=("-default-device",))
    code = jit.compile(GENERIC_LAMBDA_SOURCE, arch="sm_90", options=options, cache=False)
    assert cubin_sm(code.cubin) == 90
