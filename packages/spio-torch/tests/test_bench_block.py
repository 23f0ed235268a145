"""bench_block: its arguments, its blocks and their conversion (CPU); the benchmark on the GPU."""

from __future__ import annotations

import copy
import csv
from pathlib import Path

import pytest
import torch
from torch import nn

import spio.torch
from spio.torch import bench_block
from spio.torch._bench_blocks import BLOCKS, grouped_width


def test_arguments_and_their_errors() -> None:
    args = bench_block.build_parser().parse_args(
        ["--blocks", "mbconv", "--shapes", "2x16x4x4", "--kernel-size", "5", "--expansion", "6",
         "--dtype", "bfloat16", "--rounds", "1", "--nondeterministic", "--out", "t.csv",
         "--compile"]
    )  # fmt: skip
    assert args.blocks == ["mbconv"]
    assert args.shapes == [(2, 16, 4, 4)]
    assert (args.kernel_size, args.expansion, args.dtype, args.rounds) == (5, 6, "bfloat16", 1)
    assert args.nondeterministic
    assert args.compile
    assert str(args.out) == "t.csv"
    defaults = bench_block.build_parser().parse_args([])
    assert defaults.blocks == list(bench_block.BLOCK_NAMES)
    assert len(defaults.shapes) == len(bench_block.DEFAULT_SHAPES)
    assert (defaults.kernel_size, defaults.expansion, defaults.rounds) == (3, 4, 3)
    assert not defaults.nondeterministic
    assert not defaults.compile
    assert defaults.out is None
    for bad in (
        ["--blocks", "resnet"],
        ["--kernel-size", "4"],
        ["--expansion", "0"],
        ["--expansion", "two"],
        ["--rounds", "0"],
        ["--shapes", "2x12x4x4"],
    ):
        with pytest.raises(SystemExit):
            bench_block.build_parser().parse_args(bad)


def _step(module: nn.Module, x: torch.Tensor, grad_y: torch.Tensor) -> list[torch.Tensor]:
    """The f32 gradients of x and of every parameter after one training step of module."""
    x = x.clone().requires_grad_()
    module(x).backward(grad_y)
    return [t.grad.float() for t in (x, *module.parameters())]


@pytest.mark.parametrize("block", sorted(BLOCKS))
@pytest.mark.parametrize("kernel_size", [3, 5])
def test_converted_block_trains_like_torchs(block: str, kernel_size: int) -> None:
    torch.manual_seed(0)
    dtype = torch.bfloat16  # (Spio's convolutions take fp16 or bf16; torch's CPU runs bf16)
    spio_block, torch_block = bench_block.block_pair(block, 16, kernel_size, 2, dtype=dtype)
    # Only the grouped convolution is Spio's; the pointwise ones stay torch's.
    convs = {name: type(m) for name, m in spio_block.named_modules() if isinstance(m, nn.Conv2d)}
    assert convs.pop("grouped_conv") is spio.torch.Conv2dGw8
    assert convs
    assert set(convs.values()) == {nn.Conv2d}
    assert spio_block.grouped_conv.in_channels == grouped_width(block, 16, 2)
    # The copy has parameters of its own, starting equal to torch's.
    assert spio_block.grouped_conv.weight is not torch_block.grouped_conv.weight
    torch.testing.assert_close(spio_block.grouped_conv.weight, torch_block.grouped_conv.weight)

    x = torch.randn(2, 16, 6, 5, dtype=dtype).contiguous(memory_format=torch.channels_last)
    grad_y = torch.randn_like(x)
    reference = _step(copy.deepcopy(torch_block).float(), x.float(), grad_y.float())
    spio_grads = _step(spio_block, x, grad_y)
    torch_grads = _step(torch_block, x, grad_y)
    # Spio's block is as close to the f32 block as torch's own bf16 block is, or closer.
    for exact, ours, theirs in zip(reference, spio_grads, torch_grads, strict=True):
        scale = exact.abs().max().item()
        our_error = (ours - exact).abs().max().item() / scale
        their_error = (theirs - exact).abs().max().item() / scale
        assert our_error <= max(2 * their_error, 2e-2), (our_error, their_error)


def test_a_block_with_nothing_to_convert_is_refused() -> None:
    with pytest.raises(ValueError, match="kernel_size=9 has no layer Spio runs"):
        bench_block.block_pair("convfirst", 16, 9, 4)


def test_write_csv(tmp_path: Path) -> None:
    rows = [bench_block.BlockTime("mbconv", "2x16x4x4", 3, 4, 64, False, 10.0, 25.0)]
    path = tmp_path / "blocks.csv"
    bench_block.write_csv(rows, path, {"gpu": "test GPU"})
    (read,) = list(csv.DictReader(path.open()))
    assert read["gpu"] == "test GPU"
    assert read["block"] == "mbconv"
    assert read["grouped_channels"] == "64"
    assert float(read["speedup"]) == pytest.approx(2.5)
    assert float(read["saved"]) == pytest.approx(0.6)


@pytest.mark.gpu
def test_runs_on_the_gpu(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    out = tmp_path / "blocks.csv"
    bench_block.main(
        ["--shapes", "2x16x8x8", "--rounds", "1", "--nondeterministic", "--out", str(out)]
    )
    assert spio.torch.wgrad_is_deterministic(), "the benchmark restores the default"
    lines = capsys.readouterr().out.strip().splitlines()
    rows = [line.split() for line in lines if line.split()[:1] in (["convfirst"], ["mbconv"])]
    assert [row[0] for row in rows] == ["convfirst", "mbconv"]
    for row in rows:
        assert float(row[3]) > 0
        assert float(row[4]) > 0
    assert len(list(csv.DictReader(out.open()))) == 2
