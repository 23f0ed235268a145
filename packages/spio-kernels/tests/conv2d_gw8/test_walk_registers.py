"""The fprop and dgrad walks keep their accumulators in registers: ptxas reports no stack
frame and no spills for the largest walks of the config spaces (NVRTC, no GPU needed)."""

import dataclasses
import re

import pytest

from spio.kernels.conv2d_gw8 import Conv2dGw8Params, FpropConfig, config_space, dgrad, fprop

#: Walks of 32 rows of 7 x 7 and 5 x 5 filters, one filter column a mma (mma_k = 8), one and
#: two 16-column strips a warp: the longest steady walks the spaces hold. The compiler once
#: called their walk lambdas instead of inlining them, which put the accumulators in local
#: memory (752 bytes of stack a thread at 2x512x56x56; 14 us -> 735 us on an H200).
LARGEST_WALKS = [
    (Conv2dGw8Params.make(2, 512, 56, 56, r=7, s=7, padding=3), FpropConfig(64, 1, 1, 1, 32, 2, 8)),
    (Conv2dGw8Params.make(4, 512, 56, 56, r=7, s=7, padding=3), FpropConfig(64, 2, 1, 2, 32, 2, 8)),
    (
        Conv2dGw8Params.make(2, 128, 112, 112, r=5, s=5, padding=2, dtype="bfloat16"),
        FpropConfig(64, 1, 1, 2, 32, 6, 8),
    ),
]  # fmt: skip

_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")

LAUNCHERS = {"fprop": fprop, "dgrad": dgrad}


@pytest.fixture(scope="module")
def ptxas_reports() -> dict[tuple[str, int], str]:
    """ptxas's verbose report of each pass's kernel for sm_90 on each of LARGEST_WALKS, keyed
    by the pass and the walk's index (compiled in parallel, past the cache)."""
    import spio.jit

    verbose = spio.jit.CompileOptions(extra_flags=("-Xptxas=-v",))
    requests = {
        (name, index): dataclasses.replace(
            launcher.compile_request(params, config, "sm_90"), options=verbose
        )
        for name, launcher in LAUNCHERS.items()
        for index, (params, config) in enumerate(LARGEST_WALKS)
    }
    codes = spio.jit.compile_many(requests, progress=False, cache=False)
    return {key: code.log for key, code in codes.items()}


@pytest.mark.parametrize("pass_", LAUNCHERS)
@pytest.mark.parametrize("index", range(len(LARGEST_WALKS)), ids=[str(p) for p, _ in LARGEST_WALKS])
def test_largest_walks_use_no_local_memory(
    pass_: str, index: int, ptxas_reports: dict[tuple[str, int], str]
) -> None:
    params, config = LARGEST_WALKS[index]
    assert config in config_space(params)
    report = ptxas_reports[pass_, index]
    frames = _FRAME.findall(report)
    # One function, the kernel: every lambda of the walk inlined.
    assert len(frames) == 1, report
    assert frames[0] == ("0", "0", "0"), report
