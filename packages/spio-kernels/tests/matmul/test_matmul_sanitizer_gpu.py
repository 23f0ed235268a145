"""compute-sanitizer's memcheck, racecheck and synccheck on both matmul kernels: each A and
B layout and element type, partial tiles in every dimension, the shallowest and a deep ring,
one group order and the other (`python -m spio.kernels.matmul.run_once` under each tool)."""

from __future__ import annotations

import pytest
from sanitizer_summary import check_clean

pytestmark = pytest.mark.gpu

TOOLS = ("memcheck", "racecheck", "synccheck")
_SHAPE = "300x520x264"
_KM_SHAPE = "296x520x264"
CASES = {
    "mma-kn": [_SHAPE, "--kernel", "mma", "--config", "stages=2", "block_k=64"],
    "mma-nk-bf16": [_SHAPE, "--b-layout", "nk", "--dtype", "bfloat16", "--kernel", "mma"],
    "wgmma-kn": [_SHAPE, "--kernel", "wgmma", "--config", "block_n=128", "stages=2"],
    "wgmma-nk-bf16": [_SHAPE, "--b-layout", "nk", "--dtype", "bfloat16", "--kernel", "wgmma"],
    # A as K x M (m a multiple of 8), read transposed.
    "mma-km-kn": [_KM_SHAPE, "--a-layout", "km", "--kernel", "mma", "--config", "stages=2"],
    "wgmma-km-nk": [_KM_SHAPE, "--a-layout", "km", "--b-layout", "nk", "--kernel", "wgmma"],
    # A bias, its last tile's columns past n (520 of 2 x 256 + 8): nothing read past it.
    "mma-nk-bias": [_SHAPE, "--b-layout", "nk", "--bias", "--kernel", "mma"],
    "wgmma-nk-bias": [_SHAPE, "--b-layout", "nk", "--bias", "--kernel", "wgmma"],
}
#: torch's caching allocator hands out pieces of larger allocations, inside which memcheck
#: sees no edge; without it every tensor is an allocation of its own size.
NO_CACHING = {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}


def _has_wgmma() -> bool:
    import spio.jit

    return bool(spio.jit.device_info(0).compute_capability == (9, 0))


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("tool", TOOLS)
def test_sanitizer_reports_nothing(tool: str, case: str) -> None:
    if case.startswith("wgmma") and not _has_wgmma():
        pytest.skip("the wgmma kernel runs on sm_90 only")
    check_clean(tool, "spio.kernels.matmul.run_once", CASES[case], NO_CACHING)
