"""bench_overhead: its arguments and timing loop (CPU); the benchmark itself on the GPU."""

from __future__ import annotations

import pytest

from spio.torch import bench_overhead


def test_shapes_and_errors() -> None:
    args = bench_overhead.build_parser().parse_args(["--shapes", "2x16x4x4", "--calls", "10"])
    assert args.shapes == [(2, 16, 4, 4)]
    assert args.calls == 10
    defaults = bench_overhead.build_parser().parse_args([])
    assert len(defaults.shapes) == 3
    assert defaults.weight_format == "channels_last"
    with pytest.raises(SystemExit):
        bench_overhead.build_parser().parse_args(["--weight-format", "nhwc"])
    for bad in ("2x12x4x4", "2x16x4", "0x16x4x4"):
        with pytest.raises(SystemExit):
            bench_overhead.build_parser().parse_args(["--shapes", bad])
    assert defaults.linear is None
    linear = bench_overhead.build_parser().parse_args(["--linear", "8x256x64", "1x8x8"])
    assert linear.linear == [(8, 256, 64), (1, 8, 8)]
    for bad in ("8x250x64", "8x256", "0x8x8", "axbxc"):
        with pytest.raises(SystemExit):
            bench_overhead.build_parser().parse_args(["--linear", bad])


def test_per_call_time_counts_the_calls() -> None:
    calls: list[int] = []
    synced: list[int] = []
    us = bench_overhead.per_call_us(lambda: calls.append(1), 50, lambda: synced.append(1))
    assert len(calls) == 55  # a warm-up of a tenth, then the timed loop
    assert len(synced) == 2
    assert us >= 0


@pytest.mark.gpu
def test_runs_on_the_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    for weight_format in bench_overhead.WEIGHT_FORMATS:
        bench_overhead.main(
            [
                "--shapes",
                "1x64x8x8",
                "--calls",
                "50",
                "--backward",
                "--weight-format",
                weight_format,
            ]
        )
        lines = capsys.readouterr().out.splitlines()
        assert lines[1].split()[0] == "1x64x8x8"
        assert float(lines[1].split()[-1]) > 0
    bench_overhead.main(["--linear", "4x64x32", "--calls", "50", "--backward"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[0] == "4x64x32"
    assert float(lines[1].split()[-1]) > 0
