"""bench_step: its arguments (CPU); the benchmark itself on the GPU."""

from __future__ import annotations

import pytest

import spio.torch
from spio.torch import bench_step


def test_arguments_and_their_errors() -> None:
    args = bench_step.build_parser().parse_args(
        ["--shapes", "2x16x4x4", "--bias", "--dtype", "bfloat16", "--rounds", "1"]
    )
    assert args.shapes == [(2, 16, 4, 4)]
    assert args.bias
    assert args.dtype == "bfloat16"
    assert args.rounds == 1
    assert not args.nondeterministic
    assert bench_step.build_parser().parse_args(["--nondeterministic"]).nondeterministic
    defaults = bench_step.build_parser().parse_args([])
    assert len(defaults.shapes) == len(bench_step.DEFAULT_SHAPES)
    assert not defaults.bias
    assert defaults.dtype == "float16"
    assert defaults.rounds == 3
    for bad in (
        ["--rounds", "0"],
        ["--rounds", "x"],
        ["--dtype", "float32"],
        ["--shapes", "2x12x4x4"],
    ):
        with pytest.raises(SystemExit):
            bench_step.build_parser().parse_args(bad)


@pytest.mark.gpu
def test_runs_on_the_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    bench_step.main(["--shapes", "2x16x8x8", "--bias", "--rounds", "1", "--nondeterministic"])
    assert spio.torch.wgrad_is_deterministic(), "the benchmark restores the default"
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-1].split()[0] == "2x16x8x8"
    spio_us, torch_us = (float(v) for v in lines[-1].split()[1:3])
    assert spio_us > 0
    assert torch_us > 0
