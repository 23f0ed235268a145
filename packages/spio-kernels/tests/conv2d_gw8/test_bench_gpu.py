"""The benchmark's timing on a GPU: loops of launches and CUDA graph replays."""

import pytest

from spio.kernels.conv2d_gw8 import Conv2dGw8Params

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("graph", [False, True], ids=["loop", "graph"])
def test_bench_pass_times_every_pass_and_cudnn(graph: bool) -> None:
    from spio.kernels.conv2d_gw8 import bench

    params = Conv2dGw8Params.make(4, 64, 16, 16)
    configs = {name: [bench.PASS_CONFIGS[name][1](params)] for name in ("fprop", "dgrad", "wgrad")}
    buffers = bench.Buffers(params, list(configs), configs)
    for name, pass_configs in configs.items():
        times, cudnn_us = bench.bench_pass(name, params, pass_configs, buffers, 20, 9, graph=graph)
        assert list(times) == pass_configs
        # A few microseconds each, far below a millisecond, and never zero.
        assert all(0.5 < us < 1000 for us in times.values()), (name, times)
        assert 0.5 < cudnn_us < 1000, (name, cudnn_us)
