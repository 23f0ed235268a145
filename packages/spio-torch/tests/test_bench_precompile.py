"""bench_precompile: its arguments and network (CPU); the benchmark itself on the GPU."""

from __future__ import annotations

import pytest
import torch

import spio.torch
from spio.torch import bench_precompile
from spio.torch._precompile_calls import record_calls


def test_arguments_and_their_errors() -> None:
    parse = bench_precompile.build_parser().parse_args
    args = parse(["--channels", "16", "32", "--side", "9", "--batches", "3", "--kernel-sizes",
                  "1", "7", "--threads", "2", "--rounds", "2"])  # fmt: skip
    assert (args.channels, args.side, args.batches) == ([16, 32], 9, [3])
    assert (args.kernel_sizes, args.threads, args.rounds, args.run) == ([1, 7], 2, 2, None)
    defaults = parse([])
    assert (defaults.channels, defaults.batches, defaults.threads) == (
        [64, 128, 256, 512],
        [64, 17],
        None,
    )
    for bad in (
        ["--channels", "12"],
        ["--side", "0"],
        ["--batches", "x"],
        ["--kernel-sizes", "4"],
        ["--kernel-sizes", "9"],
        ["--threads", "0"],
        ["--run", "warm"],
    ):
        with pytest.raises(SystemExit):
            parse(bad)


def test_the_network_has_a_layer_per_stage_and_kernel_size() -> None:
    model = bench_precompile.build_network([16, 32, 64], [3, 5])
    assert len(spio.torch.convert(model)) == 6
    model.half()
    x = torch.empty(2, 16, 12, 12, dtype=torch.float16)
    layers = record_calls(model, [(x,)], backward=True).layers
    assert [(call.input_size[1:], call.kernel_size) for call in layers] == [
        ((16, 12, 12), (3, 3)), ((16, 12, 12), (5, 5)),
        ((32, 6, 6), (3, 3)), ((32, 6, 6), (5, 5)),
        ((64, 3, 3), (3, 3)), ((64, 3, 3), (5, 5)),
    ]  # fmt: skip


@pytest.mark.gpu
def test_runs_on_the_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    bench_precompile.main(["--channels", "16", "32", "--side", "8", "--batches", "2",
                           "--kernel-sizes", "3", "--threads", "2"])  # fmt: skip
    lines = capsys.readouterr().out.strip().splitlines()
    cold, precompiled = (line.split() for line in lines[1:3])
    assert cold[1] == "cold"
    assert precompiled[1] == "precompiled"
    # Two layers: fprop and wgrad of the first (its input needs no gradient), fprop, dgrad
    # and wgrad of the second.
    assert int(precompiled[-1]) == 5
    assert lines[-1].startswith("    1 cold / precompiled: ")
